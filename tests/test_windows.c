// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Each handle reports only its own enabled windows (the dup_count scheme). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "helpers.h"
#include "twin.h"

#define WINDOW_NS 150000000ull /* 150 ms of CPU time per window */

static struct shpmu *pmu;

static void setup(void)
{
	pmu = shpmu_new(NULL);
	cr_assert(pmu);
}

static void teardown(void)
{
	shpmu_free(pmu);
	cr_expect_eq(count_perf_fds(), 0);
}

TestSuite(windows, .init = setup, .fini = teardown);

static struct shpmu_count rd(int h)
{
	struct shpmu_count c;
	int err = shpmu_read(pmu, h, &c);

	cr_assert_eq(err, 0, "read %d: %s", h, strerror(-err));
	return c;
}

static int open_self(uint64_t config, bool disabled)
{
	struct perf_event_attr a = sw_attr(config, disabled);
	struct shpmu_target t = self_target();
	int h = shpmu_open(pmu, &a, &t);

	cr_assert_geq(h, 0, "open: %s", strerror(-h));
	return h;
}

/* Whether a gap is within its limit (ten times that under valgrind). */
static bool tight(uint64_t gap, uint64_t limit)
{
	return gap <= (under_valgrind ? 10 : 1) * limit;
}

/*
 * The tolerance between a handle and its twins on the calling thread's
 * task-clock: the CPU time of the handle's calls at two edges, a few us
 * each in a plain build. 1 ms leaves a hundred times that for a
 * sanitizer's slower calls. A try whose gap holds more (a host's steal
 * burst, which task-clock counts, landing in a gap) is measured again.
 */
#define TASK_GAP_NS 1000000ull
/* On a CPU's cpu-clock the gap is wall time: the calls, plus whatever
 * preempted the test between them on a machine shared with other suites
 * (a scheduler slice is a few ms). A try with more is measured again. */
#define CPU_GAP_NS 4000000ull
#define TRIES	   5
/*
 * A CPU's cpu-clock is not one clock for all its events, as a task's
 * task-clock is: each event reads local_clock() for itself whenever the
 * CPU's context is stopped and restarted (an enable there, a switch
 * between cgroups that other suites count), so each restart drops a
 * slightly different sliver from each, and the slivers add up with the
 * restarts. Beside other suites (load average 100 to 300) we saw values
 * up to 0.1% (1 ms in 1 s) outside their twins, the twins crossed;
 * allowed: 1% of the window. time_enabled follows the context's time,
 * one clock: exact.
 */
#define CPU_CLOCK_GIVE(ns) ((ns) / 100 * (under_valgrind ? 10 : 1))

/* Enable A, work, enable B, work, disable A, work: A saw windows 1+2, B saw
 * 2+3. For a task event, task-clock and time_enabled both follow the
 * thread's task-clock. */
Test(windows, two_handles_report_their_own_windows)
{
	bool ok = false;

	for (int attempt = 0; attempt < TRIES && !ok; attempt++) {
		int a = open_self(PERF_COUNT_SW_TASK_CLOCK, true);
		int b = open_self(PERF_COUNT_SW_TASK_CLOCK, true);

		cr_expect_eq(count_perf_fds(), 1, "A and B share one event");
		struct twin ta = twin_open(PERF_COUNT_SW_TASK_CLOCK, 0, -1);
		struct twin tb = twin_open(PERF_COUNT_SW_TASK_CLOCK, 0, -1);
		struct shpmu_count ca, cb;

		twin_before_open(&ta);
		cr_assert_eq(shpmu_enable(pmu, a), 0);
		twin_after_open(&ta);
		burn_cpu_ns(WINDOW_NS);
		twin_before_open(&tb);
		cr_assert_eq(shpmu_enable(pmu, b), 0);
		twin_after_open(&tb);
		burn_cpu_ns(WINDOW_NS);
		twin_before_close(&ta, true);
		cr_assert_eq(shpmu_disable(pmu, a), 0);
		twin_after_close(&ta, true);
		burn_cpu_ns(WINDOW_NS);
		twin_before_close(&tb, true);
		cr_assert_eq(shpmu_disable(pmu, b), 0);
		twin_after_close(&tb, true);
		burn_cpu_ns(WINDOW_NS / 3); /* neither may count this */

		ca = rd(a);
		cb = rd(b);
		ok = tight(expect_twin(ca.value, &ta, 0, "A value"),
			   TASK_GAP_NS);
		ok &= tight(
			expect_twin(ca.time_enabled, &ta, 1, "A time_enabled"),
			TASK_GAP_NS);
		ok &= tight(expect_twin(cb.value, &tb, 0, "B value"),
			    TASK_GAP_NS);
		ok &= tight(
			expect_twin(cb.time_enabled, &tb, 1, "B time_enabled"),
			TASK_GAP_NS);
		cr_expect_eq(ca.time_running, ca.time_enabled, "A multiplexed");
		cr_expect_eq(cb.time_running, cb.time_enabled, "B multiplexed");
		twin_close(&ta);
		twin_close(&tb);
		shpmu_close(pmu, a);
		shpmu_close(pmu, b);
	}
	cr_expect(ok, "every try's twins were more than %llu ns apart",
		  TASK_GAP_NS);
}

