/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One context's copy of the BPF counter program (bpf/cgroup_counter.bpf.c)
 * through its libbpf skeleton: loading and attaching it, flushing CPUs
 * (test-running it there), and what it counted of itself.
 */
#ifndef SHPMU_COUNTER_PROG_H
#define SHPMU_COUNTER_PROG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct shpmu;
struct cgroup_counter;

struct counter_prog {
	struct cgroup_counter *skel; /* its maps and .bss, for the backend */
	int prog_fd;		     /* on_switch: what a flush test-runs */
	/* Held across every flush, and to change online: two flushes must
	 * not meet on one CPU (a flush of its own CPU runs with interrupts
	 * on), and a flush of every CPU is the barrier before an index or
	 * slot serves something else. */
	pthread_mutex_t flush_lock;
	int *online, nonline; /* as last read: the CPUs a flush visits */
	bool told_unseen;     /* logged that the tracepoint hides switches */
};

/* Loads and attaches the program with room for max_slots cgroups: 0, or
 * -EOPNOTSUPP logged with why (no privileges, a kernel that refuses it).
 * Without ipi_hook only the moves a task makes itself are settled when
 * they happen, as where the kernel has no csd tracepoints (for tests). */
int counter_prog_load(struct shpmu *pmu, uint32_t max_slots, bool ipi_hook,
		      struct counter_prog *p);
void counter_prog_unload(struct counter_prog *p);

/* Re-reads the online CPUs (they may have come and gone). */
int counter_prog_refresh_online(struct shpmu *pmu, struct counter_prog *p);

/* Brings cpus[0 .. n), or every online CPU, up to now. */
int counter_prog_flush_cpus(struct shpmu *pmu, struct counter_prog *p,
			    const int *cpus, uint32_t n);
int counter_prog_flush(struct shpmu *pmu, struct counter_prog *p);

/* Context switches the tracepoint hid; of those, the strays (see the
 * program); moves of a running task settled when they happened. */
uint64_t counter_prog_unseen(const struct counter_prog *p);
uint64_t counter_prog_strays(const struct counter_prog *p);
uint64_t counter_prog_moves(const struct counter_prog *p);

/* Logs, once, that the tracepoint hides switches on this machine. */
void counter_prog_tell_unseen(struct shpmu *pmu, struct counter_prog *p);

#endif
