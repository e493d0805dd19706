// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Reads that say how far off a count may be: a handle's bound, and what
 * its backend left unattributed (see shpmu_read_bound()). */
#include <errno.h>

#include "core/api.h"
#include "core/kevent.h"
#include "core/log.h"
#include "core/sync.h"
#include "core/window.h"

static int read_bound_checked(struct shpmu *pmu, int h, struct shpmu_count *out,
			      uint64_t *bound)
{
	struct shpmu_count sum;
	struct handle *slot;
	uint64_t b = 0;
	int err = api_check(pmu, out, "shpmu_read_bound", "out");

	if (!err)
		err = api_check(pmu, bound, "shpmu_read_bound", "bound");
	if (err)
		return shpmu_err(err);
	slot = api_handle(pmu, h, "shpmu_read_bound");
	if (!slot)
		return shpmu_err(-EBADF);
	err = sync_now(pmu, slot, -1);
	if (!err) {
		window_sum(slot, -1, &sum);
		b = window_bound(slot, -1);
	}
	handle_unlock(&pmu->handles, h);
	if (!err) {
		*out = sum;
		*bound = b;
	}
	return shpmu_err(err);
}

int shpmu_read_bound(struct shpmu *pmu, int h, struct shpmu_count *out,
		     uint64_t *bound)
{
	API_CALL(pmu, read_bound_checked(pmu, h, out, bound));
}

static int read_unattributed_checked(struct shpmu *pmu, int h, int cpu,
				     struct shpmu_count *out)
{
	const struct backend_ops *ops;
	struct shpmu_count got;
	struct handle *slot;
	int err = api_check(pmu, out, "shpmu_read_unattributed", "out");

	if (err)
		return shpmu_err(err);
	slot = api_handle(pmu, h, "shpmu_read_unattributed");
	if (!slot)
		return shpmu_err(-EBADF);
	ops = slot->ev->backend->ops;
	if (!ops->unattributed) {
		handle_unlock(&pmu->handles, h);
		pr_err(pmu,
		       "shpmu_read_unattributed: handle %d is counted by "
		       "classic perf fds, which attribute every count",
		       h);
		return shpmu_err(-EOPNOTSUPP);
	}
	err = ops->unattributed(pmu, slot->ev, cpu, &got);
	handle_unlock(&pmu->handles, h);
	if (err == -EINVAL)
		pr_err(pmu, "shpmu_read_unattributed: no cpu %d here", cpu);
	if (!err)
		*out = got;
	return shpmu_err(err);
}

int shpmu_read_unattributed(struct shpmu *pmu, int h, int cpu,
			    struct shpmu_count *out)
{
	API_CALL(pmu, read_unattributed_checked(pmu, h, cpu, out));
}
