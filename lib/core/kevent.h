/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A shared kernel event: what counts one sharing key for every handle with
 * that key. Its backend makes and reads the per-CPU sources; this file
 * owns the rest of its state: the refcount, the count of enabled handles
 * (the first switches the sources on, the last off), its hash, and what it
 * adds to the context's statistics. The sources are never reset: that
 * would corrupt every other sharer's count.
 */
#ifndef SHPMU_KEVENT_H
#define SHPMU_KEVENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <shpmu/shpmu.h>

#include "core/backend.h"
#include "core/hashtab.h"
#include "core/key.h"

/* Values per CPU in a reading: time_enabled, time_running, then counts
 * (a group's members, leader first). */
#define KVAL_ENABLED 0
#define KVAL_RUNNING 1
#define KVAL_COUNT   2
/* The most values one reading can hold (groups are bounded by this). */
#define KVAL_MAX (KVAL_COUNT + SHPMU_GROUP_MAX)
/* A backend whose counts may fall short of the truth by a known amount
 * (the BPF backend, across switches the kernel hid from it) sets nvals
 * one higher and puts that amount after the counts: the windows
 * accumulate it like every other value (kevent_bound_index). */

struct kevent {
	/* In the registry (under the context lock); node.hash is
	 * share_key_hash(&key). */
	struct hash_node node;
	/* Handles on it, and opens under way that will be; under the
	 * context lock. */
	uint32_t refs;
	bool registered;      /* findable by other opens */
	pthread_mutex_t lock; /* enabled, and the sources' on/off state */
	uint32_t enabled;     /* handles enabled on it */
	uint32_t nfds;	      /* sources: one per CPU it spans */
	uint32_t nvals;	      /* values per source reading, KVAL_* */
	/* Sources enabled together for one thing that runs in one place
	 * at a time: a hybrid task's one per PMU type. Their enabled times
	 * count once (0 or 1: each source its own). */
	uint32_t enabled_together;
	int64_t task; /* TASK, PROCESS: task_identity() at open */
	int *cpus;    /* the CPU of each source; -1: any */
	struct backend *backend;
	struct backend_cost cost; /* what its open added to the stats */
	/* The context's events that use core counters, for the budget
	 * (core/budget.h); under the create lock. */
	struct kevent *hw_next, *hw_prev;
	bool on_hw_list;
	/* The backend's own: its fds, or where it counts the event. */
	union {
		int *fds;
		uint64_t word;
	} priv;
	struct share_key key; /* last: it ends in a flexible array */
};

/* Where a reading of ev holds its bound, or 0 where ev has none. */
static inline uint32_t kevent_bound_index(const struct kevent *ev)
{
	uint32_t at = KVAL_COUNT + ev->key.nevents;

	return ev->nvals > at ? at : 0;
}

/* The CPUs an event for target t spans, into a malloc'd *cpus: how many,
 * or -errno. A single CPU must be online, whatever backend counts it: the
 * BPF backend would otherwise accept a CPU it has no event for (-EINVAL,
 * logged). */
int kevent_cpus(struct shpmu *pmu, const struct target_key *t, int **cpus);

/* Makes the kernel event for key with backend b, its sources off, on the
 * ncpus CPUs given (copied); ev->cost says what it adds to the stats,
 * which the caller adds. cgroup_fd is a cgroup target's directory, else
 * -1. 0 or -errno, logged; nothing is left behind on failure. */
int kevent_new(struct shpmu *pmu, struct backend *b,
	       const struct share_key *key, uint64_t hash, const int *cpus,
	       uint32_t ncpus, int cgroup_fd, struct kevent **out);

/* Frees ev and its sources; *cost is what that takes out of the stats. */
void kevent_free(struct shpmu *pmu, struct kevent *ev,
		 struct backend_cost *cost);

/* Adds (sign 1) or takes out (-1) a cost from the stats (context lock
 * held). */
void kevent_cost_add(struct shpmu_stats *stats, const struct backend_cost *c,
		     int sign);

/* One more handle on ev (context lock held). */
static inline void kevent_get(struct kevent *ev)
{
	ev->refs++;
}

/* One fewer (context lock held): true for the last, whose caller then
 * takes it out of the registry and frees it. */
static inline bool kevent_put(struct kevent *ev)
{
	return --ev->refs == 0;
}

/* One more enabled handle on ev (caller holds ev->lock): the first
 * switches the sources on, unless the kernel will (an enable_on_exec
 * event enabled by its handle's open). 0, or the backend's error with
 * nothing changed. */
int kevent_enable_get(struct shpmu *pmu, struct kevent *ev, bool at_open);

/* Brings sources out of the kernel's error state (a pinned event that
 * could not get a counter reads 0 bytes, -ENODATA, until it is enabled
 * again): every source is enabled, and switched off again when no handle
 * is enabled on ev. Caller holds ev->lock. 0 or the backend's error. */
int kevent_revive(struct shpmu *pmu, struct kevent *ev);

/* One fewer (caller holds ev->lock): the last switches the sources off.
 * 0, or the backend's error with nothing changed. */
int kevent_enable_put(struct shpmu *pmu, struct kevent *ev);

/* The same for a handle that goes away (the context lock held too, for
 * ev->refs): failing to switch off a source nobody reads is harmless, so
 * nothing fails. */
void kevent_enable_drop(struct shpmu *pmu, struct kevent *ev);

/* Reads sources [first, first + n) into vals (nvals each), brought up to
 * now. 0, -ENODATA (a source in error state), -EIO (short or malformed
 * read) or -errno. */
int kevent_read(struct shpmu *pmu, const struct kevent *ev, uint32_t first,
		uint32_t n, uint64_t *vals);

/* Whether ev's backend keeps its values in memory between flushes, so
 * that they can be read without a system call. */
bool kevent_has_cache(const struct kevent *ev);

/* Reads every source of ev as of its backend's last flush (see
 * shpmu_read_cached()): -EOPNOTSUPP for a backend without that memory. */
int kevent_read_cached(struct shpmu *pmu, const struct kevent *ev,
		       uint64_t *vals);

/* Reads of many events at one moment: each backend that needs it is
 * brought up to now once for the batch. */
struct kevent_batch {
	const struct backend *flushed[4];
	unsigned int nflushed;
};

/* Reads every source of ev into vals as part of batch. */
int kevent_read_batched(struct shpmu *pmu, struct kevent_batch *batch,
			const struct kevent *ev, uint64_t *vals);

/* Index of the source on cpu, or -1. For a one-source event, -1 names
 * that source. */
int kevent_fd_index(const struct kevent *ev, int cpu);

/* The values of a reading of every source. */
static inline size_t kevent_nvals_total(const struct kevent *ev)
{
	return (size_t)ev->nfds * ev->nvals;
}

#endif
