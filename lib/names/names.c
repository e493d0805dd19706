// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Event names: libpfm4's where it knows them (every PMU of the machine),
 * else the kernel's generic ones, so that "task-clock" or "cycles" open
 * on a CPU libpfm4 does not know as well.
 */
#include <errno.h>

#include "core/api.h"
#include "core/log.h"
#include "core/symver.h"
#include "names/names_generic.h"
#include "names/names_pfm.h"

int shpmu_event_attr(struct shpmu *pmu, const char *event,
		     struct perf_event_attr *attr)
{
	const char *why = NULL;
	int err, generic;

	if (!pmu)
		return shpmu_err(-EINVAL);
	err = api_check(pmu, event, "shpmu_event_attr", "event");
	if (!err)
		err = api_check(pmu, attr, "shpmu_event_attr", "attr");
	if (err)
		return shpmu_err(err);
	err = names_pfm_encode(event, attr, &why);
	if (err == -ENOENT || err == -ENOTSUP) {
		generic = names_generic_encode(event, attr);
		if (generic != -ENOENT) {
			err = generic;
			why = NULL;
		}
	}
	if (err == -ENOTSUP) {
		pr_err(pmu,
		       "event '%s': not a generic event name, and libpfm4 "
		       "did not initialize: %s",
		       event, why);
		err = -ENOENT;
	} else if (err) {
		pr_err(pmu, "event '%s': %s%s", event,
		       why ? why : "bad modifier (u, k or uk)",
		       err == -ENOENT ? " (shpmu-stat --list shows what this "
					"machine has)"
				      : "");
	}
	return shpmu_err(err);
}

/* shpmu_open_name with the open of the caller's version. */
static int open_name(struct shpmu *pmu, const char *event,
		     const struct shpmu_target *target,
		     int (*open_fn)(struct shpmu *,
				    const struct perf_event_attr *,
				    const struct shpmu_target *))
{
	struct perf_event_attr attr;
	int err;

	err = shpmu_event_attr(pmu, event, &attr);
	if (err)
		return err;
	return open_fn(pmu, &attr, target);
}

int shpmu_open_name_v0_4(struct shpmu *pmu, const char *event,
			 const struct shpmu_target *target)
{
	return open_name(pmu, event, target, shpmu_open_v0_4);
}
SHPMU_DEFAULT_VERSION(shpmu_open_name_v0_4, shpmu_open_name, "LIBSHPMU_0.4");

/* Binaries built against 0.2 and 0.3: their targets' 0.3 rule. */
int shpmu_open_name_v0_2(struct shpmu *pmu, const char *event,
			 const struct shpmu_target *target)
{
	return open_name(pmu, event, target, shpmu_open_v0_2);
}
SHPMU_COMPAT_VERSION(shpmu_open_name_v0_2, shpmu_open_name, "LIBSHPMU_0.2");

int shpmu_list_events(struct shpmu *pmu,
		      int (*cb)(const char *name, const char *desc, void *arg),
		      void *arg)
{
	const char *why = NULL;
	int ret;

	if (!pmu)
		return shpmu_err(-EINVAL);
	ret = api_check(pmu, cb, "shpmu_list_events", "cb");
	if (ret)
		return shpmu_err(ret);
	ret = names_pfm_list(cb, arg, &why);
	if (ret == -ENOTSUP) {
		pr_info(pmu,
			"libpfm4 did not initialize (%s): listing the "
			"kernel's generic events only",
			why);
		ret = names_generic_list(cb, arg);
	}
	return ret < 0 ? shpmu_err(ret) : ret;
}
