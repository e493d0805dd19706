// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The PMU model (lib/sys/pmu_model.h), driven through its syscall table
 * and through a context, with a manual clock: every count and time is
 * exact. Each test runs in its own process (Criterion), so each starts
 * with a model of its own.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "sys/pmu_model.h"
#include "sys/sys.h"

#define MS 1000000ull
#define RF_TIMES                                                               \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

static const struct shpmu_sys_ops *M;

static void model(const char *spec)
{
	cr_assert_eq(shpmu__pmu_model_configure(spec), 0, "%s", spec);
	M = pmu_model_ops();
	cr_assert_not_null(M);
}

static struct perf_event_attr hw(uint32_t type, uint64_t config)
{
	struct perf_event_attr a = {
		.type = type,
		.size = sizeof(a),
		.config = config,
		.read_format = RF_TIMES,
	};
	return a;
}

/* fd, or -errno. */
static int mopen(struct perf_event_attr a, pid_t pid, int cpu, int group)
{
	int fd = M->perf_event_open(&a, pid, cpu, group, PERF_FLAG_FD_CLOEXEC,
				    M->arg);

	return fd < 0 ? -errno : fd;
}

static int raw_on(int cpu, uint64_t config)
{
	int fd = mopen(hw(PERF_TYPE_RAW, config), -1, cpu, -1);

	cr_assert_geq(fd, 0, "raw %#llx: %s", (unsigned long long)config,
		      strerror(-fd));
	return fd;
}

static struct pmu_model_truth truth(int fd)
{
	struct pmu_model_truth t;

	cr_assert_eq(shpmu__pmu_model_truth(fd, &t), 0);
	return t;
}

static void expect_times(int fd, uint64_t enabled, uint64_t running)
{
	struct pmu_model_truth t = truth(fd);
	uint64_t v[3];

	cr_expect_eq(t.time_enabled, enabled, "fd %d enabled %llu", fd,
		     (unsigned long long)t.time_enabled);
	cr_expect_eq(t.time_running, running, "fd %d running %llu", fd,
		     (unsigned long long)t.time_running);
	/* read(2) says the same as the truth. */
	cr_assert_eq(M->read(fd, v, sizeof(v), M->arg), (ssize_t)sizeof(v));
	cr_expect_eq(v[0], t.value);
	cr_expect_eq(v[1], enabled);
	cr_expect_eq(v[2], running);
}

static void mclose(int fd)
{
	cr_assert_eq(M->close(fd, M->arg), 0);
}

static void close_all(const int *fds, int n)
{
	for (int i = 0; i < n; i++)
		mclose(fds[i]);
	cr_expect_eq(shpmu__pmu_model_events_open(), 0);
}

Test(model, fixed_and_general_counters)
{
	struct perf_event_attr a;
	int fds[6], n = 0;

	model("counters=2,fixed=3,clock=manual");
	/* cycles, instructions and ref-cycles take the fixed counters. */
	fds[n++] = mopen(hw(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES), -1,
			 0, -1);
	fds[n++] = mopen(hw(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS), -1,
			 0, -1);
	fds[n++] = mopen(hw(PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES),
			 -1, 0, -1);
	fds[n++] = raw_on(0, 0x3);
	fds[n++] = raw_on(0, 0x4);
	for (int i = 0; i < n; i++)
		cr_assert_geq(fds[i], 0);
	cr_expect_eq(shpmu__pmu_model_counters_in_use(PMU_MODEL_TYPE_FIRST, 0),
		     5);
	/* A sixth does not fit: it waits (and rotation would start). */
	a = hw(PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES);
	fds[n++] = mopen(a, -1, 0, -1);
	cr_expect_eq(truth(fds[5]).state, PMU_MODEL_WAITING);
	for (int i = 0; i < 5; i++)
		cr_expect_eq(truth(fds[i]).state, PMU_MODEL_RUNNING);
	/* Another CPU's counters are its own. */
	if (online_cpus() > 1)
		cr_expect_eq(shpmu__pmu_model_counters_in_use(
				     PMU_MODEL_TYPE_FIRST, 1),
			     0);
	cr_expect_eq(
		shpmu__pmu_model_counters_in_use(PMU_MODEL_TYPE_FIRST + 1, 0),
		-EINVAL);
	close_all(fds, n);
	cr_expect_eq(shpmu__pmu_model_counters_in_use(PMU_MODEL_TYPE_FIRST, 0),
		     0);
}

