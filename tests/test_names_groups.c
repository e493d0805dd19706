// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Event names (libpfm4), groups, and batched reads. */
#include <criterion/criterion.h>
#include <linux/capability.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "cgroup_helpers.h"
#include "helpers.h"
#include "sys.h"

static struct shpmu *pmu;

static void setup(void)
{
	SHPMU_OPTS(opts, .log = record_log);

	pmu = shpmu_new(&opts);
	cr_assert(pmu);
	log_count = 0;
}

static void teardown(void)
{
	shpmu_free(pmu);
	cr_expect_eq(count_perf_fds(), 0);
}

TestSuite(names, .init = setup, .fini = teardown);
TestSuite(groups, .init = setup, .fini = teardown);
TestSuite(read_many, .init = setup, .fini = teardown);

static struct perf_event_attr named(const char *name)
{
	struct perf_event_attr a;
	int err = shpmu_event_attr(pmu, name, &a);

	cr_assert_eq(err, 0, "%s: %s (%s)", name, strerror(-err), last_log);
	return a;
}

Test(names, generic_and_perf_names_encode_like_the_kernel_abi)
{
	struct {
		const char *name;
		uint32_t type;
		uint64_t config;
	} cases[] = {
		{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
		{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "context-switches", PERF_TYPE_SOFTWARE,
		  PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "perf::TASK-CLOCK", PERF_TYPE_SOFTWARE,
		  PERF_COUNT_SW_TASK_CLOCK },
		{ "perf::PERF_COUNT_SW_CPU_CLOCK", PERF_TYPE_SOFTWARE,
		  PERF_COUNT_SW_CPU_CLOCK },
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_INSTRUCTIONS },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct perf_event_attr a = named(cases[i].name);

		cr_expect_eq(a.type, cases[i].type, "%s", cases[i].name);
		cr_expect_eq(a.config, cases[i].config, "%s", cases[i].name);
		cr_expect_eq(a.disabled, 0);
		cr_expect_eq(a.size, sizeof(a));
	}
}

Test(names, modifiers_set_the_exclude_bits)
{
	struct perf_event_attr u = named("task-clock:u");
	struct perf_event_attr k = named("task-clock:k");
	struct perf_event_attr both = named("task-clock");

	cr_expect(u.exclude_kernel && !u.exclude_user);
	cr_expect(k.exclude_user && !k.exclude_kernel);
	cr_expect(!both.exclude_user && !both.exclude_kernel);
	/* A :u event is another kernel event than the plain one. */
	struct shpmu_target self = self_target();
	cr_assert_geq(shpmu_open_name(pmu, "task-clock:u", &self), 0);
	cr_assert_geq(shpmu_open_name(pmu, "task-clock", &self), 0);
	cr_assert_geq(shpmu_open_name(pmu, "perf::TASK-CLOCK", &self), 0);
	cr_expect_eq(count_perf_fds(), 2, "task-clock and its perf:: name "
					  "share; :u does not");
}

Test(names, an_opened_name_counts)
{
	struct shpmu_target self = self_target();
	struct shpmu_count c;
	int h = shpmu_open_name(pmu, "page-faults", &self);

	cr_assert_geq(h, 0);
	touch_pages(50);
	cr_assert_eq(shpmu_read(pmu, h, &c), 0);
	cr_expect_geq(c.value, 50);
}

Test(names, unknown_names_say_why)
{
	struct shpmu_target self = self_target();
	struct perf_event_attr a;

	cr_expect_eq(shpmu_open_name(pmu, "no-such-event", &self), -ENOENT);
	cr_expect_eq(errno, ENOENT);
	cr_expect(strstr(last_log, "no-such-event") &&
			  strstr(last_log, "not found"),
		  "log: %s", last_log);
	cr_expect_eq(shpmu_event_attr(pmu, "task-clock:zz", &a), -EINVAL);
	cr_expect_eq(shpmu_event_attr(pmu, NULL, &a), -EINVAL);
	cr_expect_eq(shpmu_open_name(pmu, NULL, &self), -EINVAL);
}

/* This machine has no hardware PMU: the error must say that. */
Test(names, a_hardware_event_without_a_pmu_says_so)
{
	struct shpmu_target self = self_target();

	if (access("/sys/bus/event_source/devices/cpu", F_OK) == 0)
		cr_skip_test("this machine has a hardware PMU");
	cr_expect_eq(shpmu_open_name(pmu, "cycles", &self), -ENOENT);
	cr_expect(strstr(last_log, "no hardware PMU"), "log: %s", last_log);
}

static int count_event(const char *name, const char *desc, void *arg)
{
	(void)desc;
	if (!strcmp(name, "perf::PERF_COUNT_SW_TASK_CLOCK"))
		((int *)arg)[0]++;
	((int *)arg)[1]++;
	return 0;
}

static int stop_at_first(const char *name, const char *desc, void *arg)
{
	(void)name;
	(void)desc;
	(void)arg;
	return 7;
}

