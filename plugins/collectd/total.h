/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A series' running total, as collectd's derive values want it: it never
 * goes down. A multiplexed event's count is an estimate scaled from the
 * share of its window it ran, and the estimate over the whole window can
 * fall between two reads (100 x 10/5 = 200, then 101 x 20/15 = 134).
 * Each read's growth is scaled on its own instead (its value, enabled and
 * running deltas) and added: for an event that was not multiplexed the
 * total is its count exactly.
 */
#ifndef SHPMU_COLLECTD_TOTAL_H
#define SHPMU_COLLECTD_TOTAL_H

#include <stdint.h>

#include <shpmu/shpmu.h>

struct total {
	struct shpmu_count last; /* the reading the total stands at */
	uint64_t value;		 /* what was passed on: never less */
};

/*
 * Brings t up to now, a later reading of the same handle. Returns 0, or
 * -ERANGE where the total would pass INT64_MAX (a derive's limit): t is
 * then left as it was.
 */
int total_advance(struct total *t, const struct shpmu_count *now);

#endif
