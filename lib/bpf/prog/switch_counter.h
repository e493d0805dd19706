/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the BPF switch counter and its userspace side agree on. Host scope
 * shares these layouts between processes through pinned maps: a change to
 * any of them is a change of HOST_LAYOUT (host/host_layout.h).
 */
#ifndef SHPMU_SWITCH_COUNTER_H
#define SHPMU_SWITCH_COUNTER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define MAX_EVENTS 8 /* distinct counting attrs */
#define MAX_CPUS   1024
/* The events map's rows: MAX_EVENTS counting attrs, then each CPU's
 * switch sequence: a counting context-switches event of the CPU, which
 * the kernel counts at every switch, whether or not it runs the program
 * there (see struct cpu_view). */
#define SWITCH_SEQ_ROW MAX_EVENTS
#define EVENTS_ROWS    (MAX_EVENTS + 1)
#define MAX_SLOTS      16384 /* counted cgroups */
/* How deep the walk up a task's cgroups may go: far below any real
 * hierarchy; bpf_loop makes the depth cost nothing to verify. */
#define MAX_LEVELS	    65536
#define COUNTED_FILTER_SIZE 65536 /* a power of two */
#define CACHED_LEAVES	    8	  /* per CPU; a power of two */
#define CACHED_SLOTS                                                           \
	8 /* counted ancestors a cached leaf holds; a power of two */

/* Counted tasks and processes: targets, each with one total per event
 * counted for it; and links from a tid or tgid to the targets that count
 * it (its own, and the inherit target of the process it was forked
 * from). Both maps hold entries only while something is counted. */
#define MAX_TASK_TARGETS 16384
#define MAX_TASK_LINKS	 65536
#define NO_TARGET	 0xffffffffu
#define TASK_FILTER_SIZE 32768 /* a power of two */

enum task_link_kind {
	LINK_TID = 1,  /* a thread, alone */
	LINK_TGID = 2, /* every thread of a process */
};

/* Which of a link's targets: one counts what was asked for alone, the
 * other (attr.inherit) also the children forked from now on. */
enum { TARGET_PLAIN = 0, TARGET_INHERIT = 1 };

static inline __u64 task_link_key(__u32 kind, __u32 id)
{
	return (__u64)kind << 32 | id;
}

/* The entry of the links filter (counted_tasks) that counts the links of
 * (kind, id): tids in its lower half, tgids in its upper, so that a
 * counted process does not send every switch of its main thread (whose
 * tid is its tgid) to look for a thread link too. */
static inline __u32 task_filter_index(__u32 kind, __u32 id)
{
	return (id & (TASK_FILTER_SIZE / 2 - 1)) |
	       (kind == LINK_TGID ? TASK_FILTER_SIZE / 2 : 0);
}

/* What a link key leads to, for the task that had that id when it was
 * counted: start_ticks is its start (the thread group leader's for
 * LINK_TGID) in clock ticks after boot, as /proc/PID/stat says, so that a
 * reused id counts nothing. */
struct task_link {
	__u64 start_ticks;
	__u32 target[2]; /* TARGET_PLAIN, TARGET_INHERIT; NO_TARGET: none */
};

/* A target's total of one event: task_totals key target * MAX_EVENTS + e. */
static inline __u64 task_total_key(__u32 target, __u32 e)
{
	return (__u64)target * MAX_EVENTS + e;
}

/* How the program takes an event's count at a switch. */
enum counter_kind {
	KIND_READ = 0,		   /* the counter's delta */
	KIND_CONTEXT_SWITCHES = 1, /* 1 per switch */
	KIND_CGROUP_SWITCHES = 2,  /* 1 per switch to another cgroup */
	/* A software clock (task-clock, cpu-clock): it counts the ns it is
	 * enabled, and never multiplexes, so its times are its count's
	 * change and only the count is read (bpf_perf_event_read_value
	 * works the times out again, at a cost on every settle). A
	 * program that does not know this kind reads it as KIND_READ, which
	 * credits the same. */
	KIND_CLOCK = 3,
};

/* One event's value, as bpf_perf_event_read_value() gives it. */
struct counter_value {
	__u64 counter, enabled, running;
};

/* What one slot's cgroup counted on one CPU: all its events in one value,
 * so that a counted ancestor costs one lookup. The totals map holds one
 * per slot per CPU, at slot * nr_cpus + cpu, so that userspace reads it
 * through mmap. */
struct slot_totals {
	struct counter_value events[MAX_EVENTS];
};

/*
 * One CPU's view, in an mmapable map indexed by CPU: the raw reading of
 * each event at the CPU's last settle (a CPU target's count, and the base
 * the next delta starts from). seq is odd while the CPU's program run
 * writes this view or the CPU's totals: a reader copies between two equal
 * even values of it, as with the kernel's seqcount.
 *
 * A kernel may make a switch without running the program (see
 * prog/counted_set.h): what accrued across such a switch, where no
 * counted set can be proved its own, goes to unattributed instead of any
 * slot or task target. A handle's error bound is how much of it accrued
 * on its CPUs during its windows.
 */
struct cpu_view {
	__u64 seq;
	__u64 switches; /* the CPU's switches as of its last settle */
	struct counter_value raw[MAX_EVENTS];
	struct counter_value unattributed[MAX_EVENTS];
	__u64 unseen;	       /* switches the program did not see */
	__u64 unattributed_ns; /* time whose deltas went unattributed */
	__u64 pad[4];	       /* a CPU's view fills cache lines of its own */
};

#endif
