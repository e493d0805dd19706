// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Batched reads: one read(2) per kernel fd, whatever the batch holds. */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "cgroup_helpers.h"
#include "helpers.h"
#include "sys/sys.h"

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

/* Reads as the kernel does, but every fd's values fixed (and told apart
 * by the fd): a batched and a single read of an enabled handle then see
 * the same, and a count taken from another event's reading differs. */
static ssize_t fixed_read(int fd, void *buf, size_t len, void *arg)
{
	ssize_t n = shpmu_sys_kernel.read(fd, buf, len, arg);
	uint64_t *v = buf;

	calls.reads++;
	if (n == 3 * (ssize_t)sizeof(uint64_t)) {
		v[0] = (1ull << 40) + (uint64_t)fd * 1000;
		v[1] = v[2] = (1ull << 41) + (uint64_t)fd;
	}
	return n;
}

/* More distinct events than a batch holds without its hash table (16),
 * their handles interleaved, half of them on every CPU (a reading too big
 * for its own room): one read per kernel fd, and each count what
 * shpmu_read gives. */
Test(read_many, many_distinct_events_interleaved)
{
	enum { EVENTS = 64, PER = 3, N = EVENTS * PER };
	static const uint64_t configs[4] = {
		PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK,
		PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_PAGE_FAULTS};
	struct shpmu_target self = {.kind = SHPMU_TARGET_TASK, .cpu = -1};
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	static int hs[N];
	static struct shpmu_count many[N], one[N];
	struct shpmu_sys_ops ops = shpmu_sys_kernel;
	struct shpmu_stats st;
	int fds = 0;

	for (int i = 0; i < N; i++) {
		/* Handle i on event (i * 7) % 64: every event's handles far
		 * apart in the batch. */
		int e = (i * 7) % EVENTS;
		struct perf_event_attr a = sw_attr(configs[e % 4], false);

		a.exclude_kernel = (e >> 2) & 1;
		a.exclude_user = (e >> 3) & 1;
		a.exclude_hv = (e >> 4) & 1;
		a.exclude_idle = (e >> 5) & 1;
		hs[i] = shpmu_open(pmu, &a, e % 2 ? &all : &self);
		cr_assert_geq(hs[i], 0);
	}
	for (int e = 0; e < EVENTS; e++)
		fds += e % 2 ? online_cpus() : 1;
	shpmu_get_stats(pmu, &st);
	cr_assert_eq(st.kernel_events, EVENTS);
	ops.read = fixed_read;
	shpmu__set_sys_ops(pmu, &ops);
	calls.reads = 0;
	cr_assert_eq(shpmu_read_many(pmu, hs, N, many), 0);
	cr_expect_eq(calls.reads, fds, "%d reads for %d fds", calls.reads, fds);
	for (int i = 0; i < N; i++) {
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

/* Waits (polling, with a deadline) until task pid is parked in read(2).
 * /proc/<pid>/syscall names the syscall only of a task that stayed off
 * its CPU while the kernel looked (else it says "running"): once it says
 * read, the task's counts stand still until the pipe wakes it. */
static void wait_parked_in_read(pid_t pid)
{
	uint64_t deadline = wall_ns() + 30000000000ull;
	char path[64];
	long nr = -1;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	for (;;) {
		FILE *f;

		wait_until_blocked(pid);
		f = fopen(path, "re");
		cr_assert(f, "%s: %s", path, strerror(errno));
		if (fscanf(f, "%ld", &nr) != 1)
			nr = -1; /* "running" */
		fclose(f);
		if (nr == SYS_read)
			return;
		cr_assert(wall_ns() < deadline,
			  "task %d not parked in read after 30 s (syscall %ld)",
			  (int)pid, nr);
		sched_yield();
	}
}

/* Live, enabled handles whose counts cannot move while we compare: the
 * events count a child that works once they are open (so that every
 * kind counts something) and then parks on a pipe. Each kind of event
 * (i % 8) has two private raw twins on the child: out enabled before the
 * first handle opens, in after the last. The child is parked when they
 * are read, so every handle lies between its kind's twins exactly. */
Test(read_many, equals_shpmu_read_on_enabled_handles)
{
	static const uint64_t configs[4] = {
		PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CPU_CLOCK,
		PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES};
	static int hs[256];
	static struct shpmu_count many[256];
	struct shpmu_target child = {.kind = SHPMU_TARGET_TASK, .cpu = -1};
	struct shpmu_count one;
	int p[2], status, out[8], in[8];
	uint64_t ov[8][3], iv[8][3], slack[8];
	char b;

	cr_assert_eq(pipe(p), 0);
	child.pid = fork();
	if (child.pid == 0) {
		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(1);
		burn_cpu_ns(10000000);
		touch_pages(50);
		sleep_switches(5);
		/* Parked here (a read again) until the pipe closes. */
		_exit(read(p[0], &b, 1) == 0 ? 0 : 1);
	}
	close(p[0]);
	/* Every edge while the child is parked: a cpu-clock event enabled
	 * on a running task would lose the moments its context is stopped
	 * and restarted for each new event there. */
	wait_parked_in_read(child.pid);
	for (int k = 0; k < 8; k++) {
		struct perf_event_attr a = sw_attr(configs[k % 4], true);

		a.exclude_kernel = k / 4;
		out[k] = raw_open_attr(&a, child.pid, -1, 0);
		in[k] = raw_open_attr(&a, child.pid, -1, 0);
		raw_enable(out[k]);
	}
	for (int i = 0; i < 256; i++) {
		struct perf_event_attr a = sw_attr(configs[i % 4], false);

		a.exclude_kernel = (i / 4) % 2;
		hs[i] = shpmu_open(pmu, &a, &child);
		cr_assert_geq(hs[i], 0);
	}
	for (int k = 0; k < 8; k++)
		raw_enable(in[k]);
	/* From the write on the child is running (a woken task is), until
	 * it parks in its second read. */
	cr_assert_eq(write(p[1], "g", 1), 1);
	wait_parked_in_read(child.pid);
	for (int k = 0; k < 8; k++) {
		raw_read(in[k], iv[k]);
		raw_read(out[k], ov[k]);
	}
	/*
	 * Task-clock, faults and switches are exact. cpu-clock is not one
	 * clock for all its events: each reads local_clock() for itself as
	 * it is started and stopped at the child's every switch, and this
	 * guest's per-CPU sched clocks (tsc=unstable) are not in step; two
	 * cpu-clock events over one window differ by up to tens of us (40
	 * seen over a child's ~15 switches in 12 ms). 1% of the window is
	 * about 120 us.
	 */
	for (int k = 0; k < 8; k++)
		slack[k] = configs[k % 4] == PERF_COUNT_SW_CPU_CLOCK
				   ? ov[k][0] / 100 * (under_valgrind ? 10 : 1)
				   : 0;
	cr_assert_eq(shpmu_read_many(pmu, hs, 256, many), 0);
	for (int i = 0; i < 256; i++) {
		int k = i % 8;

		cr_assert_eq(shpmu_read(pmu, hs[i], &one), 0);
		cr_expect_eq(memcmp(&one, &many[i], sizeof(one)), 0,
			     "handle %d: read %llu/%llu, read_many %llu/%llu",
			     i, (unsigned long long)one.value,
			     (unsigned long long)one.time_enabled,
			     (unsigned long long)many[i].value,
			     (unsigned long long)many[i].time_enabled);
		cr_expect(iv[k][0] - slack[k] <= many[i].value &&
				  many[i].value <= ov[k][0] + slack[k],
			  "handle %d: %llu outside its twins [%llu, %llu] "
			  "(give or take %llu)",
			  i, (unsigned long long)many[i].value,
			  (unsigned long long)iv[k][0],
			  (unsigned long long)ov[k][0],
			  (unsigned long long)slack[k]);
		cr_expect(iv[k][1] <= many[i].time_enabled &&
				  many[i].time_enabled <= ov[k][1],
			  "handle %d: time_enabled %llu outside [%llu, %llu]",
			  i, (unsigned long long)many[i].time_enabled,
			  (unsigned long long)iv[k][1],
			  (unsigned long long)ov[k][1]);
	}
	for (int k = 0; k < 8; k++) {
		cr_log_info("kind %d: [%llu, %llu]", k,
			    (unsigned long long)iv[k][0],
			    (unsigned long long)ov[k][0]);
		/* Every kind counted the child's work, and none of it fell
		 * between the opens or on the way to the park. */
		if (k != 7) /* no switch happens in user mode */
			cr_expect_gt(iv[k][0], 0, "kind %d counted nothing", k);
		close(in[k]);
		close(out[k]);
	}
	close(p[1]);
	waitpid(child.pid, &status, 0);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
