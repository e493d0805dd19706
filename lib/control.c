// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Enable, disable and reset: the window changes of the dup_count scheme. */
#include <errno.h>

#include "context.h"
#include "kevent.h"
#include "log.h"
#include "window.h"

static struct handle *lock_or_log(struct shpmu *pmu, int h, const char *fn)
{
	struct handle *slot = handle_lock(&pmu->handles, h);

	if (!slot)
		pr_err(pmu, "%s: %d is not an open handle", fn, h);
	return slot;
}

/* Enables or disables one handle. The kernel event is switched on with its
 * first enabled handle and off with its last; under ev->lock no other
 * handle can switch it between this handle's reading and its count. */
static int switch_checked(struct shpmu *pmu, int h, bool on, const char *fn)
{
	struct handle *slot;
	struct kevent *ev;
	int err = 0;

	if (!pmu)
		return shpmu_err(-EINVAL);
	slot = lock_or_log(pmu, h, fn);
	if (!slot)
		return shpmu_err(-EBADF);
	if (slot->enabled == on)
		goto unlock;
	ev = slot->ev;
	pthread_mutex_lock(&ev->lock);
	/* Enabling opens a window at the event's reading now; disabling
	 * closes it with a last one. */
	err = on ? window_start(pmu, slot) : window_sync(pmu, slot);
	if (!err && ev->enabled == (on ? 0u : 1u))
		err = kevent_switch(pmu, ev, on);
	if (!err) {
		if (on)
			ev->enabled++;
		else
			ev->enabled--;
		slot->enabled = on;
	}
	pthread_mutex_unlock(&ev->lock);
unlock:
	handle_unlock(&pmu->handles, h);
	return shpmu_err(err);
}

int shpmu_enable(struct shpmu *pmu, int h)
{
	CONTEXT_CALL(pmu, switch_checked(pmu, h, true, "shpmu_enable"));
}

int shpmu_disable(struct shpmu *pmu, int h)
{
	CONTEXT_CALL(pmu, switch_checked(pmu, h, false, "shpmu_disable"));
}

static int reset_checked(struct shpmu *pmu, int h)
{
	struct handle *slot;
	int err;

	if (!pmu)
		return shpmu_err(-EINVAL);
	slot = lock_or_log(pmu, h, "shpmu_reset");
	if (!slot)
		return shpmu_err(-EBADF);
	/* Syncing first makes base "now"; only then is dropping acc exact. */
	err = window_sync(pmu, slot);
	if (!err)
		window_clear(slot);
	handle_unlock(&pmu->handles, h);
	return shpmu_err(err);
}

int shpmu_reset(struct shpmu *pmu, int h)
{
	CONTEXT_CALL(pmu, reset_checked(pmu, h));
}
