/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The counter budget: what a context's kernel events need of each core
 * PMU's counters, CPU by CPU, from the list of its events that use them
 * (pmu->hw_events, under the create lock). One row per PMU and CPU, then
 * one per PMU for the events that follow a task (cpu -1).
 *
 * A kernel event needs one counter per member on each CPU it has a source
 * on (a task's: the task row, once whatever its threads). The BPF backend
 * keeps one perf event per attr and CPU for all its kernel events (in
 * host scope, for every member of the domain): each of those needs one
 * counter on its CPU, whoever asked for it. wanted counts a counter per
 * handle (refs) where its kernel event has one.
 */
#ifndef SHPMU_BUDGET_H
#define SHPMU_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include <shpmu/shpmu.h>

#include "core/hw_pmus.h"

struct shpmu;
struct kevent;

/* A perf event the BPF backend keeps for an attr on a CPU. */
struct budget_shared {
	struct event_key key;
	uint32_t refs; /* kernel events on it, over the domain */
	int cpu;
};

/* The BPF backend's perf events, into a malloc'd *out: how many, or
 * -errno. The create lock held, not the context lock (the domain's lock
 * may be taken). */
int budget_shared_collect(struct shpmu *pmu, struct budget_shared **out);

/* The rows of hw, filled from the context's events and the shared ones:
 * how many, or -ENOMEM. *rows is malloc'd. The create lock and the
 * context lock held. */
int budget_compute(struct shpmu *pmu, const struct hw_pmus *hw,
		   const struct budget_shared *shared, size_t nshared,
		   struct shpmu_pmu_budget **rows);

/* Puts a new kernel event on the budget's list, or takes it off (create
 * lock held); events without a core counter are left off. */
void budget_track(struct shpmu *pmu, struct kevent *ev);
void budget_untrack(struct shpmu *pmu, struct kevent *ev);

/* SHPMU_OPEN_NO_MULTIPLEX: ev is new (not yet tracked; the create lock
 * held, not the context lock). 0 when it fits everywhere it counts,
 * -EBUSY logged with the first row it does not fit in, or -errno. */
int budget_check_fits(struct shpmu *pmu, struct kevent *ev);

#endif
