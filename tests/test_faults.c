// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fault-injection walk. A scenario (shared events on all CPUs, a
 * group, a cgroup target; enable, read, read_many, disable, reset, close,
 * cgroup lookups) runs once to count its calls through the syscall layer,
 * then once per (call N, fault): the Nth call fails with that errno or
 * reads short. After each: the step that met the fault returned a
 * negative errno (or, for EINTR and close, succeeded), nothing leaked, the
 * stats are what they were, every other handle still reads, and
 * shpmu_free returns the fds to where they were. LeakSanitizer (the ASan
 * build) and valgrind check memory at exit.
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "cgroup_helpers.h"
#include "fault_sys.h"
#include "helpers.h"

static const int faults[] = {EMFILE, ENFILE, EACCES, ENOENT,
			     EBUSY,  ENOMEM, EINTR,  FAULT_SHORT_READ};
#define NFAULTS (int)(sizeof(faults) / sizeof(faults[0]))

/* ---- the scenario ---- */

#define MAX_HANDLES 8

struct run {
	struct shpmu *pmu;
	int h[MAX_HANDLES];
	int nh;
	const char *cgroup;
};

static int step_open(struct run *r, uint64_t config, bool disabled,
		     struct shpmu_target t)
{
	struct perf_event_attr a = sw_attr(config, disabled);
	int h = shpmu_open(r->pmu, &a, &t);

	if (h >= 0)
		r->h[r->nh++] = h;
	return h < 0 ? h : 0;
}

static int step(struct run *r, int i)
{
	struct shpmu_target self = self_target();
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	struct shpmu_target cg = {.kind = SHPMU_TARGET_CGROUP,
				  .cpu = SHPMU_ALL_CPUS,
				  .cgroup_path = r->cgroup};
	struct perf_event_attr group[2] = {
		sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES, false),
		sw_attr(PERF_COUNT_SW_PAGE_FAULTS, false)};
	struct shpmu_count c[MAX_HANDLES];
	char path[4096];
	uint64_t id;
	int h;

	switch (i) {
	case 0:
		return step_open(r, PERF_COUNT_SW_TASK_CLOCK, false, self);
	case 1:
		return step_open(r, PERF_COUNT_SW_TASK_CLOCK, false, self);
	case 2:
		return step_open(r, PERF_COUNT_SW_CONTEXT_SWITCHES, false, all);
	case 3:
		return step_open(r, PERF_COUNT_SW_CONTEXT_SWITCHES, true, all);
	case 4:
		h = shpmu_open_group(r->pmu, group, 2, &all);
		if (h >= 0)
			r->h[r->nh++] = h;
		return h < 0 ? h : 0;
	case 5:
		return step_open(r, PERF_COUNT_SW_TASK_CLOCK, false, cg);
	case 6:
		return shpmu_enable(r->pmu, r->h[3]);
	case 7:
		return shpmu_read(r->pmu, r->h[0], c);
	case 8:
		return shpmu_read_many(r->pmu, r->h, (size_t)r->nh, c);
	case 9:
		return shpmu_read_group(r->pmu, r->h[4], c, 2);
	case 10:
		return shpmu_disable(r->pmu, r->h[0]);
	case 11:
		return shpmu_reset(r->pmu, r->h[2]);
	case 12:
		return shpmu_read_cpu(r->pmu, r->h[2], 0, c);
	case 13:
		h = shpmu_cgroup_id(r->pmu, r->cgroup, &id);
		return h ? h
			 : shpmu_cgroup_path(r->pmu, id, path, sizeof(path));
	case 14:
		return shpmu_disable(r->pmu, r->h[3]); /* the last user */
	case 15:
		h = shpmu_close(r->pmu, r->h[1]);
		if (!h)
			r->h[1] = r->h[--r->nh];
		return h;
	}
	return 1; /* past the end */
}

/* The walk covers the classic cgroup backend, whose calls all go through
 * the syscall layer (the BPF backend's bpf(2) calls do not). */
static struct shpmu *new_classic(void)
{
	SHPMU_OPTS(opts, .cgroup_backend = SHPMU_CGROUP_BACKEND_PERF);
	struct shpmu *p = shpmu_new(&opts);

