/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The BPF cgroup backend: one perf event per CPU per distinct attr counts
 * every cgroup; a BPF program on sched_switch adds each CPU's delta to the
 * outgoing task's counted cgroups and their counted ancestors. A cgroup
 * handle's kernel event is then (event index, cgroup slot): reading it
 * flushes the CPU's running delta and reads the slot's per-CPU total.
 * All calls but bpf_backend_read are made under the context lock.
 */
#ifndef SHPMU_BPF_BACKEND_H
#define SHPMU_BPF_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "key.h"

struct shpmu;
struct bpf_backend;

/* What a BPF-backed cgroup event is counted by. */
struct bpf_counter {
	uint32_t event; /* index of the shared per-CPU event */
	uint32_t slot;	/* the cgroup's slot */
};

/* Loads the program. -EOPNOTSUPP (logged with why) where it cannot work:
 * built without BPF, no privileges, no raw_tp, no cgroup2. */
int bpf_backend_new(struct shpmu *pmu, struct bpf_backend **out);
void bpf_backend_free(struct shpmu *pmu, struct bpf_backend *b);

int bpf_backend_attach(struct shpmu *pmu, struct bpf_backend *b,
		       const struct event_key *key, uint64_t cgroup_id,
		       struct bpf_counter *out);
void bpf_backend_detach(struct shpmu *pmu, struct bpf_backend *b,
			const struct bpf_counter *c);

/* cpu's total for the counter, flushed to now: enabled, running, count. */
int bpf_backend_read(struct shpmu *pmu, struct bpf_backend *b,
		     const struct bpf_counter *c, int cpu, uint64_t *vals);

#endif