Test(names, events_can_be_listed)
{
	int seen[2] = { 0, 0 };

	cr_assert_eq(shpmu_list_events(pmu, count_event, seen), 0);
	cr_expect_eq(seen[0], 1, "perf::PERF_COUNT_SW_TASK_CLOCK listed");
	cr_expect_gt(seen[1], 10);
	cr_expect_eq(shpmu_list_events(pmu, stop_at_first, NULL), 7);
}

/* ---- groups ---- */

static int open_group(const char *const *names, size_t n,
		      struct shpmu_target t)
{
	struct perf_event_attr attrs[8];
	int h;

	for (size_t i = 0; i < n; i++)
		attrs[i] = named(names[i]);
	h = shpmu_open_group(pmu, attrs, n, &t);
	cr_assert_geq(h, 0, "group: %s (%s)", strerror(-h), last_log);
	return h;
}

Test(groups, identical_groups_share_and_different_ones_do_not)
{
	const char *ab[] = { "cs", "page-faults" };
	const char *ba[] = { "page-faults", "cs" };
	const char *abc[] = { "cs", "page-faults", "task-clock" };
	struct shpmu_target all = { .kind = SHPMU_TARGET_CPU,
				    .cpu = SHPMU_ALL_CPUS };
	struct shpmu_stats st;
	int cpus = online_cpus();

	open_group(ab, 2, all);
	open_group(ab, 2, all);
	cr_expect_eq(count_perf_fds(), 2 * cpus, "one group per CPU");
	open_group(ba, 2, all);
	open_group(abc, 3, all);
	shpmu_get_stats(pmu, &st);
	cr_expect_eq(st.kernel_events, 3);
	cr_expect_eq(st.kernel_fds, (uint64_t)(2 + 2 + 3) * cpus);
	cr_expect_eq(count_perf_fds(), (2 + 2 + 3) * cpus);
	cr_expect_eq(st.shared_opens, 1);
}

/* A group read agrees with single events opened over the same window. */
Test(groups, a_group_reads_what_single_events_read)
{
	VALGRIND_SKIP_EXACT();
	const char *names[] = { "cs", "page-faults" };
	struct shpmu_target self = self_target();
	struct perf_event_attr attrs[2] = { named("cs"), named("page-faults") };
	struct shpmu_count g[2], single[2], lead;
	int gh, s0, s1;

	attrs[0].disabled = 1;
	gh = shpmu_open_group(pmu, attrs, 2, &self);
	s0 = shpmu_open(pmu, &attrs[0], &self);
	s1 = shpmu_open(pmu, &attrs[1], &self);
	cr_assert_geq(gh, 0);
	cr_assert_geq(s0, 0);
	cr_assert_geq(s1, 0);
	(void)names;
	cr_assert_eq(shpmu_enable(pmu, s0), 0);
	cr_assert_eq(shpmu_enable(pmu, s1), 0);
	cr_assert_eq(shpmu_enable(pmu, gh), 0);
	sleep_switches(30);
	touch_pages(200);
	cr_assert_eq(shpmu_disable(pmu, gh), 0);
	cr_assert_eq(shpmu_disable(pmu, s1), 0);
	cr_assert_eq(shpmu_disable(pmu, s0), 0);

	cr_assert_eq(shpmu_read_group(pmu, gh, g, 2), 0);
	cr_assert_eq(shpmu_read(pmu, s0, &single[0]), 0);
	cr_assert_eq(shpmu_read(pmu, s1, &single[1]), 0);
	cr_expect_eq(g[0].value, single[0].value, "cs: group %llu, single %llu",
		     (unsigned long long)g[0].value,
		     (unsigned long long)single[0].value);
	cr_expect_eq(g[1].value, single[1].value, "faults: %llu vs %llu",
		     (unsigned long long)g[1].value,
		     (unsigned long long)single[1].value);
	cr_expect_geq(g[0].value, 30);
	cr_expect_geq(g[1].value, 200);
	cr_expect_eq(g[0].time_enabled, g[1].time_enabled);
	cr_assert_eq(shpmu_read(pmu, gh, &lead), 0);
	cr_expect_eq(lead.value, g[0].value, "shpmu_read gives the leader");
	cr_expect_eq(shpmu_read_group(pmu, gh, g, 1), -ERANGE);
}

Test(groups, group_handles_enable_reset_and_close_like_single_ones)
{
	const char *names[] = { "page-faults", "cs" };
	struct shpmu_target self = self_target();
	struct shpmu_count a[2], b[2];
	int ga = open_group(names, 2, self), gb = open_group(names, 2, self);

	touch_pages(100);
	cr_assert_eq(shpmu_reset(pmu, ga), 0);
	touch_pages(100);
	cr_assert_eq(shpmu_disable(pmu, gb), 0);
	touch_pages(100);
	cr_assert_eq(shpmu_read_group(pmu, ga, a, 2), 0);
	cr_assert_eq(shpmu_read_group(pmu, gb, b, 2), 0);
	cr_expect_geq(a[0].value, 200, "ga since its reset");
	cr_expect_lt(a[0].value, b[0].value + 150, "ga was reset");
	cr_expect_geq(b[0].value, 200, "gb until its disable");
	cr_assert_eq(shpmu_close(pmu, ga), 0);
	cr_expect_eq(count_perf_fds(), 2, "gb keeps the group");
	cr_assert_eq(shpmu_close(pmu, gb), 0);
	cr_expect_eq(count_perf_fds(), 0);
}

