// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* core/cpus.c: CPU lists as the kernel prints them (as libperf tests its
 * cpumap parser), and what it refuses. */
#include <criterion/criterion.h>
#include <errno.h>

#include "core/cpus.h"

Test(cpus, cpu_lists_parse_as_the_kernel_prints_them)
{
	int cpus[16];

	cr_assert_eq(cpus_parse("0-3,8,10-11\n", cpus, 16), 7);
	cr_expect_arr_eq(cpus, ((int[]){0, 1, 2, 3, 8, 10, 11}),
			 7 * sizeof(int));
	cr_expect_eq(cpus_parse("5", cpus, 16), 1);
	cr_expect_eq(cpus[0], 5);
	cr_expect_eq(cpus_index(cpus, 1, 5), 0);
	cr_expect_eq(cpus_parse("0-3,8,10-11", cpus, 16), 7);
	cr_expect_eq(cpus_index(cpus, 7, 10), 5);
	cr_expect_eq(cpus_index(cpus, 7, 9), -1);
}

Test(cpus, malformed_cpu_lists_are_refused)
{
	static const char *const bad[] = {"",	 "\n",	 "a",	 "3-1",
					  "1,0", "0,,1", "0-",	 "-1",
					  "0 1", "1,1",	 "70000"};
	int cpus[16];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(cpus_parse(bad[i], cpus, 16), -EINVAL, "'%s'",
			     bad[i]);
	cr_expect_eq(cpus_parse("0-16", cpus, 16), -E2BIG);
}
