// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Core PMU discovery, the counter budget and SHPMU_OPEN_NO_MULTIPLEX in
 * every build: this machine has no core PMU, so the fake one of
 * fake_pmus.h stands in (plain, hybrid, or junk). The budget's arithmetic
 * is checked against numbers worked out by hand here;
 * test_pmu_budget_model.c checks it against the PMU model's scheduling.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "fake_pmus.h"
#include "helpers.h"
#ifdef HAVE_BPF
#include "host_procs.h"
#endif

static const struct shpmu_target all_cpus = {.kind = SHPMU_TARGET_CPU,
					     .cpu = SHPMU_ALL_CPUS};

TestSuite(budget, .init = fake_pmus_machine_check);

Test(budget, no_core_pmu_here)
{
	SHPMU_OPTS(opts, .log = record_log);
	struct shpmu *p = shpmu_new(&opts);
	struct shpmu_pmu_budget b;
	struct perf_event_attr a = fake_hw(PERF_COUNT_HW_CPU_CYCLES);
	struct shpmu_target self = self_target();
	int h;

	cr_assert(p);
	cr_expect_eq(shpmu_pmu_budget(p, NULL, 0), 0);
	cr_expect_eq(shpmu_pmu_budget(p, &b, 1), 0);
	/* Software events open whatever the flag. */
	SHPMU_OPEN_OPTS(o, .flags = SHPMU_OPEN_NO_MULTIPLEX);
	a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	h = shpmu_open_opts(p, &a, &self, &o);
	cr_expect_geq(h, 0);
	cr_expect_eq(shpmu_pmu_budget(p, NULL, 0), 0);
	shpmu_free(p);
}

Test(budget, bad_input)
{
	struct shpmu *p = fake_context(&fake_plain, NULL);
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target self = self_target();
	struct shpmu_pmu_budget b[3];
	struct shpmu_stats st;
	struct shpmu_count c;
	int h;

	cr_expect_eq(shpmu_pmu_budget(NULL, b, 3), -EINVAL);
	cr_expect_eq(shpmu_pmu_budget(p, NULL, 1), -EINVAL);
	cr_expect_eq(errno, EINVAL);
	{
		SHPMU_OPEN_OPTS(o, .flags = 1u << 7);
		cr_expect_eq(shpmu_open_opts(p, &a, &self, &o), -EINVAL);
		cr_expect(strstr(last_log, "unknown flags"), "%s", last_log);
	}
	{
		SHPMU_OPEN_OPTS(o, .reserved[5] = 1);
		cr_expect_eq(shpmu_open_opts(p, &a, &self, &o), -EINVAL);
	}
	{
		SHPMU_OPEN_OPTS(o, .pad = 1);
		cr_expect_eq(shpmu_open_opts(p, &a, &self, &o), -EINVAL);
	}
	{
		SHPMU_OPEN_OPTS(o);
		o.sz = 4;
		cr_expect_eq(shpmu_open_opts(p, &a, &self, &o), -EINVAL);
		o.sz = 1 << 20;
		cr_expect_eq(shpmu_open_opts(p, &a, &self, &o), -EINVAL);
	}
	{
		/* A larger struct from a later version, its tail zero. */
		union {
			struct shpmu_open_opts o;
			unsigned char b[sizeof(struct shpmu_open_opts) + 16];
		} big = {.b = {0}};
		struct shpmu_open_opts *o = &big.o;

		o->sz = sizeof(big);
		h = shpmu_open_opts(p, &a, &self, o);
		cr_expect_geq(h, 0);
		cr_expect_eq(shpmu_close(p, h), 0);
		big.b[sizeof(big) - 1] = 1;
		cr_expect_eq(shpmu_open_opts(p, &a, &self, o), -EINVAL);
	}
	cr_expect_eq(shpmu_open_opts(NULL, &a, &self, NULL), -EINVAL);
	cr_expect_eq(shpmu_open_opts(p, NULL, &self, NULL), -EINVAL);
	cr_expect_eq(shpmu_get_stats(p, &st), 0);
	cr_expect_eq(st.handles, 0, "nothing opened");
	cr_expect_eq(count_perf_fds(), 0);
	/* NULL opts is shpmu_open. */
	h = shpmu_open_opts(p, &a, &self, NULL);
	cr_assert_geq(h, 0);
	cr_expect_eq(shpmu_read_pmu(p, h, NULL, &c), -EINVAL);
	cr_expect_eq(shpmu_read_pmu(p, h, "cpu", NULL), -EINVAL);
	cr_expect_eq(shpmu_read_pmu(NULL, h, "cpu", &c), -EINVAL);
	cr_expect_eq(shpmu_read_pmu(p, h + 1, "cpu", &c), -EBADF);
	/* A software event counts on no core PMU. */
	cr_expect_eq(shpmu_read_pmu(p, h, "cpu", &c), -ENOENT);
	shpmu_free(p);
}