/* Three events on two counters, rotate_ms=4: on 0-4 A B, 4-8 B C, 8-12
 * C A (the first running group goes to the tail at each period's end). */
Test(model, rotation_at_exact_times)
{
	int a, b, c;

	model("counters=2,fixed=0,rotate_ms=4,clock=manual");
	a = raw_on(0, 0x1);
	b = raw_on(0, 0x2);
	c = raw_on(0, 0x3);
	shpmu__pmu_model_advance(3 * MS);
	expect_times(a, 3 * MS, 3 * MS);
	expect_times(c, 3 * MS, 0);
	shpmu__pmu_model_advance(7 * MS);
	expect_times(a, 10 * MS, 6 * MS);
	expect_times(b, 10 * MS, 8 * MS);
	expect_times(c, 10 * MS, 6 * MS);
	shpmu__pmu_model_advance(2 * MS);
	expect_times(a, 12 * MS, 8 * MS);
	expect_times(b, 12 * MS, 8 * MS);
	expect_times(c, 12 * MS, 8 * MS);
	/* The count is the rate times the time running. */
	cr_expect_eq(truth(a).value, 2 * 8 * MS);
	cr_expect_eq(truth(b).value, 3 * 8 * MS);
	cr_expect_eq(truth(c).value, 4 * 8 * MS);
	close_all((int[]){a, b, c}, 3);
}

/* No rotation when everything fits: one step to any time. */
Test(model, no_rotation_when_all_fit)
{
	int a, b;

	model("counters=2,fixed=0,rotate_ms=1,clock=manual");
	a = raw_on(0, 0x0);
	b = raw_on(0, 0x1);
	shpmu__pmu_model_advance(1000 * MS);
	expect_times(a, 1000 * MS, 1000 * MS);
	expect_times(b, 1000 * MS, 1000 * MS);
	cr_expect_eq(truth(b).value, 2000 * MS);
	close_all((int[]){a, b}, 2);
}

static int group_open(int cpu, uint64_t config, int leader)
{
	struct perf_event_attr a = hw(PERF_TYPE_RAW, config);

	a.read_format = RF_TIMES | PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	return mopen(a, -1, cpu, leader);
}

