/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Every map and global of the switch counter, in the order the object has
 * them: those userspace reads and writes (host scope pins them, and
 * checks their types and sizes: a change to them is a change of
 * HOST_LAYOUT, host/host_layout.h), the per-CPU state the program keeps
 * for itself, and the typed pointers it reads the kernel's tasks through.
 */
#ifndef SHPMU_PROG_STATE_BPF_H
#define SHPMU_PROG_STATE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "bpf/prog/switch_counter.h"

/* The per-CPU events: index event * MAX_CPUS + cpu. They live as long as
 * the map, not as long as the fds they were put in with (host scope: the
 * process that opened them may be gone). */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
	__uint(max_entries, MAX_EVENTS *MAX_CPUS);
	__uint(map_flags, BPF_F_PRESERVE_ELEMS);
} events SEC(".maps");

/* CPUs the maps below have room for (possible CPUs), set at load. */
const volatile __u32 nr_cpus = 1;

/* Counted cgroups: id -> slot. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, MAX_SLOTS);
} cgroup_slots SEC(".maps");

/* Each CPU's view (switch_counter.h): its raw readings and their seq. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct cpu_view));
	__uint(max_entries, MAX_CPUS);
	__uint(map_flags, BPF_F_MMAPABLE);
} cpu_views SEC(".maps");

/* What each slot's cgroup counted on each CPU, at slot * nr_cpus + cpu.
 * Userspace sizes it at load and reads it through mmap. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct slot_totals));
	__uint(max_entries, MAX_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
} totals SEC(".maps");

/* Links of counted tasks and processes (switch_counter.h): made by
 * userspace, and here for the children of an inherit target. Neither map
 * is preallocated: an entry costs memory only while it counts. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(struct task_link));
	__uint(max_entries, MAX_TASK_LINKS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} task_links SEC(".maps");

/* Each counted task target's total of each event it is counted for. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(struct counter_value));
	__uint(max_entries, MAX_TASK_TARGETS *MAX_EVENTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} task_totals SEC(".maps");

/* The task targets a task is counted by: its thread's and its process's,
 * plain and inherit (switch_counter.h). */
enum { TT_TID_PLAIN, TT_TID_INHERIT, TT_TGID_PLAIN, TT_TGID_INHERIT, TT_N };

/* A task's counted set: the slots of the counted cgroups among its own
 * cgroup and its ancestors, and the task targets counting it. */
struct counted_set {
	__u64 leaf;	  /* the cgroup id it was walked for; 0: none */
	__u64 generation; /* of the counted cgroups, when it was walked */
	__u32 nslots;	  /* > CACHED_SLOTS: more than a set holds (walk) */
	__u32 slots[CACHED_SLOTS];
	__u32 targets[TT_N]; /* NO_TARGET: none */
	__u32 ntargets;	     /* how many are not NO_TARGET */
};

/* Each CPU keeps the counted sets of recent cgroups in a small table
 * indexed by the low bits of the cgroup id: a hit costs one array lookup
 * instead of a walk down the hierarchy. */
struct ancestors {
	__u64 leaf;	  /* the cgroup id; 0: empty */
	__u64 generation; /* of the counted set, when this was walked */
	__u32 nslots;	  /* > CACHED_SLOTS: too many to hold */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct ancestors));
	__uint(max_entries, CACHED_LEAVES);
} ancestors_cache SEC(".maps");

/* The slots of each cached entry: way * CACHED_SLOTS + i. A map of its own,
 * so that the walk fills it by key and the verifier need not track how
 * many it has filled. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, CACHED_LEAVES *CACHED_SLOTS);
} cached_slots SEC(".maps");

/*
 * What a CPU is accruing to, between settles: the counted set of the task
 * that switched in, copied out of the cache (a settle must not depend on
 * an entry the next resolve may evict), and that of the task that left at
 * the same switch, for a task that comes back unreported (see
 * unseen_switches).
 */
struct cpu_state {
	__u64 task;	 /* the task that switched in last; 0: none seen yet */
	__u64 last_task; /* the task that left at that switch */
	struct counted_set now, last;
	struct counted_set here; /* room to resolve the task found here */
	/* Switches not settled yet (the set stayed the same): the two
	 * switch kinds count them at the next settle. */
	__u32 pending_switches;
	__u32 pending_cgroup_switches;
	__u64 settled_jiffies; /* the clock tick of the CPU's last settle */
	/* A run is under way on this CPU: a flush test-run on its own CPU
	 * runs with interrupts on, and a move check may land inside it. */
	__u32 busy;
	__u32 recheck; /* a move check arrived during that run */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct cpu_state));
	__uint(max_entries, 1);
} cpu_states SEC(".maps");

/* Written by userspace through the mmapped .bss. */
__u32 num_events = 0;		  /* event indexes filled */
__u64 generation = 0;		  /* bumped when the counted set changes */
__u8 event_kind[MAX_EVENTS] = {}; /* enum counter_kind */
/*
 * Switches the tracepoint did not report: the task on a CPU is not the one
 * it last switched to (seen on a sandbox's kernel, whose supervisor's
 * threads are never reported leaving a CPU). Most are returns: the task
 * that left at the last reported switch came back, and what accrued goes
 * to the counted set it has: the one it left with, or, if it was moved
 * while away, the one it came back to (at a move check, where it may have
 * been moved while away or just now, as if just now). Otherwise it goes
 * to the task found on the CPU. Either way what the hidden task did in
 * its short run goes with it: strays are those where a counted cgroup was
 * on either side, so that a count may be off.
 */
__u64 unseen_switches = 0;
__u64 unseen_returns = 0;
__u64 unseen_strays = 0;
/* Moves of a running task the program settled at the moment they
 * happened (for tests and the debug log). */
__u64 moves_settled = 0;

/* How many counted cgroups have each low-bits value of their id: most
 * ancestors are not counted, and this array says so without a hash
 * lookup. */
__u16 counted_ids[COUNTED_FILTER_SIZE] = {};
/* The same for the links' tids and tgids (32-bit: the fork hook adds
 * to it atomically). */
__u32 counted_tasks[TASK_FILTER_SIZE] = {};
/* Children of an inherit target that found the links map full, and went
 * uncounted. */
__u64 children_lost = 0;
/* Nanoseconds per clock tick (USER_HZ), for start times. */
const volatile __u64 ns_per_tick = 10000000;

/* Typed pointers make the program's walks plain loads (the verifier
 * guards them) instead of a helper call per pointer followed. */
extern void *bpf_rdonly_cast(void *obj, __u32 btf_id) __ksym;

static __always_inline struct task_struct *as_task(__u64 task)
{
	return bpf_rdonly_cast((void *)task,
			       bpf_core_type_id_kernel(struct task_struct));
}

/* A task's cgroup on the unified hierarchy. Tasks travel between the
 * program's functions as plain numbers: global functions take no typed
 * pointers. */
static __always_inline struct cgroup *task_cgroup(__u64 task)
{
	return as_task(task)->cgroups->dfl_cgrp;
}

#endif
