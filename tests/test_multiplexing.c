// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Multiplexing end to end, on the PMU model with a manual clock: more
 * events than counters rotate, and every handle's window must carry the
 * model's truth exactly (model_twin.h), through every read call, at every
 * millisecond of several rotation periods. Then shpmu_scale's edges, a
 * pinned event in error state, an exclusive group that cannot go on, and
 * shared events that cost one counter.
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "helpers.h"
#include "model_twin.h"

#define MS	   1000000ull
#define CYCLES	   0 /* rate 1 */
#define INSNS	   1 /* rate 2 */
#define CACHE_MISS 3 /* rate 4 */
#define BRANCHES   4 /* rate 5 */
/* Two counters for three or four events, rotating every 4 ms. */
#define ROTATING "counters=2,fixed=0,rotate_ms=4,clock=manual"

static struct shpmu *pmu;

static void teardown(void)
{
	if (pmu)
		model_context_free(pmu);
	pmu = NULL;
}

TestSuite(multiplexing, .fini = teardown);

/* What shpmu_scale must give for a window of an event of this rate: the
 * model counts rate per ns running, so value * enabled / running is
 * rate * enabled exactly. */
static uint64_t scaled_truth(const struct shpmu_count *c, uint64_t rate)
{
	return c->time_running ? rate * c->time_enabled : 0;
}

static bool multiplexed(const struct shpmu_count *c)
{
	return c->time_running && c->time_running < c->time_enabled;
}

/* Every read call on each twin's handle against the truth. */
static void check_all(struct twin *t, const uint64_t *rate, int n, int step,
		      bool *seen_mux)
{
	struct shpmu_count got, want[8], many[8];
	int hs[8];

	for (int i = 0; i < n; i++) {
		char what[64];

		want[i] = twin_expect(&t[i]);
		hs[i] = t[i].h;
		snprintf(what, sizeof(what), "shpmu_read of handle %d", i);
		cr_assert_eq(shpmu_read(pmu, t[i].h, &got), 0);
		expect_count(&got, &want[i], what, step);
		cr_expect_eq(shpmu_scale(&got), scaled_truth(&want[i], rate[i]),
			     "shpmu_scale of handle %d at %d ms", i, step);
		snprintf(what, sizeof(what), "shpmu_read_cpu of handle %d", i);
		cr_assert_eq(shpmu_read_cpu(pmu, t[i].h, -1, &got), 0);
		expect_count(&got, &want[i], what, step);
		seen_mux[i] |= multiplexed(&want[i]);
	}
	cr_assert_eq(shpmu_read_many(pmu, hs, (size_t)n, many), 0);
	for (int i = 0; i < n; i++)
		expect_count(&many[i], &want[i], "shpmu_read_many", step);
}

/* Three events on two counters, and a fourth handle sharing the first's
 * kernel event with windows of its own: enabled mid-rotation, disabled,
 * enabled again, reset; the others disabled, enabled and reset too. */
Test(multiplexing, windows_carry_the_models_times_at_every_phase)
{
	struct perf_event_attr a = hw_attr(CYCLES, false);
	struct perf_event_attr b = hw_attr(INSNS, false);
	struct perf_event_attr c = hw_attr(CACHE_MISS, false);
	struct perf_event_attr d = hw_attr(CYCLES, true);
	struct shpmu_target self = self_target();
	const uint64_t rate[4] = {1, 2, 4, 1};
	bool seen_mux[4] = {false};
	struct twin t[4];
	int h[4];

	pmu = model_context(ROTATING, 0);
	h[0] = shpmu_open(pmu, &a, &self);
	h[1] = shpmu_open(pmu, &b, &self);
	h[2] = shpmu_open(pmu, &c, &self);
	h[3] = shpmu_open(pmu, &d, &self);
	t[0] = twin_of(pmu, h[0], model_opens[0].fd, true);
	t[1] = twin_of(pmu, h[1], model_opens[1].fd, true);
	t[2] = twin_of(pmu, h[2], model_opens[2].fd, true);
	t[3] = twin_of(pmu, h[3], model_opens[0].fd, false);
	cr_assert_eq(model_nopens, 3, "the fourth handle shares the first's");
	for (int ms = 1; ms <= 64; ms++) {
		shpmu__pmu_model_advance(MS);
		if (ms == 5 || ms == 14)
			twin_enable(&t[3]);
		if (ms == 9)
			twin_disable(&t[3]);
		if (ms == 20)
			twin_reset(&t[3]);
		if (ms == 27)
			twin_disable(&t[0]); /* its event stays on for t[3] */
		if (ms == 33)
			twin_enable(&t[0]);
		if (ms == 41)
			twin_reset(&t[1]);
		if (ms == 45)
			twin_disable(&t[2]); /* two events left: no rotation */
		if (ms == 51)
			twin_enable(&t[2]);
		if (ms == 58)
			twin_enable(&t[1]); /* already enabled: nothing moves */
		check_all(t, rate, 4, ms, seen_mux);
	}
	for (int i = 0; i < 4; i++)
		cr_expect(seen_mux[i], "handle %d was multiplexed at times", i);
}

