// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* plugins/collectd/total.c: a series' total never goes down, is the count
 * itself where nothing was multiplexed, and scales each read's growth on
 * its own where something was. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>

#include "total.h"

static struct shpmu_count count(uint64_t value, uint64_t enabled,
				uint64_t running)
{
	return (struct shpmu_count){value, enabled, running};
}

Test(collectd_total, exact_where_it_ran_all_the_time)
{
	struct total t = {0};
	struct shpmu_count reads[] = {count(5, 10, 10), count(5, 20, 20),
				      count(900, 30, 30)};

	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(total_advance(&t, &reads[i]), 0);
		cr_expect_eq(t.value, reads[i].value);
	}
}

/* The reviewer's case: scaled over the whole window, 100 x 10/5 = 200
 * fell to 101 x 20/15 = 134; read by read it goes 200, then 200 + 1 x
 * 10/10. */
Test(collectd_total, a_multiplexed_count_never_goes_down)
{
	struct total t = {0};
	struct shpmu_count first = count(100, 10, 5),
			   second = count(101, 20, 15);

	cr_assert_eq(total_advance(&t, &first), 0);
	cr_expect_eq(t.value, 200);
	cr_assert_eq(total_advance(&t, &second), 0);
	cr_expect_eq(t.value, 201);
}

Test(collectd_total, a_read_that_ran_nothing_adds_nothing)
{
	struct total t = {0};
	struct shpmu_count a = count(50, 100, 100), b = count(50, 200, 100);

	cr_assert_eq(total_advance(&t, &a), 0);
	cr_assert_eq(total_advance(&t, &b), 0);
	cr_expect_eq(t.value, 50);
}

Test(collectd_total, past_a_derive_refused_and_unchanged)
{
	struct total t = {.value = INT64_MAX - 5, .last = count(10, 10, 10)};
	struct shpmu_count big = count(20, 20, 20);

	cr_expect_eq(total_advance(&t, &big), -ERANGE);
	cr_expect_eq(t.value, INT64_MAX - 5);
	cr_expect_eq(t.last.value, 10);
}
