// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/api.h"

#include "core/log.h"

__thread int api_depth __attribute__((tls_model("initial-exec")));

int api_refuse(struct shpmu *pmu, const char *fn)
{
	/* No logging for re-entry: the log callback may be what re-entered. */
	if (api_depth > 0)
		return -EDEADLK;
	pr_err(pmu,
	       "%s: this context belongs to the parent process; a "
	       "forked child must create its own",
	       fn);
	return -EPERM;
}

int api_check(struct shpmu *pmu, const void *what, const char *fn,
	      const char *name)
{
	if (what)
		return 0;
	pr_err(pmu, "%s: %s is NULL", fn, name);
	return -EINVAL;
}

struct handle *api_handle(struct shpmu *pmu, int h, const char *fn)
{
	struct handle *slot = handle_lock(&pmu->handles, h);

	if (!slot)
		pr_err(pmu, "%s: %d is not an open handle", fn, h);
	return slot;
}