/* A group needs both counters: it runs alone, or the two single events
 * run, in turn. Members read together carry the group's times. */
Test(multiplexing, groups_and_their_members_at_every_phase)
{
	struct perf_event_attr g[2] = {hw_attr(CYCLES, false),
				       hw_attr(INSNS, false)};
	struct perf_event_attr s1 = hw_attr(CACHE_MISS, false);
	struct perf_event_attr s2 = hw_attr(BRANCHES, false);
	struct shpmu_target self = self_target();
	const uint64_t rate[3] = {1, 4, 5};
	bool seen_mux[3] = {false}, group_mux = false;
	struct shpmu_count got[2], want[2];
	struct twin t[3], member;
	int h[3];

	pmu = model_context(ROTATING, 0);
	h[0] = shpmu_open_group(pmu, g, 2, &self);
	h[1] = shpmu_open(pmu, &s1, &self);
	h[2] = shpmu_open(pmu, &s2, &self);
	t[0] = twin_of(pmu, h[0], model_opens[0].fd, true);
	member = twin_of(pmu, h[0], model_opens[1].fd, true);
	cr_assert_eq(model_opens[1].group_fd, model_opens[0].fd);
	t[1] = twin_of(pmu, h[1], model_opens[2].fd, true);
	t[2] = twin_of(pmu, h[2], model_opens[3].fd, true);
	for (int ms = 1; ms <= 48; ms++) {
		shpmu__pmu_model_advance(MS);
		if (ms == 13)
			twin_reset(&t[0]), twin_reset(&member);
		check_all(t, rate, 3, ms, seen_mux);
		want[0] = twin_expect(&t[0]);
		want[1] = twin_expect(&member);
		/* The group's times are the leader's. */
		cr_expect_eq(want[1].time_running, want[0].time_running,
			     "all or nothing at %d ms", ms);
		want[1].time_enabled = want[0].time_enabled;
		want[1].time_running = want[0].time_running;
		cr_assert_eq(shpmu_read_group(pmu, t[0].h, got, 2), 0);
		expect_count(&got[0], &want[0], "group leader", ms);
		expect_count(&got[1], &want[1], "group member", ms);
		cr_expect_eq(shpmu_scale(&got[1]), scaled_truth(&want[1], 2),
			     "member scaled");
		group_mux |= multiplexed(&got[1]);
	}
	cr_expect(group_mux && seen_mux[1] && seen_mux[2],
		  "the group and the single events took turns");
}

/* CPU-wide events: each CPU rotates its own; shpmu_read_cpu gives each
 * CPU's window, shpmu_read their sum. */
Test(multiplexing, every_cpu_rotates_and_reads_on_its_own)
{
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	const uint64_t configs[3] = {CYCLES, INSNS, CACHE_MISS};
	int ncpus = online_cpus(), h[3], cpu[3][8];
	struct twin t[3][8];
	bool mux = false;

	cr_assert_leq(ncpus, 8);
	pmu = model_context(ROTATING, 0);
	for (int e = 0; e < 3; e++) {
		struct perf_event_attr a = hw_attr(configs[e], false);
		int first = model_nopens;

		h[e] = shpmu_open(pmu, &a, &all);
		cr_assert_eq(model_nopens, first + ncpus, "one event a CPU");
		for (int i = 0; i < ncpus; i++) {
			t[e][i] = twin_of(pmu, h[e], model_opens[first + i].fd,
					  true);
			cpu[e][i] = model_opens[first + i].cpu;
		}
	}
	for (int ms = 1; ms <= 40; ms++) {
		shpmu__pmu_model_advance(MS);
		for (int e = 0; e < 3; e++) {
			struct shpmu_count got, sum = {0};

			for (int i = 0; i < ncpus; i++) {
				struct shpmu_count want = twin_expect(&t[e][i]);

				cr_assert_eq(shpmu_read_cpu(pmu, h[e],
							    cpu[e][i], &got),
					     0);
				expect_count(&got, &want, "shpmu_read_cpu", ms);
				sum.value += want.value;
				sum.time_enabled += want.time_enabled;
				sum.time_running += want.time_running;
				mux |= multiplexed(&want);
			}
			cr_assert_eq(shpmu_read(pmu, h[e], &got), 0);
			expect_count(&got, &sum, "shpmu_read over CPUs", ms);
			cr_expect_eq(shpmu_scale(&got),
				     scaled_truth(&sum, configs[e] + 1));
		}
	}
	cr_expect(mux, "the CPUs multiplexed");
}