Test(groups, bad_groups_are_refused)
{
	struct perf_event_attr attrs[2] = { named("cs"), named("cs") };
	struct shpmu_target self = self_target();

	cr_expect_eq(shpmu_open_group(pmu, attrs, 0, &self), -EINVAL);
	cr_expect_eq(shpmu_open_group(pmu, NULL, 2, &self), -EINVAL);
	cr_expect_eq(shpmu_open_group(pmu, attrs, 65, &self), -EINVAL);
	attrs[1].sample_period = 1000;
	cr_expect_eq(shpmu_open_group(pmu, attrs, 2, &self), -EOPNOTSUPP);
	cr_expect_eq(count_perf_fds(), 0);
}

/* ---- read_many ---- */

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
	static const uint64_t configs[4] = { PERF_COUNT_SW_CPU_CLOCK,
					     PERF_COUNT_SW_TASK_CLOCK,
					     PERF_COUNT_SW_CONTEXT_SWITCHES,
					     PERF_COUNT_SW_PAGE_FAULTS };
	struct shpmu_target all = { .kind = SHPMU_TARGET_CPU,
				    .cpu = SHPMU_ALL_CPUS };
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
	struct shpmu_count out[3] = { { 1, 2, 3 }, { 1, 2, 3 }, { 1, 2, 3 } };
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
	struct shpmu_target child = { .kind = SHPMU_TARGET_TASK, .cpu = -1 };
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
			PERF_COUNT_SW_CONTEXT_SWITCHES
		};
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

/* ---- errors that say what to do ---- */

TestSuite(errors, .init = setup, .fini = teardown);

Test(errors, einval_names_the_refused_field)
{
	struct perf_event_attr attrs[2] = { named("cs"), named("page-faults") };
	struct shpmu_target self = self_target();

	attrs[1].pinned = 1; /* only a group leader may be pinned */
	cr_expect_eq(shpmu_open_group(pmu, attrs, 2, &self), -EINVAL);
	cr_expect(strstr(last_log, "attr.pinned"), "log: %s", last_log);
	cr_expect_eq(count_perf_fds(), 0, "the leader was closed again");
}

static int opens_left;

static int open_until_emfile(struct perf_event_attr *attr, pid_t pid, int cpu,
			     int group_fd, unsigned long flags, void *arg)
{
	if (opens_left-- <= 0) {
		errno = EMFILE;
		return -1;
	}
	return shpmu_sys_kernel.perf_event_open(attr, pid, cpu, group_fd,
						flags, arg);
}

/* The process runs out of fds half way through the CPUs. */
Test(errors, emfile_gives_the_fds_in_use_and_the_limit)
{
	struct shpmu_sys_ops ops = shpmu_sys_kernel;
	struct shpmu_target all = { .kind = SHPMU_TARGET_CPU,
				    .cpu = SHPMU_ALL_CPUS };
	struct perf_event_attr a = named("cpu-clock");
	int used = count_fds();
	struct rlimit rl;
	char limit[64];

	getrlimit(RLIMIT_NOFILE, &rl);
	snprintf(limit, sizeof(limit), "RLIMIT_NOFILE %llu",
		 (unsigned long long)rl.rlim_cur);
	ops.perf_event_open = open_until_emfile;
	opens_left = 1;
	shpmu__set_sys_ops(pmu, &ops);
	cr_expect_eq(shpmu_open(pmu, &a, &all), -EMFILE);
	cr_expect(strstr(last_log, limit) &&
			  strstr(last_log, "in use"),
		  "log: %s", last_log);
	cr_expect_eq(count_fds(), used, "nothing left open");
	shpmu__set_sys_ops(pmu, NULL);
}

Test(errors, eacces_gives_paranoid_and_the_capability)
{
	struct shpmu_target all = { .kind = SHPMU_TARGET_CPU,
				    .cpu = SHPMU_ALL_CPUS };
	struct perf_event_attr a = named("cpu-clock");
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int paranoid = 0;

	cr_assert(f);
	cr_assert_eq(fscanf(f, "%d", &paranoid), 1);
	fclose(f);
	if (paranoid < 1)
		cr_skip_test("perf_event_paranoid is %d: CPU-wide counting is "
			     "open to everyone here",
			     paranoid);
	drop_capability(CAP_PERFMON);
	drop_capability(CAP_SYS_ADMIN);
	cr_expect_eq(shpmu_open(pmu, &a, &all), -EACCES);
	cr_expect(strstr(last_log, "perf_event_paranoid=") &&
			  strstr(last_log, "CAP_PERFMON"),
		  "log: %s", last_log);
}
