// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Calls from many threads; reads of different kernel events in parallel. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>

#include "helpers.h"
#include "sys.h"

static struct shpmu *pmu;

/* A read that parks on the first call for the fd chosen to block. */
static struct {
	int block_fd;
	sem_t entered, release;
} park = {.block_fd = -1};

static ssize_t parking_read(int fd, void *buf, size_t len, void *arg)
{
	if (fd == park.block_fd) {
		park.block_fd = -1;
		sem_post(&park.entered);
		sem_wait(&park.release);
	}
	return shpmu_sys_kernel.read(fd, buf, len, arg);
}

static struct shpmu_sys_ops parking;

static void *read_handle(void *arg)
{
	struct shpmu_count c;

	return (void *)(intptr_t)shpmu_read(pmu, *(int *)arg, &c);
}

static sem_t other_done;

/* Reads and enables the second handle, which needs its kernel event. */
static void *use_other(void *arg)
{
	struct shpmu_count c;
	intptr_t err = shpmu_read(pmu, *(int *)arg, &c);

	if (!err)
		err = shpmu_enable(pmu, *(int *)arg);
	sem_post(&other_done);
	return (void *)err;
}

Test(threads, reads_of_different_events_do_not_wait_for_each_other)
{
	struct perf_event_attr clock = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct perf_event_attr faults =
		sw_attr(PERF_COUNT_SW_PAGE_FAULTS, false);
	struct shpmu_target self = self_target();
	struct shpmu_count c;
	pthread_t t;
	void *ret;
	int h1, h2;

	pmu = shpmu_new(NULL);
	cr_assert(pmu);
	h1 = shpmu_open(pmu, &clock, &self);
	faults.disabled = 1; /* its enable must really reach the kernel */
	h2 = shpmu_open(pmu, &faults, &self);
	cr_assert_geq(h1, 0);
	cr_assert_geq(h2, 0);
	parking = shpmu_sys_kernel;
	parking.read = parking_read;
	sem_init(&park.entered, 0, 0);
	sem_init(&park.release, 0, 0);
	shpmu__set_sys_ops(pmu, &parking);

	/* h1's kernel event was opened first: its fd is the lower one. */
	park.block_fd = nth_perf_fd(0);
	cr_assert_geq(park.block_fd, 0);
	cr_assert_geq(nth_perf_fd(1), 0);

	pthread_t other;
	struct timespec deadline;
	int waited;

	sem_init(&other_done, 0, 0);
	pthread_create(&t, NULL, read_handle, &h1);
	sem_wait(&park.entered); /* h1's read is now inside read(2) */
	pthread_create(&other, NULL, use_other, &h2);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	waited = sem_timedwait(&other_done, &deadline);
	cr_expect_eq(waited, 0,
		     "h2's read and enable waited for h1's parked read");
	sem_post(&park.release);
	pthread_join(t, &ret);
	cr_expect_eq((intptr_t)ret, 0);
	pthread_join(other, &ret);
	cr_expect_eq((intptr_t)ret, 0);
	cr_assert_eq(shpmu_read(pmu, h2, &c), 0);
	shpmu_free(pmu);
}

/* Threads hammer handles that share two kernel events; each thread checks
 * its own handle never goes backwards between its own resets. */
#define WORKERS 8
#define ROUNDS	3000

static void *worker(void *arg)
{
	struct perf_event_attr a =
		sw_attr((intptr_t)arg % 2 ? PERF_COUNT_SW_TASK_CLOCK
					  : PERF_COUNT_SW_CPU_CLOCK,
			false);
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	uint64_t last = 0, last_before = wall_ns(), before, after;
	uint64_t ncpus = (uint64_t)online_cpus();
	struct shpmu_count c;
	int h = shpmu_open(pmu, &a, &all);
	intptr_t bad = 0;

	if (h < 0)
		return (void *)1;
	for (int i = 0; i < ROUNDS && !bad; i++) {
		int err = 0;

		switch (i % 7) {
		case 1:
			err = shpmu_disable(pmu, h);
			break;
		case 3:
			err = shpmu_enable(pmu, h);
			break;
		case 5:
			if (i % 35 == 5) {
				err = shpmu_reset(pmu, h);
				last = 0;
			}
			break;
		case 6:
			if (i % 70 == 6) {
				err = shpmu_close(pmu, h);
				h = shpmu_open(pmu, &a, &all);
				if (h < 0)
					return (void *)2;
				last = 0;
			}
			break;
		}
		if (err)
			return (void *)5;
		before = wall_ns();
		if (shpmu_read(pmu, h, &c))
			return (void *)3;
		after = wall_ns();
		/* A clock on every CPU cannot run faster than the wall clock
		 * on every CPU: a larger step between two reads (bounded by
		 * the wall times around them) is a jump. */
		if (c.value < last || c.time_enabled < c.time_running ||
		    c.value - last > (after - last_before) * ncpus + 1000000)
			bad = 4;
		last = c.value;
		last_before = before;
	}
	shpmu_close(pmu, h);
	return (void *)bad;
}

Test(threads, concurrent_calls_keep_counts_monotonic)
{
	pthread_t t[WORKERS];
	struct shpmu_stats st;

	pmu = shpmu_new(NULL);
	cr_assert(pmu);
	for (intptr_t i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < WORKERS; i++) {
		void *ret;

		pthread_join(t[i], &ret);
		cr_expect_eq((intptr_t)ret, 0, "worker %d failed: %ld", i,
			     (long)(intptr_t)ret);
	}
	shpmu_get_stats(pmu, &st);
	cr_expect_eq(st.handles, 0);
	cr_expect_eq(st.kernel_events, 0);
	cr_expect_eq(st.kernel_fds, 0);
	cr_expect_eq(count_perf_fds(), 0);
	shpmu_free(pmu);
}
