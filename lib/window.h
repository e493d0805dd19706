/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The dup_count bookkeeping (seed 004) for one handle. For every value of
 * every fd the handle keeps base, the kernel's value at its last sync, and
 * acc, what it has accumulated in its own enabled windows:
 *
 *   sync while enabled:  acc += now - base; base = now
 *   enable:              base = now
 *   disable:             sync, then stop syncing
 *   reset:               sync, then acc = 0
 *
 * The kernel event runs whenever the handle is enabled, so now - base is
 * exactly what happened in the handle's window, whatever other handles do.
 * All of it runs under the handle's stripe lock.
 */
#ifndef SHPMU_WINDOW_H
#define SHPMU_WINDOW_H

#include <stdint.h>

#include <shpmu/shpmu.h>

#include "handles.h"
#include "kevent.h"

struct shpmu;
struct handle;
struct kevent;

/* Gives h (whose ev is set) zeroed base and acc, in the slot when they
 * fit: 0 or -ENOMEM. window_free() undoes it. */
int window_alloc(struct handle *h);
void window_free(struct handle *h);

/* Re-bases every fd of an enabling handle: base = now. */
int window_start(struct shpmu *pmu, struct handle *h);

/* Syncs fd i of the handle (a no-op on the counts of a disabled one). */
int window_sync_fd(struct shpmu *pmu, struct handle *h, uint32_t i);

/* Syncs fd i of the handle with a reading already made (read_many reads
 * each kernel fd once for all its handles). */
void window_apply(struct handle *h, uint32_t i, const uint64_t *now);

/* window_apply() then window_sum() for the common enabled handle: one
 * fd, one event. Batched reads spend most of their time
 * here, so it is inline and loop-free. */
static inline void window_apply_sum_one(struct handle *h, const uint64_t *now,
					struct shpmu_count *out)
{
	uint64_t *base = h->state, *acc = h->state + KVAL_COUNT + 1;

	for (int v = 0; v <= KVAL_COUNT; v++) {
		if (now[v] > base[v])
			acc[v] += now[v] - base[v];
		base[v] = now[v];
	}
	out->time_enabled = acc[KVAL_ENABLED];
	out->time_running = acc[KVAL_RUNNING];
	out->value = acc[KVAL_COUNT];
}

/* Syncs every fd. On failure the fds synced so far stay synced, which
 * changes nothing a reader can see. */
int window_sync(struct shpmu *pmu, struct handle *h);

/* Zeroes acc (after a successful window_sync). */
void window_clear(struct handle *h);

/* The handle's reading (its first member's, for a group), summed over its
 * fds; with only set, fd only. */
void window_sum(const struct handle *h, int only, struct shpmu_count *out);

/* The accumulated values of fd i, nvals of them (KVAL_*). */
const uint64_t *window_acc(const struct handle *h, uint32_t i);

#endif