Test(model, groups_go_on_whole_or_not_at_all)
{
	uint64_t buf[3 + 2 * 3], id[3];
	int g1, m1, g2, m2, m3, big[4];

	model("counters=3,fixed=0,rotate_ms=4,clock=manual");
	g1 = group_open(0, 0x1, -1);
	m1 = group_open(0, 0x2, g1);
	g2 = group_open(0, 0x3, -1);
	m2 = group_open(0, 0x4, g2);
	cr_assert(g1 >= 0 && m1 >= 0 && g2 >= 0 && m2 >= 0);
	/* Three counters: the second pair waits whole, though one is free. */
	cr_expect_eq(truth(g1).state, PMU_MODEL_RUNNING);
	cr_expect_eq(truth(m1).state, PMU_MODEL_RUNNING);
	cr_expect_eq(truth(g2).state, PMU_MODEL_WAITING);
	cr_expect_eq(truth(m2).state, PMU_MODEL_WAITING);
	cr_expect_eq(shpmu__pmu_model_counters_in_use(PMU_MODEL_TYPE_FIRST, 0),
		     2);
	/* A group that could never fit is refused when it grows too big. */
	big[0] = group_open(0, 0x0, -1);
	big[1] = group_open(0, 0x0, big[0]);
	big[2] = group_open(0, 0x0, big[0]);
	cr_assert(big[0] >= 0 && big[1] >= 0 && big[2] >= 0);
	cr_expect_eq(group_open(0, 0x0, big[0]), -EINVAL);
	for (int i = 0; i < 3; i++)
		mclose(big[i]);
	cr_expect_eq(shpmu__pmu_model_events_open(), 4);
	/* The group's layout: nr, enabled, running, {value, id}... */
	shpmu__pmu_model_advance(5 * MS);
	cr_assert_eq(
		M->ioctl(g2, PERF_EVENT_IOC_ID, (unsigned long)&id[0], M->arg),
		0);
	cr_assert_eq(
		M->ioctl(m2, PERF_EVENT_IOC_ID, (unsigned long)&id[1], M->arg),
		0);
	cr_expect_neq(id[0], id[1]);
	m3 = group_open(0, 0x5, g2);
	cr_assert_geq(m3, 0);
	cr_assert_eq(
		M->ioctl(m3, PERF_EVENT_IOC_ID, (unsigned long)&id[2], M->arg),
		0);
	/* Too small a buffer: ENOSPC, as the kernel. */
	errno = 0;
	cr_expect_eq(M->read(g2, buf, sizeof(buf) - 8, M->arg), -1);
	cr_expect_eq(errno, ENOSPC);
	shpmu__pmu_model_advance(1 * MS);
	cr_assert_eq(M->read(m3, buf, sizeof(buf), M->arg),
		     (ssize_t)sizeof(buf));
	/* 0-4 g1 on, 4-6 g2's three (which fill the counters). */
	cr_expect_eq(buf[0], 3);
	cr_expect_eq(buf[1], 6 * MS);
	cr_expect_eq(buf[2], 2 * MS);
	cr_expect_eq(buf[3], 4 * 2 * MS);
	cr_expect_eq(buf[4], id[0]);
	cr_expect_eq(buf[5], 5 * 2 * MS);
	cr_expect_eq(buf[6], id[1]);
	cr_expect_eq(buf[7], 6 * 1 * MS);
	cr_expect_eq(buf[8], id[2]);
	/* The leader's close makes its members groups of their own. */
	mclose(g2);
	cr_assert_eq(M->read(m2, buf, sizeof(buf), M->arg), 5 * 8);
	cr_expect_eq(buf[0], 1);
	/* g1's pair, then m2 alone fill the counters; m3 waits its turn. */
	cr_expect_eq(truth(m2).state, PMU_MODEL_RUNNING);
	cr_expect_eq(truth(m3).state, PMU_MODEL_WAITING);
	close_all((int[]){g1, m1, m2, m3}, 4);
}

Test(model, pinned_error_and_recovery)
{
	struct perf_event_attr p = hw(PERF_TYPE_RAW, 0x1);
	uint64_t v[5];
	int x, g, m;

	model("counters=2,fixed=0,clock=manual");
	p.pinned = 1;
	x = mopen(p, -1, 0, -1);
	cr_assert_geq(x, 0);
	/* A pinned pair with one counter left: error, and read(2) is 0. */
	p.read_format |= PERF_FORMAT_GROUP;
	g = mopen(p, -1, 0, -1);
	cr_assert_geq(g, 0);
	p.pinned = 0;
	m = mopen(p, -1, 0, g);
	cr_assert_geq(m, 0);
	cr_expect_eq(truth(g).state, PMU_MODEL_ERROR);
	cr_expect_eq(M->read(g, v, sizeof(v), M->arg), 0);
	shpmu__pmu_model_advance(MS);
	/* Room again is not enough: an error stays until ENABLE. */
	mclose(x);
	cr_expect_eq(truth(g).state, PMU_MODEL_ERROR);
	cr_expect_eq(truth(g).time_enabled, 0);
	cr_assert_eq(M->ioctl(g, PERF_EVENT_IOC_ENABLE, 0, M->arg), 0);
	cr_expect_eq(truth(g).state, PMU_MODEL_RUNNING);
	cr_expect_eq(truth(m).state, PMU_MODEL_RUNNING);
	shpmu__pmu_model_advance(MS);
	cr_expect_eq(truth(g).time_running, MS);
	/* nr, enabled, running, two values. */
	cr_expect_eq(M->read(g, v, sizeof(v), M->arg), (ssize_t)sizeof(v));
	cr_expect_eq(v[0], 2);
	cr_expect_eq(v[3], 2 * MS);
	close_all((int[]){g, m}, 2);
}

