/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Settling a CPU: crediting what accrued since its last settle to the
 * counted set it accrued to, with the switches the tracepoint hid and the
 * moves of a running task to another cgroup (a move check), and the guard
 * that keeps two runs on one CPU from meeting.
 */
#ifndef SHPMU_PROG_SETTLE_BPF_H
#define SHPMU_PROG_SETTLE_BPF_H

#include "bpf/prog/cgroups.bpf.h"
#include "bpf/prog/deltas.bpf.h"
#include "bpf/prog/state.bpf.h"
#include "bpf/prog/tasks.bpf.h"

/* Whether time accruing to set a may go on accruing for b: the same
 * cgroup walked at the same generation, or cgroups with the same counted
 * ancestors, and no task of either counted by itself. */
__noinline int same_set(const struct counted_set *a,
			const struct counted_set *b)
{
	__u32 n;

	if (!a || !b)
		return 0;
	if (a->ntargets || b->ntargets)
		return 0;
	if (a->leaf == b->leaf && a->generation == b->generation)
		return 1;
	if (a->nslots != b->nslots || a->nslots > CACHED_SLOTS)
		return 0;
	n = a->nslots;
	for (__u32 i = 0; i < CACHED_SLOTS && i < n; i++)
		if (a->slots[i] != b->slots[i])
			return 0;
	return 1;
}

/* Whose counted set a settle credits. */
enum owner {
	OWNER_NOW = 0,	/* the task that switched in last */
	OWNER_LAST = 1, /* the task that left at that switch, come back */
	OWNER_HERE = 2, /* the task here now: walk its cgroup */
};

/* Adds this CPU's deltas since the last settle to owner's counted set,
 * with now_switches / now_cgroup_switches for the switch being made (if
 * any). Returns how many counted cgroups it credited. */
__noinline int credit(struct cpu_state *st, struct cpu_view *view,
		      __u32 now_switches, __u32 now_cgroup_switches, int owner)
{
	/* An event not read this time adds zeros. */
	struct slot_totals delta = {};
	const struct counted_set *set;
	__u32 n;

	if (!st)
		return 0;
	if (!take_deltas(st->pending_switches + now_switches,
			 st->pending_cgroup_switches + now_cgroup_switches,
			 view, &delta))
		return 0;
	st->pending_switches = 0;
	st->pending_cgroup_switches = 0;
	set = owner == OWNER_LAST ? &st->last : &st->now;
	if (owner == OWNER_HERE) {
		resolve_tasks(bpf_get_current_task(), &st->here);
		set = &st->here;
	}
	for (__u32 i = 0; i < TT_N; i++)
		add_task_delta(set->targets[i], &delta);
	/* More counted ancestors than a set holds: walk the task here. */
	if (owner == OWNER_HERE || set->nslots > CACHED_SLOTS)
		return set->ntargets +
		       walk_cgroup(
			       bpf_get_current_task_btf()->cgroups->dfl_cgrp,
			       &delta, CACHED_LEAVES);
	n = set->nslots;
	for (__u32 i = 0; i < CACHED_SLOTS && i < n; i++)
		add_delta(set->slots[i], &delta);
	return n + set->ntargets;
}

/* credit(), with the CPU's view marked as being written for readers in
 * userspace (see struct cpu_view). */
static __always_inline int settle(struct cpu_state *st, __u32 now_switches,
				  __u32 now_cgroup_switches, int owner)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_view *view = bpf_map_lookup_elem(&cpu_views, &cpu);
	int n;

	if (!view || !st)
		return 0;
	__sync_fetch_and_add(&view->seq, 1);
	n = credit(st, view, now_switches, now_cgroup_switches, owner);
	__sync_fetch_and_add(&view->seq, 1);
	st->settled_jiffies = bpf_jiffies64();
	return n;
}

/* Both halves of a task's counted set. */
static __always_inline void resolve(__u64 task, struct counted_set *out)
{
	resolve_cgroups(task, out);
	resolve_tasks(task, out);
}

/* Whose set what accrued belongs to when task (in cgroup leaf), found on
 * the CPU, is not the one it saw switch in (see unseen_switches). */
static __always_inline int owner_after_hidden(struct cpu_state *st, __u64 task,
					      __u64 leaf, int at_move_check)
{
	__sync_fetch_and_add(&unseen_switches, 1);
	if (task != st->last_task)
		return OWNER_HERE;
	__sync_fetch_and_add(&unseen_returns, 1);
	return leaf == st->last.leaf || at_move_check ? OWNER_LAST : OWNER_HERE;
}

/* Counts a stray: a counted cgroup was credited, or the hidden task's own
 * set had one. */
static __always_inline void count_stray(struct cpu_state *st, int credited)
{
	if (credited || st->now.nslots)
		__sync_fetch_and_add(&unseen_strays, 1);
}

/* Settles what accrued and starts again from the set of the task here now
 * (the counted set may have changed): a flush, or a move check that found
 * another task than it expected. */
__noinline int restart(struct cpu_state *st, int at_move_check)
{
	__u64 task = bpf_get_current_task();
	__u64 leaf = bpf_get_current_cgroup_id();
	int owner = OWNER_NOW, credited;

	if (!st)
		return 0;
	if (!st->task)
		owner = OWNER_HERE;
	else if (st->task != task)
		owner = owner_after_hidden(st, task, leaf, at_move_check);
	credited = settle(st, 0, 0, owner);
	if (st->task && st->task != task)
		count_stray(st, credited);
	st->task = task;
	resolve(task, &st->now);
	return 0;
}

/* The running task may have moved to another cgroup: if so, what it ran
 * before goes to the cgroups it left, and the rest to those it joined. */
__noinline int check_move(struct cpu_state *st)
{
	__u64 task = bpf_get_current_task();

	if (!st || !st->task)
		return 0;
	if (st->task != task)
		return restart(st, 1);
	if (bpf_get_current_cgroup_id() == st->now.leaf)
		return 0;
	settle(st, 0, 0, OWNER_NOW);
	resolve(task, &st->now);
	__sync_fetch_and_add(&moves_settled, 1);
	return 0;
}

static __always_inline struct cpu_state *enter(void)
{
	__u32 zero = 0;
	struct cpu_state *st = bpf_map_lookup_elem(&cpu_states, &zero);

	if (!st)
		return NULL;
	if (st->busy) {
		st->recheck = 1;
		return NULL;
	}
	st->busy = 1;
	return st;
}

static __always_inline void leave(struct cpu_state *st)
{
	/* A move check that landed inside this run: do it now. */
	if (st->recheck) {
		st->recheck = 0;
		check_move(st);
	}
	st->busy = 0;
}

#endif
