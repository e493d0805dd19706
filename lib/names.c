// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Event names through libpfm4, as perf and PAPI spell them: generic
 * ("cycles", "task-clock", "cs"), "perf::" names, PMU-specific names and
 * their modifiers (":u", ":k").
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "context.h"
#include "log.h"

/* After <linux/perf_event.h> (through context.h): libpfm4's own copy of
 * the perf ABI then stands aside. */
#include <perfmon/pfmlib_perf_event.h>

/* libpfm4 keeps its own process-wide tables; they are set up once. */
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_status;

static void pfm_setup(void)
{
	pfm_status = pfm_initialize();
}

static int pfm_ready(struct shpmu *pmu)
{
	pthread_once(&pfm_once, pfm_setup);
	if (pfm_status != PFM_SUCCESS) {
		pr_err(pmu, "libpfm4 did not initialize: %s",
		       pfm_strerror(pfm_status));
		return -ENOTSUP;
	}
	return 0;
}

int shpmu_event_attr(struct shpmu *pmu, const char *event,
		     struct perf_event_attr *attr)
{
	pfm_perf_encode_arg_t arg;
	struct perf_event_attr a;
	int err;

	if (!pmu || !event || !attr) {
		pr_err(pmu, "shpmu_event_attr: %s is NULL",
		       !event ? "event" : "attr");
		/* (with pmu NULL there is nowhere to log) */
		return shpmu_err(-EINVAL);
	}
	err = pfm_ready(pmu);
	if (err)
		return shpmu_err(err);
	memset(&a, 0, sizeof(a));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &a;
	arg.size = sizeof(arg);
	err = pfm_get_os_event_encoding(event, PFM_PLM0 | PFM_PLM3,
					PFM_OS_PERF_EVENT_EXT, &arg);
	if (err != PFM_SUCCESS) {
		pr_err(pmu, "event '%s': %s%s", event, pfm_strerror(err),
		       err == PFM_ERR_NOTFOUND
			       ? " (shpmu-stat --list shows what this machine "
				 "has)"
			       : "");
		return shpmu_err(err == PFM_ERR_NOTFOUND ? -ENOENT : -EINVAL);
	}
	a.size = sizeof(a);
	*attr = a;
	return 0;
}

int shpmu_open_name(struct shpmu *pmu, const char *event,
		    const struct shpmu_target *target)
{
	struct perf_event_attr attr;
	int err;

	err = shpmu_event_attr(pmu, event, &attr);
	if (err)
		return err;
	return shpmu_open(pmu, &attr, target);
}

int shpmu_list_events(struct shpmu *pmu,
		      int (*cb)(const char *name, const char *desc, void *arg),
		      void *arg)
{
	char name[256];
	int err, ret;

	if (!pmu || !cb) {
		pr_err(pmu, "shpmu_list_events: cb is NULL");
		return shpmu_err(-EINVAL);
	}
	err = pfm_ready(pmu);
	if (err)
		return shpmu_err(err);
	for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t pinfo = { .size = sizeof(pinfo) };

		if (pfm_get_pmu_info((pfm_pmu_t)p, &pinfo) != PFM_SUCCESS ||
		    !pinfo.is_present)
			continue;
		for (int e = pinfo.first_event; e != -1;
		     e = pfm_get_event_next(e)) {
			pfm_event_info_t info = { .size = sizeof(info) };

			if (pfm_get_event_info(e, PFM_OS_PERF_EVENT_EXT,
					       &info) != PFM_SUCCESS)
				continue;
			snprintf(name, sizeof(name), "%s::%s", pinfo.name,
				 info.name);
			ret = cb(name, info.desc ? info.desc : "", arg);
			if (ret)
				return ret < 0 ? shpmu_err(ret) : ret;
		}
	}
	return 0;
}
