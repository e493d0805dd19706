/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A handle's windows against its kernel event: each reads the event and
 * hands the reading to window.c. The caller holds the handle's stripe (or
 * the handle is not published yet).
 */
#ifndef SHPMU_SYNC_H
#define SHPMU_SYNC_H

#include <stdbool.h>

struct shpmu;
struct handle;

/* Opens a window: base = the event now, and one more enabled handle on
 * it (the first switches its sources on; at_open: not an enable_on_exec
 * event, which the kernel switches on at exec). Sources in error state
 * are enabled again first. The caller marks the handle enabled once it
 * succeeds. 0 or -errno (-ENODATA: still in error state), nothing
 * changed. */
int sync_start(struct shpmu *pmu, struct handle *h, bool at_open);

/* Closes a window with a last reading, and one fewer enabled handle (the
 * last switches the sources off); sources in error state (-ENODATA) close
 * it at its last reading. The caller marks the handle disabled once it
 * succeeds. 0 or -errno; on error the handle still counts. */
int sync_stop(struct shpmu *pmu, struct handle *h);

/* An enable of an enabled handle: brings it up to now, as sync_now(),
 * and its sources out of the kernel's error state (a pinned event that
 * could not get a counter) when they are in it. 0, -ENODATA (they went
 * back to it: the counters are still taken) or -errno. */
int sync_revive(struct shpmu *pmu, struct handle *h);

/* Brings an enabled handle up to now: every source, or source only if
 * only >= 0. 0 or -errno; sources already applied stay applied, which no
 * reader can tell from their not being applied. */
int sync_now(struct shpmu *pmu, struct handle *h, int only);

/* The same as sync_now(pmu, h, -1) with the values the backend holds in
 * memory (kevent_read_cached). */
int sync_cached(struct shpmu *pmu, struct handle *h);

/* A closing handle gives its enabled share back, without a reading (the
 * context lock held: kevent_enable_drop() reads the event's refs). */
void sync_drop(struct shpmu *pmu, struct handle *h);

#endif
