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

struct shpmu;
struct handle;
struct kevent;

/* Allocates state for a handle on ev: zeroed base and acc. */
uint64_t *window_alloc(const struct kevent *ev);

/* Re-bases every fd of an enabling handle: base = now. */
int window_start(struct shpmu *pmu, struct handle *h);

/* Syncs fd i of the handle (a no-op on the counts of a disabled one). */
int window_sync_fd(struct shpmu *pmu, struct handle *h, uint32_t i);

/* Syncs fd i of the handle with a reading already made (read_many reads
 * each kernel fd once for all its handles). */
void window_apply(struct handle *h, uint32_t i, const uint64_t *now);

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
