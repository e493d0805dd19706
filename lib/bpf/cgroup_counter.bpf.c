// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One perf event per CPU counts any number of cgroups. At every context
 * switch the delta of each CPU's events since the last switch goes to the
 * outgoing task's cgroup and to each of its ancestors that is counted
 * (seed 000's design, as perf's bperf_cgroup does it). Userspace flushes
 * the running delta before a read by test-running this program on each
 * CPU.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define MAX_EVENTS 8	/* distinct counting attrs */
#define MAX_CPUS 1024
#define MAX_SLOTS 16384 /* counted cgroups */
#define MAX_LEVELS 16	/* cgroup depth looked at */

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

/* What each slot's cgroup counted, per CPU: slot * MAX_EVENTS + event. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct bpf_perf_event_value));
	__uint(max_entries, MAX_SLOTS * MAX_EVENTS);
} totals SEC(".maps");

/* How many event indexes userspace has filled. */
__u32 num_events = 0;

SEC("raw_tp/sched_switch")
int on_switch(void *ctx)
{
	struct bpf_perf_event_value now, delta[MAX_EVENTS];
	__u32 cpu = bpf_get_smp_processor_id();
	bool have[MAX_EVENTS] = {};
	int any = 0;

	if (cpu >= MAX_CPUS)
		return 0;
	for (__u32 e = 0; e < MAX_EVENTS; e++) {
		struct bpf_perf_event_value *prev;

		if (e >= num_events)
			break;
		if (bpf_perf_event_read_value(&events, e * MAX_CPUS + cpu,
					      &now, sizeof(now)))
			continue;
		prev = bpf_map_lookup_elem(&previous, &e);
		if (!prev)
			continue;
		delta[e].counter = now.counter - prev->counter;
		delta[e].enabled = now.enabled - prev->enabled;
		delta[e].running = now.running - prev->running;
		*prev = now;
		have[e] = true;
		any = 1;
	}
	if (!any)
		return 0;
	for (int level = 0; level < MAX_LEVELS; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);
		__u32 *slot;

		if (!id)
			break;
		slot = bpf_map_lookup_elem(&cgroup_slots, &id);
		if (!slot)
			continue;
		for (__u32 e = 0; e < MAX_EVENTS; e++) {
			struct bpf_perf_event_value *total;
			__u32 key = *slot * MAX_EVENTS + e;

			if (!have[e])
				continue;
			total = bpf_map_lookup_elem(&totals, &key);
			if (!total)
				continue;
			total->counter += delta[e].counter;
			total->enabled += delta[e].enabled;
			total->running += delta[e].running;
		}
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