Test(model, exclusive_goes_on_alone)
{
	struct perf_event_attr e = hw(PERF_TYPE_RAW, 0x1);
	int x, a;

	model("counters=4,fixed=0,clock=manual");
	e.exclusive = 1;
	x = mopen(e, -1, 0, -1);
	a = raw_on(0, 0x2);
	cr_expect_eq(truth(x).state, PMU_MODEL_RUNNING);
	cr_expect_eq(truth(a).state, PMU_MODEL_WAITING);
	cr_expect_eq(shpmu__pmu_model_counters_in_use(PMU_MODEL_TYPE_FIRST, 0),
		     1);
	/* Rotation: then a is on and x waits, though counters are free. */
	shpmu__pmu_model_advance(4 * MS);
	cr_expect_eq(truth(x).state, PMU_MODEL_WAITING);
	cr_expect_eq(truth(a).state, PMU_MODEL_RUNNING);
	close_all((int[]){x, a}, 2);
}

Test(model, watchdog_holds_a_counter)
{
	char text[8] = {0};
	int a, b, fd;

	model("counters=2,fixed=0,watchdog=1,clock=manual");
	cr_expect_eq(shpmu__pmu_model_counters_in_use(PMU_MODEL_TYPE_FIRST, 0),
		     1);
	cr_expect_eq(shpmu__pmu_model_counters_in_use(PMU_MODEL_TYPE_FIRST, -1),
		     1);
	a = raw_on(0, 0x1);
	b = raw_on(0, 0x2);
	cr_expect_eq(truth(a).state, PMU_MODEL_RUNNING);
	cr_expect_eq(truth(b).state, PMU_MODEL_WAITING);
	fd = M->openat(AT_FDCWD, "/proc/sys/kernel/nmi_watchdog", O_RDONLY,
		       M->arg);
	cr_assert_geq(fd, 0);
	cr_expect_eq(M->read(fd, text, sizeof(text), M->arg), 2);
	cr_expect_str_eq(text, "1\n");
	cr_assert_eq(M->close(fd, M->arg), 0);
	close_all((int[]){a, b}, 2);
}

Test(model, constraints_bind_counters)
{
	/* Bits 32..39 of a raw config: the counters it may use. */
	int a, b, c, d;

	model("counters=4,fixed=0,rotate_ms=4,clock=manual");
	a = raw_on(0, 1ull << 32 | 0x1);
	b = raw_on(0, 1ull << 32 | 0x2);
	cr_expect_eq(truth(a).state, PMU_MODEL_RUNNING);
	cr_expect_eq(truth(b).state, PMU_MODEL_WAITING);
	shpmu__pmu_model_advance(8 * MS);
	expect_times(a, 8 * MS, 4 * MS);
	expect_times(b, 8 * MS, 4 * MS);
	close_all((int[]){a, b}, 2);
	/* Placed in the order opened, an unconstrained event on counter 0
	 * moves aside for one bound to 0; and to 0-1 moves for it. */
	c = raw_on(0, 0x1);
	d = raw_on(0, 3ull << 32 | 0x1);
	a = raw_on(0, 1ull << 32 | 0x1);
	for (int fd = 0; fd < 3; fd++)
		cr_expect_eq(truth((int[]){c, d, a}[fd]).state,
			     PMU_MODEL_RUNNING);
	/* No counter in the mask at all: never fits. */
	cr_expect_eq(mopen(hw(PERF_TYPE_RAW, 0x10ull << 32), -1, 0, -1),
		     -EINVAL);
	close_all((int[]){c, d, a}, 3);
}

static void expect_file(const char *path, const char *want)
{
	struct shpmu *pmu = shpmu_new(NULL);
	char text[64];

	cr_assert_not_null(pmu);
	cr_expect_eq(sys_read_file(pmu, path, text, sizeof(text)),
		     (ssize_t)strlen(want), "%s", path);
	cr_expect_str_eq(text, want, "%s", path);
	shpmu_free(pmu);
}

