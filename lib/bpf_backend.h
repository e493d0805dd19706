/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The BPF cgroup backend: one perf event per CPU per distinct attr counts
 * every cgroup; a BPF program on sched_switch adds each CPU's delta to the
 * outgoing task's counted cgroups and their counted ancestors. A cgroup
 * handle's kernel event is then (event index, cgroup slot): reading it
 * flushes the CPU's running delta and reads the slot's per-CPU total.
 * All calls but bpf_backend_read and bpf_backend_flush are made under the
 * context lock; flushes take the backend's own lock, so that no two runs
 * of the program meet on one CPU.
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

/* Counts key for the cgroup: -ENOSPC (logged) past the distinct events or
 * the cgroups the backend has room for. */
int bpf_backend_attach(struct shpmu *pmu, struct bpf_backend *b,
		       const struct event_key *key, uint64_t cgroup_id,
		       struct bpf_counter *out);
void bpf_backend_detach(struct shpmu *pmu, struct bpf_backend *b,
			const struct bpf_counter *c);

/* The counter's totals on cpus[0 .. n): enabled, running and count at
 * vals[i * stride + KVAL_*]. flush: bring each of those CPUs up to now
 * first; a batch that called bpf_backend_flush passes false. */
int bpf_backend_read(struct shpmu *pmu, struct bpf_backend *b,
		     const struct bpf_counter *c, const int *cpus, uint32_t n,
		     bool flush, uint64_t *vals, uint32_t stride);

/* Brings every online CPU's totals up to now. */
int bpf_backend_flush(struct shpmu *pmu, struct bpf_backend *b);

/* Context switches the sched_switch tracepoint did not report since the
 * backend started (logged once when first seen). */
uint64_t bpf_backend_unseen_switches(const struct bpf_backend *b);

/* Of those, the strays: switches whose delta may have gone to the wrong
 * counted cgroup (see unseen_switches in the program). */
uint64_t bpf_backend_stray_switches(const struct bpf_backend *b);

/* Moves of a running task to another cgroup that the program settled at
 * the moment they happened. */
uint64_t bpf_backend_moves_settled(const struct bpf_backend *b);

/* The same for a context, 0 without a BPF backend: for tests, through
 * the static library. */
uint64_t shpmu__bpf_unseen_switches(const struct shpmu *pmu);
uint64_t shpmu__bpf_stray_switches(const struct shpmu *pmu);
uint64_t shpmu__bpf_moves_settled(const struct shpmu *pmu);

/* For tests: backends made from now on settle moves only where the
 * kernel has no csd tracepoints (the moves a task makes itself). */
extern bool shpmu__bpf_no_ipi_hook;

/* For tests: when non-zero, how many cgroups backends made from now on
 * have room for. */
extern uint32_t shpmu__bpf_max_slots;

#endif