/* A CPU-wide cpu-clock: value and time_enabled follow the CPU's clock
 * while each handle is enabled, which twins on the same CPU measure. */
Test(windows, cpu_target_windows_follow_the_cpus_clock)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_CPU_CLOCK, true);
	struct shpmu_target cpu0 = {.kind = SHPMU_TARGET_CPU,
				    .cpu = 0,
				    .flags = SHPMU_TARGET_BIND_CPU};
	bool ok = false;

	for (int attempt = 0; attempt < TRIES && !ok; attempt++) {
		int a = shpmu_open(pmu, &attr, &cpu0);
		int b = shpmu_open(pmu, &attr, &cpu0);
		struct twin ta = twin_open(PERF_COUNT_SW_CPU_CLOCK, -1, 0);
		struct twin tb = twin_open(PERF_COUNT_SW_CPU_CLOCK, -1, 0);
		struct shpmu_count ca, cb;
		uint64_t burn0, burn1;

		cr_assert_geq(a, 0);
		cr_assert_geq(b, 0);
		/* The work is time passing on CPU 0, whatever runs there. */
		twin_before_open(&ta);
		cr_assert_eq(shpmu_enable(pmu, a), 0);
		twin_after_open(&ta);
		burn0 = thread_cpu_ns();
		burn_cpu_ns(WINDOW_NS / 2);
		twin_before_open(&tb);
		cr_assert_eq(shpmu_enable(pmu, b), 0);
		twin_after_open(&tb);
		burn_cpu_ns(WINDOW_NS / 2);
		burn1 = thread_cpu_ns();
		twin_before_close(&ta, true);
		cr_assert_eq(shpmu_disable(pmu, a), 0);
		twin_after_close(&ta, true);
		burn_cpu_ns(WINDOW_NS / 2);
		twin_before_close(&tb, true);
		cr_assert_eq(shpmu_disable(pmu, b), 0);
		twin_after_close(&tb, true);
		burn_cpu_ns(WINDOW_NS / 6); /* neither may count this */

		ca = rd(a);
		cb = rd(b);
		/* The gaps are judged on time_enabled (see CPU_CLOCK_GIVE). */
		expect_twin_give(ca.value, &ta, 0, CPU_CLOCK_GIVE(ta.o[0]),
				 "A value");
		expect_twin_give(cb.value, &tb, 0, CPU_CLOCK_GIVE(tb.o[0]),
				 "B value");
		ok = tight(
			expect_twin(ca.time_enabled, &ta, 1, "A time_enabled"),
			CPU_GAP_NS);
		ok &= tight(
			expect_twin(cb.time_enabled, &tb, 1, "B time_enabled"),
			CPU_GAP_NS);
		/* Order of magnitude: CPU 0's clock (wall time there) ran at
		 * least about as long as this thread burned CPU inside A's
		 * window, on a clock that is not perf's (under a load average
		 * of 300 we saw them 17% apart): half is a miss. */
		cr_expect_geq(ca.value, (burn1 - burn0) / 2,
			      "A below the burn inside it");
		twin_close(&ta);
		twin_close(&tb);
		shpmu_close(pmu, a);
		shpmu_close(pmu, b);
	}
	cr_expect(ok, "every try's twins were more than %llu ns apart",
		  CPU_GAP_NS);
}

