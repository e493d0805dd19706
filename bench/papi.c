// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* PAPI_read of perf::TASK-CLOCK against shpmu_read of the same event. */
#include <errno.h>
#include <stdio.h>

#include "bench.h"

#ifdef HAVE_PAPI
#include <papi.h>

/* PAPI's own words for why it cannot count: the call's error, and the
 * perf_event component's reason when PAPI disabled it (e.g. "libpfm4 no
 * default PMU found" on a CPU model libpfm4 does not know). */
static void skip_with_reason(struct figure *f, const char *call, int ret)
{
	const PAPI_component_info_t *info = NULL;
	int cidx = PAPI_get_component_index("perf_event");

	if (cidx >= 0)
		info = PAPI_get_component_info(cidx);
	if (info && info->disabled)
		snprintf(f->note, sizeof(f->note),
			 "PAPI cannot count perf::TASK-CLOCK here: %s: %s; "
			 "its perf_event component is disabled: %.96s",
			 call, PAPI_strerror(ret), info->disabled_reason);
	else
		snprintf(f->note, sizeof(f->note),
			 "PAPI cannot count perf::TASK-CLOCK here: %s: %s",
			 call, PAPI_strerror(ret));
	f->skipped = true;
}

void bench_papi_read(struct figure *f)
{
	enum { N = 20000 };
	struct shpmu_target self = {.kind = SHPMU_TARGET_TASK, .cpu = -1};
	struct perf_event_attr a = bench_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu *pmu = shpmu_new(NULL);
	int es = PAPI_NULL, h, ret;
	double samples[REPS];
	struct shpmu_count c;
	long long v[1];

	ret = PAPI_library_init(PAPI_VER_CURRENT);
	if (ret != PAPI_VER_CURRENT) {
		skip_with_reason(f, "PAPI_library_init", ret);
		shpmu_free(pmu);
		return;
	}
	const char *call = "PAPI_create_eventset";

	ret = PAPI_create_eventset(&es);
	if (ret == PAPI_OK) {
		call = "PAPI_add_named_event";
		ret = PAPI_add_named_event(es, "perf::TASK-CLOCK");
	}
	if (ret == PAPI_OK) {
		call = "PAPI_start";
		ret = PAPI_start(es);
	}
	if (ret != PAPI_OK) {
		skip_with_reason(f, call, ret);
		PAPI_shutdown();
		shpmu_free(pmu);
		return;
	}
	h = shpmu_open(pmu, &a, &self);
	if (h < 0)
		die("shpmu_open", -h);
	for (int rep = -1; rep < REPS; rep++) {
		double t0 = now_ns(), papi_ns, lib_ns;

		for (int i = 0; i < N; i++)
			if (PAPI_read(es, v) != PAPI_OK)
				die("PAPI_read", EIO);
		papi_ns = now_ns() - t0;
		t0 = now_ns();
		for (int i = 0; i < N; i++)
			if (shpmu_read(pmu, h, &c))
				die("shpmu_read", errno);
		lib_ns = now_ns() - t0;
		if (rep >= 0)
			samples[rep] = papi_ns / lib_ns;
	}
	figure_set(f, samples, REPS);
	PAPI_stop(es, v);
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	PAPI_shutdown();
	shpmu_free(pmu);
}
#else
void bench_papi_read(struct figure *f)
{
	figure_skip(f, "built without PAPI (meson -Dpapi=enabled and "
		       "libpapi-dev)");
}
#endif
