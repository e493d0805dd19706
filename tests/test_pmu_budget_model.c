// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The counter budget, SHPMU_OPEN_NO_MULTIPLEX and hybrid PMUs against the
 * PMU model (-Dpmu_model=true), with a manual clock: what the budget says
 * fits is what the model schedules without rotation, and what it says
 * multiplexes the model rotates. Each test runs in its own process
 * (Criterion), with a model of its own.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"
#include "sys/pmu_model.h"

#define MS   1000000ull
#define CORE PMU_MODEL_TYPE_FIRST
#define ATOM (PMU_MODEL_TYPE_FIRST + 1)

static struct shpmu *pmu;
static int ncpus;

static void model(const char *spec)
{
	SHPMU_OPTS(opts, .log = record_log,
		   .cgroup_backend = SHPMU_CGROUP_BACKEND_PERF);

	cr_assert_eq(shpmu__pmu_model_configure(spec), 0, "%s", spec);
	pmu = shpmu_new(&opts);
	cr_assert(pmu, "shpmu_new: %s", strerror(errno));
	ncpus = online_cpus();
}

static void teardown(void)
{
	shpmu_free(pmu);
	cr_expect_eq(shpmu__pmu_model_events_open(), 0, "no model event left");
}

TestSuite(budget_model, .fini = teardown);

static struct perf_event_attr attr(uint32_t type, uint64_t config)
{
	return (struct perf_event_attr){.size = sizeof(struct perf_event_attr),
					.type = type,
					.config = config};
}

static const struct shpmu_target all_cpus = {.kind = SHPMU_TARGET_CPU,
					     .cpu = SHPMU_ALL_CPUS};

static int budget(struct shpmu_pmu_budget *b, int max)
{
	int n = shpmu_pmu_budget(pmu, b, (size_t)max);

	cr_assert_geq(n, 1, "%d", n);
	cr_assert_leq(n, max);
	return n;
}

Test(budget_model, discovers_the_plain_model)
{
	struct shpmu_pmu_budget b[65];
	int n;

	model("counters=5,fixed=2,watchdog=1,clock=manual");
	n = budget(b, 65);
	cr_expect_eq(n, ncpus + 1);
	for (int i = 0; i < n; i++) {
		cr_expect_str_eq(b[i].pmu, "cpu");
		cr_expect_eq(b[i].type, CORE);
		cr_expect_eq(b[i].cpu, i < ncpus ? i : -1);
		cr_expect_eq(b[i].general, 5);
		cr_expect_eq(b[i].fixed, 2);
		cr_expect_eq(b[i].watchdog, 1);
	}
}

Test(budget_model, discovers_the_hybrid_model)
{
	struct shpmu_pmu_budget b[65];
	int n, core = 0;

	model("hybrid=core:6+atom:4,fixed=3,clock=manual");
	n = budget(b, 65);
	cr_expect_eq(n, ncpus + 2, "every CPU, and a task row per PMU");
	for (int i = 0; i < n; i++) {
		bool is_core = !strcmp(b[i].pmu, "cpu_core");

		cr_expect(is_core || !strcmp(b[i].pmu, "cpu_atom"));
		cr_expect_eq(b[i].type, is_core ? CORE : ATOM);
		cr_expect_eq(b[i].general, is_core ? 6u : 4u);
		cr_expect_eq(b[i].fixed, 3);
		cr_expect_eq(b[i].watchdog, 0);
		if (b[i].cpu >= 0) {
			core += is_core;
			/* The model's own view of which PMU a CPU has. */
			cr_expect_eq(shpmu__pmu_model_counters_in_use(b[i].type,
								      b[i].cpu),
				     0);
		}
	}
	cr_expect_eq(core, ncpus - ncpus / 2, "the first half is cpu_core");
}

/* Every handle ran all the time it was enabled. */
static void expect_no_rotation(const int *h, int n)
{
	struct shpmu_count c;

	for (int i = 0; i < n; i++) {
		cr_assert_eq(shpmu_read(pmu, h[i], &c), 0);
		cr_expect_gt(c.time_enabled, 0);
		cr_expect_eq(c.time_running, c.time_enabled, "handle %d", i);
	}
}

/* 4 general counters, one the watchdog's, 3 fixed: cycles (twice: one
 * kernel event), instructions and three raw events fit; a fourth raw one
 * does not, and the model rotates them. */