Test(windows, a_disabled_handle_counts_nothing_until_enabled)
{
	int h = open_self(PERF_COUNT_SW_TASK_CLOCK, true);
	struct twin t = twin_open(PERF_COUNT_SW_TASK_CLOCK, 0, -1);
	struct shpmu_count c;

	burn_cpu_ns(WINDOW_NS / 5);
	c = rd(h);
	cr_expect_eq(c.value, 0);
	cr_expect_eq(c.time_enabled, 0);
	twin_before_open(&t);
	cr_assert_eq(shpmu_enable(pmu, h), 0);
	twin_after_open(&t);
	burn_cpu_ns(WINDOW_NS / 5);
	twin_before_close(&t, false);
	c = rd(h);
	twin_after_close(&t, false);
	/* Exact bounds (see expect_twin); the gap is not judged here. */
	expect_twin(c.value, &t, 0, "value since the enable");
	expect_twin(c.time_enabled, &t, 1, "time_enabled");
	cr_expect_gt(t.i[0], 0, "the twin counted nothing");
	twin_close(&t);
}

Test(windows, enable_and_disable_are_idempotent)
{
	struct twin t = twin_open(PERF_COUNT_SW_TASK_CLOCK, 0, -1);
	struct shpmu_count frozen, later;
	int h;

	twin_before_open(&t);
	h = open_self(PERF_COUNT_SW_TASK_CLOCK, false);
	twin_after_open(&t);
	/* Enabled already: no new window starts (the twin's in fd, enabled
	 * before this call, would then be ahead of the handle). */
	cr_assert_eq(shpmu_enable(pmu, h), 0);
	burn_cpu_ns(WINDOW_NS / 5);
	twin_before_close(&t, true);
	cr_assert_eq(shpmu_disable(pmu, h), 0);
	twin_after_close(&t, true);
	cr_assert_eq(shpmu_disable(pmu, h), 0);
	frozen = rd(h);
	expect_twin(frozen.value, &t, 0, "value");
	expect_twin(frozen.time_enabled, &t, 1, "time_enabled");
	burn_cpu_ns(WINDOW_NS / 5);
	later = rd(h);
	cr_expect_eq(later.value, frozen.value);
	cr_expect_eq(later.time_enabled, frozen.time_enabled);
	twin_close(&t);
}

Test(windows, reset_zeroes_one_handle_and_leaves_the_other)
{
	bool ok = false;

	for (int attempt = 0; attempt < TRIES && !ok; attempt++) {
		/* ta starts at A's reset, tb at B's open. */
		struct twin ta = twin_open(PERF_COUNT_SW_TASK_CLOCK, 0, -1);
		struct twin tb = twin_open(PERF_COUNT_SW_TASK_CLOCK, 0, -1);
		int a = open_self(PERF_COUNT_SW_TASK_CLOCK, false), b;
		struct shpmu_count ca, cb;

		twin_before_open(&tb);
		b = open_self(PERF_COUNT_SW_TASK_CLOCK, false);
		twin_after_open(&tb);
		burn_cpu_ns(WINDOW_NS);
		twin_before_open(&ta);
		cr_assert_eq(shpmu_reset(pmu, a), 0);
		twin_after_open(&ta);
		burn_cpu_ns(WINDOW_NS);
		twin_before_close(&ta, false);
		twin_before_close(&tb, false);
		ca = rd(a);
		cb = rd(b);
		twin_after_close(&ta, false);
		twin_after_close(&tb, false);
		ok = tight(expect_twin(ca.value, &ta, 0, "A since its reset"),
			   TASK_GAP_NS);
		ok &= tight(expect_twin(ca.time_enabled, &ta, 1,
					"A's times reset too"),
			    TASK_GAP_NS);
		ok &= tight(expect_twin(cb.value, &tb, 0,
					"B unaffected by A's reset"),
			    TASK_GAP_NS);
		ok &= tight(expect_twin(cb.time_enabled, &tb, 1,
					"B's times unaffected"),
			    TASK_GAP_NS);
		twin_close(&ta);
		twin_close(&tb);
		shpmu_close(pmu, a);
		shpmu_close(pmu, b);
	}
	cr_expect(ok, "every try's twins were more than %llu ns apart",
		  TASK_GAP_NS);
}