Test(budget, discovers_a_plain_pmu)
{
	struct shpmu *p = fake_context(&fake_plain, NULL);
	struct shpmu_pmu_budget b[3];

	fake_budget(p, b, 3);
	for (int i = 0; i < 3; i++) {
		cr_expect_str_eq(b[i].pmu, "cpu");
		cr_expect_eq(b[i].type, 4);
		cr_expect_eq(b[i].general, 4);
		cr_expect_eq(b[i].fixed, 3);
		cr_expect_eq(b[i].watchdog, 0);
		cr_expect_eq(b[i].used + b[i].wanted + b[i].multiplexing, 0);
	}
	/* No cpus file: every possible CPU, then the tasks' row. */
	cr_expect_eq(b[0].cpu, 0);
	cr_expect_eq(b[1].cpu, 1);
	cr_expect_eq(b[2].cpu, -1);
	/* Fewer rows than there are: n written, the count returned. */
	memset(b, 0xff, sizeof(b));
	cr_expect_eq(shpmu_pmu_budget(p, b, 1), 3);
	cr_expect_eq(b[1].type, UINT32_MAX, "only n rows written");
	shpmu_free(p);
}

Test(budget, discovers_a_hybrid_machine)
{
	struct shpmu *p = fake_context(&fake_hybrid, NULL);
	struct shpmu_pmu_budget b[4];

	fake_budget(p, b, 4);
	cr_expect_str_eq(b[0].pmu, "cpu_core");
	cr_expect_eq(b[0].cpu, 0);
	cr_expect_eq(b[0].type, 4);
	cr_expect_eq(b[0].general, 8);
	cr_expect_eq(b[1].cpu, -1);
	cr_expect_str_eq(b[2].pmu, "cpu_atom");
	cr_expect_eq(b[2].cpu, 1);
	cr_expect_eq(b[2].type, 10);
	cr_expect_eq(b[2].general, 6);
	cr_expect_eq(b[2].fixed, 3);
	cr_expect_eq(b[3].cpu, -1);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(b[i].watchdog, 1);
	shpmu_free(p);
}

/* Whatever another process can write is checked: junk is ignored. */
Test(budget, ignores_junk_in_sysfs)
{
	static const struct fake_file junk_type[] = {
		{FAKE_DEVICES "cpu/type", "4x\n"},
		{FAKE_DEVICES "cpu/caps/num_counters", "4\n"},
	};
	static const struct fake_file junk_cpus[] = {
		{FAKE_DEVICES "cpu_core/type", "4\n"},
		{FAKE_DEVICES "cpu_core/cpus", "3-1\n"},
		{FAKE_DEVICES "cpu_atom/type", "10\n"},
		{FAKE_DEVICES "cpu_atom/cpus", "1\n"},
		{FAKE_DEVICES "cpu_atom/caps/num_counters", "4\n"},
		{"/proc/sys/kernel/nmi_watchdog", "2\n"},
	};
	static const struct fake_file software_type[] = {
		{FAKE_DEVICES "cpu/type", "1\n"},
	};
	static const struct fake_file junk_counters[] = {
		{FAKE_DEVICES "cpu/type", "4\n"},
		{FAKE_DEVICES "cpu/caps/num_counters",
		 "99999999999999999999\n"},
		{FAKE_DEVICES "cpu/caps/num_fixed_counters", "-1\n"},
	};
	struct shpmu_pmu_budget b[3];
	struct shpmu *p = fake_context(&FAKE_SPEC(junk_type), NULL);

	fake_budget(p, b, 0);
	cr_expect(strstr(last_log, "not a number"), "%s", last_log);
	shpmu_free(p);

	/* A fixed type other than RAW would make software events look like
	 * the PMU's. */
	p = fake_context(&FAKE_SPEC(software_type), NULL);
	fake_budget(p, b, 0);
	cr_expect(strstr(last_log, "not a core PMU's"), "%s", last_log);
	shpmu_free(p);

	p = fake_context(&FAKE_SPEC(junk_cpus), NULL);
	fake_budget(p, b, 2);
	cr_expect_str_eq(b[0].pmu, "cpu_atom", "cpu_core's list is junk");
	cr_expect_eq(b[0].cpu, 1);
	cr_expect_eq(b[0].watchdog, 0, "a watchdog of 2 is junk");
	shpmu_free(p);

	/* Counters out of bounds: libpfm4's word instead, which on a CPU
	 * it does not know is nothing (0: unknown). */
	p = fake_context(&FAKE_SPEC(junk_counters), NULL);
	fake_budget(p, b, 3);
	cr_expect_leq(b[0].general, 64);
	cr_expect_leq(b[0].fixed, 64);
	shpmu_free(p);
}

