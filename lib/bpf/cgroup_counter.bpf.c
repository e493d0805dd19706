// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One perf event per CPU counts any number of cgroups. At every context
 * switch the delta of each CPU's events since the last switch goes to the
 * outgoing task's cgroup and to each of its ancestors that is counted
 * (seed 000's design, as perf's bperf_cgroup does it). Userspace flushes
 * the running delta before a read by test-running this program on each
 * CPU, with all-zero arguments.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "cgroup_counter.h"

/* The per-CPU events: index event * MAX_CPUS + cpu. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
	__uint(max_entries, MAX_EVENTS * MAX_CPUS);
} events SEC(".maps");

/* Counted cgroups: id -> slot. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, MAX_SLOTS);
} cgroup_slots SEC(".maps");

/* Each CPU's reading of each event at the last switch. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct bpf_perf_event_value));
	__uint(max_entries, MAX_EVENTS);
} previous SEC(".maps");

/* What each slot's cgroup counted, per CPU: all its events in one value,
 * so a counted ancestor costs one lookup. Userspace sizes it at load. */
struct slot_totals {
	struct bpf_perf_event_value events[MAX_EVENTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct slot_totals));
	__uint(max_entries, MAX_SLOTS);
} totals SEC(".maps");

/* Each CPU remembers the counted ancestors of recent cgroups that
 * switched out there, in a small table indexed by the low bits of the
 * cgroup id: a hit costs one array lookup instead of a walk down the
 * hierarchy with a filter check per level. */
struct ancestors {
	__u64 leaf;	   /* the task's own cgroup id; 0: empty */
	__u64 generation;  /* of the counted set, when this was walked */
	__u32 nslots;
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
	__uint(max_entries, CACHED_LEAVES * CACHED_SLOTS);
} cached_slots SEC(".maps");

/* Written by userspace through the mmapped .bss. */
__u32 num_events = 0;		    /* event indexes filled */
__u64 generation = 0;		    /* bumped when the counted set changes */
__u8 event_kind[MAX_EVENTS] = {};    /* enum counter_kind */
/* Written by the program for userspace. */
__u64 incoming[MAX_CPUS] = {}; /* the task each CPU switched to last */
/* Switches the tracepoint did not report: a CPU's outgoing task was not
 * the one it last switched to (seen on a sandbox's kernel for its
 * supervisor's threads). The delta around such a switch goes to the next
 * task that leaves. */
__u64 unseen_switches = 0;

/* How many counted cgroups have each low-bits value of their id: most
 * ancestors are not counted, and this array says so without a hash
 * lookup. */
__u16 counted_ids[COUNTED_FILTER_SIZE] = {};

/* The switch path counts context-switches and cgroup-switches after this
 * tracepoint has fired, so their counter would credit each switch to the
 * next task to leave the CPU. The program counts those switches itself,
 * for the task that leaves, as the kernel does for classic events. */
static __always_inline __u64 switch_count(__u8 kind, __u64 next_task)
{
	struct task_struct *next = (struct task_struct *)next_task;

	if (kind == KIND_CONTEXT_SWITCHES)
		return 1;
	return BPF_CORE_READ(next, cgroups, dfl_cgrp, kn, id) !=
	       bpf_get_current_cgroup_id();
}

/* Event e's change on this CPU since the last switch or flush, into
 * delta. Returns false when the CPU has no event e. */
static __always_inline bool take_delta(__u32 e, __u32 cpu, __u64 next_task,
				       struct bpf_perf_event_value *delta)
{
	struct bpf_perf_event_value now, *prev;
	__u8 kind = event_kind[e];

	if (bpf_perf_event_read_value(&events, e * MAX_CPUS + cpu, &now,
				      sizeof(now)))
		return false;
	prev = bpf_map_lookup_elem(&previous, &e);
	if (!prev)
		return false;
	delta->counter = now.counter - prev->counter;
	if (kind != KIND_READ)
		delta->counter = next_task ? switch_count(kind, next_task) : 0;
	delta->enabled = now.enabled - prev->enabled;
	delta->running = now.running - prev->running;
	*prev = now;
	return true;
}

/*
 * The pieces below are functions of their own (global, so not inlined):
 * the verifier checks each once instead of along every path through the
 * others, which keeps the program within its limits.
 */

/* Every event's delta on this CPU. next_task: the incoming task of a real
 * switch, 0 for a flush. Returns whether any event was read. */