Test(windows, reset_of_a_disabled_handle_keeps_it_at_zero)
{
	int h = open_self(PERF_COUNT_SW_TASK_CLOCK, false);

	burn_cpu_ns(WINDOW_NS / 5);
	cr_assert_eq(shpmu_disable(pmu, h), 0);
	cr_assert_eq(shpmu_reset(pmu, h), 0);
	burn_cpu_ns(WINDOW_NS / 5);
	cr_expect_eq(rd(h).value, 0);
	cr_expect_eq(rd(h).time_enabled, 0);
}

/* B's count goes on across A's close: read just before and just after it,
 * each reading lies between B's twins read at the same moment. */
Test(windows, closing_the_first_opener_leaves_the_other_continuous)
{
	bool ok = false;

	for (int attempt = 0; attempt < TRIES && !ok; attempt++) {
		int a = open_self(PERF_COUNT_SW_TASK_CLOCK, false), b;
		struct twin t = twin_open(PERF_COUNT_SW_TASK_CLOCK, 0, -1);
		uint64_t before, after, total;

		twin_before_open(&t);
		b = open_self(PERF_COUNT_SW_TASK_CLOCK, false);
		twin_after_open(&t);
		cr_expect_eq(count_perf_fds(), 1 + 2, "A and B share one fd");
		burn_cpu_ns(WINDOW_NS);
		twin_before_close(&t, false);
		before = rd(b).value;
		twin_after_close(&t, false);
		ok = tight(expect_twin(before, &t, 0, "B before"), TASK_GAP_NS);
		cr_assert_eq(shpmu_close(pmu, a), 0);
		cr_expect_eq(count_perf_fds(), 1 + 2,
			     "B keeps the kernel event open");
		twin_before_close(&t, false);
		after = rd(b).value;
		twin_after_close(&t, false);
		/* A jump (or a step back) at A's close puts B outside. */
		ok &= tight(expect_twin(after, &t, 0, "B just after A closed"),
			    TASK_GAP_NS);
		cr_expect_geq(after, before, "B went backwards when A closed");
		burn_cpu_ns(WINDOW_NS);
		twin_before_close(&t, false);
		total = rd(b).value;
		twin_after_close(&t, false);
		ok &= tight(expect_twin(total, &t, 0, "B total"), TASK_GAP_NS);
		cr_assert_eq(shpmu_close(pmu, b), 0);
		cr_expect_eq(count_perf_fds(), 2,
			     "the last close closes the fd (the twins stay)");
		twin_close(&t);
	}
	cr_expect(ok, "every try's twins were more than %llu ns apart",
		  TASK_GAP_NS);
}