Test(budget_model, fits_as_the_model_schedules)
{
	struct perf_event_attr a[7] = {
		attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
		attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
		attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
		attr(PERF_TYPE_RAW, 0x11),
		attr(PERF_TYPE_RAW, 0x12),
		attr(PERF_TYPE_RAW, 0x13),
		attr(PERF_TYPE_RAW, 0x14),
	};
	SHPMU_OPEN_OPTS(o, .flags = SHPMU_OPEN_NO_MULTIPLEX);
	struct shpmu_pmu_budget b[65];
	struct shpmu_count c;
	int h[7], n;

	model("counters=4,fixed=3,watchdog=1,clock=manual,rotate_ms=4");
	for (int i = 0; i < 6; i++) {
		h[i] = shpmu_open_opts(pmu, &a[i], &all_cpus, &o);
		cr_assert_geq(h[i], 0, "event %d: %s", i, last_log);
	}
	n = budget(b, 65);
	for (int cpu = 0; cpu < ncpus; cpu++) {
		cr_expect_eq(b[cpu].used, 5);
		cr_expect_eq(b[cpu].used_fixed, 2);
		cr_expect_eq(b[cpu].wanted, 6);
		cr_expect_eq(b[cpu].saved, 1);
		cr_expect_eq(b[cpu].multiplexing, 0);
		/* The model holds what the budget says, and the watchdog's. */
		cr_expect_eq(shpmu__pmu_model_counters_in_use(CORE, cpu),
			     (int)(b[cpu].used + b[cpu].watchdog));
	}
	cr_expect_eq(b[n - 1].used, 0, "no task event");
	shpmu__pmu_model_advance(10 * MS);
	expect_no_rotation(h, 6);

	/* The fourth raw event: refused with the flag, and nothing of it
	 * reached the model. */
	cr_expect_eq(shpmu_open_opts(pmu, &a[6], &all_cpus, &o), -EBUSY);
	cr_expect(strstr(last_log, "does not fit on PMU cpu, cpu 0"), "%s",
		  last_log);
	cr_expect_eq(shpmu__pmu_model_events_open(), 5u * (unsigned)ncpus);
	/* A shared one is never refused. */
	cr_expect_geq(shpmu_open_opts(pmu, &a[3], &all_cpus, &o), 0);

	/* Without the flag it opens; the budget says it multiplexes, and
	 * the model rotates. */
	h[6] = shpmu_open(pmu, &a[6], &all_cpus);
	cr_assert_geq(h[6], 0, "%s", last_log);
	budget(b, 65);
	for (int cpu = 0; cpu < ncpus; cpu++) {
		cr_expect_eq(b[cpu].used, 6);
		cr_expect_eq(b[cpu].multiplexing, 1);
	}
	shpmu__pmu_model_advance(40 * MS);
	cr_assert_eq(shpmu_read(pmu, h[6], &c), 0);
	cr_expect_lt(c.time_running, c.time_enabled, "the model rotated");
}

/* The events that follow a task share its row; a group takes a counter
 * per member, all or nothing. */
Test(budget_model, task_events_and_groups)
{
	struct perf_event_attr g[3] = {attr(PERF_TYPE_RAW, 0x21),
				       attr(PERF_TYPE_RAW, 0x22),
				       attr(PERF_TYPE_RAW, 0x23)};
	struct perf_event_attr one = attr(PERF_TYPE_RAW, 0x24);
	struct shpmu_target self = self_target();
	SHPMU_OPEN_OPTS(o, .flags = SHPMU_OPEN_NO_MULTIPLEX);
	struct shpmu_pmu_budget b[65];
	int h[2], n;

	model("counters=4,fixed=3,clock=manual");
	h[0] = shpmu_open_group(pmu, g, 3, &self);
	cr_assert_geq(h[0], 0, "%s", last_log);
	h[1] = shpmu_open_opts(pmu, &one, &self, &o);
	cr_assert_geq(h[1], 0, "%s", last_log);
	n = budget(b, 65);
	cr_expect_eq(b[n - 1].cpu, -1);
	cr_expect_eq(b[n - 1].used, 4);
	cr_expect_eq(b[n - 1].multiplexing, 0);
	cr_expect_eq(shpmu__pmu_model_counters_in_use(CORE, -1), 4);
	one.config = 0x25;
	cr_expect_eq(shpmu_open_opts(pmu, &one, &self, &o), -EBUSY);
	cr_expect(strstr(last_log, "follow tasks"), "%s", last_log);
	shpmu__pmu_model_advance(10 * MS);
	expect_no_rotation(h, 2);
}

/* One handle's generic event on a hybrid machine: a model event per CPU
 * on that CPU's PMU, and for a task one per PMU; each PMU's share is the
 * model's rate times its running time. */
