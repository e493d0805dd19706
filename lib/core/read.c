// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Reading handles: sync, then report what the handle accumulated. */
#include <errno.h>
#include <string.h>

#include "core/api.h"
#include "core/kevent.h"
#include "core/log.h"
#include "core/sync.h"
#include "core/window.h"

static int read_checked(struct shpmu *pmu, int h, struct shpmu_count *out)
{
	struct shpmu_count sum;
	struct handle *slot;
	int err = api_check(pmu, out, "shpmu_read", "out");

	if (err)
		return shpmu_err(err);
	slot = api_handle(pmu, h, "shpmu_read");
	if (!slot)
		return shpmu_err(-EBADF);
	if (slot->enabled && window_is_single(slot)) {
		/* The common handle, in as few steps as the syscall allows:
		 * this is the call agents make most. */
		uint64_t now[KVAL_COUNT + 1];

		err = kevent_read(pmu, slot->ev, 0, 1, now);
		if (!err)
			window_apply_sum_one(slot, now, &sum);
	} else {
		err = sync_now(pmu, slot, -1);
		if (!err)
			window_sum(slot, -1, &sum);
	}
	handle_unlock(&pmu->handles, h);
	if (!err)
		*out = sum;
	return shpmu_err(err);
}

int shpmu_read(struct shpmu *pmu, int h, struct shpmu_count *out)
{
	API_CALL(pmu, read_checked(pmu, h, out));
}

static int read_cached_checked(struct shpmu *pmu, int h,
			       struct shpmu_count *out)
{
	struct shpmu_count sum;
	struct handle *slot;
	int err = api_check(pmu, out, "shpmu_read_cached", "out");

	if (err)
		return shpmu_err(err);
	slot = api_handle(pmu, h, "shpmu_read_cached");
	if (!slot)
		return shpmu_err(-EBADF);
	if (!kevent_has_cache(slot->ev)) {
		handle_unlock(&pmu->handles, h);
		pr_err(pmu,
		       "shpmu_read_cached: handle %d is counted by classic "
		       "perf fds, which keep nothing in memory: shpmu_read "
		       "it",
		       h);
		return shpmu_err(-EOPNOTSUPP);
	}
	err = sync_cached(pmu, slot);
	if (!err)
		window_sum(slot, -1, &sum);
	handle_unlock(&pmu->handles, h);
	if (!err)
		*out = sum;
	return shpmu_err(err);
}

int shpmu_read_cached(struct shpmu *pmu, int h, struct shpmu_count *out)
{
	API_CALL(pmu, read_cached_checked(pmu, h, out));
}

static int read_cpu_checked(struct shpmu *pmu, int h, int cpu,
			    struct shpmu_count *out)
{
	struct shpmu_count one;
	struct handle *slot;
	int i, err = api_check(pmu, out, "shpmu_read_cpu", "out");

	if (err)
		return shpmu_err(err);
	slot = api_handle(pmu, h, "shpmu_read_cpu");
	if (!slot)
		return shpmu_err(-EBADF);
	i = kevent_fd_index(slot->ev, cpu);
	if (i < 0) {
		handle_unlock(&pmu->handles, h);
		pr_err(pmu, "shpmu_read_cpu: handle %d does not count cpu %d",
		       h, cpu);
		return shpmu_err(-ENOENT);
	}
	err = sync_now(pmu, slot, i);
	if (!err)
		window_sum(slot, i, &one);
	handle_unlock(&pmu->handles, h);
	if (!err)
		*out = one;
	return shpmu_err(err);
}

int shpmu_read_cpu(struct shpmu *pmu, int h, int cpu, struct shpmu_count *out)
{
	API_CALL(pmu, read_cpu_checked(pmu, h, cpu, out));
}

static int read_group_checked(struct shpmu *pmu, int gh,
			      struct shpmu_count *out, size_t n)
{
	struct shpmu_count sum[SHPMU_GROUP_MAX];
	struct handle *slot;
	uint32_t members;
	int err = api_check(pmu, out, "shpmu_read_group", "out");

	if (err)
		return shpmu_err(err);
	slot = api_handle(pmu, gh, "shpmu_read_group");
	if (!slot)
		return shpmu_err(-EBADF);
	members = slot->ev->key.nevents;
	if (n < members) {
		handle_unlock(&pmu->handles, gh);
		pr_err(pmu,
		       "shpmu_read_group: the group has %u member%s, out "
		       "has room for %zu",
		       members, plural(members, "s"), n);
		return shpmu_err(-ERANGE);
	}
	memset(sum, 0, sizeof(sum));
	err = sync_now(pmu, slot, -1);
	for (uint32_t i = 0; !err && i < slot->ev->nfds; i++) {
		const uint64_t *acc = window_acc(slot, i);

		for (uint32_t m = 0; m < members; m++) {
			sum[m].value += acc[KVAL_COUNT + m];
			sum[m].time_enabled += acc[KVAL_ENABLED];
			sum[m].time_running += acc[KVAL_RUNNING];
		}
	}
	if (slot->ev->enabled_together > 1)
		for (uint32_t m = 0; m < members; m++)
			sum[m].time_enabled /= slot->ev->enabled_together;
	handle_unlock(&pmu->handles, gh);
	if (!err)
		memcpy(out, sum, members * sizeof(*out));
	return shpmu_err(err);
}

int shpmu_read_group(struct shpmu *pmu, int gh, struct shpmu_count *out,
		     size_t n)
{
	API_CALL(pmu, read_group_checked(pmu, gh, out, n));
}

uint64_t shpmu_scale(const struct shpmu_count *c)
{
	unsigned __int128 v;

	if (!c || !c->time_running)
		return 0;
	if (c->time_running >= c->time_enabled)
		return c->value;
	v = (unsigned __int128)c->value * c->time_enabled / c->time_running;
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}
