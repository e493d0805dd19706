/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The dup_count bookkeeping for one handle, as arithmetic over
 * readings its caller made (sync.c does the reading). For every value of
 * every source of its kernel event the handle keeps base, the value at
 * its last sync, and acc, what it has accumulated in its own windows:
 *
 *   start (enable):  base = now
 *   apply (sync):    acc += now - base; base = now   (while enabled)
 *   clear (reset):   acc = 0                         (after an apply)
 *
 * The sources count whenever the handle is enabled, so now - base is
 * exactly what happened in the handle's window, whatever other handles
 * do. The values are laid out base[nfds][nvals], then acc[nfds][nvals];
 * only this file and its inline fast path know that.
 */
#ifndef SHPMU_WINDOW_H
#define SHPMU_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include <shpmu/shpmu.h>

#include "core/handles.h"
#include "core/kevent.h"

/* Gives h (whose ev is set) zeroed base and acc, in the slot when they
 * fit: 0 or -ENOMEM. window_free() undoes it. */
int window_alloc(struct handle *h);
void window_free(struct handle *h);

/* Starts a window at now, a reading of every source: base = now. */
void window_start(struct handle *h, const uint64_t *now);

/* Applies source i's reading now (a no-op on a disabled handle). */
void window_apply(struct handle *h, uint32_t i, const uint64_t *now);

/* Applies a reading of every source. */
void window_apply_all(struct handle *h, const uint64_t *now);

/* Zeroes acc (after an apply: base is then now). */
void window_clear(struct handle *h);

/* The handle's reading (its first member's, for a group), summed over its
 * sources; with only >= 0, source only. */
void window_sum(const struct handle *h, int only, struct shpmu_count *out);

/* How far below the truth the handle's reading may be (see
 * kevent_bound_index), summed over its sources; with only >= 0, source
 * only. 0 for an event counted exactly. */
uint64_t window_bound(const struct handle *h, int only);

/* The accumulated values of source i, nvals of them (KVAL_*). */
const uint64_t *window_acc(const struct handle *h, uint32_t i);

/* The common handle: one source, one event. The one test for the fast
 * path below. */
static inline bool window_is_single(const struct handle *h)
{
	return h->ev->nfds == 1 && h->ev->nvals == KVAL_COUNT + 1;
}

/* The one step of the arithmetic, for one source's nvals values: acc +=
 * now - base; base = now. Inline, so that the single handle's path below
 * runs it without a loop. */
static inline void window_advance(uint64_t *base, uint64_t *acc,
				  const uint64_t *now, uint32_t nvals)
{
	for (uint32_t v = 0; v < nvals; v++) {
		/* The sources are never reset, so they only grow; a smaller
		 * value would be a kernel bug, not a negative delta. */
		if (now[v] > base[v])
			acc[v] += now[v] - base[v];
		base[v] = now[v];
	}
}

/* window_apply() then window_sum() for an enabled single handle: reads
 * and batched reads spend most of their time here. */
static inline void window_apply_sum_one(struct handle *h, const uint64_t *now,
					struct shpmu_count *out)
{
	uint64_t *acc = h->state + KVAL_COUNT + 1;

	window_advance(h->state, acc, now, KVAL_COUNT + 1);
	out->time_enabled = acc[KVAL_ENABLED];
	out->time_running = acc[KVAL_RUNNING];
	out->value = acc[KVAL_COUNT];
}

#endif
