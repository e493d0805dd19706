/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a CPU's events counted since its last settle, and how a counted
 * cgroup's slot is credited with it.
 *
 * The global functions here and in the other headers are functions of
 * their own (global, so not inlined): the verifier checks each once
 * instead of along every path through the others, which keeps the program
 * within its limits.
 */
#ifndef SHPMU_PROG_DELTAS_BPF_H
#define SHPMU_PROG_DELTAS_BPF_H

#include "bpf/prog/accumulate.h"
#include "bpf/prog/state.bpf.h"

/* Event e's change on this CPU since the last settle, into delta. The
 * switch path counts context-switches and cgroup-switches after the
 * tracepoint has fired, so their counter would credit each switch to the
 * next task to leave the CPU: for those two the switches this settle
 * covers are given. Returns false when the CPU has no event e. */
static __always_inline bool take_delta(__u32 e, __u32 cpu, __u32 switches,
				       __u32 cgroup_switches,
				       struct counter_value *prev,
				       struct counter_value *delta)
{
	struct bpf_perf_event_value read;
	struct counter_value now;
	__u8 kind = event_kind[e];
	__u64 count;

	if (kind == KIND_CLOCK) {
		/* (Errors come back as small negative numbers, which no
		 * count of ns reaches in centuries.) */
		count = bpf_perf_event_read(&events, e * MAX_CPUS + cpu);
		if ((__s64)count < 0 && (__s64)count >= -4095)
			return false;
		acc_delta_clock(prev, count, delta);
		return true;
	}
	if (bpf_perf_event_read_value(&events, e * MAX_CPUS + cpu, &read,
				      sizeof(read)))
		return false;
	now.counter = read.counter;
	now.enabled = read.enabled;
	now.running = read.running;
	acc_delta(prev, &now, delta);
	if (kind == KIND_CONTEXT_SWITCHES)
		delta->counter = switches;
	else if (kind == KIND_CGROUP_SWITCHES)
		delta->counter = cgroup_switches;
	return true;
}

/* Every event's delta on this CPU since the raw readings in view, which
 * move on to now. Returns the events read, a bit each. */
__noinline __u32 take_deltas(__u32 switches, __u32 cgroup_switches,
			     struct cpu_view *view, struct slot_totals *delta)
{
	__u32 cpu = bpf_get_smp_processor_id(), used = num_events, read = 0;

	if (!delta || !view || cpu >= MAX_CPUS)
		return 0;
		/* Unrolled, so that each delta->events[e] is at a constant
		 * offset. */
#pragma clang loop unroll(full)
	for (__u32 e = 0; e < MAX_EVENTS; e++)
		if (e < used && take_delta(e, cpu, switches, cgroup_switches,
					   &view->raw[e], &delta->events[e]))
			read |= 1u << e;
	return read;
}

/* Adds delta to what the slot's cgroup counted on this CPU. */
static __always_inline void add_slot_delta(__u32 slot,
					   const struct slot_totals *delta)
{
	__u32 index = slot * nr_cpus + bpf_get_smp_processor_id();
	struct slot_totals *total = bpf_map_lookup_elem(&totals, &index);
	__u32 used = num_events;

	if (!total || !delta)
		return;
	for (__u32 e = 0; e < MAX_EVENTS && e < used; e++)
		acc_add(&total->events[e], &delta->events[e]);
}

/* add_slot_delta(), a function of its own for the walk's callback. */
__noinline int add_delta(__u32 slot, const struct slot_totals *delta)
{
	add_slot_delta(slot, delta);
	return 0;
}

#endif
