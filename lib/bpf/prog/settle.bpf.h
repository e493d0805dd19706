/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Settling a CPU: crediting what accrued since its last settle to the
 * counted set it accrued to, knowing from the CPU's switch sequence how
 * many switches the kernel made there without running the program
 * (prog/counted_set.h says what may be credited then), the checks that
 * settle a task moved to another cgroup or found where the program did not
 * see it arrive, and the guard that keeps two runs on one CPU from
 * meeting.
 */
#ifndef SHPMU_PROG_SETTLE_BPF_H
#define SHPMU_PROG_SETTLE_BPF_H

#include "bpf/prog/cgroups.bpf.h"
#include "bpf/prog/deltas.bpf.h"
#include "bpf/prog/state.bpf.h"
#include "bpf/prog/tasks.bpf.h"

/* Both halves of a task's counted set. (The task half is a call only
 * where a link may count the task: a call and its return cost several ns
 * on kernels that guard returns against speculation, and most tasks have
 * no link.) */
static __always_inline void resolve(__u64 task, struct counted_set *out)
{
	resolve_cgroups(task, out);
	if (may_have_link(task)) {
		resolve_tasks(task, out);
		return;
	}
	for (__u32 i = 0; i < TT_N; i++)
		out->targets[i] = NO_TARGET;
	out->ntargets = 0;
}

/* The CPU's switches so far (at a switch, the one being made is not
 * counted yet): false where the CPU has no sequence event. The counter
 * alone: bpf_perf_event_read() skips the times that _value() works out,
 * which a settle pays on every switch. (Its errors come back as small
 * negative numbers, which no switch count reaches.) */
static __always_inline bool read_switches(__u32 cpu, __u64 *out)
{
	__u64 v;

	if (cpu >= MAX_CPUS)
		return false;
	v = bpf_perf_event_read(&events, SWITCH_SEQ_ROW * MAX_CPUS + cpu);
	if ((__s64)v < 0 && (__s64)v >= -4095)
		return false;
	*out = v;
	return true;
}

/* Credits delta to every slot and target of set (the CPU's task's, which
 * walks its cgroup when the set holds too many to list). False, crediting
 * nothing, where that walk would not find set's slots: the task moved
 * since the set was walked (a move check settles what it ran before). */
static __always_inline bool credit_all(const struct counted_set *set,
				       const struct slot_totals *delta)
{
	struct cgroup *cgrp = NULL;
	__u32 n = set->nslots;

	if (!set_listed(set)) {
		/* Read once: the cgroup checked is the cgroup walked. */
		cgrp = bpf_get_current_task_btf()->cgroups->dfl_cgrp;
		if (!set_walkable(set, cgrp->kn->id))
			return false;
	}
	/* (Only the targets there are: each call costs.) */
	for (__u32 i = 0; i < TT_N && set->ntargets; i++)
		if (set->targets[i] != NO_TARGET)
			add_task_delta(set->targets[i], delta);
	if (cgrp) {
		walk_cgroup(cgrp, delta, CACHED_LEAVES);
		return true;
	}
	/* Inline: the commonest settle credits one or two slots, and a
	 * call per slot cost more than its work. */
	for (__u32 i = 0; i < CACHED_SLOTS && i < n; i++)
		add_slot_delta(set->slots[i], delta);
	return true;
}

/* Credits delta to the slots and targets a and c both have (both listed):
 * they ran the whole interval, whichever task it was. */
__noinline int credit_shared(const struct counted_set *a,
			     const struct counted_set *c,
			     const struct slot_totals *delta)
{
	if (!a || !c)
		return 0;
	for (__u32 i = 0; i < TT_N && a->ntargets; i++)
		if (set_has_target(c, a->targets[i]))
			add_task_delta(a->targets[i], delta);
	for (__u32 i = 0; i < CACHED_SLOTS && i < a->nslots; i++)
		if (set_has_slot(c, a->slots[i]))
			add_delta(a->slots[i], delta);
	return 0;
}

/* Adds delta to the CPU's unattributed totals of the events read (only
 * those: userspace zeroes an event's totals before it puts the event in),
 * and its time (the longest an event was enabled in it) to
 * unattributed_ns. */