/* Two consumers of one attr: one model event, one counter. */
Test(multiplexing, shared_events_cost_one_counter)
{
	struct perf_event_attr a = hw_attr(CYCLES, false);
	struct perf_event_attr b = hw_attr(INSNS, false);
	struct shpmu_target self = self_target();

	pmu = model_context(ROTATING, 0);
	cr_assert_geq(shpmu_open(pmu, &a, &self), 0);
	cr_assert_geq(shpmu_open(pmu, &a, &self), 0);
	cr_expect_eq(shpmu__pmu_model_events_open(), 1);
	cr_expect_eq(shpmu__pmu_model_counters_in_use(PMU_MODEL_TYPE_FIRST, -1),
		     1);
	cr_assert_geq(shpmu_open(pmu, &b, &self), 0);
	cr_expect_eq(shpmu__pmu_model_events_open(), 2);
	cr_expect_eq(shpmu__pmu_model_counters_in_use(PMU_MODEL_TYPE_FIRST, -1),
		     2);
}

/* The baseline the sharing is measured against: without it the same
 * two consumers cost two counters. */
Test(multiplexing, without_sharing_two_consumers_cost_two_counters)
{
	struct perf_event_attr a = hw_attr(CYCLES, false);
	struct shpmu_target self = self_target();

	pmu = model_context(ROTATING, SHPMU_F_NO_SHARING);
	cr_assert_geq(shpmu_open(pmu, &a, &self), 0);
	cr_assert_geq(shpmu_open(pmu, &a, &self), 0);
	cr_expect_eq(shpmu__pmu_model_events_open(), 2);
	cr_expect_eq(shpmu__pmu_model_counters_in_use(PMU_MODEL_TYPE_FIRST, -1),
		     2);
}

Test(multiplexing, scale_at_its_edges)
{
	struct shpmu_count c = {.value = 1000};
	unsigned __int128 want;

	cr_expect_eq(shpmu_scale(NULL), 0);
	cr_expect_eq(shpmu_scale(&c), 0, "never ran, never enabled");
	c.time_enabled = 5;
	cr_expect_eq(shpmu_scale(&c), 0, "enabled, never ran");
	c.time_running = 5;
	cr_expect_eq(shpmu_scale(&c), 1000, "ran all the time");
	c.time_running = 7; /* running past enabled: no scaling up */
	cr_expect_eq(shpmu_scale(&c), 1000);
	c = (struct shpmu_count){
		.value = 1000, .time_enabled = 3, .time_running = 2};
	cr_expect_eq(shpmu_scale(&c), 1500);
	c.value = 1001; /* rounds down: 1501.5 */
	cr_expect_eq(shpmu_scale(&c), 1501);
	/* Near 2^64: the product needs 128 bits, the result does not. */
	c = (struct shpmu_count){.value = UINT64_MAX - 10,
				 .time_enabled = UINT64_MAX - 1,
				 .time_running = UINT64_MAX - 2};
	cr_expect_eq(shpmu_scale(&c), UINT64_MAX - 10);
	/* (2^64 - 2)^2 / (2^64 - 3) rounds down to 2^64 - 1: still fits. */
	c.value = UINT64_MAX - 1;
	cr_expect_eq(shpmu_scale(&c), UINT64_MAX);
	c = (struct shpmu_count){.value = UINT64_MAX / 3,
				 .time_enabled = UINT64_MAX,
				 .time_running = UINT64_MAX / 2};
	want = (unsigned __int128)c.value * c.time_enabled / c.time_running;
	cr_expect_eq(shpmu_scale(&c), (uint64_t)want);
	/* A result past 2^64 saturates. */
	c = (struct shpmu_count){.value = UINT64_MAX - 5,
				 .time_enabled = 1000,
				 .time_running = 999};
	cr_expect_eq(shpmu_scale(&c), UINT64_MAX);
	c.time_running = 1;
	cr_expect_eq(shpmu_scale(&c), UINT64_MAX);
}
