// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Event names (libpfm4, and the kernel's generic names), and groups. */
#include <criterion/criterion.h>
#include <linux/capability.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "cgroup_helpers.h"
#include "helpers.h"
#include "sys/sys.h"

LOGGED_CONTEXT_SUITE(names);
TestSuite(groups, .init = logged_context_setup,
	  .fini = logged_context_teardown);

static struct perf_event_attr named(const char *name)
{
	return named_attr(pmu, name);
}

Test(names, generic_and_perf_names_encode_like_the_kernel_abi)
{
	struct {
		const char *name;
		uint32_t type;
		uint64_t config;
	} cases[] = {
		{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
		{"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
		{"context-switches", PERF_TYPE_SOFTWARE,
		 PERF_COUNT_SW_CONTEXT_SWITCHES},
		{"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
		{"perf::TASK-CLOCK", PERF_TYPE_SOFTWARE,
		 PERF_COUNT_SW_TASK_CLOCK},
		{"perf::PERF_COUNT_SW_CPU_CLOCK", PERF_TYPE_SOFTWARE,
		 PERF_COUNT_SW_CPU_CLOCK},
		{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
		{"instructions", PERF_TYPE_HARDWARE,
		 PERF_COUNT_HW_INSTRUCTIONS},
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
	cr_expect_eq(count_perf_fds(), 2,
		     "task-clock and its perf:: name "
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
	/* 50 fresh pages are 50 faults; the thread may fault elsewhere. */
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
	int seen[2] = {0, 0};

	cr_assert_eq(shpmu_list_events(pmu, count_event, seen), 0);
	cr_expect_eq(seen[0], 1, "perf::PERF_COUNT_SW_TASK_CLOCK listed");
	cr_expect_gt(seen[1], 10);
	cr_expect_eq(shpmu_list_events(pmu, stop_at_first, NULL), 7);
}

/* ---- groups ---- */

static int open_group(const char *const *names, size_t n, struct shpmu_target t)
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
	const char *ab[] = {"cs", "page-faults"};
	const char *ba[] = {"page-faults", "cs"};
	const char *abc[] = {"cs", "page-faults", "task-clock"};
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
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
	const char *names[] = {"cs", "page-faults"};
	struct shpmu_target self = self_target();
	struct perf_event_attr attrs[2] = {named("cs"), named("page-faults")};
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
	/* The single events' windows hold the group's and the few calls
	 * around it: a loaded CPU may take the test off there, once or
	 * twice. */
	cr_expect(g[0].value <= single[0].value &&
			  single[0].value <= g[0].value + 2,
		  "cs: group %llu, single %llu", (unsigned long long)g[0].value,
		  (unsigned long long)single[0].value);
	cr_expect_eq(g[1].value, single[1].value, "faults: %llu vs %llu",
		     (unsigned long long)g[1].value,
		     (unsigned long long)single[1].value);
	/* Exact against the single events above; these bound the work
	 * from below: the switches the test slept for, 200 fresh pages. */
	cr_expect_geq(g[0].value, 30);
	cr_expect_geq(g[1].value, 200);
	cr_expect_eq(g[0].time_enabled, g[1].time_enabled);
	cr_assert_eq(shpmu_read(pmu, gh, &lead), 0);
	cr_expect_eq(lead.value, g[0].value, "shpmu_read gives the leader");
	cr_expect_eq(shpmu_read_group(pmu, gh, g, 1), -ERANGE);
}

Test(groups, group_handles_enable_reset_and_close_like_single_ones)
{
	const char *names[] = {"page-faults", "cs"};
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
	/* 100 fresh pages per step: ga saw two steps since its reset, gb
	 * two before its disable; had ga not been reset it would hold the
	 * first step's 100 more than gb (less than 50 other faults: the
	 * mmap and munmap around each step). */
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
	struct perf_event_attr attrs[2] = {named("cs"), named("cs")};
	struct shpmu_target self = self_target();

	cr_expect_eq(shpmu_open_group(pmu, attrs, 0, &self), -EINVAL);
	cr_expect_eq(shpmu_open_group(pmu, NULL, 2, &self), -EINVAL);
	cr_expect_eq(shpmu_open_group(pmu, attrs, 65, &self), -EINVAL);
	attrs[1].sample_period = 1000;
	cr_expect_eq(shpmu_open_group(pmu, attrs, 2, &self), -EOPNOTSUPP);
	cr_expect_eq(count_perf_fds(), 0);
}
