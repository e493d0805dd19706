// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "names/names_pfm.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* After <linux/perf_event.h>: libpfm4's own copy of the perf ABI then
 * stands aside. */
#include <perfmon/pfmlib_perf_event.h>

/* libpfm4 keeps its own process-wide tables; they are set up once. */
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_status;

static void pfm_setup(void)
{
	pfm_status = pfm_initialize();
}

static int pfm_ready(const char **why)
{
	pthread_once(&pfm_once, pfm_setup);
	if (pfm_status == PFM_SUCCESS)
		return 0;
	*why = pfm_strerror(pfm_status);
	return -ENOTSUP;
}

int names_pfm_encode(const char *name, struct perf_event_attr *attr,
		     const char **why)
{
	pfm_perf_encode_arg_t arg;
	struct perf_event_attr a;
	int err = pfm_ready(why);

	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &a;
	arg.size = sizeof(arg);
	err = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3,
					PFM_OS_PERF_EVENT_EXT, &arg);
	if (err != PFM_SUCCESS) {
		*why = pfm_strerror(err);
		return err == PFM_ERR_NOTFOUND ? -ENOENT : -EINVAL;
	}
	a.size = sizeof(a);
	*attr = a;
	return 0;
}

int names_pfm_list(int (*cb)(const char *name, const char *desc, void *arg),
		   void *arg, const char **why)
{
	char name[256];
	int err = pfm_ready(why), ret;

	if (err)
		return err;
	for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t pinfo = {.size = sizeof(pinfo)};

		if (pfm_get_pmu_info((pfm_pmu_t)p, &pinfo) != PFM_SUCCESS ||
		    !pinfo.is_present)
			continue;
		for (int e = pinfo.first_event; e != -1;
		     e = pfm_get_event_next(e)) {
			pfm_event_info_t info = {.size = sizeof(info)};

			if (pfm_get_event_info(e, PFM_OS_PERF_EVENT_EXT,
					       &info) != PFM_SUCCESS)
				continue;
			snprintf(name, sizeof(name), "%s::%s", pinfo.name,
				 info.name);
			ret = cb(name, info.desc ? info.desc : "", arg);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int names_pfm_core_counters(unsigned int nth, unsigned int *general,
			    unsigned int *fixed)
{
	const char *why;
	unsigned int seen = 0;

	if (pfm_ready(&why))
		return -ENOTSUP;
	for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t pinfo = {.size = sizeof(pinfo)};

		if (pfm_get_pmu_info((pfm_pmu_t)p, &pinfo) != PFM_SUCCESS ||
		    !pinfo.is_present || pinfo.type != PFM_PMU_TYPE_CORE)
			continue;
		if (seen++ != nth)
			continue;
		if (pinfo.num_cntrs < 0 || pinfo.num_fixed_cntrs < 0)
			return -ENOENT;
		*general = (unsigned int)pinfo.num_cntrs;
		*fixed = (unsigned int)pinfo.num_fixed_cntrs;
		return 0;
	}
	return -ENOENT;
}