__noinline int take_deltas(__u64 next_task, struct slot_totals *delta)
{
	__u32 cpu = bpf_get_smp_processor_id(), used = num_events;
	int any = 0;

	if (!delta || cpu >= MAX_CPUS)
		return 0;
	/* Unrolled, so that each delta->events[e] is at a constant
	 * offset. */
#pragma clang loop unroll(full)
	for (__u32 e = 0; e < MAX_EVENTS; e++)
		if (e < used && take_delta(e, cpu, next_task, &delta->events[e]))
			any = 1;
	return any;
}

/* Adds delta to what the slot's cgroup counted on this CPU. */
__noinline int add_delta(__u32 slot, const struct slot_totals *delta)
{
	struct slot_totals *total = bpf_map_lookup_elem(&totals, &slot);
	__u32 used = num_events;

	if (!total || !delta)
		return 0;
	for (__u32 e = 0; e < MAX_EVENTS && e < used; e++) {
		total->events[e].counter += delta->events[e].counter;
		total->events[e].enabled += delta->events[e].enabled;
		total->events[e].running += delta->events[e].running;
	}
	return 0;
}

/* One walk down the current task's cgroups, level by level from the root
 * to its own (bpf_loop: the verifier checks one level, whatever the
 * depth). */
struct walk {
	const struct slot_totals *delta;
	__u32 way;    /* the cache entry being filled */
	__u32 nslots; /* counted ancestors found so far */
};

/* Adds the delta to the ancestor at level if it is counted, and notes its
 * slot. Returns 1 (stop) past the task's own cgroup. */
static long walk_level(__u32 level, void *arg)
{
	struct walk *w = arg;
	__u64 id = bpf_get_current_ancestor_cgroup_id(level);
	__u32 *slot;

	if (!id)
		return 1;
	if (!counted_ids[id & (COUNTED_FILTER_SIZE - 1)])
		return 0;
	slot = bpf_map_lookup_elem(&cgroup_slots, &id);
	if (!slot)
		return 0;
	add_delta(*slot, w->delta);
	if (w->nslots < CACHED_SLOTS) {
		__u32 key = w->way * CACHED_SLOTS + w->nslots;
		__u32 *cached = bpf_map_lookup_elem(&cached_slots, &key);

		if (cached)
			*cached = *slot;
	}
	w->nslots++;
	return 0;
}

SEC("raw_tp/sched_switch")
int on_switch(__u64 *ctx)
{
	/* An event not read this time adds zeros. */
	struct slot_totals delta = {};
	/* A real switch has an outgoing and an incoming task; a flush passes
	 * zeros. */
	__u64 next_task = ctx[1] ? ctx[2] : 0;
	__u32 cpu = bpf_get_smp_processor_id();
	struct ancestors *cached;
	struct walk w = { .delta = &delta };
	__u64 gen, leaf;
	__u32 way;

	if (cpu < MAX_CPUS) {
		/* A flush runs in whatever task the CPU is running. */
		__u64 outgoing = next_task ? ctx[1] : bpf_get_current_task();

		if (incoming[cpu] && incoming[cpu] != outgoing)
			__sync_fetch_and_add(&unseen_switches, 1);
		incoming[cpu] = next_task ? next_task : outgoing;
	}
	if (!take_deltas(next_task, &delta))
		return 0;
	/* Before the walk: a change to the counted set after this read
	 * makes what the walk caches stale at once. */
	gen = *(volatile __u64 *)&generation;
	leaf = bpf_get_current_cgroup_id();
	way = leaf & (CACHED_LEAVES - 1);
	cached = bpf_map_lookup_elem(&ancestors_cache, &way);
	if (!cached || !leaf)
		return 0;
	if (cached->leaf == leaf && cached->generation == gen) {
		__u32 n = cached->nslots;

		for (__u32 i = 0; i < CACHED_SLOTS && i < n; i++) {
			__u32 key = way * CACHED_SLOTS + i;
			__u32 *slot = bpf_map_lookup_elem(&cached_slots, &key);

			if (slot)
				add_delta(*slot, &delta);
		}
		return 0;
	}
	w.way = way;
	bpf_loop(MAX_LEVELS, walk_level, &w, 0);
	/* More counted ancestors than an entry holds: walk every time. */
	cached->leaf = w.nslots <= CACHED_SLOTS ? leaf : 0;
	cached->generation = gen;
	cached->nslots = w.nslots;
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