Test(budget, counts_private_shared_and_group_events)
{
	struct shpmu *p = fake_context(&fake_plain, NULL);
	struct perf_event_attr cycles = fake_hw(PERF_COUNT_HW_CPU_CYCLES);
	struct perf_event_attr cycles_u = cycles, group[3];
	struct shpmu_target self = self_target();
	struct shpmu_pmu_budget b[3];
	int h[6];

	cycles_u.exclude_kernel = 1;
	h[0] = shpmu_open(p, &cycles, &all_cpus);
	h[1] = shpmu_open(p, &cycles, &all_cpus); /* shared */
	h[2] = shpmu_open(p, &cycles, &all_cpus); /* shared */
	fake_budget(p, b, 3);
	for (int cpu = 0; cpu < 2; cpu++) {
		cr_expect_eq(b[cpu].used, 1, "one kernel event");
		cr_expect_eq(b[cpu].used_fixed, 1,
			     "cycles on its fixed counter");
		cr_expect_eq(b[cpu].wanted, 3, "three handles");
		cr_expect_eq(b[cpu].saved, 2);
		cr_expect_eq(b[cpu].multiplexing, 0);
	}
	cr_expect_eq(b[2].used, 0, "no task event");
	/* cycles:u is another event: the fixed counter is taken, so it
	 * needs a general one. */
	h[3] = shpmu_open(p, &cycles_u, &all_cpus);
	group[0] = fake_raw(0x11);
	group[1] = fake_raw(0x12);
	group[2] = sw_attr(PERF_COUNT_SW_CPU_CLOCK, false);
	h[4] = shpmu_open_group(p, group, 3, &self);
	h[5] = shpmu_open_group(p, group, 3, &self);
	for (int i = 0; i < 6; i++)
		cr_assert_geq(h[i], 0, "open %d: %s", i, last_log);
	fake_budget(p, b, 3);
	for (int cpu = 0; cpu < 2; cpu++) {
		cr_expect_eq(b[cpu].used, 2);
		cr_expect_eq(b[cpu].used_fixed, 1);
		cr_expect_eq(b[cpu].wanted, 4);
		cr_expect_eq(b[cpu].multiplexing, 0);
	}
	/* The group: two raw members, the software one needs nothing. */
	cr_expect_eq(b[2].used, 2);
	cr_expect_eq(b[2].used_fixed, 0);
	cr_expect_eq(b[2].wanted, 4);
	cr_expect_eq(b[2].saved, 2);
	/* Closing gives it back. */
	for (int i = 0; i < 6; i++)
		cr_expect_eq(shpmu_close(p, h[i]), 0);
	fake_budget(p, b, 3);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(b[i].used + b[i].wanted, 0);
	shpmu_free(p);
}

/* fake_tight: three general counters, one the watchdog's: two raw events
 * fit, the third does not. */
