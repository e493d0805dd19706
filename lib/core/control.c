// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Enable, disable and reset: the window changes of the dup_count scheme. */
#include <errno.h>

#include "core/api.h"
#include "core/key.h"
#include "core/sync.h"
#include "core/window.h"

/* Enables or disables one handle: its window opens at the event's reading
 * now, or closes with a last one. Enabling an enabled handle of a pinned
 * event is how a caller brings it back from error state (-ENODATA). */
static int switch_checked(struct shpmu *pmu, int h, bool on, const char *fn)
{
	struct handle *slot = api_handle(pmu, h, fn);
	int err = 0;

	if (!slot)
		return shpmu_err(-EBADF);
	if (slot->enabled != on) {
		err = on ? sync_start(pmu, slot, false) : sync_stop(pmu, slot);
		if (!err)
			slot->enabled = on;
	} else if (on && (slot->ev->key.events[0].bits & KEY_PINNED)) {
		/* Only a pinned event goes to error state: the others'
		 * enable stays a no-op. */
		err = sync_revive(pmu, slot);
	}
	handle_unlock(&pmu->handles, h);
	return shpmu_err(err);
}

int shpmu_enable(struct shpmu *pmu, int h)
{
	API_CALL(pmu, switch_checked(pmu, h, true, "shpmu_enable"));
}

int shpmu_disable(struct shpmu *pmu, int h)
{
	API_CALL(pmu, switch_checked(pmu, h, false, "shpmu_disable"));
}

static int reset_checked(struct shpmu *pmu, int h)
{
	struct handle *slot = api_handle(pmu, h, "shpmu_reset");
	int err;

	if (!slot)
		return shpmu_err(-EBADF);
	/* Syncing first makes base "now"; only then is dropping acc exact. */
	err = sync_now(pmu, slot, -1);
	if (!err)
		window_clear(slot);
	handle_unlock(&pmu->handles, h);
	return shpmu_err(err);
}

int shpmu_reset(struct shpmu *pmu, int h)
{
	API_CALL(pmu, reset_checked(pmu, h));
}
