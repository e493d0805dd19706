/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The BPF backend of one context (backend_bpf.c; backend_bpf_stub.c where
 * libshpmu was built without it): cgroup and CPU targets of one counting
 * attr, room for 8 distinct attrs and a number of cgroups that shrinks
 * with the CPU count. Its open gives -ENOSPC past either, -EOPNOTSUPP for
 * what it does not count. In process scope it is the context's own; in
 * host scope, a domain's shared by every process that joins it.
 */
#ifndef SHPMU_BACKEND_BPF_H
#define SHPMU_BACKEND_BPF_H

#include <stdbool.h>
#include <stdint.h>

struct shpmu;
struct backend;

/* Loads the program: 0, or -EOPNOTSUPP logged with why (not built, no
 * privileges, a kernel that refuses it, too many CPUs). The caller has
 * checked for cgroup2. */
int bpf_backend_new(struct shpmu *pmu, struct backend **out);
/* Host scope: joins (or makes) domain under bpffs_dir; see host_join()
 * for the errors. */
int bpf_backend_join(struct shpmu *pmu, const char *bpffs_dir,
		     const char *domain, struct backend **out);
void bpf_backend_free(struct shpmu *pmu, struct backend *b);

/* What the program counted of itself (see bpf/prog/state.bpf.h): switches
 * the kernel made without running it, settles that left a delta
 * unattributed, and moves of a running task settled when they happened.
 * Zeros without BPF. */
struct bpf_backend_counters {
	uint64_t unseen, unattributed_settles, moves;
	/* The kernel's memory of the task targets' maps (links, totals),
	 * and children of inherit targets left uncounted (no room). */
	uint64_t task_map_bytes, children_lost;
	/* Whether it settles at the scheduler tick (its function found). */
	bool sees_tick;
};
void bpf_backend_counters(const struct backend *b,
			  struct bpf_backend_counters *out);

/* Whether the BPF backend can count key: one attr on a cgroup, a CPU, or
 * a task or process wherever it runs (not from an exec). */
struct share_key;
bool bpf_backend_counts(const struct share_key *key);

/* Whether b serves a host domain. */
bool bpf_backend_is_host(const struct backend *b);

/* For tests: when non-zero, how many cgroups backends made from now on
 * have room for; when set, backends made from now on settle only the
 * moves a task makes itself, as where the kernel has no csd
 * tracepoints. */
extern uint32_t shpmu__bpf_max_slots;
extern bool shpmu__bpf_no_ipi_hook;

#endif
