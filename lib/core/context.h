/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The context: everything one agent's libshpmu owns, and the locks that
 * guard it.
 *
 * Locks, in the order they nest (a thread holding one takes only those
 * below it):
 *
 *   pmu->create_lock    making and freeing kernel events: a backend's
 *                       open and close, which may load the BPF program,
 *                       flush every CPU, or in host scope wait for the
 *                       domain's lock; and AUTO's count of its classic
 *                       cgroup events (lib/backend_choice.c). Opens that
 *                       share an event, and closes of all but the last
 *                       handle on one, do not take it.
 *   the choice's lock   whether AUTO has tried the BPF backend, and
 *                       that backend while it is made
 *                       (lib/backend_choice.c).
 *   pmu->lock           the registry, handle allocation and the free
 *                       list, the stats, kernel events' refcounts. Held
 *                       for bookkeeping only: no counter is read and no
 *                       kernel event made or freed under it.
 *   a handle stripe     the fields of the handles in it (ev, state,
 *                       enabled, gen): every call on a handle. Batches
 *                       take several, in ascending order.
 *   kevent->lock        a kernel event's enabled count and its sources'
 *                       on/off state.
 *   counter_prog's      BPF flushes, and changes to the CPUs they visit
 *   flush_lock          (counter_prog.h).
 *
 * Taken alone: pmu->cgroups.lock (the walk cache; cgroup lookups run
 * before pmu->lock). No lock is held across a call into the caller's log
 * callback that could call back in: the re-entry guard (api.h) refuses
 * such calls instead.
 */
#ifndef SHPMU_CONTEXT_H
#define SHPMU_CONTEXT_H

#include <pthread.h>
#include <stdbool.h>

#include <shpmu/shpmu.h>

#include "cgroup/cgroup.h"
#include "core/env.h"
#include "core/handles.h"
#include "core/registry.h"

struct backend_choice;
struct hw_pmus;

struct shpmu {
	struct shpmu_env env;			  /* first: see env.h */
	unsigned int flags;			  /* enum shpmu_flags */
	enum shpmu_cgroup_backend cgroup_backend; /* as asked */
	enum shpmu_scope scope;			  /* as asked */
	int64_t probe_types[2];	  /* the kprobe and uprobe PMU types, or -1 */
	uint64_t fork_generation; /* task_fork_generation() at shpmu_new */

	/* Which backend counts what (core/backend.h). */
	struct backend_choice *choice;
	/* The core PMUs (core/hw_pmus.h): found under the create lock at
	 * the first hardware event or budget, then read-only. */
	struct hw_pmus *hw;
	/* Its kernel events that use core counters (kevent.hw_next), under
	 * the create lock. */
	struct kevent *hw_events;

	pthread_mutex_t create_lock;
	pthread_mutex_t lock;
	struct registry registry;
	struct shpmu_stats stats;
	struct handle_table handles;
	struct cgroups cgroups;
};

_Static_assert(offsetof(struct shpmu, env) == 0,
	       "env_of() finds the env at the start of the context");

#endif
