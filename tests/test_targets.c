// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Task targets (other tasks, inherit, one CPU) and multiplexing. */
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup_helpers.h"
#include "helpers.h"

DEFAULT_CONTEXT_SUITE(targets);

Test(targets, a_task_by_pid_counts_that_task)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target t = {.kind = SHPMU_TARGET_TASK, .cpu = -1};
	struct shpmu_count c, after_exit, again;
	struct cg_child child = cg_spawn(NULL, 200000000, 0);
	uint64_t cpu;
	int h;

	/* The child is parked: its start is not in the handle's window. */
	t.pid = child.pid;
	h = shpmu_open(pmu, &a, &t);
	cr_assert_geq(h, 0, "%s", strerror(-h));
	cg_go(&child);
	cpu = cg_finish(&child);
	cr_assert_eq(shpmu_read(pmu, h, &c), 0);
	expect_within_pct(c.value, cpu, 2, "child task-clock");
	/* Once the task has exited, its final count stays readable. */
	cg_reap(&child);
	cr_assert_eq(shpmu_read(pmu, h, &after_exit), 0);
	cr_assert_eq(shpmu_read(pmu, h, &again), 0);
	cr_expect_geq(after_exit.value, c.value);
	cr_expect_eq(again.value, after_exit.value, "an exited task moved");
}

Test(targets, inherit_counts_children_and_plain_does_not)
{
	struct perf_event_attr plain = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct perf_event_attr inh = plain;
	struct shpmu_target self = self_target();
	struct shpmu_count cp, ci;
	struct cg_child child;
	uint64_t cpu;
	int hp, hi;

	inh.inherit = 1;
	hp = shpmu_open(pmu, &plain, &self);
	hi = shpmu_open(pmu, &inh, &self);
	cr_assert_geq(hp, 0);
	cr_assert_geq(hi, 0);
	child = cg_spawn(NULL, 200000000, 0);
	cg_go(&child);
	cpu = cg_finish(&child);
	/* A child's inherited count joins the parent's when it exits. */
	cg_reap(&child);
	cr_assert_eq(shpmu_read(pmu, hp, &cp), 0);
	cr_assert_eq(shpmu_read(pmu, hi, &ci), 0);
	cr_expect_lt(cp.value, 100000000, "the plain event saw the child");
	/* At least: the inherited event also saw the child's start and
	 * exit, which its own clock did not. */
	cr_expect_geq(ci.value, cp.value + cpu * 98 / 100,
		      "the inherited event missed the child's %llu ns",
		      (unsigned long long)cpu);
}

/* A task event bound to CPU 1 runs only while the task is on CPU 1: on CPU 0
 * it is enabled but not running, which is what multiplexing looks like. */
Test(targets, multiplexed_times_are_per_handle_and_scaled)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, true);
	struct shpmu_target on1 = {.kind = SHPMU_TARGET_TASK, .cpu = 1};
	struct shpmu_count c1, c2;
	int h1, h2;

	if (online_cpus() < 2)
		cr_skip_test("needs two online CPUs, this machine has %d",
			     online_cpus());
	h1 = shpmu_open(pmu, &a, &on1);
	h2 = shpmu_open(pmu, &a, &on1);
	cr_assert_geq(h1, 0);
	cr_assert_geq(h2, 0);

	/* The oracles: this thread's task-clock on any CPU (what h1's
	 * time_enabled follows) and on CPU 1 only (what it ran). */
	int any = raw_open(PERF_COUNT_SW_TASK_CLOCK, 0, -1);
	int on_cpu1 = raw_open(PERF_COUNT_SW_TASK_CLOCK, 0, 1);
	uint64_t both[3], any_v[3], cpu1_v[3];

	pin_to_cpu(0);
	raw_enable(any);
	raw_enable(on_cpu1);
	cr_assert_eq(shpmu_enable(pmu, h1), 0);
	burn_cpu_ns(100000000); /* h1: enabled, not running */
	raw_read(any, both);
	cr_assert_eq(shpmu_enable(pmu, h2), 0);
	pin_to_cpu(1);
	burn_cpu_ns(100000000); /* both running */
	cr_assert_eq(shpmu_read(pmu, h1, &c1), 0);
	cr_assert_eq(shpmu_read(pmu, h2, &c2), 0);
	raw_read(any, any_v);
	raw_read(on_cpu1, cpu1_v);

	expect_within_pct(c1.time_enabled, any_v[0], 2, "h1 enabled");
	expect_within_pct(c1.time_running, cpu1_v[0], 2, "h1 running");
	expect_within_pct(c2.time_enabled, any_v[0] - both[0], 2, "h2 enabled");
	expect_within_pct(c2.time_running, cpu1_v[0], 2, "h2 running");
	cr_expect_lt(c1.time_running, c1.time_enabled * 3 / 4,
		     "h1 ran while its thread was on CPU 0");
	/* Scaled, h1 is its task-clock over the whole window. */
	expect_within_pct(shpmu_scale(&c1), any_v[0], 2, "h1 scaled");
	expect_within_pct(shpmu_scale(&c2), c2.value, 1, "h2 scaled");
	close(any);
	close(on_cpu1);
}

