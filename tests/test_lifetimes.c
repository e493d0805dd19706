// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Processes and lifetimes: fork, exec, signal handlers, re-entry. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "helpers.h"
#include "sys/sys.h"

DEFAULT_CONTEXT_SUITE(lifetimes);

/* A forked child shares the parent's kernel events through its fd copies:
 * its calls are refused, and its shpmu_free switches nothing off. */
Test(lifetimes, a_forked_child_cannot_touch_the_parents_counts)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target self = self_target();
	struct shpmu_count before, after;
	int h = shpmu_open(pmu, &a, &self), status;
	pid_t child;

	cr_assert_geq(h, 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		struct shpmu_count c;
		int bad = 0;

		bad |= shpmu_read(pmu, h, &c) != -EPERM || errno != EPERM;
		bad |= shpmu_disable(pmu, h) != -EPERM;
		bad |= shpmu_close(pmu, h) != -EPERM;
		bad |= shpmu_open(pmu, &a, &self) != -EPERM;
		shpmu_free(pmu); /* closes the child's copies only */
		_exit(bad);
	}
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the child's calls were not all refused with -EPERM");
	/* The handle goes on counting: its steps between two reads hold
	 * what a private twin on this thread counted between two reads just
	 * inside them (r1, r2) and are held by what it counted between two
	 * just outside (r0, r3). Exact. */
	int twin = raw_open(PERF_COUNT_SW_TASK_CLOCK, 0, -1);
	uint64_t r0[3], r1[3], r2[3], r3[3];

	raw_enable(twin);
	raw_read(twin, r0);
	cr_assert_eq(shpmu_read(pmu, h, &before), 0);
	raw_read(twin, r1);
	burn_cpu_ns(20000000);
	raw_read(twin, r2);
	cr_assert_eq(shpmu_read(pmu, h, &after), 0);
	raw_read(twin, r3);
	cr_log_info("the handle's step %llu, its twin's %llu to %llu",
		    (unsigned long long)(after.value - before.value),
		    (unsigned long long)(r2[0] - r1[0]),
		    (unsigned long long)(r3[0] - r0[0]));
	cr_expect_geq(after.value - before.value, r2[0] - r1[0],
		      "the parent's event stopped counting after the child");
	cr_expect_leq(after.value - before.value, r3[0] - r0[0],
		      "the parent's event jumped after the child");
	cr_expect_geq(after.time_enabled - before.time_enabled, r2[1] - r1[1]);
	cr_expect_leq(after.time_enabled - before.time_enabled, r3[1] - r0[1]);
	close(twin);
}

/* Every fd the library holds is close-on-exec. */
Test(lifetimes, no_fd_survives_exec)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_CPU_CLOCK, false);
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	char out[8192] = "";
	int p[2], status;
	ssize_t n, used = 0;
	pid_t child;

	cr_assert_geq(shpmu_open(pmu, &a, &all), 0);
	cr_assert_eq(pipe(p), 0);
	child = fork();
	if (child == 0) {
		dup2(p[1], 1);
		execl("/bin/ls", "ls", "-l", "/proc/self/fd", NULL);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out + used, sizeof(out) - 1 - (size_t)used)) > 0)
		used += n;
	close(p[0]);
	waitpid(child, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	cr_expect_null(strstr(out, "perf_event"), "leaked: %s", out);
	cr_expect_null(strstr(out, "cgroup"), "leaked: %s", out);
}

/* ---- re-entry ---- */

static int reentry_result = 1;
static int reentry_handle = -1;

static void read_from_handler(int sig)
{
	struct shpmu_count c;
	int saved = errno;

	(void)sig;
	reentry_result = shpmu_read(pmu, reentry_handle, &c);
	errno = saved;
}

static ssize_t read_with_signal(int fd, void *buf, size_t len, void *arg)
{
	raise(SIGUSR1); /* lands while the library holds its locks */
	return shpmu_sys_kernel.read(fd, buf, len, arg);
}

/* shpmu_read is not async-signal-safe: a handler that calls it while the
 * same thread is inside the library gets -EDEADLK instead of a deadlock. */
Test(lifetimes, a_signal_handler_inside_a_call_gets_edeadlk)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target self = self_target();
	struct shpmu_sys_ops ops = shpmu_sys_kernel;
	struct shpmu_count c;

	reentry_handle = shpmu_open(pmu, &a, &self);
	cr_assert_geq(reentry_handle, 0);
	signal(SIGUSR1, read_from_handler);
	ops.read = read_with_signal;
	shpmu__set_sys_ops(pmu, &ops);
	cr_expect_eq(shpmu_read(pmu, reentry_handle, &c), 0);
	cr_expect_eq(reentry_result, -EDEADLK);
	shpmu__set_sys_ops(pmu, NULL);
	/* Outside a call, the same handler read works. */
	raise(SIGUSR1);
	cr_expect_eq(reentry_result, 0);
}

static int log_reentry = 1;

static void log_that_calls_back(int level, const char *msg, void *arg)
{
	struct shpmu_stats st;

	(void)level;
	(void)msg;
	log_reentry = shpmu_get_stats(arg, &st);
}

/* A log callback runs inside the call that logs: calling back into the
 * library from it gets -EDEADLK, not a deadlock on a held lock. */
Test(lifetimes, a_log_callback_calling_back_gets_edeadlk)
{
	SHPMU_OPTS(opts, .log = log_that_calls_back, .log_arg = pmu);
	struct shpmu *p = shpmu_new(&opts);

	cr_assert(p);
	log_reentry = 1;
	cr_expect_eq(shpmu_enable(p, 12345), -EBADF);
	cr_expect_eq(log_reentry, -EDEADLK);
	shpmu_free(p);
}

static volatile sig_atomic_t profs, prof_ok, prof_deadlk, prof_other;

static void on_sigprof(int sig)
{
	struct shpmu_count c;
	int saved = errno, ret;

	(void)sig;
	ret = shpmu_read(pmu, reentry_handle, &c);
	profs++;
	if (ret == 0)
		prof_ok++;
	else if (ret == -EDEADLK)
		prof_deadlk++;
	else
		prof_other++;
	errno = saved;
}

/* A self-profiler reading from SIGPROF while the thread itself reads:
 * every handler call either reads or says -EDEADLK; nothing hangs. */
Test(lifetimes, sigprof_reads_never_hang)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target self = self_target();
	struct itimerval every = {{0, 500}, {0, 500}}, off = {0};
	struct shpmu_count c;
	uint64_t end;

	reentry_handle = shpmu_open(pmu, &a, &self);
	cr_assert_geq(reentry_handle, 0);
	signal(SIGPROF, on_sigprof);
	cr_assert_eq(setitimer(ITIMER_PROF, &every, NULL), 0);
	/* 300 ms of this thread's CPU (its kernel task-clock), however long
	 * a busy machine takes to give it. */
	end = task_clock_ns() + 300000000;
	while (task_clock_ns() < end)
		cr_assert_eq(shpmu_read(pmu, reentry_handle, &c), 0);
	setitimer(ITIMER_PROF, &off, NULL);
	/* ITIMER_PROF fires at most once per scheduler tick (HZ 100 to 1000:
	 * 30 to 300 chances in 300 ms of CPU); a signal that meets the
	 * previous one still pending is lost. More than 10 is the order of
	 * magnitude of "it fired throughout". */
	cr_expect_gt(profs, 10);
	cr_expect_eq(prof_other, 0);
	cr_expect_eq(prof_ok + prof_deadlk, profs);
}