static __always_inline void
unattribute(struct cpu_view *view, const struct slot_totals *delta, __u32 read)
{
	__u64 ns = 0;

	for (__u32 e = 0; e < MAX_EVENTS; e++) {
		if (!(read & (1u << e)))
			continue;
		acc_add(&view->unattributed[e], &delta->events[e]);
		if (delta->events[e].enabled > ns)
			ns = delta->events[e].enabled;
	}
	view->unattributed_ns += ns;
}

/* The switches task has made leaving a CPU (the kernel counts them
 * before the tracepoint runs). */
static __always_inline __u64 switches_out(__u64 task)
{
	struct task_struct *t = as_task(task);

	return t->nvcsw + t->nivcsw;
}

/* Notes task as the one that switched in, and its switches out so far. */
static __always_inline void arrived(struct cpu_state *st, __u64 task)
{
	st->task = task;
	st->task_switches = switches_out(task);
}

/*
 * Whether the CPU made a switch the program did not see since task
 * arrived: task is not the one found now (leaving, with leaving 1), or
 * it is but has left meanwhile. Every hidden switch is found so: the
 * first one since the program last ran takes the task it saw arrive off
 * the CPU, which either is not found again or has one switch out more.
 * Plain loads, where reading the switch sequence costs a perf event read
 * on every settle.
 */
static __always_inline int missed(const struct cpu_state *st, __u64 task,
				  __u32 leaving)
{
	return st->task != task ||
	       switches_out(task) != st->task_switches + leaving;
}

/* What a settle knows of the interval it closes. */
struct interval {
	__u64 task;	    /* the task on the CPU now (at a switch: leaving) */
	__u64 hidden;	    /* switches not seen; HIDDEN_UNKNOWN */
	__u32 now_switches; /* the switch being made: 1, else 0 */
	__u32 now_cgroup_switches;
	int may_have_moved; /* the task may have changed cgroups unseen */
	int missed;	    /* missed(): a switch was hidden since the last */
};

/* Adds this CPU's deltas since the last settle to whom the plan says
 * (prog/counted_set.h). The switch kinds count every switch the interval
 * holds: those settled now, those seen before, those hidden (each of
 * which may have changed cgroups). */
__noinline int credit(struct cpu_state *st, struct cpu_view *view,
		      const struct interval *in)
{
	/* An event not read this time adds zeros. */
	struct slot_totals delta = {};
	__u32 hidden, switches, cgroup_switches;
	enum settle_plan plan;
	__u32 read;

	if (!st || !view || !in)
		return 0;
	hidden = in->hidden == HIDDEN_UNKNOWN ? 1 : (__u32)in->hidden;
	switches = st->pending_switches + in->now_switches + hidden;
	cgroup_switches =
		st->pending_cgroup_switches + in->now_cgroup_switches + hidden;
	plan = PLAN_ALL;
	if (in->hidden || !st->task) {
		resolve(in->task, &st->here);
		plan = plan_settle(in->hidden, st->task != 0, &st->now,
				   &st->here, in->may_have_moved);
		/* One hidden switch between the same cgroup changed none. */
		if (plan != PLAN_NONE && st->now.leaf == st->here.leaf)
			cgroup_switches--;
	}
	/* More hidden: the task seen last may have left, been moved
	 * asleep and come back, and the switches seen since were told
	 * from the cgroup it had (st->now.leaf). Any switch may have
	 * changed cgroups: the unattributed count says so. */
	if (in->hidden > 1)
		cgroup_switches = switches;
	st->pending_switches = 0;
	st->pending_cgroup_switches = 0;
	read = take_deltas(switches, cgroup_switches, view, &delta);
	if (!read)
		return 0;
	if ((plan == PLAN_ALL || plan == PLAN_COMMON) &&
	    !credit_all(&st->now, &delta)) {
		/* A set too big to list whose task moved: the slots it
		 * lists (its top counted ancestors) and its targets are
		 * still its own, the rest cannot be found. */
		plan = PLAN_SHARED;
		credit_shared(&st->now, &st->now, &delta);
	} else if (plan == PLAN_SHARED) {
		credit_shared(&st->now, &st->here, &delta);
	}
	if (plan == PLAN_SHARED || plan == PLAN_NONE) {
		unattribute(view, &delta, read);
		__sync_fetch_and_add(&unattributed_settles, 1);
	}
	return 0;
}

