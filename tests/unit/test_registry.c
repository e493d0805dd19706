// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* core/registry.c: the registry of kernel events by sharing key, growing
 * and shrinking. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "core/kevent.h"
#include "core/key.h"
#include "core/registry.h"
#include "fake_event.h"

static struct kevent *keyed_event(uint64_t config)
{
	struct kevent *ev = fake_event(1);

	ev->key.events[0].config = config;
	ev->node.hash = share_key_hash(&ev->key);
	return ev;
}

Test(registry, the_registry_grows_and_finds_every_event)
{
	enum { N = 1000 };
	static struct kevent *evs[N];
	struct registry reg;
	size_t first_buckets;

	cr_assert_eq(registry_init(&reg), 0);
	first_buckets = reg.events.nbuckets;
	for (int i = 0; i < N; i++) {
		evs[i] = keyed_event((uint64_t)i);
		registry_insert(&reg, evs[i]);
	}
	cr_expect_gt(reg.events.nbuckets, first_buckets, "it grew");
	cr_expect_geq(reg.events.nbuckets, (size_t)N, "chains stay short");
	for (int i = 0; i < N; i++)
		cr_expect_eq(
			registry_find(&reg, &evs[i]->key, evs[i]->node.hash),
			evs[i]);
	for (int i = 0; i < N; i += 2)
		registry_remove(&reg, evs[i]);
	cr_expect_eq(reg.events.count, (size_t)N / 2);
	for (int i = 0; i < N; i++)
		cr_expect_eq(
			registry_find(&reg, &evs[i]->key, evs[i]->node.hash),
			i % 2 ? evs[i] : NULL);
	for (int i = 1; i < N; i += 2)
		registry_remove(&reg, evs[i]);
	cr_expect_eq(reg.events.count, 0);
	registry_fini(&reg);
	for (int i = 0; i < N; i++)
		free(evs[i]);
}
