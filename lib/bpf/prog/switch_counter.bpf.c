// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One perf event per CPU counts any number of cgroups, tasks and
 * processes (one shared event per CPU, as perf's bperf_cgroup). Each CPU
 * remembers the counted set of the task that switched in: the counted
 * cgroups among its ancestors, and the targets counting its thread or its
 * process. The delta of the CPU's events goes to that set when it is
 * settled:
 *
 *   - at a context switch, unless the incoming task has the same set,
 *     neither task is counted by itself and the CPU settled in this clock
 *     tick (then nothing is read: the time keeps accruing to the same
 *     targets; the commonest such switch, within one cgroup, is told
 *     before anything is resolved);
 *   - when the running task is moved to another cgroup: perf's own cgroup
 *     controller then runs a function on the task's CPU (an IPI, or a local
 *     call when the task moves itself), which is where classic cgroup
 *     events switch too; the csd_function_entry tracepoint runs us there;
 *   - when userspace flushes a CPU before a read, by test-running on_switch
 *     on that CPU with all-zero arguments;
 *   - when a check (on_tick, at every hrtimer expiry) finds the CPU made a
 *     switch the program did not see.
 *
 * A kernel may switch without running the program (one that hides some
 * tasks from BPF, or a run skipped for recursion): each settle reads the
 * CPU's switch sequence to know how many it missed, and what it cannot
 * prove whose is goes to the CPU's unattributed totals
 * (prog/counted_set.h), never to a guess.
 */
#include "bpf/prog/settle.bpf.h"
#include "bpf/prog/state.bpf.h"
#include "bpf/prog/tasks.bpf.h"

/* Whether the switch to next needs nothing read, told without resolving
 * it: next is in the very cgroup the CPU's set was walked for, at the
 * counted cgroups' current generation, no link can count it (the filter
 * holds none for its tid or tgid), the outgoing set has no task target,
 * and the CPU settled in this clock tick. Most switches within a counted
 * cgroup are of this kind; the rest take the full resolve. */
static __always_inline int quick_same(const struct cpu_state *st, __u64 next)
{
	if (st->now.ntargets ||
	    st->now.generation != *(volatile __u64 *)&generation ||
	    bpf_jiffies64() != st->settled_jiffies)
		return 0;
	if (task_cgroup(next)->kn->id != st->now.leaf)
		return 0;
	return !may_have_link(next);
}

/* The test knobs (see skip_tid): whether to act as a kernel that runs no
 * program at this switch. The verifier drops this where both are 0. */
static __always_inline int skipped(__u64 prev)
{
	__u32 zero = 0;
	struct cpu_state *st;

	if (!prev)
		return 0;
	if (skip_tid && as_task(prev)->pid == skip_tid)
		return 1;
	if (!skip_every)
		return 0;
	st = bpf_map_lookup_elem(&cpu_states, &zero);
	return st && ++st->runs % skip_every == 0;
}

SEC("raw_tp/sched_switch")
int on_switch(__u64 *ctx)
{
	/* A real switch has an outgoing and an incoming task; a flush
	 * passes zeros. */
	__u64 prev = ctx[1], next = prev ? ctx[2] : 0, prev_leaf;
	struct interval in = {.task = prev, .now_switches = 1};
	struct counted_set incoming = {};
	struct cpu_state *st;
	int seen_all;

	if (skipped(prev))
		return 0;
	st = enter();
	/* A flush that found the CPU busy (another process's flush of it
	 * may be under way there) asks its caller to try again. */
	if (!st)
		return prev ? 0 : 1;
	if (!next) {
		restart(st, !sees_moves);
		goto out;
	}
	/* (The switches below are settled later only if none was hidden
	 * since the last: else the settle must count them now.) */
	seen_all = !missed(st, prev, 1);
	if (seen_all && quick_same(st, next)) {
		/* The leaving task's set is the CPU's: so is the next's. */
		st->pending_switches++;
		arrived(st, next);
		goto out;
	}
	prev_leaf =
		st->task == prev ? st->now.leaf : bpf_get_current_cgroup_id();
	resolve(next, &incoming);
	if (seen_all && sets_continue(&st->now, &incoming) &&
	    bpf_jiffies64() == st->settled_jiffies) {
		/* Nothing to read: the time goes on to the same cgroups. */
		st->pending_switches++;
		st->pending_cgroup_switches += prev_leaf != incoming.leaf;
	} else {
		/* (A task found leaving that was not seen arriving is
		 * settled here: settle() counts the switches hidden.) */
		in.now_cgroup_switches = prev_leaf != incoming.leaf;
		in.may_have_moved = !sees_moves;
		in.missed = !seen_all;
		settle(st, &in);
	}
	arrived(st, next);
	st->now = incoming;
out:
	leave(st);
	return 0;
}

static __always_inline int on_check_point(int at_move, int at_tick)
{
	struct cpu_state *st = enter();

	if (st) {
		check_cpu(st, at_move, at_tick);
		leave(st);
	}
	return 0;
}