Test(targets, an_event_that_never_ran_scales_to_zero)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target on1 = {.kind = SHPMU_TARGET_TASK, .cpu = 1};
	struct shpmu_count c;
	int h;

	if (online_cpus() < 2)
		cr_skip_test("needs two online CPUs, this machine has %d",
			     online_cpus());
	pin_to_cpu(0);
	h = shpmu_open(pmu, &a, &on1);
	cr_assert_geq(h, 0);
	burn_cpu_ns(20000000);
	cr_assert_eq(shpmu_read(pmu, h, &c), 0);
	cr_expect_gt(c.time_enabled, 0);
	cr_expect_eq(c.time_running, 0);
	cr_expect_eq(shpmu_scale(&c), 0);
}

Test(targets, scale_is_overflow_safe)
{
	struct shpmu_count c = {.value = UINT64_MAX / 2,
				.time_enabled = 1000000000000ull,
				.time_running = 500000000000ull};
	struct shpmu_count big = {
		.value = UINT64_MAX, .time_enabled = 3, .time_running = 1};

	cr_expect_eq(shpmu_scale(&c), UINT64_MAX - 1);
	cr_expect_eq(shpmu_scale(&big), UINT64_MAX, "saturates");
	cr_expect_eq(shpmu_scale(NULL), 0);
}

/* An enable_on_exec event starts at the target's exec; a handle that
 * shares it later still counts only from its own open. */
Test(targets, enable_on_exec_handles_count_from_their_own_open)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, true);
	struct shpmu_target t = {.kind = SHPMU_TARGET_TASK, .cpu = -1};
	struct timespec nap = {0, 200000000};
	struct shpmu_count before_exec, c1, c2;
	int go, h1, h2, status;

	a.enable_on_exec = 1;
	int p[2];
	char b;

	cr_assert_eq(pipe(p), 0);
	t.pid = fork();
	cr_assert_geq(t.pid, 0);
	if (t.pid == 0) {
		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(1);
		burn_cpu_ns(50000000); /* before the exec: not counted */
		execl("/bin/sh", "sh", "-c", "while :; do :; done", NULL);
		_exit(127);
	}
	close(p[0]);
	go = p[1];
	h1 = shpmu_open(pmu, &a, &t);
	cr_assert_geq(h1, 0, "%s", strerror(-h1));
	cr_assert_eq(shpmu_read(pmu, h1, &before_exec), 0);
	cr_assert_eq(write(go, "g", 1), 1);
	nanosleep(&nap, NULL);
	h2 = shpmu_open(pmu, &a, &t);
	cr_assert_geq(h2, 0);
	nanosleep(&nap, NULL);
	cr_assert_eq(shpmu_read(pmu, h1, &c1), 0);
	cr_assert_eq(shpmu_read(pmu, h2, &c2), 0);
	kill(t.pid, SIGKILL);
	waitpid(t.pid, &status, 0);
	close(go);

	cr_expect_eq(before_exec.value, 0);
	cr_expect_gt(c1.value, 50000000, "the exec did not enable it");
	cr_expect_lt(c1.value, 400000000, "it counted before the exec");
	cr_expect_gt(c2.value, 0);
	cr_expect_lt(c2.value, c1.value * 8 / 10,
		     "h2 (%llu) counted from before its open (h1 %llu)",
		     (unsigned long long)c2.value,
		     (unsigned long long)c1.value);
	cr_expect_eq(count_perf_fds(), 1, "the two handles share");
}
