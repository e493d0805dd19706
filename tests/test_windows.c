// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Each handle reports only its own enabled windows (the dup_count scheme). */
#include <criterion/criterion.h>

#include "helpers.h"

#define WINDOW_NS 150000000ull /* 150 ms of CPU time per window */

static struct shpmu *pmu;

static void setup(void)
{
	pmu = shpmu_new(NULL);
	cr_assert(pmu);
}

static void teardown(void)
{
	shpmu_free(pmu);
	cr_expect_eq(count_perf_fds(), 0);
}

TestSuite(windows, .init = setup, .fini = teardown);

static struct shpmu_count rd(int h)
{
	struct shpmu_count c;
	int err = shpmu_read(pmu, h, &c);

	cr_assert_eq(err, 0, "read %d: %s", h, strerror(-err));
	return c;
}

static int open_self(uint64_t config, bool disabled)
{
	struct perf_event_attr a = sw_attr(config, disabled);
	struct shpmu_target t = self_target();
	int h = shpmu_open(pmu, &a, &t);

	cr_assert_geq(h, 0, "open: %s", strerror(-h));
	return h;
}

/* Enable A, work, enable B, work, disable A, work: A saw windows 1+2, B saw
 * 2+3. For a task event, task-clock and time_enabled both follow the
 * thread's task-clock (task_clock_ns(): a private raw event). */
Test(windows, two_handles_report_their_own_windows)
{
	int a = open_self(PERF_COUNT_SW_TASK_CLOCK, true);
	int b = open_self(PERF_COUNT_SW_TASK_CLOCK, true);
	uint64_t t0, t1, t2, t3;

	t0 = task_clock_ns();
	cr_assert_eq(shpmu_enable(pmu, a), 0);
	burn_cpu_ns(WINDOW_NS);
	t1 = task_clock_ns();
	cr_assert_eq(shpmu_enable(pmu, b), 0);
	burn_cpu_ns(WINDOW_NS);
	cr_assert_eq(shpmu_disable(pmu, a), 0);
	t2 = task_clock_ns();
	burn_cpu_ns(WINDOW_NS);
	cr_assert_eq(shpmu_disable(pmu, b), 0);
	t3 = task_clock_ns();
	burn_cpu_ns(WINDOW_NS / 3); /* neither may count this */

	struct shpmu_count ca = rd(a), cb = rd(b);
	expect_within_pct(ca.value, t2 - t0, 3, "A task-clock");
	expect_within_pct(ca.time_enabled, t2 - t0, 3, "A time_enabled");
	expect_within_pct(cb.value, t3 - t1, 3, "B task-clock");
	expect_within_pct(cb.time_enabled, t3 - t1, 3, "B time_enabled");
	cr_expect_eq(ca.time_running, ca.time_enabled, "A never multiplexed");
	cr_expect_eq(count_perf_fds(), 1, "A and B share one kernel event");
}

/* A CPU-wide cpu-clock: time_enabled follows the wall clock. */
Test(windows, cpu_target_windows_follow_wall_time)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_CPU_CLOCK, true);
	struct shpmu_target cpu0 = {.kind = SHPMU_TARGET_CPU, .cpu = 0};
	struct timespec nap = {0, 100000000};
	int a = shpmu_open(pmu, &attr, &cpu0);
	int b = shpmu_open(pmu, &attr, &cpu0);
	uint64_t w0, w1, w2, w3;

	cr_assert_geq(a, 0);
	cr_assert_geq(b, 0);
	w0 = wall_ns();
	shpmu_enable(pmu, a);
	nanosleep(&nap, NULL);
	w1 = wall_ns();
	shpmu_enable(pmu, b);
	nanosleep(&nap, NULL);
	shpmu_disable(pmu, a);
	w2 = wall_ns();
	nanosleep(&nap, NULL);
	shpmu_disable(pmu, b);
	w3 = wall_ns();

	struct shpmu_count ca = rd(a), cb = rd(b);
	expect_within_pct(ca.time_enabled, w2 - w0, 2, "A time_enabled");
	expect_within_pct(cb.time_enabled, w3 - w1, 2, "B time_enabled");
	expect_within_pct(ca.value, w2 - w0, 2, "A cpu-clock");
	expect_within_pct(cb.value, w3 - w1, 2, "B cpu-clock");
}

Test(windows, a_disabled_handle_counts_nothing_until_enabled)
{
	int h = open_self(PERF_COUNT_SW_TASK_CLOCK, true);
	struct shpmu_count c;

	burn_cpu_ns(WINDOW_NS / 5);
	c = rd(h);
	cr_expect_eq(c.value, 0);
	cr_expect_eq(c.time_enabled, 0);
	cr_assert_eq(shpmu_enable(pmu, h), 0);
	burn_cpu_ns(WINDOW_NS / 5);
	cr_expect_gt(rd(h).value, WINDOW_NS / 5 * 9 / 10);
}