Test(budget, no_multiplex_refuses_the_first_that_does_not_fit)
{
	struct shpmu *p = fake_context(&fake_tight, NULL);
	struct perf_event_attr a[4] = {fake_raw(0x1), fake_raw(0x2),
				       fake_raw(0x3),
				       fake_hw(PERF_COUNT_HW_INSTRUCTIONS)};
	SHPMU_OPEN_OPTS(o, .flags = SHPMU_OPEN_NO_MULTIPLEX);
	struct shpmu_pmu_budget b[3], before[3];
	struct shpmu_stats st;
	int h1, h2, fds;

	h1 = shpmu_open_opts(p, &a[0], &all_cpus, &o);
	h2 = shpmu_open_opts(p, &a[1], &all_cpus, &o);
	cr_assert_geq(h1, 0, "%s", last_log);
	cr_assert_geq(h2, 0, "%s", last_log);
	fake_budget(p, before, 3);
	cr_expect_eq(before[0].used, 2);
	cr_expect_eq(before[0].multiplexing, 0);
	fds = count_perf_fds();
	/* The third would need a fourth general counter: refused, and
	 * nothing is left of it. */
	cr_expect_eq(shpmu_open_opts(p, &a[2], &all_cpus, &o), -EBUSY);
	cr_expect(strstr(last_log, "PMU cpu, cpu 0"), "%s", last_log);
	cr_expect(strstr(last_log, "NMI watchdog"), "%s", last_log);
	cr_expect_eq(count_perf_fds(), fds);
	fake_budget(p, b, 3);
	cr_expect_eq(memcmp(b, before, sizeof(b)), 0, "the budget unchanged");
	cr_expect_eq(shpmu_get_stats(p, &st), 0);
	cr_expect_eq(st.kernel_events, 2);
	cr_expect_eq(st.handles, 2);
	/* instructions has no fixed counter here either. */
	cr_expect_eq(shpmu_open_opts(p, &a[3], &all_cpus, &o), -EBUSY);
	/* Sharing costs nothing: never refused. */
	cr_expect_geq(shpmu_open_opts(p, &a[0], &all_cpus, &o), 0);
	/* Without the flag it opens, and the budget says it multiplexes. */
	cr_expect_geq(shpmu_open(p, &a[2], &all_cpus), 0);
	fake_budget(p, b, 3);
	cr_expect_eq(b[0].used, 3);
	cr_expect_eq(b[0].multiplexing, 1);
	cr_expect_eq(b[1].multiplexing, 1);
	cr_expect_eq(b[2].multiplexing, 0, "no task event");
	shpmu_free(p);
}

struct racer {
	struct shpmu *p;
	uint64_t config;
	int h;
};

static void *race_open(void *arg)
{
	struct racer *r = arg;
	struct perf_event_attr a = fake_raw(r->config);
	SHPMU_OPEN_OPTS(o, .flags = SHPMU_OPEN_NO_MULTIPLEX);

	r->h = shpmu_open_opts(r->p, &a, &all_cpus, &o);
	return NULL;
}

