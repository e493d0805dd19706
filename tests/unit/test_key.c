// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* core/key.c: sharing keys from attrs. */
#include <criterion/criterion.h>
#include <stdbool.h>

#include "core/key.h"

Test(key, equal_requests_have_equal_keys)
{
	struct perf_event_attr a = {.size = sizeof(a),
				    .type = PERF_TYPE_SOFTWARE,
				    .config = PERF_COUNT_SW_TASK_CLOCK};
	struct perf_event_attr b = a;
	union {
		struct share_key key;
		unsigned char bytes[sizeof(struct share_key) +
				    sizeof(struct event_key)];
	} ka = {0}, kb = {0};
	const char *why;
	bool disabled;

	b.disabled = 1;
	b.read_format = PERF_FORMAT_GROUP; /* not part of the key */
	ka.key.nevents = kb.key.nevents = 1;
	cr_assert_eq(key_from_attr(&a, &ka.key.events[0], &disabled, &why), 0);
	cr_assert_eq(key_from_attr(&b, &kb.key.events[0], &disabled, &why), 0);
	cr_expect(disabled);
	cr_expect(share_key_equal(&ka.key, &kb.key));
	cr_expect_eq(share_key_hash(&ka.key), share_key_hash(&kb.key));
	b.exclude_kernel = 1;
	cr_assert_eq(key_from_attr(&b, &kb.key.events[0], &disabled, &why), 0);
	cr_expect_not(share_key_equal(&ka.key, &kb.key));
	cr_expect_neq(share_key_hash(&ka.key), share_key_hash(&kb.key));
}
