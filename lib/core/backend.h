/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A counting backend turns a kernel event (struct kevent) into values: it
 * makes the event's per-CPU sources, reads them, switches them on and off,
 * and says what they cost. The core calls ev->backend->ops and never asks
 * which backend it holds (as the perf core drives every struct pmu).
 *
 *   lib/perf/   classic perf fds: any target, groups
 *   lib/bpf/    one perf event per CPU per attr for every cgroup, task
 *               and process, a BPF program crediting each CPU's deltas
 *
 * lib/backend_choice.c, outside the core, picks one for each new kernel
 * event.
 */
#ifndef SHPMU_BACKEND_H
#define SHPMU_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

struct shpmu;
struct shpmu_count;
struct kevent;
struct backend;
struct event_key;

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
	/* Asks every CPU's source, already on, to be scheduled again (out
	 * of a pinned event's error state), undoing nothing on failure:
	 * the sources count for other handles. NULL: nothing to revive. */
	int (*revive)(struct shpmu *pmu, struct kevent *ev);
	/* Reads CPU sources [first, first + n) into vals, ev->nvals each
	 * (KVAL_*). fresh: bring them up to now first; a batch whose
	 * backend was flushed passes false. */
	int (*read)(struct shpmu *pmu, const struct kevent *ev, uint32_t first,
		    uint32_t n, bool fresh, uint64_t *vals);
	/* Brings every CPU up to now, once for a batch of reads. NULL where
	 * every read is current anyway. */
	int (*flush)(struct shpmu *pmu, struct backend *b);
	/* For the counter budget: calls cb with each attr the backend
	 * keeps one perf event per CPU for, on behalf of all its kernel
	 * events (in host scope the whole domain's), once for each CPU it
	 * has one on; refs is how many kernel events use it. NULL where
	 * every kernel event has sources of its own. 0 or -errno. */
	int (*shared_attrs)(struct shpmu *pmu, struct backend *b,
			    void (*cb)(const struct event_key *key,
				       uint32_t refs, int cpu, void *arg),
			    void *arg);
	/* What the backend could not attribute of ev's attr on cpu (-1:
	 * every CPU) since it began, as of each CPU's last settle.
	 * NULL: it attributes everything. 0 or -errno (-EINVAL: a CPU it
	 * does not know). */
	int (*unattributed)(struct shpmu *pmu, const struct kevent *ev, int cpu,
			    struct shpmu_count *out);
	/* Switches the backend did not see, and the CPU time whose counts
	 * it could not attribute, all its CPUs. NULL: none. */
	void (*unseen)(const struct backend *b, uint64_t *switches,
		       uint64_t *unattributed_ns);
};

struct backend {
	const struct backend_ops *ops;
};

/* The choice of a backend for each new kernel event. The core declares
 * it and lib/backend_choice.c, which knows every backend, implements it:
 * the classic one, except for cgroup targets of one counting attr, which
 * opts.cgroup_backend sends to BPF (loaded at shpmu_new), to classic
 * events, or (AUTO) to classic events below a crossover in fds and to BPF
 * where it can work from there on, loaded at the crossover's open outside
 * the context lock (lib/auto_rule.h). In host scope the context joins its
 * domain at shpmu_new and the domain's BPF backend counts cgroup2 and CPU
 * targets of one counting attr. */
struct shpmu_opts;
struct share_key;

/* At shpmu_new: a backend asked for is loaded now, a host domain joined.
 * 0, or -errno logged with why (-EOPNOTSUPP: BPF cannot work here;
 * host_join() for host scope's). */
int backend_choice_init(struct shpmu *pmu, const struct shpmu_opts *o);
void backend_choice_fini(struct shpmu *pmu);

/* The context's backend whose perf events serve many kernel events (the
 * BPF one, where it is loaded), or NULL; takes the choice's lock, so
 * never under the context lock. */
struct backend *backend_shared(struct shpmu *pmu);

/* Makes key's kernel event on cpus with the backend that counts it (the
 * context's create lock held): see kevent_new(). AUTO's crossover loads
 * the BPF program here. 0 or -errno, logged. */
int backend_new_event(struct shpmu *pmu, const struct share_key *key,
		      uint64_t hash, const int *cpus, uint32_t ncpus,
		      int cgroup_fd, struct kevent **out);

#endif
