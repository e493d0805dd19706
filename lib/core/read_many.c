// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Batched reads: every kernel fd behind a batch of handles is read once,
 * and each reading serves all the handles on that event. 1024 handles on
 * 8 events spanning every CPU cost 8 read(2) calls per CPU, not 1024.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/api.h"
#include "core/hashtab.h"
#include "core/kevent.h"
#include "core/log.h"
#include "core/small.h"
#include "core/window.h"

/* The readings of one kernel event, made at most once per batch, found
 * by the event in O(1) per handle. */
struct reading {
	struct hash_node node; /* hashed by the event's address */
	const struct kevent *ev;
	uint64_t *vals; /* nfds * nvals once read: small ones in inline_vals */
	uint64_t inline_vals[KVAL_COUNT + 1];
};

struct readings {
	struct hashtab by_event;
	struct reading *pool; /* room for one per handle of the batch */
	size_t used;
};

/* Most batches span a handful of events; the table starts small. */
#define READINGS_FIRST_SIZE 32

static int readings_init(struct readings *r, size_t handles)
{
	r->used = 0;
	r->pool = malloc(handles * sizeof(*r->pool));
	if (!r->pool)
		return -ENOMEM;
	if (hashtab_init(&r->by_event, READINGS_FIRST_SIZE)) {
		free(r->pool);
		return -ENOMEM;
	}
	return 0;
}

static void readings_fini(struct readings *r)
{
	for (size_t i = 0; i < r->used; i++)
		small_free(r->pool[i].vals, r->pool[i].inline_vals);
	hashtab_fini(&r->by_event);
	free(r->pool);
}

static uint64_t event_hash(const struct kevent *ev)
{
	return ((uintptr_t)ev >> 4) * 0x9e3779b97f4a7c15ull;
}

static struct reading *readings_slot(struct readings *r,
				     const struct kevent *ev)
{
	uint64_t hash = event_hash(ev);
	struct reading *rd;

	for (struct hash_node *n = hashtab_first(&r->by_event, hash); n;
	     n = hash_next(n->next, hash)) {
		rd = hash_entry(n, struct reading, node);
		if (rd->ev == ev)
			return rd;
	}
	rd = &r->pool[r->used++];
	rd->ev = ev;
	rd->vals = NULL;
	(void)hashtab_insert(&r->by_event, &rd->node, hash);
	return rd;
}

/* Reads every source of the event once for the whole batch (a backend
 * that needs it is brought up to now once for all its events: the batch
 * reads them all as of that moment). */
static int read_event(struct shpmu *pmu, struct kevent_batch *batch,
		      struct reading *rd)
{
	const struct kevent *ev = rd->ev;
	size_t n = kevent_nvals_total(ev);
	uint64_t *vals;
	int err;

	if (rd->vals)
		return 0;
	vals = small_alloc(rd->inline_vals, sizeof(rd->inline_vals),
			   n * sizeof(uint64_t));
	if (!vals)
		return -ENOMEM;
	err = kevent_read_batched(pmu, batch, ev, vals);
	if (err) {
		small_free(vals, rd->inline_vals);
		return err;
	}
	rd->vals = vals;
	return 0;
}

/* Stripes held: syncs every enabled handle from its event's one reading,
 * in one pass. A bad handle or a failed read stops the batch; the handles
 * synced before it only moved their base forward, which no reader can
 * tell from not having synced, and out is not written. */
static int read_locked(struct shpmu *pmu, const int *hs, size_t n,
		       struct shpmu_count *sums)
{
	struct kevent_batch batch = {.nflushed = 0};
	struct reading *last = NULL;
	struct readings r;
	int err;

	err = readings_init(&r, n);
	if (err)
		return err;
	for (size_t k = 0; k < n && !err; k++) {
		struct handle *h = handle_find_locked(&pmu->handles, hs[k]);

		if (!h) {
			pr_err(pmu,
			       "shpmu_read_many: hs[%zu] = %d is not an "
			       "open handle",
			       k, hs[k]);
			err = -EBADF;
			break;
		}

		/* A disabled handle does not move: its event need not be
		 * read for it. Batches usually list an event's handles
		 * together, so the last event is checked first. */
		if (h->enabled) {
			if (!last || last->ev != h->ev)
				last = readings_slot(&r, h->ev);
			err = read_event(pmu, &batch, last);
			if (err)
				break;
			if (window_is_single(h)) {
				window_apply_sum_one(h, last->vals, &sums[k]);
				continue;
			}
			window_apply_all(h, last->vals);
		}
		window_sum(h, -1, &sums[k]);
	}
	readings_fini(&r);
	return err;
}

static int read_many_checked(struct shpmu *pmu, const int *hs, size_t n,
			     struct shpmu_count *out)
{
	struct shpmu_count *sums;
	uint64_t stripes = 0;
	int err;

	if (n && (!hs || !out)) {
		pr_err(pmu, "shpmu_read_many: hs or out is NULL");
		return shpmu_err(-EINVAL);
	}
	if (n == 0)
		return 0;
	sums = n <= SIZE_MAX / sizeof(*sums) ? malloc(n * sizeof(*sums)) : NULL;
	if (!sums) {
		pr_err(pmu, "shpmu_read_many: no memory for %zu counts", n);
		return shpmu_err(-ENOMEM);
	}
	/* A big batch almost surely covers every stripe: take them all
	 * rather than work out which. */
	if (n >= HANDLE_STRIPES)
		stripes = HANDLE_ALL_STRIPES;
	for (size_t k = 0; k < n && stripes != HANDLE_ALL_STRIPES; k++)
		if (hs[k] >= 0)
			stripes |= 1ull << handle_stripe(hs[k]);
	handles_lock_stripes(&pmu->handles, stripes);
	err = read_locked(pmu, hs, n, sums);
	handles_unlock_stripes(&pmu->handles, stripes);
	if (!err)
		memcpy(out, sums, n * sizeof(*out));
	free(sums);
	return shpmu_err(err);
}

int shpmu_read_many(struct shpmu *pmu, const int *hs, size_t n,
		    struct shpmu_count *out)
{
	API_CALL(pmu, read_many_checked(pmu, hs, n, out));
}