/* Eight opens at once for two free counters: exactly two get in. */
Test(budget, no_multiplex_lets_no_two_opens_squeeze_in)
{
	struct shpmu *p = fake_context(&fake_tight, NULL);
	struct racer r[8];
	pthread_t t[8];
	struct shpmu_pmu_budget b[3];
	int ok = 0;

	for (int i = 0; i < 8; i++) {
		r[i] = (struct racer){p, 0x100 + (uint64_t)i, 0};
		cr_assert_eq(pthread_create(&t[i], NULL, race_open, &r[i]), 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		cr_expect(r[i].h >= 0 || r[i].h == -EBUSY, "%d", r[i].h);
		ok += r[i].h >= 0;
	}
	cr_expect_eq(ok, 2);
	fake_budget(p, b, 3);
	cr_expect_eq(b[0].used, 2);
	cr_expect_eq(b[0].multiplexing, 0);
	shpmu_free(p);
}

/* With a fixed counter free, cycles fits where a raw event does not. */
Test(budget, no_multiplex_counts_fixed_counters)
{
	struct shpmu *p = fake_context(&fake_plain, NULL);
	SHPMU_OPEN_OPTS(o, .flags = SHPMU_OPEN_NO_MULTIPLEX);
	struct perf_event_attr a;
	struct shpmu_target self = self_target();
	struct shpmu_pmu_budget b[3];

	for (uint64_t c = 1; c <= 4; c++) {
		a = fake_raw(c);
		cr_assert_geq(shpmu_open_opts(p, &a, &self, &o), 0, "%s",
			      last_log);
	}
	a = fake_raw(5);
	cr_expect_eq(shpmu_open_opts(p, &a, &self, &o), -EBUSY);
	cr_expect(strstr(last_log, "follow tasks"), "%s", last_log);
	a = fake_hw(PERF_COUNT_HW_CPU_CYCLES);
	cr_expect_geq(shpmu_open_opts(p, &a, &self, &o), 0, "%s", last_log);
	a = fake_hw(PERF_COUNT_HW_INSTRUCTIONS);
	cr_expect_geq(shpmu_open_opts(p, &a, &self, &o), 0, "%s", last_log);
	/* A second cycles event would need a general counter. */
	a = fake_hw(PERF_COUNT_HW_CPU_CYCLES);
	a.exclude_user = 1;
	cr_expect_eq(shpmu_open_opts(p, &a, &self, &o), -EBUSY);
	fake_budget(p, b, 3);
	cr_expect_eq(b[2].used, 6);
	cr_expect_eq(b[2].used_fixed, 2);
	cr_expect_eq(b[2].multiplexing, 0);
	cr_expect_eq(b[0].used, 0, "task events are not the CPUs'");
	shpmu_free(p);
}

#ifdef HAVE_BPF
/* Host scope: the budget counts the domain's perf events, whichever
 * member asked for them; its handles' wants are its own. The fake's
 * stand-in events are real software ones, which the BPF backend's perf
 * event array takes (the PMU model's cannot: the BPF backend is tested
 * here only). */
Test(budget, host_scope_counts_the_domain, .init = host_fs_setup,
     .fini = host_fs_teardown)
{
	SHPMU_OPTS(opts, .scope = SHPMU_SCOPE_HOST, .bpffs_dir = host_bpffs(),
		   .domain = "budget", .log = host_keep_log);
	struct shpmu *a = fake_context(&fake_tight, &opts);
	struct shpmu *b = fake_context(&fake_tight, &opts);
	struct perf_event_attr r1 = fake_raw(0x1), r2 = fake_raw(0x2),
			       r3 = fake_raw(0x3);
	SHPMU_OPEN_OPTS(o, .flags = SHPMU_OPEN_NO_MULTIPLEX);
	struct shpmu_pmu_budget ba[3], bb[3];
	struct shpmu_stats st;

	cr_assert_geq(shpmu_open(b, &r1, &all_cpus), 0, "%s", host_logged);
	cr_assert_geq(shpmu_open(b, &r2, &all_cpus), 0, "%s", host_logged);
	cr_assert_eq(shpmu_get_stats(b, &st), 0);
	cr_assert_eq(st.kernel_fds, 0, "counted by the domain's BPF backend");
	fake_budget(a, ba, 3);
	fake_budget(b, bb, 3);
	for (int cpu = 0; cpu < 2; cpu++) {
		cr_expect_eq(ba[cpu].used, 2, "b's events, in a's budget");
		cr_expect_eq(ba[cpu].wanted, 0);
		cr_expect_eq(bb[cpu].used, 2);
		cr_expect_eq(bb[cpu].wanted, 2);
	}
	/* A third raw event does not fit the domain's counters; one that
	 * b holds costs nothing. */
	host_logged[0] = '\0';
	cr_expect_eq(shpmu_open_opts(a, &r3, &all_cpus, &o), -EBUSY);
	cr_expect(strstr(host_logged, "does not fit"), "%s", host_logged);
	cr_expect_geq(shpmu_open_opts(a, &r1, &all_cpus, &o), 0, "%s",
		      host_logged);
	fake_budget(a, ba, 3);
	cr_expect_eq(ba[0].used, 2);
	cr_expect_eq(ba[0].wanted, 1);
	cr_expect_eq(ba[0].saved, 0, "the domain's 2 counters, 1 wanted");
	shpmu_free(a);
	shpmu_free(b);
}
#endif
