// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* core/window.c: the dup_count window arithmetic on readings made up in
 * memory. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "core/handles.h"
#include "core/kevent.h"
#include "core/window.h"
#include "fake_event.h"

Test(window, a_window_counts_only_while_enabled)
{
	struct kevent *ev = fake_event(2);
	struct handle h = {.ev = ev};
	/* Per source: enabled, running, count. */
	uint64_t t0[6] = {100, 100, 10, 200, 150, 20};
	uint64_t t1[6] = {150, 140, 15, 260, 190, 26};
	uint64_t t2[6] = {170, 150, 18, 290, 200, 30};
	struct shpmu_count sum, one;

	cr_assert_eq(window_alloc(&h), 0);
	window_start(&h, t0);
	window_apply_all(&h, t1); /* disabled: nothing moves */
	window_sum(&h, -1, &sum);
	cr_expect_eq(sum.value, 0);
	h.enabled = true;
	window_start(&h, t1);
	window_apply_all(&h, t2);
	window_sum(&h, -1, &sum);
	cr_expect_eq(sum.value, (18 - 15) + (30 - 26));
	cr_expect_eq(sum.time_enabled, (170 - 150) + (290 - 260));
	cr_expect_eq(sum.time_running, (150 - 140) + (200 - 190));
	window_sum(&h, 1, &one);
	cr_expect_eq(one.value, 4);
	window_clear(&h);
	window_sum(&h, -1, &sum);
	cr_expect_eq(sum.value, 0, "clear zeroes what was counted");
	window_apply_all(&h, t2);
	window_sum(&h, -1, &sum);
	cr_expect_eq(sum.value, 0, "and counts on from the last reading");
	window_free(&h);
	free(ev);
}

Test(window, a_source_that_goes_back_adds_nothing)
{
	struct kevent *ev = fake_event(1);
	struct handle h = {.ev = ev, .enabled = true};
	uint64_t t0[3] = {100, 100, 50}, back[3] = {90, 90, 40},
		 on[3] = {120, 120, 60};
	struct shpmu_count c;

	cr_assert_eq(window_alloc(&h), 0);
	cr_expect(window_is_single(&h));
	window_start(&h, t0);
	window_apply_sum_one(&h, back, &c);
	cr_expect_eq(c.value, 0, "no negative delta");
	window_apply_sum_one(&h, on, &c);
	cr_expect_eq(c.value, 20, "counted from the last reading");
	window_free(&h);
	free(ev);
}

Test(window, a_window_too_big_for_the_slot_is_allocated)
{
	struct kevent *ev = fake_event(64);
	struct handle h = {.ev = ev};

	cr_assert_eq(window_alloc(&h), 0);
	cr_expect_neq(h.state, h.inline_state);
	window_free(&h);
	free(ev);
}
