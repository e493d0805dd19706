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

#include "bpf/prog/counted_set.h"
#include "bpf/prog/switch_counter.h"

/* The per-CPU events: index row * MAX_CPUS + cpu, a row for each counting
 * attr, then the CPUs' switch sequences (SWITCH_SEQ_ROW). They live as
 * long as the map, not as long as the fds they were put in with (host
 * scope: the process that opened them may be gone). */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
	__uint(max_entries, EVENTS_ROWS *MAX_CPUS);
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
 * an entry the next resolve may evict), and where the CPU's switch
 * sequence stood at that settle.
 */
struct cpu_state {
	__u64 task; /* the task that switched in last; 0: none seen yet */
	__u64 task_switches; /* its switches out when it did */
	struct counted_set now;
	/* The CPU's switches as of its last settle, the one made there
	 * included; valid when switches_known. */
	__u64 settled_switches;
	__u32 switches_known;
	/* Switches not settled yet (the set stayed the same): the two
	 * switch kinds count them at the next settle, and the sequence
	 * expects them. */
	__u32 pending_switches;
	__u32 pending_cgroup_switches;
	__u32 runs;	       /* switch runs, for the skip_every test knob */
	__u64 settled_jiffies; /* the clock tick of the CPU's last settle */
	/* A run is under way on this CPU: a flush test-run on its own CPU
	 * runs with interrupts on, and a move check may land inside it. */
	__u32 busy;
	__u32 recheck; /* a move check arrived during that run */
	/* Room to resolve the task found here: last, as only a hidden
	 * switch's settle uses it, so that what every switch reads lies in
	 * the first cache lines. */
	struct counted_set here;
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
/* Switches the kernel made on any CPU without running the program (each
 * CPU's own in its view). */
__u64 unseen_switches = 0;
/* Settles that sent a delta to a CPU's unattributed totals. */
__u64 unattributed_settles = 0;
/* Set by the loader once the csd hook is attached: a running task moved
 * to another cgroup is then settled when it moves. Else a task may have
 * changed cgroups since it switched in, which a hidden switch's settle
 * must not assume away. */
__u32 sees_moves = 0;
/* The function perf's cgroup controller has a moved task's CPU run (the
 * kernel's remote_function), found by find_kernel_fns at load: an IPI that
 * runs another function moves no task. 0: unknown, any IPI may. */
__u64 move_ipi_fn = 0;
/* What remote_function calls to move a task (__perf_cgroup_move), found
 * likewise; 0: unknown, any call of remote_function may move one. (In the
 * kernel, not by libbpf from /proc/kallsyms: that parse cost every load
 * about 150 ms.) */
__u64 move_task_fn = 0;
/* The function of the scheduler tick's hrtimer (tick_sched_timer up to
 * Linux 6.8, tick_nohz_handler from 6.9), found likewise: at the tick a
 * counted run is settled, whenever the CPU last settled. 0: unknown (or
 * addresses withheld, as kptr_restrict does), and the tick is an hrtimer
 * expiry like any other. */
__u64 tick_fn = 0;
/* Moves of a running task the program settled at the moment they
 * happened (for tests and the debug log). */
__u64 moves_settled = 0;

/* How many counted cgroups have each low-bits value of their id: most
 * ancestors are not counted, and this array says so without a hash
 * lookup. */
__u16 counted_ids[COUNTED_FILTER_SIZE] = {};
/* The same for the links: tids in its lower half, tgids in its upper
 * (task_filter_index()). 32-bit: the fork hook adds
 * to it atomically. */
__u32 counted_tasks[TASK_FILTER_SIZE] = {};
/* Children of an inherit target that found the links map full, and went
 * uncounted. */
__u64 children_lost = 0;
/* Nanoseconds per clock tick (USER_HZ), for start times. */
const volatile __u64 ns_per_tick = 10000000;
/* Test knobs, fixed at load (read-only to every process after it): skip
 * the switch runs whose outgoing thread is skip_tid, or every
 * skip_every-th switch run of a CPU, as a kernel that hides switches
 * does. Zero in every library build; the suites set them through
 * shpmu__bpf_test_skip(). */
const volatile __u32 skip_tid = 0;
const volatile __u32 skip_every = 0;

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
