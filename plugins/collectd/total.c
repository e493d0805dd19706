// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "total.h"

#include <errno.h>

/* a - b, or 0 where a reading went back (a handle's never does; a bad
 * one must not wrap to 2^64). */
static uint64_t grown(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

int total_advance(struct total *t, const struct shpmu_count *now)
{
	struct shpmu_count delta = {
		.value = grown(now->value, t->last.value),
		.time_enabled = grown(now->time_enabled, t->last.time_enabled),
		.time_running = grown(now->time_running, t->last.time_running),
	};
	/* What grew, over the part of the window that grew: the value
	 * itself where the event ran all of it. */
	uint64_t added = shpmu_scale(&delta);

	if (added > (uint64_t)INT64_MAX - t->value)
		return -ERANGE;
	t->value += added;
	t->last = *now;
	return 0;
}