Test(windows, a_disabled_sharer_stays_frozen_while_another_counts)
{
	struct twin ta = twin_open(PERF_COUNT_SW_TASK_CLOCK, 0, -1);
	struct twin tb = twin_open(PERF_COUNT_SW_TASK_CLOCK, 0, -1);
	struct shpmu_count frozen, later, mid, cb;
	uint64_t tb_mid[3];
	int a, b;

	twin_before_open(&ta);
	a = open_self(PERF_COUNT_SW_TASK_CLOCK, false);
	twin_after_open(&ta);
	twin_before_open(&tb);
	b = open_self(PERF_COUNT_SW_TASK_CLOCK, false);
	twin_after_open(&tb);
	burn_cpu_ns(WINDOW_NS / 5);
	twin_before_close(&ta, true);
	cr_assert_eq(shpmu_disable(pmu, a), 0);
	twin_after_close(&ta, true);
	frozen = rd(a);
	expect_twin(frozen.value, &ta, 0, "A until disabled");
	mid = rd(b);
	raw_read(tb.in, tb_mid);
	burn_cpu_ns(WINDOW_NS / 2);
	later = rd(a);
	cr_expect_eq(later.value, frozen.value);
	cr_expect_eq(later.time_enabled, frozen.time_enabled);
	twin_before_close(&tb, false);
	cb = rd(b);
	twin_after_close(&tb, false);
	expect_twin(cb.value, &tb, 0, "B throughout");
	/* While A was frozen, B went on by at least what its twin counted
	 * between two reads inside that stretch (exact). */
	cr_expect_geq(cb.value - mid.value, tb.i[0] - tb_mid[0],
		      "B %llu, its twin %llu while A was frozen",
		      (unsigned long long)(cb.value - mid.value),
		      (unsigned long long)(tb.i[0] - tb_mid[0]));
	/* Order of magnitude: that stretch held a burn of WINDOW_NS / 2 on
	 * CLOCK_THREAD_CPUTIME_ID, which is not perf's clock (under a load
	 * average of 300 we saw perf's count 17% short of it): half is a
	 * miss. */
	cr_expect_geq(tb.i[0] - tb_mid[0], WINDOW_NS / 2 / 2);
	twin_close(&ta);
	twin_close(&tb);
}

/* Each CPU's share lies between twins on that CPU; the shares add up to
 * the whole exactly; and the whole holds every switch of this thread. */
Test(windows, every_cpu_share_adds_up_to_the_whole)
{
	struct perf_event_attr attr =
		sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES, false);
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	struct shpmu_count sum = {0}, whole, one;
	int ncpus = online_cpus(), h;
	struct twin *tw = calloc((size_t)ncpus, sizeof(*tw));
	struct twin self = twin_open(PERF_COUNT_SW_CONTEXT_SWITCHES, 0, -1);

	cr_assert(tw);
	for (int cpu = 0; cpu < ncpus; cpu++) {
		tw[cpu] = twin_open(PERF_COUNT_SW_CONTEXT_SWITCHES, -1, cpu);
		twin_before_open(&tw[cpu]);
	}
	h = shpmu_open(pmu, &attr, &all);
	cr_assert_geq(h, 0);
	for (int cpu = 0; cpu < ncpus; cpu++)
		twin_after_open(&tw[cpu]);
	twin_after_open(&self); /* only its in fd: a lower bound */
	sleep_switches(200);
	twin_before_close(&self, true);
	for (int cpu = 0; cpu < ncpus; cpu++)
		twin_before_close(&tw[cpu], true);
	cr_assert_eq(shpmu_disable(pmu, h), 0); /* freeze for exact sums */
	for (int cpu = 0; cpu < ncpus; cpu++)
		twin_after_close(&tw[cpu], true);
	for (int cpu = 0; cpu < ncpus; cpu++) {
		char what[32];

		cr_assert_eq(shpmu_read_cpu(pmu, h, cpu, &one), 0);
		snprintf(what, sizeof(what), "CPU %d switches", cpu);
		/* Other tasks switch in the gaps: no gap is judged. */
		expect_twin(one.value, &tw[cpu], 0, what);
		snprintf(what, sizeof(what), "CPU %d time_enabled", cpu);
		expect_twin(one.time_enabled, &tw[cpu], 1, what);
		sum.value += one.value;
		sum.time_enabled += one.time_enabled;
		twin_close(&tw[cpu]);
	}
	whole = rd(h);
	cr_expect_eq(sum.value, whole.value);
	cr_expect_eq(sum.time_enabled, whole.time_enabled);
	/* Exact, one-sided: every switch of this thread inside the window
	 * was on some CPU. (Not each of its nanosleeps need switch: a vCPU
	 * the host preempts between the timer's start and schedule() finds
	 * it fired.) */
	cr_expect_geq(whole.value, self.i[0], "whole %llu, this thread %llu",
		      (unsigned long long)whole.value,
		      (unsigned long long)self.i[0]);
	cr_expect_gt(self.i[0], 0);
	cr_expect_geq(whole.value, 200);
	cr_expect_eq(shpmu_read_cpu(pmu, h, 100000, &one), -ENOENT);
	twin_close(&self);
	free(tw);
}
