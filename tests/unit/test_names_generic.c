// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* names/names_generic.c: the generic event names, encoded as libpfm4
 * does. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>

#include "names/names_generic.h"

Test(names_generic, generic_names_encode_as_libpfm4_does)
{
	struct perf_event_attr a;

	cr_assert_eq(names_generic_encode("task-clock", &a), 0);
	cr_expect_eq(a.type, PERF_TYPE_SOFTWARE);
	cr_expect_eq(a.config, PERF_COUNT_SW_TASK_CLOCK);
	cr_expect(a.exclude_hv && a.exclude_guest);
	cr_expect(!a.exclude_user && !a.exclude_kernel);
	cr_assert_eq(names_generic_encode("perf::CPU_CLOCK:u", &a), 0);
	cr_expect_eq(a.config, PERF_COUNT_SW_CPU_CLOCK);
	cr_expect(a.exclude_kernel && !a.exclude_user);
	cr_assert_eq(names_generic_encode("L1-dcache-load-misses", &a), 0);
	cr_expect_eq(a.type, PERF_TYPE_HW_CACHE);
	cr_expect_eq(a.config,
		     PERF_COUNT_HW_CACHE_L1D |
			     PERF_COUNT_HW_CACHE_OP_READ << 8 |
			     (uint64_t)PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
	cr_expect_eq(names_generic_encode("cs:x", &a), -EINVAL);
	cr_expect_eq(names_generic_encode("no-such-event", &a), -ENOENT);
}