	cr_assert(p);
	return p;
}

/* Calls the scenario makes, counted without faults. */
static int count_calls(const char *cgroup)
{
	struct run r = {.cgroup = cgroup};
	int calls;

	fault_reset();
	r.pmu = new_classic();
	shpmu__set_sys_ops(r.pmu, &fault_sys);
	for (int i = 0; step(&r, i) != 1; i++)
		;
	calls = fault.calls; /* shpmu_free's closes are walked separately */
	shpmu_free(r.pmu);
	return calls;
}

static void expect_others_read(struct run *r, const char *what)
{
	struct shpmu_count c[2];

	for (int k = 0; k < r->nh; k++)
		cr_expect_eq(shpmu_read_group(r->pmu, r->h[k], c, 2), 0,
			     "%s: handle %d no longer reads", what, r->h[k]);
}

static int walked;

/* One run with the Nth call failing. */
static void run_with_fault(const char *cgroup, int n, int err, int base_fds)
{
	struct run r = {.cgroup = cgroup};
	char what[96];

	fault_reset();
	r.pmu = new_classic();
	shpmu__set_sys_ops(r.pmu, &fault_sys);
	fault_fail(FAULT_ANY, n, err);
	for (int i = 0;; i++) {
		struct shpmu_stats before, after;
		int fds = count_fds(), ret;

		shpmu_get_stats(r.pmu, &before);
		ret = step(&r, i);
		if (ret == 1)
			break;
		if (!fault.fired) {
			cr_assert_eq(ret, 0, "step %d failed with no fault", i);
			continue;
		}
		snprintf(what, sizeof(what),
			 "call %d (kind %d) failing with %d "
			 "in step %d",
			 n, fault.fired_kind, err, i);
		walked++;
		shpmu_get_stats(r.pmu, &after);
		if (ret == 0) {
			/* Retried, or a close that released the fd anyway. */
			cr_expect(err == EINTR ||
					  fault.fired_kind == FAULT_CLOSE ||
					  (fault.fired_kind == FAULT_IOCTL &&
					   i == 15),
				  "%s: the step succeeded", what);
		} else {
			cr_expect_lt(ret, 0, "%s", what);
			cr_expect_eq(errno, -ret, "%s: errno", what);
			cr_expect_neq(err, EINTR, "%s: EINTR reported", what);
			cr_expect_eq(memcmp(&before, &after, sizeof(before)), 0,
				     "%s: stats changed", what);
			cr_expect_eq(count_fds(), fds, "%s: fds leaked", what);
		}
		expect_others_read(&r, what);
		break;
	}
	shpmu_free(r.pmu);
	cr_expect_eq(count_fds(), base_fds, "call %d, fault %d: fds after free",
		     n, err);
}

Test(faults, every_call_of_the_scenario_can_fail_cleanly)
{
	struct shpmu *setup = shpmu_new(NULL);
	int base_fds, total;

	cr_assert(setup);
	cg_setup(setup);
	shpmu_free(setup);
	const char *cgroup = cg_make("faults");
	base_fds = count_fds();
	/* Once to warm what the library keeps per thread (this thread's
	 * identity), so that every later run makes the same calls. */
	count_calls(cgroup);
	total = count_calls(cgroup);
	cr_assert_gt(total, 40, "the scenario makes %d calls", total);
	cr_assert_leq(total, FAULT_MAX_CALLS);
	enum fault_kind kinds[FAULT_MAX_CALLS + 1];
	int want = 0;

	memcpy(kinds, fault.kinds, sizeof(kinds));
	for (int n = 1; n <= total; n++)
		for (int f = 0; f < NFAULTS; f++) {
			/* A short read is a fault of reads only. */
			if (faults[f] == FAULT_SHORT_READ &&
			    kinds[n] != FAULT_READ)
				continue;
			want++;
			run_with_fault(cgroup, n, faults[f], base_fds);
		}
	printf("fault walk: %d calls, %d injected faults\n", total, walked);
	cr_expect_eq(walked, want);
	cg_teardown();
}