Test(model, hybrid_pmus)
{
	struct perf_event_attr a;
	struct stat st;
	int core, atom, task;

	if (online_cpus() < 2)
		cr_skip_test("needs two CPUs");
	model("hybrid=core:4+atom:2,clock=manual");
	expect_file("/sys/bus/event_source/devices/cpu_core/type", "65536\n");
	expect_file("/sys/bus/event_source/devices/cpu_atom/type", "65537\n");
	expect_file("/sys/bus/event_source/devices/cpu_core/caps/num_counters",
		    "4\n");
	expect_file("/sys/bus/event_source/devices/cpu_atom/caps/num_counters",
		    "2\n");
	cr_expect_eq(M->fstatat(AT_FDCWD, "/sys/bus/event_source/devices/cpu",
				&st, 0, M->arg),
		     -1);
	/* cycles on the atom PMU, by the extended type. */
	a = hw(PERF_TYPE_HARDWARE, (uint64_t)(PMU_MODEL_TYPE_FIRST + 1) << 32 |
					   PERF_COUNT_HW_CPU_CYCLES);
	cr_expect_eq(mopen(a, -1, 0, -1), -ENOENT);
	atom = mopen(a, -1, online_cpus() - 1, -1);
	cr_assert_geq(atom, 0);
	cr_expect_eq(truth(atom).pmu_type, PMU_MODEL_TYPE_FIRST + 1);
	/* Without one: the CPU's PMU, and the first for a task. */
	core = mopen(hw(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES), -1, 0,
		     -1);
	cr_assert_geq(core, 0);
	cr_expect_eq(truth(core).pmu_type, PMU_MODEL_TYPE_FIRST);
	task = mopen(hw(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES), 0, -1,
		     -1);
	cr_assert_geq(task, 0);
	cr_expect_eq(truth(task).pmu_type, PMU_MODEL_TYPE_FIRST);
	cr_expect_eq(truth(task).cpu, -1);
	/* A model type on the other PMU's CPU. */
	cr_expect_eq(
		mopen(hw(PMU_MODEL_TYPE_FIRST, 0), -1, online_cpus() - 1, -1),
		-ENOENT);
	/* An extended type the model does not have. */
	a.config = 7ull << 32;
	cr_expect_eq(mopen(a, -1, 0, -1), -ENOENT);
	close_all((int[]){atom, core, task}, 3);
}

Test(model, sysfs_answers)
{
	struct stat st;
	struct statx stx;
	char cpus[32];
	int n = online_cpus();

	model("counters=6,fixed=2,clock=manual");
	expect_file("/sys/bus/event_source/devices/cpu/type", "65536\n");
	expect_file("/sys/bus/event_source/devices/cpu/caps/num_counters",
		    "6\n");
	expect_file("/sys/bus/event_source/devices/cpu/caps/num_fixed_counters",
		    "2\n");
	expect_file("/proc/sys/kernel/nmi_watchdog", "0\n");
	/* This machine's CPUs are 0..n-1 online. */
	snprintf(cpus, sizeof(cpus), n > 1 ? "0-%d\n" : "0\n", n - 1);
	expect_file("/sys/bus/event_source/devices/cpu/cpus", cpus);
	cr_assert_eq(M->fstatat(AT_FDCWD,
				"/sys/bus/event_source/devices/cpu/caps", &st,
				0, M->arg),
		     0);
	cr_expect(S_ISDIR(st.st_mode));
	cr_assert_eq(M->statx(AT_FDCWD,
			      "/sys/bus/event_source/devices/cpu/type", 0,
			      STATX_TYPE, &stx, M->arg),
		     0);
	cr_expect(S_ISREG(stx.stx_mode));
	errno = 0;
	cr_expect_eq(M->openat(AT_FDCWD,
			       "/sys/bus/event_source/devices/cpu/type",
			       O_WRONLY, M->arg),
		     -1);
	cr_expect_eq(errno, EACCES);
	/* What the model does not serve, the kernel does. */
	cr_expect_eq(M->fstatat(AT_FDCWD,
				"/sys/bus/event_source/devices/cpu_core", &st,
				0, M->arg),
		     -1);
	cr_assert_eq(M->fstatat(AT_FDCWD, "/proc/self", &st, 0, M->arg), 0);
}

Test(model, bad_specs)
{
	static const char *const bad[] = {
		"counters=0",
		"counters=33",
		"counters=-1",
		"counters=+4",
		"counters=4x",
		"counters=",
		"counters",
		"=4",
		"fixed=4",
		"rotate_ms=0",
		"rotate_ms=18446744073709551617",
		"watchdog=2",
		"clock=wall",
		"clock=realx",
		"hybrid=core:4",
		"hybrid=core:4+atom:0",
		"hybrid=atom:2+core:4",
		"hybrid=core:4+atom:2+",
		"hybrid=core:4+atom:2,counters=2",
		"counters=4,counters=4",
		"counters=4,",
		",counters=4",
		"counters=4,,fixed=1",
		"colour=blue",
		"counters=4 ",
		"counters=99999999999999999999999",
	};

	model("counters=7,clock=manual");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(shpmu__pmu_model_configure(bad[i]), -EINVAL, "%s",
			     bad[i]);
	/* The model is as it was. */
	expect_file("/sys/bus/event_source/devices/cpu/caps/num_counters",
		    "7\n");
	cr_expect_eq(shpmu__pmu_model_configure(""), 0);
	cr_expect_eq(shpmu__pmu_model_configure(
			     "rotate_ms=60000,fixed=0,counters=32,watchdog=1,"
			     "clock=real"),
		     0);
	cr_expect_eq(shpmu__pmu_model_configure("hybrid=core:32+atom:1"), 0);
}

