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

static int enable_checked(struct shpmu *pmu, int h)
{
	struct handle *slot;
	struct kevent *ev;
	int err = 0;

	if (!pmu)
		return shpmu_err(-EINVAL);
	slot = lock_or_log(pmu, h, __func__);
	if (!slot)
		return shpmu_err(-EBADF);
	if (slot->enabled)
		goto unlock;
	ev = slot->ev;
	/* Under ev->lock no other handle can switch the kernel event between
	 * our base reading and our enable count. */
	pthread_mutex_lock(&ev->lock);
	err = window_start(pmu, slot);
	if (!err && ev->enabled == 0)
		err = kevent_switch(pmu, ev, true);
	if (!err) {
		ev->enabled++;
		slot->enabled = true;
	}
	pthread_mutex_unlock(&ev->lock);
unlock:
	handle_unlock(&pmu->handles, h);
	return shpmu_err(err);
}

int shpmu_enable(struct shpmu *pmu, int h)
{
	CONTEXT_CALL(pmu, enable_checked(pmu, h));
}

static int disable_checked(struct shpmu *pmu, int h)
{
	struct handle *slot;
	struct kevent *ev;
	int err = 0;

	if (!pmu)
		return shpmu_err(-EINVAL);
	slot = lock_or_log(pmu, h, __func__);
	if (!slot)
		return shpmu_err(-EBADF);
	if (!slot->enabled)
		goto unlock;
	ev = slot->ev;
	pthread_mutex_lock(&ev->lock);
	err = window_sync(pmu, slot);
	if (!err && ev->enabled == 1)
		err = kevent_switch(pmu, ev, false);
	if (!err) {
		ev->enabled--;
		slot->enabled = false;
	}
	pthread_mutex_unlock(&ev->lock);
unlock:
	handle_unlock(&pmu->handles, h);
	return shpmu_err(err);
}

int shpmu_disable(struct shpmu *pmu, int h)
{
	CONTEXT_CALL(pmu, disable_checked(pmu, h));
}

static int reset_checked(struct shpmu *pmu, int h)
{
	struct handle *slot;
	int err;

	if (!pmu)
		return shpmu_err(-EINVAL);
	slot = lock_or_log(pmu, h, __func__);
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
