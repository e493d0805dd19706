// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A zero-initialized target counts everywhere (0.4): for each kind, work
 * done on CPU 1 is counted by a target that names no CPU, cgroups by both
 * backends. One CPU is asked for with SHPMU_TARGET_BIND_CPU, and a CPU
 * number without it is refused, never taken for every CPU. Binaries built
 * against 0.3 keep its meaning (a cpu of 0 is CPU 0 alone) through the
 * older symbol versions, which this file calls as such a binary does.
 */
#include <criterion/criterion.h>
#include <sys/wait.h>

#include "cgroup_helpers.h"
#include "helpers.h"

/* What a binary linked against 0.3 calls: shpmu_open and shpmu_open_name
 * of LIBSHPMU_0.2, shpmu_open_opts of LIBSHPMU_0.3. */
int open_0_3(struct shpmu *pmu, const struct perf_event_attr *attr,
	     const struct shpmu_target *target);
int open_opts_0_3(struct shpmu *pmu, const struct perf_event_attr *attr,
		  const struct shpmu_target *target,
		  const struct shpmu_open_opts *opts);
int open_name_0_3(struct shpmu *pmu, const char *event,
		  const struct shpmu_target *target);
int open_group_0_3(struct shpmu *pmu, const struct perf_event_attr *attrs,
		   size_t n, const struct shpmu_target *target);
__asm__(".symver open_0_3,shpmu_open@LIBSHPMU_0.2");
__asm__(".symver open_opts_0_3,shpmu_open_opts@LIBSHPMU_0.3");
__asm__(".symver open_name_0_3,shpmu_open_name@LIBSHPMU_0.2");
__asm__(".symver open_group_0_3,shpmu_open_group@LIBSHPMU_0.2");

static struct shpmu *pmu;

static void setup(void)
{
	pmu = cg_context(SHPMU_CGROUP_BACKEND_PERF);
	cg_setup(pmu);
	if (online_cpus() < 2)
		cr_skip_test("needs CPU 1: this machine has %d CPU",
			     online_cpus());
}

static void teardown(void)
{
	shpmu_free(pmu);
	cg_teardown();
}

TestSuite(zero_targets, .init = setup, .fini = teardown);

/* The calling thread's task-clock over work it does on CPU 1, against
 * its own raw clock inside the handle's window. */
static void expect_counts_this_thread_on_cpu_1(struct shpmu_target t)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	uint64_t before, after;
	struct shpmu_count c;
	int h;

	pin_to_cpu(1);
	h = shpmu_open(pmu, &a, &t);
	cr_assert_geq(h, 0, "open: %s", last_log);
	before = task_clock_ns();
	burn_cpu_ns(50000000);
	after = task_clock_ns();
	cr_assert_eq(shpmu_read(pmu, h, &c), 0);
	cr_expect_geq(c.value, after - before,
		      "counted %llu ns of the %llu ns this thread ran on CPU 1",
		      (unsigned long long)c.value,
		      (unsigned long long)(after - before));
	cr_expect_eq(c.time_running, c.time_enabled,
		     "a target on any CPU never waits for its CPU");
}

Test(zero_targets, a_task_counts_on_any_cpu)
{
	expect_counts_this_thread_on_cpu_1(
		(struct shpmu_target){.kind = SHPMU_TARGET_TASK});
}

Test(zero_targets, a_process_counts_on_any_cpu)
{
	expect_counts_this_thread_on_cpu_1(
		(struct shpmu_target){.kind = SHPMU_TARGET_PROCESS});
}

typedef int open_fn(struct shpmu *, const struct perf_event_attr *,
		    const struct shpmu_target *);

/* The kernel fds a new handle's event holds: open's result, opened by
 * open (the current version's, or 0.3's). */
static int open_counting_fds(struct shpmu *p, open_fn *open,
			     const struct shpmu_target *t, uint64_t config,
			     uint64_t *fds)
{
	struct perf_event_attr a = sw_attr(config, false);
	struct shpmu_stats before, after;
	int h;

	cr_assert_eq(shpmu_get_stats(p, &before), 0);
	h = open(p, &a, t);
	cr_assert_geq(h, 0, "open: %s", last_log);
	cr_assert_eq(shpmu_get_stats(p, &after), 0);
	*fds = after.kernel_fds - before.kernel_fds;
	return h;
}

Test(zero_targets, a_cpu_target_counts_every_cpu)
{
	struct shpmu_target t = {.kind = SHPMU_TARGET_CPU};
	struct shpmu_count c;
	uint64_t fds;
	int h = open_counting_fds(pmu, shpmu_open, &t,
				  PERF_COUNT_SW_PAGE_FAULTS, &fds);
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		pin_to_cpu(1);
		touch_pages(2000);
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert_eq(shpmu_read(pmu, h, &c), 0);
	cr_expect_eq(fds, (uint64_t)online_cpus(), "one fd per online CPU");
	cr_expect_geq(c.value, 2000, "%llu page faults of the 2000 on CPU 1",
		      (unsigned long long)c.value);
}

/* A child's 100 ms in a cgroup on CPU 1, counted by a zero cgroup target
 * opened by open in a context of backend's: the count, the child's own
 * clock over its work, and the fds the event holds. */
struct cgroup_run {
	uint64_t counted, bound, own, fds;
};

