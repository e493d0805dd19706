// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The smallest libshpmu program: two consumers ask for the same counter on
 * this thread, one kernel event serves both, and each sees only its own
 * window.
 *
 *   cc counting.c $(pkg-config --cflags --libs libshpmu) -o counting
 */
#include <stdio.h>
#include <string.h>

#include <shpmu/shpmu.h>

static void busy(int n)
{
	volatile unsigned long x = 0;

	for (int i = 0; i < n * 1000000; i++)
		x += (unsigned long)i;
	(void)x;
}

int main(void)
{
	struct shpmu_target self = {.kind = SHPMU_TARGET_TASK}; /* any CPU */
	struct perf_event_attr attr;
	struct shpmu_count a, b;
	struct shpmu_stats st;
	struct shpmu *pmu;
	int ha, hb, err;

	pmu = shpmu_new(NULL);
	if (!pmu) {
		perror("shpmu_new");
		return 1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;

	ha = shpmu_open(pmu, &attr, &self); /* counts from now */
	busy(50);
	hb = shpmu_open(pmu, &attr, &self); /* shares ha's kernel event */
	if (ha < 0 || hb < 0) {
		fprintf(stderr, "shpmu_open: %s\n",
			strerror(-(ha < 0 ? ha : hb)));
		shpmu_free(pmu);
		return 1;
	}
	busy(50);
	err = shpmu_read(pmu, ha, &a);
	if (!err)
		err = shpmu_read(pmu, hb, &b);
	if (err || shpmu_get_stats(pmu, &st)) {
		fprintf(stderr, "shpmu_read: %s\n", strerror(-err));
		shpmu_free(pmu);
		return 1;
	}
	printf("consumer A: task-clock %.3f ms (both busy loops)\n",
	       a.value / 1e6);
	printf("consumer B: task-clock %.3f ms (second loop only)\n",
	       b.value / 1e6);
	printf("%llu handles on %llu kernel event(s), %llu fd(s)\n",
	       (unsigned long long)st.handles,
	       (unsigned long long)st.kernel_events,
	       (unsigned long long)st.kernel_fds);
	shpmu_close(pmu, hb);
	shpmu_close(pmu, ha);
	shpmu_free(pmu);
	return 0;
}
