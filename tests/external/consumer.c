// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A program outside the tree, built against an installed libshpmu: checks
 * the DESIGN.md contract (open, share, read, close, errors) end to end. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <shpmu/shpmu.h>

static int failures;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__,          \
				__LINE__, #cond);                              \
			failures++;                                            \
		}                                                              \
	} while (0)

int main(void)
{
	struct shpmu_target self = {.kind = SHPMU_TARGET_TASK, .cpu = -1};
	struct perf_event_attr attr;
	struct shpmu_count c1, c2;
	struct shpmu_stats st;
	struct shpmu *pmu;
	int h1, h2;

	pmu = shpmu_new(NULL);
	CHECK(pmu != NULL);
	if (!pmu)
		return 1;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	h1 = shpmu_open(pmu, &attr, &self);
	attr.disabled = 1;
	h2 = shpmu_open(pmu, &attr, &self);
	CHECK(h1 >= 0 && h2 >= 0);

	for (volatile int i = 0; i < 10000000; i++)
		;
	CHECK(shpmu_read(pmu, h1, &c1) == 0 && c1.value > 0);
	CHECK(shpmu_read(pmu, h2, &c2) == 0 && c2.value == 0);
	CHECK(shpmu_get_stats(pmu, &st) == 0);
	CHECK(st.handles == 2 && st.kernel_events == 1 && st.kernel_fds == 1);
	CHECK(st.shared_opens == 1);

	CHECK(shpmu_close(pmu, h1) == 0);
	CHECK(shpmu_close(pmu, h1) == -EBADF && errno == EBADF);
	CHECK(shpmu_read(pmu, h2, NULL) == -EINVAL);
	attr.sample_period = 1000;
	CHECK(shpmu_open(pmu, &attr, &self) == -EOPNOTSUPP);
	CHECK(shpmu_close(pmu, h2) == 0);
	CHECK(shpmu_get_stats(pmu, &st) == 0 && st.kernel_fds == 0);
	shpmu_free(pmu);
	shpmu_free(NULL);

	printf("external consumer: %s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