Test(model, busy_while_events_are_open)
{
	int a;

	model("clock=manual");
	a = raw_on(0, 0);
	cr_expect_eq(shpmu__pmu_model_configure("counters=2"), -EBUSY);
	cr_expect_eq(shpmu__pmu_model_off(), -EBUSY);
	cr_expect_eq(shpmu__pmu_model_events_open(), 1);
	mclose(a);
	cr_expect_eq(shpmu__pmu_model_events_open(), 0);
	cr_expect_eq(shpmu__pmu_model_off(), 0);
	cr_expect_null(pmu_model_ops());
}

Test(model, enable_disable_reset_id)
{
	struct perf_event_attr a = hw(PERF_TYPE_RAW, 0x1);
	uint64_t v[5], id;
	int fd;

	model("clock=manual");
	a.disabled = 1;
	a.read_format |= PERF_FORMAT_ID | PERF_FORMAT_LOST;
	fd = mopen(a, -1, 0, -1);
	cr_assert_geq(fd, 0);
	shpmu__pmu_model_advance(MS);
	cr_expect_eq(truth(fd).state, PMU_MODEL_OFF);
	cr_expect_eq(truth(fd).time_enabled, 0);
	cr_assert_eq(M->ioctl(fd, PERF_EVENT_IOC_ENABLE, 0, M->arg), 0);
	shpmu__pmu_model_advance(3 * MS);
	cr_assert_eq(M->ioctl(fd, PERF_EVENT_IOC_DISABLE, 0, M->arg), 0);
	shpmu__pmu_model_advance(MS);
	cr_assert_eq(
		M->ioctl(fd, PERF_EVENT_IOC_ID, (unsigned long)&id, M->arg), 0);
	/* value, enabled, running, id, lost */
	cr_assert_eq(M->read(fd, v, sizeof(v), M->arg), (ssize_t)sizeof(v));
	cr_expect_eq(v[0], 2 * 3 * MS);
	cr_expect_eq(v[1], 3 * MS);
	cr_expect_eq(v[2], 3 * MS);
	cr_expect_eq(v[3], id);
	cr_expect_eq(v[4], 0);
	cr_assert_eq(M->ioctl(fd, PERF_EVENT_IOC_RESET, 0, M->arg), 0);
	cr_assert_eq(M->read(fd, v, sizeof(v), M->arg), (ssize_t)sizeof(v));
	cr_expect_eq(v[0], 0);
	cr_expect_eq(v[1], 3 * MS);
	/* The kernel ignores val's other bits. */
	cr_expect_eq(M->ioctl(fd, PERF_EVENT_IOC_ENABLE, 2, M->arg), 0);
	errno = 0;
	cr_expect_eq(M->ioctl(fd, 0x1234, 0, M->arg), -1);
	cr_expect_eq(errno, ENOTTY);
	mclose(fd);
}

Test(model, group_flag_reaches_every_member)
{
	struct perf_event_attr a = hw(PERF_TYPE_RAW, 0x1);
	int g, m;

	model("clock=manual");
	a.disabled = 1;
	g = mopen(a, -1, 0, -1);
	m = mopen(a, -1, 0, g);
	cr_assert(g >= 0 && m >= 0);
	/* ENABLE on a member with the group flag: its leader's group. */
	cr_assert_eq(
		M->ioctl(m, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP, M->arg),
		0);
	cr_expect_eq(truth(g).state, PMU_MODEL_RUNNING);
	cr_expect_eq(truth(m).state, PMU_MODEL_RUNNING);
	cr_assert_eq(M->ioctl(g, PERF_EVENT_IOC_DISABLE, 0, M->arg), 0);
	cr_expect_eq(truth(g).state, PMU_MODEL_OFF);
	/* A member with its leader off is enabled but not on. */
	cr_expect_eq(truth(m).state, PMU_MODEL_WAITING);
	close_all((int[]){m, g}, 2);
}

