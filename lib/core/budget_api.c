// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* shpmu_pmu_budget: the counter budget (core/budget.h), as the public
 * call gives it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/api.h"
#include "core/budget.h"
#include "core/hw_pmus.h"
#include "core/log.h"

static int budget_checked(struct shpmu *pmu, struct shpmu_pmu_budget *out,
			  size_t n)
{
	struct shpmu_pmu_budget *rows;
	struct budget_shared *shared = NULL;
	const struct hw_pmus *hw;
	int total, nshared;

	if (!out && n) {
		pr_err(pmu, "shpmu_pmu_budget: out is NULL with n %zu", n);
		return shpmu_err(-EINVAL);
	}
	/* Under the create lock no event is made or freed meanwhile; the
	 * context lock holds the refs still. */
	pthread_mutex_lock(&pmu->create_lock);
	nshared = hw_pmus_get(pmu, &hw);
	/* The BPF backend's perf events: in host scope the domain's. */
	if (!nshared)
		nshared = budget_shared_collect(pmu, &shared);
	if (nshared < 0) {
		pthread_mutex_unlock(&pmu->create_lock);
		return shpmu_err(nshared);
	}
	pthread_mutex_lock(&pmu->lock);
	total = budget_compute(pmu, hw, shared, (size_t)nshared, &rows);
	pthread_mutex_unlock(&pmu->lock);
	pthread_mutex_unlock(&pmu->create_lock);
	free(shared);
	if (total < 0)
		return shpmu_err(total);
	if (n > (size_t)total)
		n = (size_t)total;
	if (n)
		memcpy(out, rows, n * sizeof(*rows));
	free(rows);
	return total;
}

int shpmu_pmu_budget(struct shpmu *pmu, struct shpmu_pmu_budget *out, size_t n)
{
	API_CALL(pmu, budget_checked(pmu, out, n));
}
