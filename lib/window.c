// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "window.h"

#include <errno.h>
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

int window_alloc(struct handle *h)
{
	size_t n = 2 * (size_t)h->ev->nfds * h->ev->nvals;

	if (n <= HANDLE_INLINE_VALUES) {
		memset(h->inline_state, 0, sizeof(h->inline_state));
		h->state = h->inline_state;
		return 0;
	}
	h->state = calloc(n, sizeof(uint64_t));
	return h->state ? 0 : -ENOMEM;
}

void window_free(struct handle *h)
{
	if (h->state != h->inline_state)
		free(h->state);
	h->state = NULL;
}

int window_start(struct shpmu *pmu, struct handle *h)
{
	return kevent_read_all(pmu, h->ev, false, base_of(h, 0));
}

int window_sync_fd(struct shpmu *pmu, struct handle *h, uint32_t i)
{
	uint64_t now[KVAL_MAX];
	int err;

	if (!h->enabled)
		return 0;
	err = kevent_read(pmu, h->ev, i, now);
	if (!err)
		window_apply(h, i, now);
	return err;
}

void window_apply(struct handle *h, uint32_t i, const uint64_t *now)
{
	uint64_t *base = base_of(h, i), *acc = acc_of(h, i);
	uint32_t nvals = h->ev->nvals;

	if (!h->enabled)
		return;
	for (uint32_t v = 0; v < nvals; v++) {
		/* The kernel event is never reset, so its values only grow;
		 * a smaller one would be a kernel bug, not a negative delta. */
		if (now[v] > base[v])
			acc[v] += now[v] - base[v];
		base[v] = now[v];
	}
}

/* A BPF-counted cgroup: one flush per CPU and one lookup for them all. */
static int sync_bpf(struct shpmu *pmu, struct handle *h)
{
	/* 64 CPUs' readings (time_enabled, time_running, count) */
	uint64_t stack[64 * (KVAL_COUNT + 1)], *now = stack;
	size_t n = (size_t)h->ev->nfds * h->ev->nvals;
	int err;

	if (!h->enabled)
		return 0;
	if (n > sizeof(stack) / sizeof(stack[0])) {
		now = malloc(n * sizeof(*now));
		if (!now)
			return -ENOMEM;
	}
	err = kevent_read_all(pmu, h->ev, false, now);
	for (uint32_t i = 0; !err && i < h->ev->nfds; i++)
		window_apply(h, i, now + (size_t)i * h->ev->nvals);
	if (now != stack)
		free(now);
	return err;
}

int window_sync(struct shpmu *pmu, struct handle *h)
{
	int err;

	if (h->ev->bpf)
		return sync_bpf(pmu, h);
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
}

const uint64_t *window_acc(const struct handle *h, uint32_t i)
{
	return acc_of(h, i);
}
