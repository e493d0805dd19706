// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Batched reads: one read(2) per kernel fd, whatever the batch holds. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <sys/wait.h>

#include "cgroup_helpers.h"
#include "helpers.h"
#include "sys.h"

LOGGED_CONTEXT_SUITE(read_many);

static struct {
	int reads;
} calls;

static ssize_t counting_read(int fd, void *buf, size_t len, void *arg)
{
	calls.reads++;
	return shpmu_sys_kernel.read(fd, buf, len, arg);
}

Test(read_many, one_read_per_kernel_fd_for_1024_handles_on_8_events)
{
	static const uint64_t configs[4] = {
		PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK,
		PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_PAGE_FAULTS};
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	static int hs[1024];
	static struct shpmu_count many[1024], one[1024];
	struct shpmu_sys_ops ops = shpmu_sys_kernel;
	struct shpmu_stats st;

	for (int i = 0; i < 1024; i++) {
		struct perf_event_attr a = sw_attr(configs[i % 4], false);

		a.exclude_kernel = (i / 4) % 2; /* 8 distinct events */
		hs[i] = shpmu_open(pmu, &a, &all);
		cr_assert_geq(hs[i], 0);
	}
	shpmu_get_stats(pmu, &st);
	cr_assert_eq(st.kernel_events, 8);
	sleep_switches(20);
	/* Freeze them so that batched and single reads see the same. */
	for (int i = 0; i < 1024; i++)
		cr_assert_eq(shpmu_disable(pmu, hs[i]), 0);
	/* Re-enable a third, spread over all 8 events: each event's fds
	 * must be read once, whatever the number of handles on it. */
	for (int i = 0; i < 1024; i += 3)
		cr_assert_eq(shpmu_enable(pmu, hs[i]), 0);

	ops.read = counting_read;
	shpmu__set_sys_ops(pmu, &ops);
	calls.reads = 0;
	cr_assert_eq(shpmu_read_many(pmu, hs, 1024, many), 0);
	cr_expect_eq(calls.reads, 8 * online_cpus(),
		     "%d reads for 8 events on %d CPUs", calls.reads,
		     online_cpus());
	for (int i = 0; i < 1024; i += 3)
		cr_assert_eq(shpmu_disable(pmu, hs[i]), 0);
	cr_assert_eq(shpmu_read_many(pmu, hs, 1024, many), 0);
	for (int i = 0; i < 1024; i++) {
		cr_assert_eq(shpmu_read(pmu, hs[i], &one[i]), 0);
		cr_expect_eq(memcmp(&one[i], &many[i], sizeof(one[i])), 0,
			     "handle %d: read_many differs from read", i);
	}
	shpmu__set_sys_ops(pmu, NULL);
}

Test(read_many, a_bad_handle_fails_the_batch_and_writes_nothing)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target self = self_target();
	struct shpmu_count out[3] = {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}};
	int hs[3];

	hs[0] = shpmu_open(pmu, &a, &self);
	hs[1] = 99999;
	hs[2] = shpmu_open(pmu, &a, &self);
	cr_expect_eq(shpmu_read_many(pmu, hs, 3, out), -EBADF);
	cr_expect_eq(out[0].value, 1, "out untouched");
	cr_expect_eq(shpmu_read_many(pmu, NULL, 3, out), -EINVAL);
	cr_expect_eq(shpmu_read_many(pmu, hs, 0, NULL), 0);
	hs[1] = hs[0]; /* the same handle twice is fine */
	cr_expect_eq(shpmu_read_many(pmu, hs, 3, out), 0);
	cr_expect_eq(memcmp(&out[0], &out[1], sizeof(out[0])), 0);
}

/* Live, enabled handles whose counts cannot move while we compare: the
 * events count a child that sleeps on a pipe throughout. */
Test(read_many, equals_shpmu_read_on_enabled_handles)
{
	static int hs[256];
	static struct shpmu_count many[256];
	struct shpmu_target child = {.kind = SHPMU_TARGET_TASK, .cpu = -1};
	struct shpmu_count one;
	int p[2], status;
	char b;

	cr_assert_eq(pipe(p), 0);
	child.pid = fork();
	if (child.pid == 0) {
		close(p[1]);
		_exit(read(p[0], &b, 1) == 0 ? 0 : 1);
	}
	close(p[0]);
	for (int i = 0; i < 256; i++) {
		static const uint64_t configs[4] = {
			PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CPU_CLOCK,
			PERF_COUNT_SW_PAGE_FAULTS,
			PERF_COUNT_SW_CONTEXT_SWITCHES};
		struct perf_event_attr a = sw_attr(configs[i % 4], false);

		a.exclude_kernel = (i / 4) % 2;
		hs[i] = shpmu_open(pmu, &a, &child);
		cr_assert_geq(hs[i], 0);
	}
	/* Let the child run into its read and sleep there. */
	usleep(50000);
	cr_assert_eq(shpmu_read_many(pmu, hs, 256, many), 0);
	for (int i = 0; i < 256; i++) {
		cr_assert_eq(shpmu_read(pmu, hs[i], &one), 0);
		cr_expect_eq(memcmp(&one, &many[i], sizeof(one)), 0,
			     "handle %d: read %llu/%llu, read_many %llu/%llu",
			     i, (unsigned long long)one.value,
			     (unsigned long long)one.time_enabled,
			     (unsigned long long)many[i].value,
			     (unsigned long long)many[i].time_enabled);
	}
	close(p[1]);
	waitpid(child.pid, &status, 0);
}