/* credit(), with the CPU's view marked as being written for readers in
 * userspace (see struct cpu_view), after reading where the CPU's switch
 * sequence stands: in->hidden is filled in here. */
static __always_inline void settle(struct cpu_state *st, struct interval *in)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_view *view = bpf_map_lookup_elem(&cpu_views, &cpu);
	/* Without a hidden switch the sequence stands where the switches
	 * seen put it: it is read only where one was (see missed()). */
	__u64 switches = st->settled_switches + st->pending_switches;
	bool known = st->switches_known;

	if (!view || !st)
		return;
	in->hidden = 0;
	if (!st->task || !known || in->missed) {
		known = read_switches(cpu, &switches);
		if (known && st->switches_known)
			in->hidden =
				hidden_switches(st->settled_switches,
						st->pending_switches, switches);
		/* Missed, but no sequence says how often (or one that
		 * says otherwise: trust neither). */
		if (st->task && !in->hidden)
			in->hidden = HIDDEN_UNKNOWN;
	}
	__sync_fetch_and_add(&view->seq, 1);
	credit(st, view, in);
	if (in->hidden && in->hidden != HIDDEN_UNKNOWN) {
		view->unseen += in->hidden;
		__sync_fetch_and_add(&unseen_switches, in->hidden);
	}
	view->switches = switches + in->now_switches;
	__sync_fetch_and_add(&view->seq, 1);
	st->settled_switches = switches + in->now_switches;
	st->switches_known = known;
	st->settled_jiffies = bpf_jiffies64();
}

/* Settles what accrued and starts again from the set of the task here now
 * (the counted set may have changed, or the task may not be the one seen
 * arriving): a flush, or a check that found a change. */
__noinline int restart(struct cpu_state *st, int may_have_moved)
{
	struct interval in = {.task = bpf_get_current_task(),
			      .may_have_moved = may_have_moved};

	if (!st)
		return 0;
	in.missed = missed(st, in.task, 0);
	settle(st, &in);
	arrived(st, in.task);
	resolve(in.task, &st->now);
	return 0;
}

/* Where a check runs (check_cpu()'s at_tick). */
#define AT_NO_TIMER   0
#define AT_TIMER      1 /* an hrtimer's expiry */
#define AT_SCHED_TICK 2 /* the scheduler tick's */

/*
 * Whether the CPU must be settled now: the running task moved to another
 * cgroup (what it ran before goes to the cgroups it left), or it is not
 * the task that switched in last, or, at a timer, a counted task is
 * running: at the scheduler tick always, at another timer if it has run
 * unsettled since an earlier clock tick. The tick is where the scheduler
 * takes the CPU from a task that used its slice (the switch follows the
 * tick's handler): settled there, a run that then leaves by a hidden
 * switch leaves only the microseconds between the two unattributed, and
 * no run goes unsettled longer than a tick (where the tick's function was
 * found, and the CPU ticks: not a nohz_full one). (The jiffy a tick ends is
 * still the current one at its expiry, so the jiffy test alone let a run
 * begun in it go on unsettled through the next.) at_move: called where a
 * task is being moved, which may be the one found here, before or after
 * it came.
 */
__noinline int check_cpu(struct cpu_state *st, int at_move, int at_tick)
{
	__u64 task = bpf_get_current_task();

	if (!st || !st->task)
		return 0;
	if (missed(st, task, 0))
		return restart(st, at_move || !sees_moves);
	if (bpf_get_current_cgroup_id() != st->now.leaf) {
		restart(st, 0);
		__sync_fetch_and_add(&moves_settled, 1);
		return 0;
	}
	/* A counted task's run, settled once a tick: should it leave by a
	 * hidden switch, only the part since goes unattributed. The settle
	 * also finds switches hidden among tasks that came back. */
	if ((at_tick == AT_SCHED_TICK ||
	     (at_tick && bpf_jiffies64() != st->settled_jiffies)) &&
	    (st->now.nslots || st->now.ntargets)) {
		struct interval in = {.task = task,
				      .may_have_moved = !sees_moves};

		settle(st, &in);
	}
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
	/* A check that landed inside this run: do it now, as a move. */
	if (st->recheck) {
		st->recheck = 0;
		check_cpu(st, 1, AT_NO_TIMER);
	}
	st->busy = 0;
}

#endif