Test(model, bad_opens)
{
	struct perf_event_attr a = hw(PERF_TYPE_RAW, 0x1);
	int sw, g;

	model("clock=manual");
	cr_expect_eq(mopen(a, -1, 4096, -1), -EINVAL);
	cr_expect_eq(mopen(a, -1, -2, -1), -EINVAL);
	cr_expect_eq(mopen(a, -1, -1, -1), -EINVAL);
	cr_expect_eq(
		mopen(hw(PERF_TYPE_HARDWARE, PERF_COUNT_HW_MAX), -1, 0, -1),
		-EINVAL);
	a.read_format |= 1ull << 20;
	cr_expect_eq(mopen(a, -1, 0, -1), -EINVAL);
	a.read_format = RF_TIMES;
	/* A software leader cannot take a model member, nor the other way
	 * round. */
	sw = mopen(hw(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK), -1, 0, -1);
	cr_assert_geq(sw, 0);
	cr_expect_eq(mopen(a, -1, 0, sw), -EINVAL);
	g = mopen(a, -1, 0, -1);
	cr_assert_geq(g, 0);
	cr_expect_eq(mopen(hw(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK), -1,
			   0, g),
		     -EINVAL);
	/* Only a leader may be pinned. */
	a.pinned = 1;
	cr_expect_eq(mopen(a, -1, 0, g), -EINVAL);
	a.pinned = 0;
	if (online_cpus() > 1)
		cr_expect_eq(mopen(a, -1, 1, g), -EINVAL);
	cr_expect_eq(shpmu__pmu_model_events_open(), 1);
	mclose(g);
	mclose(sw);
	cr_expect_eq(shpmu__pmu_model_events_open(), 0);
}

