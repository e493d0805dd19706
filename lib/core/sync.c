// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/sync.h"

#include <errno.h>
#include <string.h>

#include "core/kevent.h"
#include "core/key.h"
#include "core/scratch.h"
#include "core/window.h"

/* Reads every source of h's event into a scratch buffer. */
static int read_all(struct shpmu *pmu, struct handle *h, struct scratch *s,
		    uint64_t **vals)
{
	*vals = scratch_get(s, kevent_nvals_total(h->ev));
	if (!*vals)
		return -ENOMEM;
	return kevent_read(pmu, h->ev, 0, h->ev->nfds, *vals);
}

/* read_all(), bringing the sources out of error state first when they
 * are in it (ev->lock held): an enable is the caller's way back. */
static int read_reviving(struct shpmu *pmu, struct handle *h, struct scratch *s,
			 uint64_t **vals)
{
	int err = read_all(pmu, h, s, vals);

	if (err != -ENODATA)
		return err;
	err = kevent_revive(pmu, h->ev);
	return err ? err : read_all(pmu, h, s, vals);
}

/* The first enable of h's sources, and h's base: read after switching
 * them on, since a kernel can add to a cgroup event's times at its enable
 * the spell its cgroup had no active event on a CPU (seconds where the
 * window is 0.5 s), which belongs in no window. A pinned event that finds
 * no counter is in error state from its enable on, and unreadable: its
 * base is then the reading from before it, when nothing counted. */
static int start_first(struct shpmu *pmu, struct handle *h, bool at_open,
		       struct scratch *s, uint64_t **now)
{
	struct kevent *ev = h->ev;
	bool pinned = ev->key.events[0].bits & KEY_PINNED;
	int err = pinned ? read_reviving(pmu, h, s, now) : 0;

	if (!err)
		err = kevent_enable_get(pmu, ev, at_open);
	if (err)
		return err;
	if (pinned) {
		struct scratch after = {.p = NULL};
		uint64_t *then;

		if (!read_all(pmu, h, &after, &then))
			memcpy(*now, then,
			       kevent_nvals_total(ev) * sizeof(*then));
		scratch_put(&after);
		return 0;
	}
	err = read_reviving(pmu, h, s, now);
	/* No handle counts on the sources if they stay on: ev->enabled goes
	 * back whatever the kernel says. */
	if (err && kevent_enable_put(pmu, ev))
		ev->enabled--;
	return err;
}

int sync_start(struct shpmu *pmu, struct handle *h, bool at_open)
{
	struct kevent *ev = h->ev;
	struct scratch s = {.p = NULL}; /* scratch_put() frees NULL alone */
	uint64_t *now;
	int err;

	/* Under ev->lock no other handle can switch the sources between
	 * this one's reading and its count. */
	pthread_mutex_lock(&ev->lock);
	if (ev->enabled == 0) {
		err = start_first(pmu, h, at_open, &s, &now);
	} else {
		err = read_reviving(pmu, h, &s, &now);
		if (!err)
			err = kevent_enable_get(pmu, ev, at_open);
	}
	if (!err)
		window_start(h, now);
	pthread_mutex_unlock(&ev->lock);
	scratch_put(&s);
	return err;
}

int sync_stop(struct shpmu *pmu, struct handle *h)
{
	struct kevent *ev = h->ev;
	struct scratch s;
	uint64_t *now;
	int err;

	pthread_mutex_lock(&ev->lock);
	err = read_all(pmu, h, &s, &now);
	if (!err)
		window_apply_all(h, now);
	/* In error state the sources count nothing, and cannot be read
	 * until they are enabled again: the window closes at its last
	 * reading, rather than never. */
	if (!err || err == -ENODATA)
		err = kevent_enable_put(pmu, ev);
	pthread_mutex_unlock(&ev->lock);
	scratch_put(&s);
	return err;
}

int sync_revive(struct shpmu *pmu, struct handle *h)
{
	struct kevent *ev = h->ev;
	struct scratch s;
	uint64_t *now;
	int err;

	pthread_mutex_lock(&ev->lock);
	err = read_reviving(pmu, h, &s, &now);
	if (!err)
		window_apply_all(h, now);
	pthread_mutex_unlock(&ev->lock);
	scratch_put(&s);
	return err;
}

int sync_now(struct shpmu *pmu, struct handle *h, int only)
{
	uint64_t one[KVAL_MAX], *now;
	struct scratch s;
	int err;

	if (!h->enabled)
		return 0;
	if (only >= 0) {
		err = kevent_read(pmu, h->ev, (uint32_t)only, 1, one);
		if (!err)
			window_apply(h, (uint32_t)only, one);
		return err;
	}
	err = read_all(pmu, h, &s, &now);
	if (!err)
		window_apply_all(h, now);
	scratch_put(&s);
	return err;
}

int sync_cached(struct shpmu *pmu, struct handle *h)
{
	struct scratch s;
	uint64_t *now;
	int err;

	if (!h->enabled)
		return 0;
	now = scratch_get(&s, kevent_nvals_total(h->ev));
	if (!now)
		return -ENOMEM;
	err = kevent_read_cached(pmu, h->ev, now);
	if (!err)
		window_apply_all(h, now);
	scratch_put(&s);
	return err;
}

void sync_drop(struct shpmu *pmu, struct handle *h)
{
	if (!h->enabled)
		return;
	pthread_mutex_lock(&h->ev->lock);
	kevent_enable_drop(pmu, h->ev);
	pthread_mutex_unlock(&h->ev->lock);
}