Test(windows, enable_and_disable_are_idempotent)
{
	int h = open_self(PERF_COUNT_SW_TASK_CLOCK, false);
	uint64_t frozen;

	cr_assert_eq(shpmu_enable(pmu, h), 0);
	burn_cpu_ns(WINDOW_NS / 5);
	cr_assert_eq(shpmu_disable(pmu, h), 0);
	cr_assert_eq(shpmu_disable(pmu, h), 0);
	frozen = rd(h).value;
	burn_cpu_ns(WINDOW_NS / 5);
	cr_expect_eq(rd(h).value, frozen);
}

Test(windows, reset_zeroes_one_handle_and_leaves_the_other)
{
	int a = open_self(PERF_COUNT_SW_TASK_CLOCK, false);
	int b = open_self(PERF_COUNT_SW_TASK_CLOCK, false);
	uint64_t t0 = task_clock_ns(), t1;

	burn_cpu_ns(WINDOW_NS);
	cr_assert_eq(shpmu_reset(pmu, a), 0);
	t1 = task_clock_ns();
	burn_cpu_ns(WINDOW_NS);
	uint64_t t2 = task_clock_ns();
	struct shpmu_count ca = rd(a), cb = rd(b);

	expect_within_pct(ca.value, t2 - t1, 3, "A since its reset");
	expect_within_pct(ca.time_enabled, t2 - t1, 3, "A times reset too");
	expect_within_pct(cb.value, t2 - t0, 3, "B unaffected by A's reset");
}

Test(windows, reset_of_a_disabled_handle_keeps_it_at_zero)
{
	int h = open_self(PERF_COUNT_SW_TASK_CLOCK, false);

	burn_cpu_ns(WINDOW_NS / 5);
	cr_assert_eq(shpmu_disable(pmu, h), 0);
	cr_assert_eq(shpmu_reset(pmu, h), 0);
	burn_cpu_ns(WINDOW_NS / 5);
	cr_expect_eq(rd(h).value, 0);
	cr_expect_eq(rd(h).time_enabled, 0);
}

Test(windows, closing_the_first_opener_leaves_the_other_continuous)
{
	int a = open_self(PERF_COUNT_SW_TASK_CLOCK, false);
	uint64_t t0 = task_clock_ns();
	int b = open_self(PERF_COUNT_SW_TASK_CLOCK, false);
	uint64_t before, after;

	burn_cpu_ns(WINDOW_NS);
	before = rd(b).value;
	cr_assert_eq(shpmu_close(pmu, a), 0);
	cr_expect_eq(count_perf_fds(), 1, "B keeps the kernel event open");
	after = rd(b).value;
	cr_expect_geq(after, before, "B went backwards when A closed");
	cr_expect_lt(after - before, under_valgrind ? 20000000 : 2000000,
		     "B jumped when A closed");
	burn_cpu_ns(WINDOW_NS);
	expect_within_pct(rd(b).value, task_clock_ns() - t0, 3, "B total");
	cr_assert_eq(shpmu_close(pmu, b), 0);
	cr_expect_eq(count_perf_fds(), 0, "the last close closes the fd");
}

Test(windows, a_disabled_sharer_stays_frozen_while_another_counts)
{
	int a = open_self(PERF_COUNT_SW_TASK_CLOCK, false);
	int b = open_self(PERF_COUNT_SW_TASK_CLOCK, false);
	uint64_t frozen;

	burn_cpu_ns(WINDOW_NS / 5);
	cr_assert_eq(shpmu_disable(pmu, a), 0);
	frozen = rd(a).value;
	burn_cpu_ns(WINDOW_NS / 2);
	cr_expect_eq(rd(a).value, frozen);
	cr_expect_gt(rd(b).value, frozen + WINDOW_NS / 2 * 9 / 10);
}

Test(windows, every_cpu_share_adds_up_to_the_whole)
{
	struct perf_event_attr attr =
		sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES, false);
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	struct shpmu_count sum = {0}, whole, one;
	int h = shpmu_open(pmu, &attr, &all);

	cr_assert_geq(h, 0);
	sleep_switches(200);
	cr_assert_eq(shpmu_disable(pmu, h), 0); /* freeze for exact sums */
	for (int cpu = 0; cpu < online_cpus(); cpu++) {
		cr_assert_eq(shpmu_read_cpu(pmu, h, cpu, &one), 0);
		sum.value += one.value;
		sum.time_enabled += one.time_enabled;
	}
	whole = rd(h);
	cr_expect_eq(sum.value, whole.value);
	cr_expect_eq(sum.time_enabled, whole.time_enabled);
	cr_expect_geq(whole.value, 200);
	cr_expect_eq(shpmu_read_cpu(pmu, h, 100000, &one), -ENOENT);
}