Test(budget_model, hybrid_splits_by_pmu)
{
	struct perf_event_attr ins =
		attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	struct shpmu_target self = self_target();
	struct shpmu_count sum, core, atom;
	uint64_t rate = pmu_model_rate(&ins);
	int hc, ht, atom_cpus = ncpus / 2;

	model("hybrid=core:6+atom:4,clock=manual");
	atom_cpus = ncpus / 2;
	cr_assert_geq(atom_cpus, 1, "the hybrid model needs 2 CPUs");
	hc = shpmu_open(pmu, &ins, &all_cpus);
	cr_assert_geq(hc, 0, "%s", last_log);
	ht = shpmu_open(pmu, &ins, &self);
	cr_assert_geq(ht, 0, "%s", last_log);
	for (int cpu = 0; cpu < ncpus; cpu++) {
		bool is_core = cpu < ncpus - atom_cpus;

		cr_expect_eq(shpmu__pmu_model_counters_in_use(
				     is_core ? CORE : ATOM, cpu),
			     1, "cpu %d", cpu);
	}
	cr_expect_eq(shpmu__pmu_model_counters_in_use(CORE, -1), 1);
	cr_expect_eq(shpmu__pmu_model_counters_in_use(ATOM, -1), 1);
	cr_expect_eq(shpmu__pmu_model_events_open(), (unsigned)ncpus + 2);

	shpmu__pmu_model_advance(3 * MS);
	cr_assert_eq(shpmu_read_pmu(pmu, hc, "cpu_core", &core), 0);
	cr_assert_eq(shpmu_read_pmu(pmu, hc, "cpu_atom", &atom), 0);
	cr_assert_eq(shpmu_read(pmu, hc, &sum), 0);
	cr_expect_eq(core.time_running, (uint64_t)(ncpus - atom_cpus) * 3 * MS);
	cr_expect_eq(atom.time_running, (uint64_t)atom_cpus * 3 * MS);
	cr_expect_eq(core.value, rate * core.time_running);
	cr_expect_eq(atom.value, rate * atom.time_running);
	cr_expect_eq(sum.value, core.value + atom.value);

	cr_assert_eq(shpmu_read_pmu(pmu, ht, "cpu_core", &core), 0);
	cr_assert_eq(shpmu_read_pmu(pmu, ht, "cpu_atom", &atom), 0);
	cr_assert_eq(shpmu_read(pmu, ht, &sum), 0);
	cr_expect_eq(core.value, rate * core.time_running);
	cr_expect_eq(atom.value, rate * atom.time_running);
	cr_expect_gt(core.value, 0);
	cr_expect_eq(sum.value, core.value + atom.value);
	/* Each PMU's source was enabled the task's whole window; the task
	 * was enabled once. (The model runs it on both PMUs at once, which
	 * no task does: running is not checked against enabled here.) */
	cr_expect_eq(core.time_enabled, 3 * MS);
	cr_expect_eq(atom.time_enabled, 3 * MS);
	cr_expect_eq(sum.time_enabled, 3 * MS, "enabled once, not per PMU");
	cr_expect_eq(shpmu_read_pmu(pmu, ht, "cpu", &core), -ENOENT);
}

/* The calling process's threads (Criterion's among them). */
static unsigned int thread_count(void)
{
	struct dirent *d;
	unsigned int n = 0;
	DIR *dir = opendir("/proc/self/task");

	cr_assert(dir);
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

/* A process bound to one CPU runs on that CPU's PMU only: one source a
 * thread, not one per PMU type. */
Test(budget_model, hybrid_process_on_one_cpu_is_not_split)
{
	struct perf_event_attr ins =
		attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	struct shpmu_target proc = {.kind = SHPMU_TARGET_PROCESS,
				    .cpu = 0,
				    .flags = SHPMU_TARGET_BIND_CPU};
	unsigned int before, threads;

	model("hybrid=core:6+atom:4,clock=manual");
	threads = thread_count();
	before = shpmu__pmu_model_events_open();
	cr_assert_geq(shpmu_open(pmu, &ins, &proc), 0, "%s", last_log);
	cr_expect_eq(shpmu__pmu_model_events_open(), before + threads,
		     "a source a thread: %u for %u threads",
		     shpmu__pmu_model_events_open() - before, threads);
	cr_expect_eq(shpmu__pmu_model_counters_in_use(CORE, -1), (int)threads);
	cr_expect_eq(shpmu__pmu_model_counters_in_use(ATOM, -1), 0);
}
