// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/window.h"

#include <errno.h>
#include <string.h>

#include "core/small.h"

static uint64_t *base_of(const struct handle *h, uint32_t i)
{
	return h->state + (size_t)i * h->ev->nvals;
}

static uint64_t *acc_of(const struct handle *h, uint32_t i)
{
	return h->state + ((size_t)h->ev->nfds + i) * h->ev->nvals;
}

int window_alloc(struct handle *h)
{
	size_t n = 2 * kevent_nvals_total(h->ev);

	h->state = small_zalloc(h->inline_state, sizeof(h->inline_state),
				n * sizeof(uint64_t));
	return h->state ? 0 : -ENOMEM;
}

void window_free(struct handle *h)
{
	small_free(h->state, h->inline_state);
	h->state = NULL;
}

void window_start(struct handle *h, const uint64_t *now)
{
	memcpy(base_of(h, 0), now, kevent_nvals_total(h->ev) * sizeof(*now));
}

void window_apply(struct handle *h, uint32_t i, const uint64_t *now)
{
	if (h->enabled)
		window_advance(base_of(h, i), acc_of(h, i), now, h->ev->nvals);
}

void window_apply_all(struct handle *h, const uint64_t *now)
{
	for (uint32_t i = 0; i < h->ev->nfds; i++)
		window_apply(h, i, now + (size_t)i * h->ev->nvals);
}

void window_clear(struct handle *h)
{
	memset(acc_of(h, 0), 0, kevent_nvals_total(h->ev) * sizeof(uint64_t));
}

void window_sum(const struct handle *h, int only, struct shpmu_count *out)
{
	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < h->ev->nfds; i++) {
		const uint64_t *acc = acc_of(h, i);

		if (only >= 0 && i != (uint32_t)only)
			continue;
		out->value += acc[KVAL_COUNT];
		out->time_enabled += acc[KVAL_ENABLED];
		out->time_running += acc[KVAL_RUNNING];
	}
	/* A whole reading: each of a hybrid task's sources was enabled
	 * all its windows, while it ran on one of them at a time. */
	if (only < 0 && h->ev->enabled_together > 1)
		out->time_enabled /= h->ev->enabled_together;
}

uint64_t window_bound(const struct handle *h, int only)
{
	uint32_t at = kevent_bound_index(h->ev);
	uint64_t bound = 0;

	for (uint32_t i = 0; at && i < h->ev->nfds; i++)
		if (only < 0 || i == (uint32_t)only)
			bound += acc_of(h, i)[at];
	return bound;
}

const uint64_t *window_acc(const struct handle *h, uint32_t i)
{
	return acc_of(h, i);
}
