/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The counter budget: what a context's kernel events need of each core
 * PMU's counters, CPU by CPU, from the list of its events that use them
 * (pmu->hw_events, under the create lock). One row per PMU and CPU, then
 * one per PMU for the events that follow a task (cpu -1).
 *
 * A kernel event needs one counter per member on each CPU it has a source
 * on (a task's: the task row, once whatever its threads); an event of the
 * BPF backend, which keeps one perf event per attr and CPU for all its
 * kernel events, needs one on every CPU of its PMU, once per attr. wanted
 * counts the same per handle (refs).
 */
#ifndef SHPMU_BUDGET_H
#define SHPMU_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include <shpmu/shpmu.h>

#include "core/hw_pmus.h"

struct shpmu;
struct kevent;

/* The rows of hw, filled from the context's events: how many, or -ENOMEM.
 * *rows is malloc'd. The create lock and the context lock held. */
int budget_compute(struct shpmu *pmu, const struct hw_pmus *hw,
		   struct shpmu_pmu_budget **rows);

/* Puts a new kernel event on the budget's list, or takes it off (create
 * lock held); events without a core counter are left off. */
void budget_track(struct shpmu *pmu, struct kevent *ev);
void budget_untrack(struct shpmu *pmu, struct kevent *ev);

/* SHPMU_OPEN_NO_MULTIPLEX: ev is new (not yet tracked, create lock held).
 * 0 when it fits everywhere it counts, -EBUSY logged with the first row it
 * does not fit in, or -ENOMEM. */
int budget_check_fits(struct shpmu *pmu, struct kevent *ev);

#endif
