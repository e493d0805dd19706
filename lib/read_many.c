// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Batched reads: every kernel fd behind a batch of handles is read once,
 * and each reading serves all the handles on that event. 1024 handles on
 * 8 events spanning every CPU cost 8 read(2) calls per CPU, not 1024.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "kevent.h"
#include "log.h"
#include "window.h"

struct batch_item {
	struct handle *slot;
	size_t pos; /* in the caller's arrays */
};

static int by_event(const void *a, const void *b)
{
	const struct kevent *x = ((const struct batch_item *)a)->slot->ev;
	const struct kevent *y = ((const struct batch_item *)b)->slot->ev;

	return x < y ? -1 : x > y;
}

/* Reads each fd of the run's event once and applies it to the run. */
static int sync_run(struct shpmu *pmu, struct batch_item *run, size_t len)
{
	const struct kevent *ev = run[0].slot->ev;
	uint64_t now[KVAL_MAX];
	bool any_enabled = false;
	int err;

	for (size_t k = 0; k < len; k++)
		any_enabled |= run[k].slot->enabled;
	if (!any_enabled)
		return 0; /* disabled handles do not move */
	for (uint32_t i = 0; i < ev->nfds; i++) {
		err = kevent_read(pmu, ev, i, now);
		if (err)
			return err;
		for (size_t k = 0; k < len; k++)
			window_apply(run[k].slot, i, now);
	}
	return 0;
}

/* Stripes held: finds every handle, then syncs event by event. */
static int read_locked(struct shpmu *pmu, const int *hs, size_t n,
		       struct batch_item *items, struct shpmu_count *sums)
{
	size_t start = 0;
	int err;

	for (size_t k = 0; k < n; k++) {
		items[k].slot = handle_find_locked(&pmu->handles, hs[k]);
		items[k].pos = k;
		if (!items[k].slot) {
			pr_err(pmu, "shpmu_read_many: hs[%zu] = %d is not an "
				    "open handle",
			       k, hs[k]);
			return -EBADF;
		}
	}
	qsort(items, n, sizeof(*items), by_event);
	for (size_t k = 1; k <= n; k++) {
		if (k < n && items[k].slot->ev == items[start].slot->ev)
			continue;
		err = sync_run(pmu, items + start, k - start);
		if (err)
			return err;
		start = k;
	}
	for (size_t k = 0; k < n; k++)
		window_sum(items[k].slot, -1, &sums[items[k].pos]);
	return 0;
}

int shpmu_read_many(struct shpmu *pmu, const int *hs, size_t n,
		    struct shpmu_count *out)
{
	struct batch_item *items;
	struct shpmu_count *sums;
	uint64_t stripes = 0;
	int err;

	if (!pmu || (n && (!hs || !out))) {
		pr_err(pmu, "shpmu_read_many: hs or out is NULL");
		return shpmu_err(-EINVAL);
	}
	if (n == 0)
		return 0;
	items = calloc(n, sizeof(*items));
	sums = calloc(n, sizeof(*sums));
	if (!items || !sums) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < n; k++)
		if (hs[k] >= 0)
			stripes |= 1ull << handle_stripe(hs[k]);
	handles_lock_stripes(&pmu->handles, stripes);
	err = read_locked(pmu, hs, n, items, sums);
	handles_unlock_stripes(&pmu->handles, stripes);
	if (!err)
		memcpy(out, sums, n * sizeof(*out));
out:
	free(items);
	free(sums);
	return shpmu_err(err);
}
