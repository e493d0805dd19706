/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Counted tasks and processes: the links from a tid or tgid to the targets
 * counting it, each target's totals, and the links a fork hands on to
 * the children of an inherit target.
 */
#ifndef SHPMU_PROG_TASKS_BPF_H
#define SHPMU_PROG_TASKS_BPF_H

#include "bpf/prog/accumulate.h"
#include "bpf/prog/state.bpf.h"

static __always_inline __u64 start_ticks(struct task_struct *t)
{
	return t->start_boottime / ns_per_tick;
}

/* The link of (kind, id) if it counts the task whose start is starter's
 * (the thread's own, or its group leader's): the start is worked out (a
 * division) only for an id that has a link. */
static __always_inline struct task_link *link_of(__u32 kind, __u32 id,
						 struct task_struct *starter)
{
	__u64 key = task_link_key(kind, id);
	struct task_link *link;

	if (!counted_tasks[task_filter_index(kind, id)])
		return NULL;
	link = bpf_map_lookup_elem(&task_links, &key);
	return link && link->start_ticks == start_ticks(starter) ? link : NULL;
}

/* Whether a link may count task: the filter holds its tid or its tgid.
 * False means no link does. */
static __always_inline bool may_have_link(__u64 task)
{
	struct task_struct *t = as_task(task);

	return counted_tasks[task_filter_index(LINK_TID, t->pid)] ||
	       counted_tasks[task_filter_index(LINK_TGID, t->tgid)];
}

/* The task targets counting task into out (its targets and ntargets). */
__noinline int resolve_tasks(__u64 task, struct counted_set *out)
{
	struct task_struct *t = as_task(task);
	struct task_link *tid, *tgid;

	if (!out)
		return 0;
	tid = link_of(LINK_TID, t->pid, t);
	tgid = link_of(LINK_TGID, t->tgid, t->group_leader);
	out->targets[TT_TID_PLAIN] =
		tid ? tid->target[TARGET_PLAIN] : NO_TARGET;
	out->targets[TT_TID_INHERIT] =
		tid ? tid->target[TARGET_INHERIT] : NO_TARGET;
	out->targets[TT_TGID_PLAIN] =
		tgid ? tgid->target[TARGET_PLAIN] : NO_TARGET;
	out->targets[TT_TGID_INHERIT] =
		tgid ? tgid->target[TARGET_INHERIT] : NO_TARGET;
	out->ntargets = (tid ? 2 : 0) + (tgid ? 2 : 0);
	return 0;
}

/* Adds delta to task target t's totals of the events it is counted for:
 * atomically, for the threads of a process run on many CPUs at once. */
__noinline int add_task_delta(__u32 target, const struct slot_totals *delta)
{
	__u32 used = num_events;

	if (!delta || target == NO_TARGET)
		return 0;
	for (__u32 e = 0; e < MAX_EVENTS && e < used; e++) {
		__u64 key = task_total_key(target, e);
		struct counter_value *total =
			bpf_map_lookup_elem(&task_totals, &key);

		if (!total)
			continue;
		acc_add_shared(total, &delta->events[e]);
	}
	return 0;
}

/* A link for child, forked by parent, to parent's inherit target of
 * kind, if it has one: the child counts from its first instruction. */
static __always_inline void inherit_link(__u32 kind, __u32 parent_id,
					 struct task_struct *parent_starter,
					 __u32 child_id,
					 struct task_struct *child)
{
	struct task_link *from = link_of(kind, parent_id, parent_starter);
	struct task_link link = {.target = {NO_TARGET, NO_TARGET}};
	__u64 key = task_link_key(kind, child_id);

	if (!from || from->target[TARGET_INHERIT] == NO_TARGET)
		return;
	link.start_ticks = start_ticks(child);
	link.target[TARGET_INHERIT] = from->target[TARGET_INHERIT];
	if (!bpf_map_update_elem(&task_links, &key, &link, BPF_NOEXIST))
		__sync_fetch_and_add(
			&counted_tasks[task_filter_index(kind, child_id)], 1);
	/* A link left by an exited task whose id the child reuses. */
	else if (bpf_map_update_elem(&task_links, &key, &link, BPF_EXIST))
		__sync_fetch_and_add(&children_lost, 1);
}

#endif