/* Whether timer (an expiring struct hrtimer) is the scheduler tick's. */
static __always_inline int is_sched_tick(__u64 timer)
{
	struct hrtimer *t;

	if (!tick_fn || !timer || !bpf_core_type_exists(struct hrtimer))
		return 0;
	t = bpf_rdonly_cast((void *)timer,
			    bpf_core_type_id_kernel(struct hrtimer));
	if (!bpf_core_field_exists(t->function))
		return 0;
	return (__u64)t->function == tick_fn;
}

/* Every hrtimer expiry, the scheduler tick's included: a switch the kernel
 * hid is found within a tick of the task that followed it, which bounds
 * what it leaves unattributed. (Its own program: the switch program keeps
 * one attach point.) */
SEC("raw_tp/hrtimer_expire_entry")
int on_tick(__u64 *ctx)
{
	return on_check_point(0,
			      is_sched_tick(ctx[0]) ? AT_SCHED_TICK : AT_TIMER);
}

/*
 * Whether a function call from another CPU (fn, csd) may be perf moving
 * the task running here: remote_function() (task_function_call()) calling
 * __perf_cgroup_move for this very task. Any other moves no task here,
 * and a check for a move is a plain one (a move check that finds a hidden
 * switch takes the task found for moved, and its interval unattributed).
 * Perf alone calls remote_function hundreds to thousands of times a
 * second a CPU on a busy machine, for events' enables, disables and
 * reads. A local call has no csd to look into: it may be a move. Where
 * the functions were not found, any call may be.
 */
static __always_inline int may_move_current(__u64 fn, __u64 csd)
{
	struct remote_function_call *tfc;
	struct __call_single_data *call;
	__u32 type;

	if (!move_ipi_fn)
		return 1;
	if (fn != move_ipi_fn)
		return 0;
	if (!csd || !move_task_fn ||
	    !bpf_core_type_exists(struct remote_function_call))
		return 1;
	type = bpf_core_type_id_kernel(struct __call_single_data);
	call = bpf_rdonly_cast((void *)csd, type);
	type = bpf_core_type_id_kernel(struct remote_function_call);
	tfc = bpf_rdonly_cast(call->info, type);
	return (__u64)tfc->func == move_task_fn &&
	       (__u64)tfc->p == bpf_get_current_task();
}

/* Perf's cgroup controller calls a function on a moved task's CPU, where
 * the task runs (an IPI; a local call when it moves itself). Other
 * functions called there (a flush's test-run, a TLB shootdown, perf's
 * other calls) move no task: they are checks like a tick's. */
SEC("raw_tp/csd_function_entry")
int on_ipi(__u64 *ctx)
{
	return on_check_point(may_move_current(ctx[0], ctx[1]), AT_NO_TIMER);
}

/* Run once at load (a test-run): where the functions of a move's IPI
 * are, and the scheduler tick's. */
SEC("syscall")
int find_kernel_fns(void *ctx)
{
	static const char ipi[] = "remote_function";
	static const char move[] = "__perf_cgroup_move";
	/* Up to 6.8 the tick's hrtimer runs tick_sched_timer, and a
	 * tick_nohz_handler exists too, for the low-resolution tick; from
	 * 6.9 the first is gone and the hrtimer runs the second. */
	static const char old_tick[] = "tick_sched_timer";
	static const char tick[] = "tick_nohz_handler";
	__u64 addr = 0;

	if (!bpf_kallsyms_lookup_name(ipi, sizeof(ipi), 0, &addr))
		move_ipi_fn = addr;
	addr = 0;
	if (!bpf_kallsyms_lookup_name(move, sizeof(move), 0, &addr))
		move_task_fn = addr;
	addr = 0;
	if (!bpf_kallsyms_lookup_name(old_tick, sizeof(old_tick), 0, &addr) ||
	    !bpf_kallsyms_lookup_name(tick, sizeof(tick), 0, &addr))
		tick_fn = addr;
	return 0;
}

/* Where the kernel has no csd tracepoints (before 6.4): the moves a task
 * makes itself are still settled at once; a running task moved by another
 * is settled at its next switch. */
SEC("raw_tp/cgroup_attach_task")
int on_attach(__u64 *ctx)
{
	return on_check_point(1, AT_NO_TIMER);
}

/* A new thread is in its process's targets already; a thread of an
 * inherit task target, and a new process forked from an inherit process
 * target, get links of their own. Runs before the child first runs. */
SEC("raw_tp/sched_process_fork")
int on_fork(__u64 *ctx)
{
	struct task_struct *parent = as_task(ctx[0]), *child = as_task(ctx[1]);
	__u32 child_pid = child->pid, child_tgid = child->tgid;

	inherit_link(LINK_TID, parent->pid, parent, child_pid, child);
	if (child_pid == child_tgid)
		inherit_link(LINK_TGID, parent->tgid, parent->group_leader,
			     child_tgid, child);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
