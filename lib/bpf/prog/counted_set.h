/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A task's counted set, and what a settle may credit when the kernel made
 * switches on the CPU without running the program (hidden switches):
 * arithmetic only, compiled by the program and by a userspace property
 * test (tests/unit/test_hidden.c) that plays random switch sequences with
 * random skips through it.
 *
 * The rule is never to guess. Between two settles of a CPU, the tasks
 * that ran there are known exactly only when every switch was seen: then
 * all of it belongs to the set of the task that switched in (A). Each
 * settle reads the CPU's switch sequence (a counting context-switches
 * event, which the kernel counts at every switch) and knows how many it
 * did not see:
 *
 *   - none: A is credited, exactly;
 *   - one: A's tasks ran, then, after that switch, the task found on the
 *     CPU (set C). What A and C have in common ran the whole interval and
 *     is credited exactly; if A and C differ, no one else can be told
 *     their share, and the whole delta also goes to the CPU's
 *     unattributed totals;
 *   - more, or a set that cannot be compared (more counted ancestors
 *     than a set holds), or a task that may have changed cgroups since it
 *     switched in: whoever ran in between is unknown, so nothing is
 *     credited and the whole delta is unattributed.
 *
 * So a slot's or target's count never exceeds its truth, and falls short
 * of it by at most what went unattributed on its CPUs while it counted:
 * its error bound.
 *
 * One race remains, and it is the kernel's order, not a rule here: a task
 * moved to another cgroup by another process has its cgroup changed
 * before the move's function call reaches its CPU (where the program
 * settles the move). A settle that finds a hidden switch in the
 * microseconds between the two takes the task's new set for its whole
 * run since the switch.
 */
#ifndef SHPMU_PROG_COUNTED_SET_H
#define SHPMU_PROG_COUNTED_SET_H

#include "bpf/prog/accumulate.h"

/* The task targets a task is counted by: its thread's and its process's,
 * plain and inherit (switch_counter.h). */
enum { TT_TID_PLAIN, TT_TID_INHERIT, TT_TGID_PLAIN, TT_TGID_INHERIT, TT_N };

/* A task's counted set: the slots of the counted cgroups among its own
 * cgroup and its ancestors (root first), and the task targets counting
 * it. */
struct counted_set {
	__u64 leaf;	  /* the cgroup id it was walked for; 0: none */
	__u64 generation; /* of the counted cgroups, when it was walked */
	__u32 nslots;	  /* > CACHED_SLOTS: more than a set holds (walk) */
	__u32 slots[CACHED_SLOTS];
	__u32 targets[TT_N]; /* NO_TARGET: none */
	__u32 ntargets;	     /* 0: every target NO_TARGET */
};

/* Switches the CPU made since its last settle that the program did not
 * see: its sequence now, less where it stood then and the switches seen
 * since. (A sequence behind what was seen cannot happen; it counts as
 * none.) */
ACC_INLINE __u64 hidden_switches(__u64 settled, __u32 pending, __u64 now)
{
	__u64 seen = settled + pending;

	return now > seen ? now - seen : 0;
}

/* Whether set s lists all its slots (a walk is not needed to find them). */
ACC_INLINE int set_listed(const struct counted_set *s)
{
	return s->nslots <= CACHED_SLOTS;
}

/* Whether set s can be credited whole where the task on the CPU is in
 * cgroup leaf: a set too big to list is credited by walking that
 * cgroup's ancestors, which are s's only while the task stays in the
 * cgroup s was walked for (moved since, it has another's). */
ACC_INLINE int set_walkable(const struct counted_set *s, __u64 leaf)
{
	return set_listed(s) || s->leaf == leaf;
}

ACC_INLINE int set_has_slot(const struct counted_set *s, __u32 slot)
{
	for (__u32 i = 0; i < CACHED_SLOTS && i < s->nslots; i++)
		if (s->slots[i] == slot)
			return 1;
	return 0;
}

ACC_INLINE int set_has_target(const struct counted_set *s, __u32 target)
{
	if (target == NO_TARGET)
		return 0;
	for (__u32 i = 0; i < TT_N; i++)
		if (s->targets[i] == target)
			return 1;
	return 0;
}

/* Whether a and b, both listed, count the same slots and targets. Slots
 * are listed root first, so the same slots come in the same order. */
ACC_INLINE int sets_equal(const struct counted_set *a,
			  const struct counted_set *b)
{
	if (a->nslots != b->nslots || !set_listed(a))
		return 0;
	for (__u32 i = 0; i < CACHED_SLOTS && i < a->nslots; i++)
		if (a->slots[i] != b->slots[i])
			return 0;
	for (__u32 i = 0; i < TT_N; i++)
		if (a->targets[i] != b->targets[i])
			return 0;
	return 1;
}

/* Hidden switches where the CPU has no switch sequence, but its task is
 * not the one it saw switch in: at least one, maybe more. */
#define HIDDEN_UNKNOWN (~(__u64)0)

/* Whether time accruing to set a may go on accruing for b with no
 * settle between: the same cgroup walked at the same generation, or
 * cgroups with the same counted ancestors, and no task of either counted
 * by itself. */
ACC_INLINE int sets_continue(const struct counted_set *a,
			     const struct counted_set *b)
{
	if (a->ntargets || b->ntargets)
		return 0;
	if (a->leaf == b->leaf && a->generation == b->generation)
		return 1;
	if (a->nslots != b->nslots || a->nslots > CACHED_SLOTS)
		return 0;
	for (__u32 i = 0; i < CACHED_SLOTS && i < a->nslots; i++)
		if (a->slots[i] != b->slots[i])
			return 0;
	return 1;
}

/* What a settle credits. */
enum settle_plan {
	PLAN_ALL = 0,	 /* every switch seen: all to A */
	PLAN_COMMON = 1, /* one hidden switch, A and C the same: all to A */
	/* One hidden switch, A and C differ: what they share, exactly;
	 * the delta unattributed too. */
	PLAN_SHARED = 2,
	PLAN_NONE = 3, /* who ran is unknown: all unattributed */
};

/*
 * The plan for a settle (see the top of this file): hidden switches since
 * the last one (HIDDEN_UNKNOWN where the CPU has no sequence to tell);
 * have_a: the CPU has seen a task switch in since the program came (else
 * no one is known to own what accrued); a: that task's set; c: the set of
 * the task found on the CPU; may_have_moved: that task may have changed
 * cgroups since it switched in, unseen by the program.
 */
ACC_INLINE enum settle_plan plan_settle(__u64 hidden, int have_a,
					const struct counted_set *a,
					const struct counted_set *c,
					int may_have_moved)
{
	if (!have_a)
		return PLAN_NONE;
	if (!hidden)
		return PLAN_ALL;
	if (hidden > 1 || may_have_moved || !set_listed(a) || !set_listed(c))
		return PLAN_NONE;
	return sets_equal(a, c) ? PLAN_COMMON : PLAN_SHARED;
}

#endif
