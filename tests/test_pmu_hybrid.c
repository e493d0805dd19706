// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Hybrid CPUs in every build, on the fake machine of fake_pmus.h: a
 * generic hardware event is opened on each CPU with that CPU's PMU type as
 * extended type, on a task or process once per PMU type, read as one
 * handle with a share per PMU; on a machine with one core PMU the attr is
 * opened as given. test_pmu_budget_model.c checks the counts against the
 * PMU model.
 */
#include <criterion/criterion.h>

#include "fake_pmus.h"
#include "helpers.h"

static const struct shpmu_target all_cpus = {.kind = SHPMU_TARGET_CPU,
					     .cpu = SHPMU_ALL_CPUS};

TestSuite(hybrid, .init = fake_pmus_machine_check);

static int opened_on(uint32_t type, uint32_t ext, int cpu)
{
	int n = 0;

	for (int i = 0; i < fake_nopened; i++)
		n += fake_opened[i].type == type &&
		     (uint32_t)(fake_opened[i].config >> 32) == ext &&
		     fake_opened[i].cpu == cpu;
	return n;
}

Test(hybrid, hybrid_splits_a_generic_event_by_pmu)
{
	struct shpmu *p = fake_context(&fake_hybrid, NULL);
	struct perf_event_attr cycles = fake_hw(PERF_COUNT_HW_CPU_CYCLES);
	struct perf_event_attr on_atom = cycles;
	struct shpmu_target self = self_target();
	struct shpmu_pmu_budget b[4];
	struct shpmu_count c, core, atom;
	int hc, ht, ha;

	hc = shpmu_open(p, &cycles, &all_cpus);
	cr_assert_geq(hc, 0, "%s", last_log);
	cr_expect_eq(opened_on(PERF_TYPE_HARDWARE, 4, 0), 1);
	cr_expect_eq(opened_on(PERF_TYPE_HARDWARE, 10, 1), 1);
	ht = shpmu_open(p, &cycles, &self);
	cr_assert_geq(ht, 0, "%s", last_log);
	cr_expect_eq(opened_on(PERF_TYPE_HARDWARE, 4, -1), 1);
	cr_expect_eq(opened_on(PERF_TYPE_HARDWARE, 10, -1), 1);
	cr_expect_eq(fake_nopened, 4);
	/* An extended type the caller gave is kept: cpu_atom's on both. */
	on_atom.config |= (uint64_t)10 << 32;
	ha = shpmu_open(p, &on_atom, &self);
	cr_assert_geq(ha, 0, "%s", last_log);
	cr_expect_eq(opened_on(PERF_TYPE_HARDWARE, 10, -1), 2);
	fake_budget(p, b, 4);
	cr_expect_eq(b[0].used, 1, "cpu_core on cpu 0");
	cr_expect_eq(b[1].used, 1, "cpu_core's task row: the split task");
	cr_expect_eq(b[2].used, 1, "cpu_atom on cpu 1");
	cr_expect_eq(b[3].used, 2,
		     "cpu_atom's task row: the split task's "
		     "and the one on cpu_atom");
	cr_expect_eq(b[3].used_fixed, 1, "one cycles on the fixed counter");
	/* Per PMU, and summed. */
	burn_cpu_ns(2000000);
	cr_expect_eq(shpmu_read_pmu(p, ht, "cpu_core", &core), 0);
	cr_expect_eq(shpmu_read_pmu(p, ht, "cpu_atom", &atom), 0);
	cr_expect_eq(shpmu_read(p, ht, &c), 0);
	cr_expect_geq(c.value, core.value + atom.value);
	cr_expect_gt(core.value, 0, "the stand-in counts wherever it runs");
	cr_expect_eq(shpmu_read_pmu(p, ha, "cpu_core", &c), -ENOENT);
	cr_expect_eq(shpmu_read_pmu(p, ht, "cpu", &c), -ENOENT);
	/* A split task handle has no CPU sources. */
	cr_expect_eq(shpmu_read_cpu(p, ht, -1, &c), -ENOENT);
	cr_expect_eq(shpmu_read_pmu(p, hc, "cpu_atom", &c), 0);
	cr_expect_eq(shpmu_read_cpu(p, hc, 1, &core), 0);
	shpmu_free(p);
}

/* A process: an event per thread and PMU type; the task row counts the
 * process once per PMU, whatever its threads. */
Test(hybrid, hybrid_splits_a_process_by_pmu)
{
	struct shpmu *p = fake_context(&fake_hybrid, NULL);
	struct perf_event_attr ins = fake_hw(PERF_COUNT_HW_INSTRUCTIONS);
	struct shpmu_target proc = {.kind = SHPMU_TARGET_PROCESS, .cpu = -1};
	struct shpmu_pmu_budget b[4];
	struct shpmu_count core, atom, sum;
	int h, core_fds = 0, atom_fds = 0;

	h = shpmu_open(p, &ins, &proc);
	cr_assert_geq(h, 0, "%s", last_log);
	for (int i = 0; i < fake_nopened; i++) {
		core_fds += fake_opened[i].config >> 32 == 4;
		atom_fds += fake_opened[i].config >> 32 == 10;
	}
	cr_expect_geq(core_fds, 1);
	cr_expect_eq(core_fds, atom_fds, "a pair per thread");
	cr_expect_eq(core_fds + atom_fds, fake_nopened);
	fake_budget(p, b, 4);
	cr_expect_eq(b[1].used, 1);
	cr_expect_eq(b[3].used, 1);
	cr_expect_eq(b[0].used + b[2].used, 0);
	burn_cpu_ns(1000000);
	cr_expect_eq(shpmu_read_pmu(p, h, "cpu_core", &core), 0);
	cr_expect_eq(shpmu_read_pmu(p, h, "cpu_atom", &atom), 0);
	cr_expect_eq(shpmu_read(p, h, &sum), 0);
	cr_expect_gt(core.value, 0);
	cr_expect_geq(sum.value, core.value + atom.value);
	shpmu_free(p);
}

/* Not hybrid: the attr is opened as given, so the sharing key and the
 * kernel events are what they were. */
Test(hybrid, plain_pmu_keeps_the_attr)
{
	struct shpmu *p = fake_context(&fake_plain, NULL);
	struct perf_event_attr cycles = fake_hw(PERF_COUNT_HW_CPU_CYCLES);
	struct shpmu_target self = self_target();
	struct shpmu_count c;
	int h;

	cr_assert_geq(shpmu_open(p, &cycles, &all_cpus), 0);
	h = shpmu_open(p, &cycles, &self);
	cr_assert_geq(h, 0);
	cr_expect_eq(fake_nopened, 3);
	cr_expect_eq(opened_on(PERF_TYPE_HARDWARE, 0, 0), 1);
	cr_expect_eq(opened_on(PERF_TYPE_HARDWARE, 0, 1), 1);
	cr_expect_eq(opened_on(PERF_TYPE_HARDWARE, 0, -1), 1);
	cr_expect_eq(shpmu_read_pmu(p, h, "cpu", &c), 0);
	cr_expect_eq(shpmu_read_cpu(p, h, -1, &c), 0);
	shpmu_free(p);
}