static struct cgroup_run cgroup_on_cpu_1(enum shpmu_cgroup_backend backend,
					 open_fn *open)
{
	struct shpmu *p = cg_context(backend);
	const char *abs = cg_make("busy");
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cgroup_path = abs};
	struct cgroup_run run;
	struct cg_child child;
	int h = open_counting_fds(p, open, &t, PERF_COUNT_SW_TASK_CLOCK,
				  &run.fds);

	pin_to_cpu(1); /* the child inherits it */
	child = cg_spawn(abs, 100000000, 0);
	cg_go(&child);
	run.own = cg_finish(&child);
	run.counted = cg_read_bound(p, h, &run.bound).value;
	cg_reap(&child);
	shpmu_free(p);
	return run;
}

Test(zero_targets, a_cgroup_counts_every_cpu_classic)
{
	struct cgroup_run run =
		cgroup_on_cpu_1(SHPMU_CGROUP_BACKEND_PERF, shpmu_open);

	cr_expect_eq(run.fds, (uint64_t)online_cpus(), "one fd per CPU");
	cg_expect_covers(run.counted, run.own, "task-clock on CPU 1");
}

Test(zero_targets, a_cgroup_counts_every_cpu_bpf)
{
#ifndef HAVE_BPF
	cr_skip_test("libshpmu was built without the BPF backend");
#endif
	struct cgroup_run run =
		cgroup_on_cpu_1(SHPMU_CGROUP_BACKEND_BPF, shpmu_open);

	/* Short of the truth by at most its bound (cg_read_bound()). */
	cg_expect_covers(run.counted + run.bound, run.own,
			 "task-clock and its bound on CPU 1");
}

Test(zero_targets, one_cpu_is_asked_for_with_the_flag)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target t = {.kind = SHPMU_TARGET_TASK,
				 .cpu = 0,
				 .flags = SHPMU_TARGET_BIND_CPU};
	struct shpmu_count c;
	int h = shpmu_open(pmu, &a, &t);

	cr_assert_geq(h, 0, "open: %s", last_log);
	pin_to_cpu(1);
	burn_cpu_ns(20000000);
	cr_assert_eq(shpmu_read(pmu, h, &c), 0);
	cr_expect_lt(c.time_running, c.time_enabled,
		     "bound to CPU 0, it waited while the thread ran on 1");
}

/* Each bad target: -EINVAL, a log line naming what to do, nothing open. */
static void expect_refused(struct shpmu_target t, const char *log_part)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_stats before, after;

	cr_assert_eq(shpmu_get_stats(pmu, &before), 0);
	log_count = 0;
	cr_expect_eq(shpmu_open(pmu, &a, &t), -EINVAL);
	cr_expect(strstr(last_log, log_part), "log: %s", last_log);
	cr_assert_eq(shpmu_get_stats(pmu, &after), 0);
	cr_expect_eq(after.handles, before.handles);
	cr_expect_eq(after.kernel_fds, before.kernel_fds);
}

Test(zero_targets, a_cpu_without_the_flag_is_refused)
{
	expect_refused((struct shpmu_target){.kind = SHPMU_TARGET_CGROUP,
					     .cpu = 1,
					     .cgroup_path = cg_base()},
		       "without SHPMU_TARGET_BIND_CPU");
	expect_refused(
		(struct shpmu_target){.kind = SHPMU_TARGET_TASK, .cpu = 1},
		"without SHPMU_TARGET_BIND_CPU");
	expect_refused((struct shpmu_target){.kind = SHPMU_TARGET_CPU,
					     .cpu = SHPMU_ALL_CPUS,
					     .flags = SHPMU_TARGET_BIND_CPU},
		       "needs cpu to be a CPU");
	expect_refused((struct shpmu_target){.kind = SHPMU_TARGET_CPU,
					     .flags = 1u << 5},
		       "unknown flags");
}

/* A CPU target on CPU 1 that a 0.3 call opened (h): one fd. */
static void expect_0_3_cpu_1(int h, const char *call)
{
	struct shpmu_stats st;

	cr_assert_geq(h, 0, "0.3's %s: %s", call, last_log);
	cr_assert_eq(shpmu_get_stats(pmu, &st), 0);
	cr_expect_eq(st.kernel_fds, 1, "0.3's %s: %llu fds", call,
		     (unsigned long long)st.kernel_fds);
	cr_assert_eq(shpmu_close(pmu, h), 0);
}

/* A binary built against 0.3: its zeroed target is CPU 0 alone, as it
 * was, a CPU is one CPU without a flag, and its flags are reserved. */
Test(zero_targets, a_0_3_binary_keeps_cpu_0)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target bound = {.kind = SHPMU_TARGET_CPU,
				     .flags = SHPMU_TARGET_BIND_CPU};
	struct shpmu_target on1 = {.kind = SHPMU_TARGET_CPU, .cpu = 1};
	struct cgroup_run run =
		cgroup_on_cpu_1(SHPMU_CGROUP_BACKEND_PERF, open_0_3);

	cr_expect_eq(run.fds, 1, "CPU 0's fd alone");
	cr_expect_eq(run.counted, 0,
		     "CPU 0 alone counted %llu ns of work done on CPU 1",
		     (unsigned long long)run.counted);
	cr_expect_eq(open_0_3(pmu, &a, &bound), -EINVAL);
	cr_expect(strstr(last_log, "reserved"), "log: %s", last_log);
	/* Each 0.3 call takes CPU 1 without the flag, as 0.3 did (0.4
	 * refuses it): one fd each. */
	expect_0_3_cpu_1(open_opts_0_3(pmu, &a, &on1, NULL), "shpmu_open_opts");
	expect_0_3_cpu_1(open_name_0_3(pmu, "page-faults", &on1),
			 "shpmu_open_name");
	expect_0_3_cpu_1(open_group_0_3(pmu, &a, 1, &on1), "shpmu_open_group");
	cr_expect_eq(shpmu_open(pmu, &a, &on1), -EINVAL, "0.4 refuses it");
}
