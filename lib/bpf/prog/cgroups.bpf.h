/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A task's counted cgroups: the walk up its cgroup's ancestors, and the
 * per-CPU cache of recent cgroups' counted sets that spares most switches
 * the walk.
 */
#ifndef SHPMU_PROG_CGROUPS_BPF_H
#define SHPMU_PROG_CGROUPS_BPF_H

#include "bpf/prog/deltas.bpf.h"

/* A walk down one cgroup's ancestors, read once: a task moved meanwhile
 * must not mix two cgroups' ancestors in one walk. */
struct walk {
	struct cgroup *cgrp;
	const struct slot_totals *delta;
	__u32 way;    /* the cache entry being filled; CACHED_LEAVES: none */
	__u32 nslots; /* counted ancestors found so far */
};

static long walk_level(__u32 level, void *arg)
{
	struct walk *w = arg;
	struct cgroup *ancestor = NULL;
	__u64 id;
	__u32 *slot;

	/* (A typed pointer takes no variable index: one read per level,
	 * on a cache miss only.) */
	if (level >= MAX_LEVELS ||
	    bpf_probe_read_kernel(&ancestor, sizeof(ancestor),
				  &w->cgrp->ancestors[level]) ||
	    !ancestor)
		return 1;
	id = BPF_CORE_READ(ancestor, kn, id);
	if (!counted_ids[id & (COUNTED_FILTER_SIZE - 1)])
		return 0;
	slot = bpf_map_lookup_elem(&cgroup_slots, &id);
	if (!slot)
		return 0;
	if (w->delta)
		add_delta(*slot, w->delta);
	if (w->way < CACHED_LEAVES && w->nslots < CACHED_SLOTS) {
		__u32 key = w->way * CACHED_SLOTS + w->nslots;
		__u32 *cached = bpf_map_lookup_elem(&cached_slots, &key);

		if (cached)
			*cached = *slot;
	}
	w->nslots++;
	return 0;
}

/* Walks cgrp's counted ancestors, from the root to itself (bpf_loop: the
 * verifier checks one level, whatever the depth): credits delta to them
 * (if given), and notes them in cache entry way (if < CACHED_LEAVES).
 * Returns how many. */
static __always_inline __u32 walk_cgroup(struct cgroup *cgrp,
					 const struct slot_totals *delta,
					 __u32 way)
{
	struct walk w = {.cgrp = cgrp, .delta = delta, .way = way};
	int level = cgrp->level;

	if (level < 0 || level >= MAX_LEVELS)
		return 0;
	bpf_loop(level + 1, walk_level, &w, 0);
	return w.nslots;
}

/* The counted set of task's cgroup for the current generation into out:
 * from the cache, walked first unless it is there. The cgroup is read once
 * for both its id and its walk: a task moved meanwhile must not get one
 * cgroup's id with another's set. */
__noinline int resolve_cgroups(__u64 task, struct counted_set *out)
{
	struct cgroup *cgrp = task_cgroup(task);
	__u64 leaf = cgrp->kn->id;
	__u32 way = leaf & (CACHED_LEAVES - 1), n;
	struct ancestors *entry = bpf_map_lookup_elem(&ancestors_cache, &way);
	/* Before the walk: a change to the counted set after this read
	 * makes what the walk caches stale at once. */
	__u64 gen = *(volatile __u64 *)&generation;

	if (!entry || !out)
		return 0;
	if (entry->leaf != leaf || entry->generation != gen) {
		entry->nslots = walk_cgroup(cgrp, NULL, way);
		entry->leaf = leaf;
		entry->generation = gen;
	}
	out->leaf = leaf;
	out->generation = gen;
	out->nslots = n = entry->nslots;
	for (__u32 i = 0; i < CACHED_SLOTS && i < n; i++) {
		__u32 key = way * CACHED_SLOTS + i;
		__u32 *slot = bpf_map_lookup_elem(&cached_slots, &key);

		out->slots[i] = slot ? *slot : 0;
	}
	return 0;
}

#endif
