// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* shpmu_read_pmu: a handle's share on one core PMU of a hybrid machine. */
#include <errno.h>
#include <string.h>

#include "core/api.h"
#include "core/hw_pmus.h"
#include "core/kevent.h"
#include "core/log.h"
#include "core/sync.h"
#include "core/window.h"

/* The PMU source i of ev counts on (its leader's), or -1: a task's
 * sources are one per PMU type where the event is split; a BPF task
 * total mixes them, and a software event has none. */
static int source_pmu(const struct hw_pmus *hw, const struct kevent *ev,
		      uint32_t i)
{
	int cpu = ev->cpus[i];
	bool split = hw_split(hw, &ev->key);

	if (cpu < 0 && split && kevent_has_cache(ev))
		return -1;
	return hw_pmu_of(hw, &ev->key.events[0], cpu,
			 split && cpu < 0 ? (int)(i % hw->n) : -1);
}

static int pmu_index(const struct hw_pmus *hw, const char *name)
{
	for (uint32_t p = 0; hw && p < hw->n; p++)
		if (!strcmp(hw->pmu[p].name, name))
			return (int)p;
	return -1;
}

static int read_pmu_checked(struct shpmu *pmu, int h, const char *name,
			    struct shpmu_count *out)
{
	const struct hw_pmus *hw = hw_pmus_known(pmu);
	struct shpmu_count sum = {0}, one;
	struct handle *slot;
	bool any = false;
	int p, err = api_check(pmu, name, "shpmu_read_pmu", "pmu_name");

	if (!err)
		err = api_check(pmu, out, "shpmu_read_pmu", "out");
	if (err)
		return shpmu_err(err);
	slot = api_handle(pmu, h, "shpmu_read_pmu");
	if (!slot)
		return shpmu_err(-EBADF);
	p = pmu_index(hw, name);
	for (uint32_t i = 0; p >= 0 && i < slot->ev->nfds; i++)
		any |= source_pmu(hw, slot->ev, i) == p;
	err = any ? sync_now(pmu, slot, -1) : -ENOENT;
	for (uint32_t i = 0; !err && i < slot->ev->nfds; i++) {
		if (source_pmu(hw, slot->ev, i) != p)
			continue;
		window_sum(slot, (int)i, &one);
		sum.value += one.value;
		sum.time_enabled += one.time_enabled;
		sum.time_running += one.time_running;
	}
	handle_unlock(&pmu->handles, h);
	if (err == -ENOENT)
		pr_err(pmu,
		       "shpmu_read_pmu: handle %d counts nothing on PMU %s", h,
		       name);
	else if (!err)
		*out = sum;
	return shpmu_err(err);
}

int shpmu_read_pmu(struct shpmu *pmu, int h, const char *pmu_name,
		   struct shpmu_count *out)
{
	API_CALL(pmu, read_pmu_checked(pmu, h, pmu_name, out));
}
