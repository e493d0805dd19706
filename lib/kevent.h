/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A shared kernel event: the perf_event fds (one per CPU it spans) behind
 * every handle with the same sharing key. It is enabled in the kernel while
 * at least one handle on it is enabled, and it is never reset: resetting
 * would corrupt every other sharer's count.
 */
#ifndef SHPMU_KEVENT_H
#define SHPMU_KEVENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpf_backend.h"
#include "key.h"

struct shpmu;

/* Values per fd in a reading: time_enabled, time_running, then counts. */
#define KVAL_ENABLED 0
#define KVAL_RUNNING 1
#define KVAL_COUNT 2
/* The most values one fd reading can hold (groups are bounded by this). */
#define KVAL_MAX (KVAL_COUNT + 64)

struct kevent {
	struct kevent *next; /* registry chain; under the context lock */
	uint64_t hash;
	uint32_t refs;	     /* handles on it; under the context lock */
	bool registered;     /* findable by other opens */
	pthread_mutex_t lock; /* enabled and the kernel's enable state */
	uint32_t enabled;     /* handles enabled on it */
	uint32_t nfds;	      /* readable fds: one per CPU it spans */
	uint32_t nevents;     /* events per CPU: a group's members, or 1 */
	uint32_t nvals;	      /* values per fd reading, KVAL_* */
	int64_t task;	      /* TASK target: task_identity() at open */
	/* A cgroup counted by the BPF backend: no fds of its own; its CPU
	 * readings come from the backend's per-CPU totals. */
	bool bpf;
	struct bpf_counter counter;
	int *cpus;	      /* the CPU of each fd; -1: any */
	/* nfds * nevents fds, CPU by CPU; fds[i * nevents] is CPU i's
	 * group leader, the fd that is read and switched. */
	int *fds;
	struct share_key key; /* last: it ends in a flexible array */
};

/* Opens the kernel event(s) for key, disabled. cgroup_fd is the cgroup's
 * directory for a cgroup target, else -1. Returns 0 or -errno (logged with
 * what to do about it); nothing is left open on failure. */
int kevent_open(struct shpmu *pmu, const struct share_key *key, int cgroup_fd,
		struct kevent **out);

/* Closes every fd and frees ev. */
void kevent_close(struct shpmu *pmu, struct kevent *ev);

/* Enables or disables every CPU's fd (a group as a whole); on failure the
 * ones already switched are switched back. Caller holds ev->lock. */
int kevent_switch(struct shpmu *pmu, struct kevent *ev, bool on);

/* All the fds the event holds. */
static inline uint32_t kevent_nfds_total(const struct kevent *ev)
{
	return ev->bpf ? 0 : ev->nfds * ev->nevents;
}

static inline int kevent_fd(const struct kevent *ev, uint32_t i)
{
	return ev->fds[(size_t)i * ev->nevents];
}

/* Reads CPU i's fd (a whole group at once) into vals[0 .. nvals).
 * Returns 0, -EIO (short or malformed read) or -errno. */
int kevent_read(struct shpmu *pmu, const struct kevent *ev, uint32_t i,
		uint64_t *vals);

/* Reads every fd into vals[nfds * nvals], CPU by CPU. flushed: the
 * caller has brought the BPF backend up to now (bpf_backend_flush) for a
 * whole batch. */
int kevent_read_all(struct shpmu *pmu, const struct kevent *ev,
		    bool flushed, uint64_t *vals);

/* Index of the fd on cpu, or -1. For a one-fd event, -1 names that fd. */
int kevent_fd_index(const struct kevent *ev, int cpu);

#endif