Test(model, software_events_still_go_to_the_kernel)
{
	struct perf_event_attr a =
		hw(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	struct pmu_model_truth t;
	uint64_t v[3];
	int fd;

	model("clock=manual");
	fd = mopen(a, 0, -1, -1);
	cr_assert_geq(fd, 0);
	cr_expect_eq(shpmu__pmu_model_truth(fd, &t), -EBADF);
	cr_expect_eq(shpmu__pmu_model_events_open(), 0);
	burn_cpu_ns(20 * MS);
	cr_assert_eq(M->read(fd, v, sizeof(v), M->arg), (ssize_t)sizeof(v));
	cr_expect_geq(v[0], 10 * MS);
	mclose(fd);
}

Test(model, cycles_by_name_through_a_context)
{
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	struct shpmu_count c;
	struct shpmu *pmu;
	int h, n = online_cpus();

	model("clock=manual");
	pmu = shpmu_new(NULL);
	cr_assert_not_null(pmu);
	h = shpmu_open_name(pmu, "cycles", &all);
	cr_assert_geq(h, 0, "%s", strerror(-h));
	cr_expect_eq(shpmu__pmu_model_events_open(), (unsigned int)n);
	shpmu__pmu_model_advance(5 * MS);
	cr_assert_eq(shpmu_read(pmu, h, &c), 0);
	cr_expect_eq(c.time_running, (uint64_t)n * 5 * MS);
	cr_expect_eq(c.time_enabled, (uint64_t)n * 5 * MS);
	/* cycles: one a ns. */
	cr_expect_eq(c.value, c.time_running);
	shpmu_free(pmu);
	cr_expect_eq(shpmu__pmu_model_events_open(), 0);
}

Test(model, real_clock_moves)
{
	uint64_t start = wall_ns();
	struct pmu_model_truth t;
	int fd;

	model("clock=real");
	fd = raw_on(0, 0x2);
	usleep(20000);
	t = truth(fd);
	cr_expect_geq(t.time_running, 20 * MS);
	cr_expect_leq(t.time_running, wall_ns() - start);
	cr_expect_eq(t.value, 3 * t.time_running);
	mclose(fd);
}

Test(model, task_domain_and_cgroup_events)
{
	int t[3], cg, c;

	model("counters=2,fixed=0,clock=manual");
	for (int i = 0; i < 3; i++) {
		t[i] = mopen(hw(PERF_TYPE_RAW, 0x1), 0, -1, -1);
		cr_assert_geq(t[i], 0);
	}
	/* Task events share the task domain, not a CPU's. */
	cr_expect_eq(shpmu__pmu_model_counters_in_use(PMU_MODEL_TYPE_FIRST, -1),
		     2);
	cr_expect_eq(shpmu__pmu_model_counters_in_use(PMU_MODEL_TYPE_FIRST, 0),
		     0);
	cr_expect_eq(truth(t[2]).state, PMU_MODEL_WAITING);
	cr_expect_eq(mopen(hw(PERF_TYPE_RAW, 0x1), 0x3fffffff, -1, -1), -ESRCH);
	/* A cgroup event: a CPU event that counts all the time. */
	cg = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(cg, 0);
	c = M->perf_event_open(
		&(struct perf_event_attr){
			.type = PERF_TYPE_RAW,
			.size = sizeof(struct perf_event_attr)},
		cg, 0, -1, PERF_FLAG_PID_CGROUP, M->arg);
	cr_assert_geq(c, 0, "%s", strerror(errno));
	cr_expect_eq(truth(c).cpu, 0);
	cr_expect_eq(M->perf_event_open(
			     &(struct perf_event_attr){
				     .type = PERF_TYPE_RAW,
				     .size = sizeof(struct perf_event_attr)},
			     cg, -1, -1, PERF_FLAG_PID_CGROUP, M->arg),
		     -1);
	cr_expect_eq(errno, EINVAL);
	shpmu__pmu_model_advance(MS);
	cr_expect_eq(truth(c).time_running, MS);
	close(cg);
	close_all((int[]){t[0], t[1], t[2], c}, 4);
}

Test(model_env, spec_from_the_environment)
{
	cr_assert_eq(setenv("SHPMU_PMU_MODEL", "counters=5,clock=manual", 1),
		     0);
	M = pmu_model_ops();
	cr_assert_not_null(M);
	expect_file("/sys/bus/event_source/devices/cpu/caps/num_counters",
		    "5\n");
}

Test(model_env, a_bad_spec_leaves_the_model_off)
{
	cr_assert_eq(setenv("SHPMU_PMU_MODEL", "counters=5,", 1), 0);
	cr_expect_null(pmu_model_ops());
}

Test(model_env, a_call_wins_over_the_environment)
{
	cr_assert_eq(setenv("SHPMU_PMU_MODEL", "counters=5", 1), 0);
	model("counters=3");
	expect_file("/sys/bus/event_source/devices/cpu/caps/num_counters",
		    "3\n");
	/* Off by a call: the environment is not read again. */
	cr_assert_eq(shpmu__pmu_model_off(), 0);
	cr_expect_null(pmu_model_ops());
}

Test(model, cloexec_inherit_and_openat2)
{
	struct perf_event_attr a = hw(PERF_TYPE_RAW, 0x1);
	struct open_how how = {.flags = O_RDONLY,
			       .resolve = RESOLVE_NO_SYMLINKS};
	char text[16] = {0};
	int fd, plain, f;

	model("clock=manual");
	/* PERF_FLAG_FD_CLOEXEC is honoured, and its absence too. */
	fd = mopen(a, -1, 0, -1);
	cr_assert_geq(fd, 0);
	cr_expect(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	plain = M->perf_event_open(&a, -1, 0, -1, 0, M->arg);
	cr_assert_geq(plain, 0);
	cr_expect_not(fcntl(plain, F_GETFD) & FD_CLOEXEC);
	/* inherit: accepted, counts as any task event. */
	a.inherit = 1;
	f = mopen(a, 0, -1, -1);
	cr_assert_geq(f, 0);
	cr_expect_eq(truth(f).state, PMU_MODEL_RUNNING);
	close_all((int[]){fd, plain, f}, 3);
	f = M->openat2(AT_FDCWD, "/sys/bus/event_source/devices/cpu/type", &how,
		       sizeof(how), M->arg);
	cr_assert_geq(f, 0);
	cr_expect_eq(M->read(f, text, sizeof(text), M->arg), 6);
	cr_expect_str_eq(text, "65536\n");
	cr_assert_eq(M->close(f, M->arg), 0);
}
