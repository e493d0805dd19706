/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A counting backend turns a kernel event (struct kevent) into values: it
 * makes the event's per-CPU sources, reads them, switches them on and off,
 * and says what they cost. The core calls ev->backend->ops and never asks
 * which backend it holds (as the perf core drives every struct pmu).
 *
 *   backend_perf.c   classic perf fds: any target, groups
 *   backend_bpf.c    one perf event per CPU per attr for every cgroup, a
 *                    BPF program crediting each CPU's deltas
 *
 * backend_choice.c picks one for each new kernel event.
 */
#ifndef SHPMU_BACKEND_H
#define SHPMU_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

struct shpmu;
struct kevent;
struct backend;

/* What opening or closing an event's sources changed in the context's
 * statistics: a backend that shares sources between kernel events (BPF)
 * adds them with the first event that needs them, drops them with the
 * last. */
struct backend_cost {
	int64_t events, fds;
};

struct backend_ops {
	/* Makes ev's sources, switched off (or always counting, for a
	 * backend without enable). ev's key, cpus, nfds and nvals are set;
	 * cgroup_fd is a cgroup target's directory, else -1. 0 or -errno,
	 * logged, with nothing left behind. */
	int (*open)(struct shpmu *pmu, struct kevent *ev, int cgroup_fd,
		    struct backend_cost *cost);
	void (*close)(struct shpmu *pmu, struct kevent *ev,
		      struct backend_cost *cost);
	/* Switches every CPU's source on or off, undoing the CPUs done on
	 * failure. NULL: the sources always count, and each handle's
	 * window alone says what is its own. */
	int (*enable)(struct shpmu *pmu, struct kevent *ev, bool on);
	/* Reads CPU sources [first, first + n) into vals, ev->nvals each
	 * (KVAL_*). fresh: bring them up to now first; a batch whose
	 * backend was flushed passes false. */
	int (*read)(struct shpmu *pmu, const struct kevent *ev, uint32_t first,
		    uint32_t n, bool fresh, uint64_t *vals);
	/* Brings every CPU up to now, once for a batch of reads. NULL where
	 * every read is current anyway. */
	int (*flush)(struct shpmu *pmu, struct backend *b);
};

struct backend {
	const struct backend_ops *ops;
};

/* Classic perf fds: one backend serves every context. */
extern struct backend backend_perf;

#endif
