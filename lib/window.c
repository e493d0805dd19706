// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "window.h"

#include <stdlib.h>
#include <string.h>

#include "handles.h"
#include "kevent.h"

/* Layout of state: base[nfds][nvals], then acc[nfds][nvals]. */
static uint64_t *base_of(const struct handle *h, uint32_t i)
{
	return h->state + (size_t)i * h->ev->nvals;
}

static uint64_t *acc_of(const struct handle *h, uint32_t i)
{
	return h->state + ((size_t)h->ev->nfds + i) * h->ev->nvals;
}

uint64_t *window_alloc(const struct kevent *ev)
{
	return calloc(2 * (size_t)ev->nfds * ev->nvals, sizeof(uint64_t));
}

int window_start(struct shpmu *pmu, struct handle *h)
{
	int err;

	for (uint32_t i = 0; i < h->ev->nfds; i++) {
		err = kevent_read(pmu, h->ev, i, base_of(h, i));
		if (err)
			return err;
	}
	return 0;
}

int window_sync_fd(struct shpmu *pmu, struct handle *h, uint32_t i)
{
	uint64_t now[KVAL_MAX];
	uint64_t *base = base_of(h, i), *acc = acc_of(h, i);
	uint32_t nvals = h->ev->nvals;
	int err;

	if (!h->enabled)
		return 0;
	err = kevent_read(pmu, h->ev, i, now);
	if (err)
		return err;
	for (uint32_t v = 0; v < nvals; v++) {
		/* The kernel event is never reset, so its values only grow;
		 * a smaller one would be a kernel bug, not a negative delta. */
		if (now[v] > base[v])
			acc[v] += now[v] - base[v];
		base[v] = now[v];
	}
	return 0;
}

int window_sync(struct shpmu *pmu, struct handle *h)
{
	int err;

	for (uint32_t i = 0; i < h->ev->nfds; i++) {
		err = window_sync_fd(pmu, h, i);
		if (err)
			return err;
	}
	return 0;
}

void window_clear(struct handle *h)
{
	memset(acc_of(h, 0), 0,
	       (size_t)h->ev->nfds * h->ev->nvals * sizeof(uint64_t));
}

const uint64_t *window_acc(const struct handle *h, uint32_t i)
{
	return acc_of(h, i);
}
