// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The baselines of the Python binding's overhead benchmark: the same
 * calls on the same handles, made from C loops, timed in ns. */
#include <time.h>

#include <shpmu/shpmu.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

long long read_loop(struct shpmu *pmu, int h, long long n)
{
	struct shpmu_count c;
	long long start = now_ns();

	for (long long i = 0; i < n; i++)
		if (shpmu_read(pmu, h, &c))
			return -1;
	return now_ns() - start;
}

long long read_many_loop(struct shpmu *pmu, const int *hs, size_t k,
			 struct shpmu_count *out, long long n)
{
	long long start = now_ns();

	for (long long i = 0; i < n; i++)
		if (shpmu_read_many(pmu, hs, k, out))
			return -1;
	return now_ns() - start;
}
