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
#include "core/arena.h"
#include "core/hashtab.h"
#include "core/kevent.h"
#include "core/log.h"
#include "core/window.h"

/* The reading of one kernel event, made at most once per batch. */
struct reading {
	struct hash_node node; /* hashed by the event's address, past FEW */
	const struct kevent *ev;
	uint64_t *vals; /* nfds * nvals: small ones in inline_vals */
	uint64_t inline_vals[KVAL_COUNT + 1];
};

/* Most batches span a handful of events: their readings live here and
 * are found by a scan of a few pointers. Past FEW, the rest come from the
 * batch's arena (as do values too big for a reading's own room), and
 * every reading is found through a hash table. */
#define FEW 16

struct readings {
	struct reading few[FEW];
	size_t used; /* of few[] */
	struct arena arena;
	struct hashtab by_event;
	bool hashed; /* past FEW: by_event holds every reading */
};

static void readings_fini(struct readings *r)
{
	if (r->hashed)
		hashtab_fini(&r->by_event);
	arena_free(&r->arena);
}

/* Mixes the address's high bits into the low ones that pick a bucket:
 * events allocated alike share their low bits. */
static uint64_t event_hash(const struct kevent *ev)
{
	uint64_t h = (uintptr_t)ev * 0x9e3779b97f4a7c15ull;

	return h ^ (h >> 32);
}

static struct reading *readings_find(const struct readings *r,
				     const struct kevent *ev)
{
	uint64_t hash;

	if (!r->hashed) {
		for (size_t i = 0; i < r->used; i++)
			if (r->few[i].ev == ev)
				return (struct reading *)&r->few[i];
		return NULL;
	}
	hash = event_hash(ev);
	for (struct hash_node *n = hashtab_first(&r->by_event, hash); n;
	     n = hash_next(n->next, hash)) {
		struct reading *rd = hash_entry(n, struct reading, node);

		if (rd->ev == ev)
			return rd;
	}
	return NULL;
}

/* The table's first size, in buckets: room for as many events as the
 * handles left may have, up to a size that costs little to clear (it
 * doubles past that as it fills). */
#define TABLE_FIRST_MAX 1024

/* The room for a new reading: in few[], or past it from the arena, with
 * every reading in the table. NULL: -ENOMEM. */
static struct reading *readings_new(struct readings *r, size_t handles_left)
{
	size_t buckets = 2 * FEW;

	if (r->used < FEW)
		return &r->few[r->used++];
	if (!r->hashed) {
		while (buckets < FEW + handles_left &&
		       buckets < TABLE_FIRST_MAX)
			buckets *= 2;
		if (hashtab_init(&r->by_event, buckets))
			return NULL;
		r->hashed = true;
		for (size_t i = 0; i < FEW; i++)
			(void)hashtab_insert(&r->by_event, &r->few[i].node,
					     event_hash(r->few[i].ev));
	}
	return arena_alloc(&r->arena, sizeof(struct reading));
}

/* ev's reading, made now if the batch has none yet. */
static int readings_get(struct shpmu *pmu, struct kevent_batch *batch,
			struct readings *r, const struct kevent *ev,
			size_t handles_left, struct reading **out)
{
	struct reading *rd = readings_find(r, ev);
	size_t n = kevent_nvals_total(ev);
	int err;

	if (rd) {
		*out = rd;
		return 0;
	}
	rd = readings_new(r, handles_left);
	if (rd) {
		rd->ev = ev;
		rd->vals =
			n <= KVAL_COUNT + 1
				? rd->inline_vals
				: arena_alloc(&r->arena, n * sizeof(uint64_t));
	}
	/* (A failed read ends the batch: a reading left half made is
	 * never looked up.) */
	if (!rd || !rd->vals) {
		pr_err(pmu, "shpmu_read_many: no memory for the readings of "
			    "its events");
		return -ENOMEM;
	}
	/* A backend that needs it is brought up to now once for all its
	 * events: the batch reads them all as of that moment. */
	err = kevent_read_batched(pmu, batch, ev, rd->vals);
	if (err)
		return err;
	if (r->hashed)
		(void)hashtab_insert(&r->by_event, &rd->node, event_hash(ev));
	*out = rd;
	return 0;
}

/* Stripes held: syncs every enabled handle from its event's one reading,
 * in one pass (each handle is touched once: a second pass costs a cache
 * miss a handle). A bad handle or a failed read stops the batch; the
 * handles synced before it only moved their base forward, which no
 * reader can tell from not having synced, and out is not written. */
static int read_locked(struct shpmu *pmu, const int *hs, size_t n,
		       struct readings *r, struct shpmu_count *sums)
{
	struct kevent_batch batch = {.nflushed = 0};
	struct reading *last = NULL;

	for (size_t k = 0; k < n; k++) {
		struct handle *h = handle_find_locked(&pmu->handles, hs[k]);
		int err;

		if (!h) {
			pr_err(pmu,
			       "shpmu_read_many: hs[%zu] = %d is not an "
			       "open handle",
			       k, hs[k]);
			return -EBADF;
		}
		/* A disabled handle does not move: its event need not be
		 * read for it. Batches usually list an event's handles
		 * together, so the last event is checked first. */
		if (h->enabled) {
			if (!last || last->ev != h->ev) {
				err = readings_get(pmu, &batch, r, h->ev, n - k,
						   &last);
				if (err)
					return err;
			}
			if (window_is_single(h)) {
				window_apply_sum_one(h, last->vals, &sums[k]);
				continue;
			}
			window_apply_all(h, last->vals);
		}
		window_sum(h, -1, &sums[k]);
	}
	return 0;
}

static int read_many_checked(struct shpmu *pmu, const int *hs, size_t n,
			     struct shpmu_count *out)
{
	struct shpmu_count *sums;
	struct readings r;
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
	/* (Only what readings_fini() looks at: few[] is written as used.) */
	r.used = 0;
	r.arena.blocks = NULL;
	r.hashed = false;
	/* A big batch almost surely covers every stripe: take them all
	 * rather than work out which. */
	if (n >= HANDLE_STRIPES)
		stripes = HANDLE_ALL_STRIPES;
	for (size_t k = 0; k < n && stripes != HANDLE_ALL_STRIPES; k++)
		if (hs[k] >= 0)
			stripes |= 1ull << handle_stripe(hs[k]);
	handles_lock_stripes(&pmu->handles, stripes);
	err = read_locked(pmu, hs, n, &r, sums);
	handles_unlock_stripes(&pmu->handles, stripes);
	readings_fini(&r);
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
