/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What one member of a host domain may hold of the tables all members
 * share: at most half of the counted cgroups (slots), of the task and
 * process entries, and of map_refs, so that one member, however many
 * handles it opens, leaves the others room. Each member keeps its own
 * account, of what it did itself: the shared books are not trusted for
 * it, and a member that writes them directly is not held by any quota.
 */
#ifndef SHPMU_HOST_QUOTA_H
#define SHPMU_HOST_QUOTA_H

#include <stdint.h>

struct shpmu;

struct host_quota {
	/* Held: refs taken (one per kernel event of this context, an upper
	 * bound on its map_refs entries), slots and tasks with any. */
	uint32_t refs, slots, tasks;
	uint32_t refs_max, slots_max, tasks_max;
	uint32_t *slot_refs; /* [slots in the domain]: our refs on each */
	uint32_t *task_refs; /* [MAX_TASK_TARGETS] */
	uint32_t nslots;
};

/* For tests: when non-zero, the limit on slots and tasks, and on refs. */
extern uint32_t shpmu__host_quota, shpmu__host_quota_refs;

/* For a domain of max_slots slots and max_refs refs: 0 or -ENOMEM. */
int host_quota_init(struct host_quota *q, uint32_t max_slots,
		    uint32_t max_refs);
void host_quota_fini(struct host_quota *q);
/* Whether this member may take one more ref on slot s (a ref key's
 * slot: a cgroup's, TASK_REF | a task entry, or NO_SLOT for a CPU):
 * 0, or -ENOSPC with a message naming the limit. */
int host_quota_check(struct shpmu *pmu, const struct host_quota *q, uint32_t s,
		     const char *domain);
/* Accounts a ref taken (delta 1) or given back (-1) on s. */
void host_quota_add(struct host_quota *q, uint32_t s, int delta);

#endif
