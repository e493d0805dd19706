// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The BPF cgroup backend against classic cgroup events, on real cgroups. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "auto_rule.h"
#include "backend_choice.h"
#include "bpf/backend_bpf.h"
#include "cgroup_helpers.h"
#include "helpers.h"

static struct shpmu *bpf, *classic;

static void setup(void)
{
	bpf = NULL;
	classic = cg_context(SHPMU_CGROUP_BACKEND_PERF);
	cg_setup(classic);
}

static void need_bpf_built(void)
{
#ifndef HAVE_BPF
	cr_skip_test("libshpmu was built without the BPF backend (no clang, "
		     "bpftool, libbpf or kernel BTF, or -Dbpf=disabled)");
#endif
}

/* Every test but the fallback one needs the backend itself. */
static void need_bpf(void)
{
	need_bpf_built();
	bpf = cg_context(SHPMU_CGROUP_BACKEND_BPF);
}

/* Counts n more cgroups of its own making in p (task-clock), without
 * cg_make(), whose buffers the caller's paths may be. */
static void count_fillers(struct shpmu *p, uint32_t n)
{
	static uint32_t made;
	char path[PATH_MAX];

	for (uint32_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/filler%u", cg_base(), made++);
		cr_assert_eq(mkdir(path, 0755), 0, "mkdir %s: %s", path,
			     strerror(errno));
		cg_open(p, PERF_COUNT_SW_TASK_CLOCK, path);
	}
}

/* AUTO counts cgroups classic below its crossover (auto_rule.h): as
 * many cgroups as it counts that way, counted in p, so that its next
 * cgroup event is the crossover. */
static void auto_up_to_crossover(struct shpmu *p)
{
	uint32_t below = auto_crossover((uint32_t)online_cpus()) - 1;
	struct shpmu_stats st;

	count_fillers(p, below);
	shpmu_get_stats(p, &st);
	cr_assert_eq(st.kernel_fds, (uint64_t)below * online_cpus(),
		     "AUTO below its crossover: classic events (%s)", last_log);
}

static void teardown(void)
{
	shpmu_free(bpf);
	shpmu_free(classic);
	cg_teardown();
}

TestSuite(bpf, .init = setup, .fini = teardown);

/* Switch counts may differ by one at the edges of the window (a switch
 * that straddles the read); valgrind's slow scheduling adds a few more.
 * BPF's may fall short by its bound besides. */
static void expect_close(uint64_t a, uint64_t bound, uint64_t b,
			 const char *what)
{
	cg_expect_count_bound(a, bound, b, under_valgrind ? 5 : 1, what);
}

/* The same workload in the same cgroups, counted both ways, a parent
 * counting its two children included. */
Test(bpf, agrees_with_classic_cgroup_events)
{
	need_bpf();
	static const uint64_t configs[3] = {PERF_COUNT_SW_TASK_CLOCK,
					    PERF_COUNT_SW_CONTEXT_SWITCHES,
					    PERF_COUNT_SW_CGROUP_SWITCHES};
	static const char *const names[3] = {"p", "c1", "c2"};
	struct shpmu_count b[3][3], c[3][3];
	uint64_t own[3], bound[3][3];
	const char *paths[3];
	int hb[3][3], hc[3][3];

	paths[0] = cg_make("p");
	paths[1] = cg_make("p/c1");
	paths[2] = cg_make("p/c2");
	for (int i = 0; i < 3; i++)
		for (int e = 0; e < 3; e++) {
			hb[i][e] = cg_open(bpf, configs[e], paths[i]);
			hc[i][e] = cg_open(classic, configs[e], paths[i]);
		}
	struct cg_child w1 = cg_spawn(paths[1], 150000000, 40);
	struct cg_child w2 = cg_spawn(paths[2], 100000000, 60);
	cg_go(&w1);
	cg_go(&w2);
	own[1] = cg_finish(&w1);
	own[2] = cg_finish(&w2);
	own[0] = own[1] + own[2];
	for (int i = 0; i < 3; i++)
		for (int e = 0; e < 3; e++) {
			b[i][e] = cg_read_bound(bpf, hb[i][e], &bound[i][e]);
			c[i][e] = cg_read(classic, hc[i][e]);
		}
	cg_reap(&w1);
	cg_reap(&w2);

	for (int i = 0; i < 3; i++) {
		char what[64];

		snprintf(what, sizeof(what), "%s task-clock", names[i]);
		/* (The tolerance: see cg_bpf_clock_pct().) */
		cg_expect_twin_bound(
			b[i][0].value, bound[i][0], c[i][0].value,
			cg_bpf_clock_pct(c[i][0].value, c[i][1].value), what);
		cg_expect_covers(c[i][0].value, own[i], what);
		/* A clock's times are read from its count alone (KIND_CLOCK):
		 * still the kernel's, as classic's times say. */
		snprintf(what, sizeof(what), "%s task-clock enabled", names[i]);
		cg_expect_twin_bound(
			b[i][0].time_enabled, bound[i][0], c[i][0].time_enabled,
			cg_bpf_clock_pct(c[i][0].value, c[i][1].value), what);
		cr_expect_eq(b[i][0].time_running, b[i][0].time_enabled,
			     "%s task-clock: running %llu, enabled %llu",
			     names[i], (unsigned long long)b[i][0].time_running,
			     (unsigned long long)b[i][0].time_enabled);
		snprintf(what, sizeof(what), "%s context-switches", names[i]);
		expect_close(b[i][1].value, bound[i][1], c[i][1].value, what);
		cr_expect_geq(c[i][1].value, 40, "%s: too few switches",
			      names[i]);
		snprintf(what, sizeof(what), "%s cgroup-switches", names[i]);
		expect_close(b[i][2].value, bound[i][2], c[i][2].value, what);
	}
}

/* 1000 cgroups x 4 events: one kernel event per CPU per event, all 1000
 * readable. */
Test(bpf, a_thousand_cgroups_cost_one_event_per_cpu_per_attr)
{
	need_bpf();
	static const uint64_t configs[4] = {
		PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CPU_CLOCK,
		PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_PAGE_FAULTS};
	static int hs[4000];
	static struct shpmu_count out[4000];
	struct shpmu_stats st;
	char name[32];

	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "g%04d", i);
		const char *path = cg_make(name);

		for (int e = 0; e < 4; e++)
			hs[i * 4 + e] = cg_open(bpf, configs[e], path);
	}
	shpmu_get_stats(bpf, &st);
	cr_expect_eq(st.handles, 4000);
	cr_expect_eq(st.kernel_events, 4);
	cr_expect_eq(st.kernel_fds, 4 * (uint64_t)online_cpus());
	cr_expect_eq(count_perf_fds(), 4 * online_cpus());
	cr_assert_eq(shpmu_read_many(bpf, hs, 4000, out), 0);
	/* A worker in the last cgroup shows up there and nowhere else. */
	uint64_t cpu, before, after, bound_before, bound_after, twin_clock;
	double pct;
	struct cg_child w = cg_spawn(cg_abs("g0999"), 30000000, 5);

	cr_assert_eq(shpmu_read_many(bpf, hs, 4000, out), 0);
	before = cg_read_bound(bpf, hs[999 * 4], &bound_before).value;
	struct cg_twin twin =
		cg_twin_open(cg_abs("g0999"), PERF_COUNT_SW_TASK_CLOCK);

	cg_go(&w);
	cpu = cg_finish(&w);
	cr_assert_eq(shpmu_read_many(bpf, hs, 4000, out), 0);
	/* (The worker is parked: the same value, with its bound.) */
	after = cg_read_bound(bpf, hs[999 * 4], &bound_after).value;
	twin_clock = cg_twin_read(&twin);
	pct = cg_twin_bpf_pct(&twin, twin_clock);
	cg_twin_close(&twin);
	cg_reap(&w);
	cr_expect_eq(out[999 * 4].value, after, "read_many and read differ");
	/* (The tolerance: see cg_bpf_clock_pct().) */
	cg_expect_twin_bound(after - before, bound_after - bound_before,
			     twin_clock, pct,
			     "g0999 task-clock against its twin");
	cg_expect_covers(twin_clock, cpu, "g0999 task-clock");
	cr_expect_eq(out[998 * 4].value, 0, "g0998 counted another's work");
	for (int i = 0; i < 4000; i++)
		cr_assert_eq(shpmu_close(bpf, hs[i]), 0);
	shpmu_get_stats(bpf, &st);
	cr_expect_eq(st.kernel_fds, 0);
}

/* Cgroups come and go while one is counted: its count loses nothing. */
Test(bpf, adding_and_removing_cgroups_loses_nothing)
{
	need_bpf();
	struct shpmu_count b, c, bs, cs;
	uint64_t own, bound, bound_s;
	char name[32];
	int churn[50];
	const char *steady = cg_make("steady");
	int hb = cg_open(bpf, PERF_COUNT_SW_TASK_CLOCK, steady);
	int hc = cg_open(classic, PERF_COUNT_SW_TASK_CLOCK, steady);
	int hbs = cg_open(bpf, PERF_COUNT_SW_CONTEXT_SWITCHES, steady);
	int hcs = cg_open(classic, PERF_COUNT_SW_CONTEXT_SWITCHES, steady);
	struct cg_child w = cg_spawn(steady, 200000000, 100);

	cg_go(&w);
	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < 50; i++) {
			snprintf(name, sizeof(name), "c%d-%d", round, i);
			churn[i] = cg_open(bpf, PERF_COUNT_SW_TASK_CLOCK,
					   cg_make(name));
		}
		for (int i = 0; i < 50; i++)
			cr_assert_eq(shpmu_close(bpf, churn[i]), 0);
	}
	own = cg_finish(&w);
	b = cg_read_bound(bpf, hb, &bound);
	c = cg_read(classic, hc);
	bs = cg_read_bound(bpf, hbs, &bound_s);
	cs = cg_read(classic, hcs);
	cg_reap(&w);
	/* (The tolerance: see cg_bpf_clock_pct().) */
	cg_expect_twin_bound(b.value, bound, c.value,
			     cg_bpf_clock_pct(c.value, cs.value),
			     "steady task-clock");
	cg_expect_covers(c.value, own, "steady task-clock");
	expect_close(bs.value, bound_s, cs.value, "steady context-switches");
	cr_expect_geq(cs.value, 100, "steady: too few switches");
}

/* dup_count windows hold on the BPF backend too. */
Test(bpf, handles_report_only_their_own_windows)
{
	need_bpf();
	uint64_t first, second, a_total, b_total, frozen, later;
	uint64_t a_twin, b_twin, a_twin_frozen, a_twin_later, a_bound, b_bound;
	double a_pct, b_pct;
	const char *path = cg_make("windows");
	/* All three join the cgroup before any window opens. */
	struct cg_child w1 = cg_spawn(path, 100000000, 5);
	struct cg_child w2 = cg_spawn(path, 60000000, 5);
	struct cg_child w3 = cg_spawn(path, 30000000, 5);
	int a = cg_open(bpf, PERF_COUNT_SW_TASK_CLOCK, path);
	/* Each handle's twin, at its edges. */
	struct cg_twin ta = cg_twin_open(path, PERF_COUNT_SW_TASK_CLOCK);

	cg_go(&w1);
	first = cg_finish(&w1);
	int b = cg_open(bpf, PERF_COUNT_SW_TASK_CLOCK, path);
	struct cg_twin tb = cg_twin_open(path, PERF_COUNT_SW_TASK_CLOCK);

	cg_go(&w2);
	second = cg_finish(&w2);
	a_total = cg_read_bound(bpf, a, &a_bound).value;
	a_twin = cg_twin_read(&ta);
	a_pct = cg_twin_bpf_pct(&ta, a_twin);
	b_total = cg_read_bound(bpf, b, &b_bound).value;
	b_twin = cg_twin_read(&tb);
	b_pct = cg_twin_bpf_pct(&tb, b_twin);
	cr_assert_eq(shpmu_disable(bpf, a), 0);
	cg_twin_disable(&ta);
	frozen = cg_read(bpf, a).value;
	a_twin_frozen = cg_twin_read(&ta);
	cg_go(&w3);
	cg_finish(&w3);
	later = cg_read(bpf, a).value;
	a_twin_later = cg_twin_read(&ta);
	cg_twin_close(&ta);
	cg_twin_close(&tb);
	/* (parked until now: their exits are in no window above) */
	cg_reap(&w1);
	cg_reap(&w2);
	cg_reap(&w3);
	/* (The tolerance: see cg_bpf_clock_pct().) */
	cg_expect_twin_bound(a_total, a_bound, a_twin, a_pct,
			     "A against its twin");
	cg_expect_twin_bound(b_total, b_bound, b_twin, b_pct,
			     "B only since open, against its twin");
	cg_expect_covers(a_twin, first + second, "A");
	cg_expect_covers(b_twin, second, "B");
	/* What A counted before B opened holds the first worker's work. */
	cg_expect_covers(a_twin - b_twin, first, "A before B opened");
	cr_expect_eq(later, frozen, "disabled A moved");
	cr_expect_eq(a_twin_later, a_twin_frozen, "disabled twin moved");
}

/* No depth limit: a task 100 levels down is counted by its own cgroup, by
 * the test directory's child at depth 2, and by the root-most counted
 * ancestors in between. */
Test(bpf, deep_hierarchies_count)
{
	need_bpf();
	char rel[100 * 2 + 1] = "";
	const char *top = NULL, *deepest = NULL;
	uint64_t cpu, before[2], counted[2], twins[2], bound[2];
	double pct[2];
	int h[2];

	/* The test directory is at depth 1. */
	for (int level = 2; level <= 100; level++) {
		strcat(rel, level > 2 ? "/d" : "d");
		deepest = cg_make(rel);
		if (!top)
			top = deepest;
	}
	h[0] = cg_open(bpf, PERF_COUNT_SW_TASK_CLOCK, top);
	h[1] = cg_open(bpf, PERF_COUNT_SW_TASK_CLOCK, deepest);
	struct cg_child w = cg_spawn(deepest, 30000000, 5);
	struct cg_twin twin[2];

	for (int i = 0; i < 2; i++) {
		before[i] = cg_read_bound(bpf, h[i], &bound[i]).value;
		twin[i] = cg_twin_open(i ? deepest : top,
				       PERF_COUNT_SW_TASK_CLOCK);
	}
	cg_go(&w);
	cpu = cg_finish(&w);
	for (int i = 0; i < 2; i++) {
		uint64_t was = bound[i];

		counted[i] =
			cg_read_bound(bpf, h[i], &bound[i]).value - before[i];
		bound[i] -= was;
		twins[i] = cg_twin_read(&twin[i]);
		pct[i] = cg_twin_bpf_pct(&twin[i], twins[i]);
		cg_twin_close(&twin[i]);
	}
	cg_reap(&w);
	/* (The tolerance: see cg_bpf_clock_pct().) */
	cg_expect_twin_bound(counted[0], bound[0], twins[0], pct[0],
			     "depth 2 task-clock against its twin");
	cg_expect_twin_bound(counted[1], bound[1], twins[1], pct[1],
			     "depth 100 task-clock against its twin");
	cg_expect_covers(twins[0], cpu, "depth 2 task-clock");
	cg_expect_covers(twins[1], cpu, "depth 100 task-clock");
}

/* Each CPU caches the counted ancestors of recent cgroups: a cgroup
 * counted after its descendant ran must still see the next run, and a
 * task with more counted ancestors than a cache entry holds (8) must
 * credit them all. */
Test(bpf, counted_ancestors_change_and_exceed_the_cache)
{
	need_bpf();
	const char *chain[10];
	int h[10];
	char rel[64] = "";
	uint64_t before[10], counted[10], twins[10], bound[10], cpu;
	double pct[10];

	for (int i = 0; i < 10; i++) {
		strcat(rel, i ? "/a" : "a");
		chain[i] = cg_make(rel);
	}
	/* One CPU, so that both children meet the same CPU's cache. */
	cpu_set_t saved, one;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	cr_assert_eq(sched_getaffinity(0, sizeof(saved), &saved), 0);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	/* Only the leaf first, so its cache entry holds one slot... */
	h[9] = cg_open(bpf, PERF_COUNT_SW_TASK_CLOCK, chain[9]);
	struct cg_child warm = cg_spawn(chain[9], 20000000, 5);
	cg_go(&warm);
	cg_finish(&warm);
	cg_reap(&warm);
	/* ...then all ten. */
	for (int i = 0; i < 9; i++)
		h[i] = cg_open(bpf, PERF_COUNT_SW_TASK_CLOCK, chain[i]);
	struct cg_child w = cg_spawn(chain[9], 40000000, 10);
	struct cg_twin twin[10];

	for (int i = 0; i < 10; i++) {
		before[i] = cg_read_bound(bpf, h[i], &bound[i]).value;
		twin[i] = cg_twin_open(chain[i], PERF_COUNT_SW_TASK_CLOCK);
	}
	cg_go(&w);
	cpu = cg_finish(&w);
	for (int i = 0; i < 10; i++) {
		uint64_t was = bound[i];

		counted[i] =
			cg_read_bound(bpf, h[i], &bound[i]).value - before[i];
		bound[i] -= was;
		twins[i] = cg_twin_read(&twin[i]);
		pct[i] = cg_twin_bpf_pct(&twin[i], twins[i]);
		cg_twin_close(&twin[i]);
	}
	cg_reap(&w);
	sched_setaffinity(0, sizeof(saved), &saved);
	for (int i = 0; i < 10; i++) {
		char what[48];

		snprintf(what, sizeof(what), "level %d task-clock", i + 2);
		/* (The tolerance: see cg_bpf_clock_pct().) */
		cg_expect_twin_bound(counted[i], bound[i], twins[i], pct[i],
				     what);
		cg_expect_covers(twins[i], cpu, what);
	}
}

/* A context with room for 4 cgroups: the 5th is -ENOSPC with BPF and
 * counted the classic way with AUTO past its crossover; freed slots serve
 * new cgroups, which see only their own work. */
Test(bpf, full_backends_reuse_slots_and_auto_falls_back)
{
	need_bpf();
	SHPMU_OPTS(want_bpf, .cgroup_backend = SHPMU_CGROUP_BACKEND_BPF,
		   .log = record_log);
	SHPMU_OPTS(automatic, .log = record_log);
	const char *paths[6];
	struct shpmu *small, *autos;
	struct shpmu_stats st;
	int h[6];
	uint64_t cpu, counted[6], before[6], bound[6], twin_clock, below_fds;
	double pct;
	char name[16];

	/* (AUTO makes its backend at its crossover.) */
	shpmu__bpf_max_slots = 4;
	small = shpmu_new(&want_bpf);
	autos = shpmu_new(&automatic);
	cr_assert(small && autos);
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "slot%d", i);
		paths[i] = cg_make(name);
	}
	for (int i = 0; i < 4; i++)
		h[i] = cg_open(small, PERF_COUNT_SW_TASK_CLOCK, paths[i]);
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS,
				 .cgroup_path = paths[4]};
	cr_expect_eq(shpmu_open(small, &a, &t), -ENOSPC);
	/* Slots 1 and 2 go back; cgroups 4 and 5 take them. */
	cr_assert_eq(shpmu_close(small, h[1]), 0);
	cr_assert_eq(shpmu_close(small, h[2]), 0);
	h[1] = cg_open(small, PERF_COUNT_SW_TASK_CLOCK, paths[4]);
	h[2] = cg_open(small, PERF_COUNT_SW_TASK_CLOCK, paths[5]);
	shpmu_get_stats(small, &st);
	cr_expect_eq(st.kernel_fds, (uint64_t)online_cpus());
	struct cg_child w = cg_spawn(paths[4], 30000000, 5);
	for (int i = 0; i < 4; i++)
		before[i] = cg_read_bound(small, h[i], &bound[i]).value;
	struct cg_twin twin = cg_twin_open(paths[4], PERF_COUNT_SW_TASK_CLOCK);

	cg_go(&w);
	cpu = cg_finish(&w);
	for (int i = 0; i < 4; i++) {
		uint64_t was = bound[i];

		counted[i] =
			cg_read_bound(small, h[i], &bound[i]).value - before[i];
		bound[i] -= was;
	}
	twin_clock = cg_twin_read(&twin);
	pct = cg_twin_bpf_pct(&twin, twin_clock);
	cg_twin_close(&twin);
	cg_reap(&w);
	/* (The tolerance: see cg_bpf_clock_pct().) */
	cg_expect_twin_bound(counted[1], bound[1], twin_clock, pct,
			     "reused slot, its own cgroup, against its twin");
	cg_expect_covers(twin_clock, cpu, "reused slot, its own cgroup");
	cr_expect_eq(counted[0] + counted[2] + counted[3], 0,
		     "other slots counted cgroup 4's work");

	/* AUTO past its crossover: the 5th cgroup by BPF costs one classic
	 * event per CPU. */
	auto_up_to_crossover(autos);
	shpmu_get_stats(autos, &st);
	below_fds = st.kernel_fds;
	for (int i = 0; i < 5; i++)
		h[i] = cg_open(autos, PERF_COUNT_SW_TASK_CLOCK, paths[i]);
	shpmu__bpf_max_slots = 0;
	shpmu_get_stats(autos, &st);
	cr_expect_eq(st.kernel_fds - below_fds, 2 * (uint64_t)online_cpus(),
		     "one BPF-shared event and one classic cgroup event");
	cr_expect(strstr(last_log, "classic"), "log: %s", last_log);
	w = cg_spawn(paths[4], 30000000, 5);
	uint64_t start = cg_read(autos, h[4]).value;
	twin = cg_twin_open(paths[4], PERF_COUNT_SW_TASK_CLOCK);

	cg_go(&w);
	cpu = cg_finish(&w);
	counted[4] = cg_read(autos, h[4]).value - start;
	twin_clock = cg_twin_read(&twin);
	cg_twin_close(&twin);
	/* (The tolerance: see CG_CLASSIC_TWIN_PCT.) */
	cg_expect_twin(counted[4], twin_clock, CG_CLASSIC_TWIN_PCT,
		       "classic fallback task-clock against its twin");
	cg_expect_covers(counted[4], cpu, "classic fallback task-clock");
	cg_reap(&w);
	shpmu_free(small);
	shpmu_free(autos);
}

/* The kernel fds of p. */
static uint64_t kernel_fds(struct shpmu *p)
{
	struct shpmu_stats st;

	shpmu_get_stats(p, &st);
	return st.kernel_fds;
}

/* AUTO counts its first cgroups with classic events, one per CPU each,
 * and from its crossover on with BPF, one perf event per CPU for all of
 * them: both kinds count their cgroup's work as the kernel's own cgroup
 * event (the twin) does. Once loaded, BPF counts every new cgroup, even
 * after classic ones close. */
Test(bpf, auto_counts_classic_below_its_crossover_and_bpf_from_it)
{
	need_bpf_built();
	uint32_t ncpus = (uint32_t)online_cpus();
	uint32_t crossover = auto_crossover(ncpus);
	struct cg_told told;
	struct shpmu *autos = cg_auto_context(&told);
	char first[PATH_MAX], last[PATH_MAX];
	uint64_t fds, base[2], bound0[2], bound[2], counted[2], twin_clock[2];
	uint64_t cpu[2];
	double pct[2];
	int h[2];

	snprintf(first, sizeof(first), "%s", cg_make("first"));
	snprintf(last, sizeof(last), "%s", cg_make("last"));

	h[0] = cg_open(autos, PERF_COUNT_SW_TASK_CLOCK, first);
	cr_expect(logged("classic perf events", "below the BPF crossover"),
		  "log: %s", last_log);
	cr_expect_eq(kernel_fds(autos), ncpus, "one classic event per CPU");
	/* (first is the first of them.) */
	count_fillers(autos, crossover - 2);
	fds = kernel_fds(autos);
	cr_expect_eq(fds, (uint64_t)(crossover - 1) * ncpus,
		     "classic below the crossover of %u", crossover);
	h[1] = cg_open(autos, PERF_COUNT_SW_TASK_CLOCK, last);
	cr_expect(
		logged("counting cgroups with the BPF backend", "from now on"),
		"log: %s", last_log);
	cr_expect_eq(kernel_fds(autos), fds + ncpus,
		     "BPF at the crossover: one perf event per CPU");

	struct cg_child w[2] = {cg_spawn(first, 30000000, 5),
				cg_spawn(last, 30000000, 5)};
	struct cg_twin twin[2];

	for (int i = 0; i < 2; i++) {
		base[i] = cg_read_bound(autos, h[i], &bound0[i]).value;
		twin[i] = cg_twin_open(i ? last : first,
				       PERF_COUNT_SW_TASK_CLOCK);
	}
	for (int i = 0; i < 2; i++)
		cg_go(&w[i]);
	for (int i = 0; i < 2; i++)
		cpu[i] = cg_finish(&w[i]);
	for (int i = 0; i < 2; i++) {
		counted[i] =
			cg_read_bound(autos, h[i], &bound[i]).value - base[i];
		bound[i] -= bound0[i];
		twin_clock[i] = cg_twin_read(&twin[i]);
		pct[i] = cg_twin_bpf_pct(&twin[i], twin_clock[i]);
		cg_twin_close(&twin[i]);
		cg_reap(&w[i]);
	}
	/* (The tolerances: see CG_CLASSIC_TWIN_PCT, cg_bpf_clock_pct().) */
	cr_expect_eq(bound[0], 0, "a classic cgroup event is exact");
	cg_expect_twin(counted[0], twin_clock[0], CG_CLASSIC_TWIN_PCT,
		       "AUTO's classic cgroup against its twin");
	cg_expect_covers(counted[0], cpu[0], "AUTO's classic cgroup");
	cg_expect_twin_bound(counted[1], bound[1], twin_clock[1], pct[1],
			     "AUTO's BPF-counted cgroup against its twin");
	cg_expect_covers(twin_clock[1], cpu[1], "AUTO's BPF-counted cgroup");

	/* Below the crossover again, but the program runs anyway: a new
	 * cgroup costs no fd. */
	cr_assert_eq(shpmu_close(autos, h[0]), 0);
	fds = kernel_fds(autos);
	cg_open(autos, PERF_COUNT_SW_TASK_CLOCK, cg_make("after"));
	cr_expect_eq(kernel_fds(autos), fds, "BPF after the crossover");
	/* Each backend said once, where a log showing warnings sees it. */
	cr_expect_eq(told.classic, 1, "classic said %d times", told.classic);
	cr_expect_eq(told.bpf, 1, "BPF said %d times", told.bpf);
	shpmu_free(autos);
}

/* 8 distinct attrs fill the backend; one closed, a 9th takes its index
 * and counts from its own start. */
Test(bpf, event_indexes_are_reused)
{
	need_bpf();
	static const uint64_t configs[4] = {
		PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CPU_CLOCK,
		PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_PAGE_FAULTS};
	const char *path = cg_make("indexes");
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS,
				 .cgroup_path = path};
	struct perf_event_attr a;
	uint64_t cpu, counted, twin_clock, bound, was;
	double pct;
	int h[8], h9;

	for (int e = 0; e < 8; e++) {
		a = sw_attr(configs[e % 4], false);
		a.exclude_hv = e >= 4; /* distinct, and counts the same */
		h[e] = shpmu_open(bpf, &a, &t);
		cr_assert_geq(h[e], 0, "attr %d: %s", e, strerror(-h[e]));
	}
	a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	a.exclude_idle = 1;
	cr_expect_eq(shpmu_open(bpf, &a, &t), -ENOSPC);
	cr_assert_eq(shpmu_close(bpf, h[0]), 0);
	h9 = shpmu_open(bpf, &a, &t);
	cr_assert_geq(h9, 0, "%s", strerror(-h9));
	struct cg_child w = cg_spawn(path, 30000000, 5);
	uint64_t before = cg_read_bound(bpf, h9, &was).value;
	struct cg_twin twin = cg_twin_open(path, a.config);

	cg_go(&w);
	cpu = cg_finish(&w);
	counted = cg_read_bound(bpf, h9, &bound).value - before;
	bound -= was;
	twin_clock = cg_twin_read(&twin);
	pct = cg_twin_bpf_pct(&twin, twin_clock);
	cg_twin_close(&twin);
	cg_reap(&w);
	/* (The tolerance: see cg_bpf_clock_pct().) */
	cg_expect_twin_bound(counted, bound, twin_clock, pct,
			     "task-clock on a reused index against its twin");
	cg_expect_covers(twin_clock, cpu, "task-clock on a reused index");
}

/* A task that never leaves its CPU is still read up to the moment: the
 * read flushes the running delta (shpmu_read and shpmu_read_many both),
 * and agrees with classic events read just before and just after it. */
static pid_t spin_on_cpu1(const char *abs)
{
	int ready[2];
	char byte;
	pid_t pid;

	cr_assert_eq(pipe(ready), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		cpu_set_t one;
		char procs[PATH_MAX + 16];
		FILE *f;

		close(ready[0]);
		die_with_parent();
		CPU_ZERO(&one);
		CPU_SET(1, &one);
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", abs);
		f = fopen(procs, "w");
		if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f) ||
		    sched_setaffinity(0, sizeof(one), &one))
			_exit(3);
		/* In the cgroup, on CPU 1 (sched_setaffinity moves it
		 * there before it returns): from here on it only spins. */
		if (write(ready[1], "r", 1) != 1)
			_exit(4);
		close(ready[1]);
		for (;;)
			;
	}
	close(ready[1]);
	cr_assert_eq(read(ready[0], &byte, 1), 1, "the spinner did not start");
	close(ready[0]);
	return pid;
}

/* Waits on the classic count of the spinner's cgroup. */
struct spin_wait {
	int h;
	uint64_t until;
};

static bool spun_until(void *arg)
{
	const struct spin_wait *w = arg;

	return cg_read(classic, w->h).value >= w->until;
}

static uint64_t spin_for(int hc, uint64_t from, uint64_t ns)
{
	struct spin_wait w = {hc, from + ns};

	cg_wait_for(spun_until, &w, "the spinner to run in its cgroup");
	return cg_read(classic, hc).value;
}

Test(bpf, reads_are_exact_to_the_moment)
{
	need_bpf();
	if (online_cpus() < 2)
		cr_skip_test("needs a second CPU for the spinning task");
	uint64_t c1a, c1b, c2a, c2b, c3a, c3b, b1, b2, many, bound[3], sw[3];

	/* Each BPF read lies between two classic reads, the one just before
	 * and the one just after it: while the task spins, the moments of
	 * the reads matter, and whatever delays this process between them
	 * (the machine runs other suites) widens the bracket, not the
	 * error. */
	const char *path = cg_make("spin");
	int hb = cg_open(bpf, PERF_COUNT_SW_TASK_CLOCK, path);
	int hc = cg_open(classic, PERF_COUNT_SW_TASK_CLOCK, path);
	int hcs = cg_open(classic, PERF_COUNT_SW_CONTEXT_SWITCHES, path);
	struct shpmu_count m;
	pid_t pid = spin_on_cpu1(path);

	spin_for(hc, 0, 100000000);
	c1a = cg_read(classic, hc).value;
	b1 = cg_read_bound(bpf, hb, &bound[0]).value;
	c1b = cg_read(classic, hc).value;
	sw[0] = cg_read(classic, hcs).value;
	/* Long enough that a BPF read that missed the running delta would
	 * be far below the bracket. */
	spin_for(hc, c1b, 100000000);
	c2a = cg_read(classic, hc).value;
	b2 = cg_read_bound(bpf, hb, &bound[1]).value;
	c2b = cg_read(classic, hc).value;
	sw[1] = cg_read(classic, hcs).value;
	/* The same for shpmu_read_many, after the task spun on past b2
	 * (between the reads the task may never have left its CPU: only the
	 * flush can have brought its time in). */
	spin_for(hc, c2b, 50000000);
	c3a = cg_read(classic, hc).value;
	cr_assert_eq(shpmu_read_many(bpf, &hb, 1, &m), 0);
	many = m.value;
	c3b = cg_read(classic, hc).value;
	sw[2] = cg_read(classic, hcs).value;
	/* read_many gives no bound: one read after it covers it (a bound
	 * only grows). */
	cg_read_bound(bpf, hb, &bound[2]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* The tolerance beyond the bracket: see cg_bpf_clock_pct() (the
	 * spinner switches only where the machine's other work preempts
	 * it). */
	cg_expect_between_bound(b1, bound[0], c1a, c1b,
				cg_bpf_clock_pct(c1b, sw[0]), "first read");
	cg_expect_between_bound(b2, bound[1], c2a, c2b,
				cg_bpf_clock_pct(c2b, sw[1]), "second read");
	cg_expect_between_bound(b2 - b1, bound[1] - bound[0], c2a - c1b,
				c2b - c1a,
				cg_bpf_clock_pct(c2b - c1a, sw[1] - sw[0]),
				"between two reads");
	cg_expect_between_bound(many, bound[2], c3a, c3b,
				cg_bpf_clock_pct(c3b, sw[2]), "read_many");
	/* (Half the 50 ms spun since b2: a read_many that did not flush
	 * would hold none of it.) */
	cr_expect_gt(many - b2, 25000000,
		     "read_many counted only %llu ns since shpmu_read",
		     (unsigned long long)(many - b2));
}

/* Readers in other threads while the context opens and drops attrs (new
 * per-CPU events, the CPU list re-read, flush barriers): every read
 * succeeds and no count goes backwards. */
static int racing_handles[4];
static volatile bool racing_stop;

static void *read_racing(void *arg)
{
	struct shpmu_count last[4] = {0}, now[4];
	long bad = 0;

	(void)arg;
	while (!racing_stop) {
		if (shpmu_read_many(bpf, racing_handles, 4, now)) {
			bad++;
			continue;
		}
		for (int i = 0; i < 4; i++) {
			bad += now[i].value < last[i].value;
			last[i] = now[i];
		}
		if (shpmu_read(bpf, racing_handles[0], &now[0]))
			bad++;
		/* valgrind runs one thread at a time and is not fair: a
		 * yield to the other threads, not a wait for anything */
		if (under_valgrind)
			usleep(1000);
	}
	return (void *)bad;
}

Test(bpf, reads_race_with_opens_and_closes)
{
	need_bpf();
	const char *path = cg_make("racing");
	const char *other = cg_make("racing-other");
	static const uint64_t configs[4] = {
		PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CPU_CLOCK,
		PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_PAGE_FAULTS};
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS,
				 .cgroup_path = other};
	pthread_t readers[2];
	void *bad;

	for (int i = 0; i < 4; i++)
		racing_handles[i] = cg_open(bpf, configs[i], path);
	struct cg_child w = cg_spawn(path, 200000000, 50);
	cg_go(&w);
	racing_stop = false;
	for (int i = 0; i < 2; i++)
		cr_assert_eq(
			pthread_create(&readers[i], NULL, read_racing, NULL),
			0);
	for (int round = 0; round < (under_valgrind ? 20 : 200); round++) {
		struct perf_event_attr a =
			sw_attr(PERF_COUNT_SW_PAGE_FAULTS_MIN, false);
		int h;

		a.exclude_hv = round & 1;
		h = shpmu_open(bpf, &a, &t);
		cr_assert_geq(h, 0, "%s", strerror(-h));
		cr_assert_eq(shpmu_close(bpf, h), 0);
	}
	racing_stop = true;
	for (int i = 0; i < 2; i++) {
		pthread_join(readers[i], &bad);
		cr_expect_eq((long)bad, 0, "reader %d saw %ld bad reads", i,
			     (long)bad);
	}
	cg_finish(&w);
	cg_reap(&w);
}

/* Without the privileges to load BPF, asking for it fails clearly; AUTO
 * falls back to classic events at its crossover and says why. */
Test(bpf, where_bpf_cannot_work_bpf_fails_and_auto_falls_back)
{
	SHPMU_OPTS(want_bpf, .cgroup_backend = SHPMU_CGROUP_BACKEND_BPF,
		   .log = record_log);
	SHPMU_OPTS(automatic, .log = record_log);
	struct shpmu *p;
	struct shpmu_stats st;

	drop_capability(CAP_BPF);
	drop_capability(CAP_SYS_ADMIN);
	errno = 0;
	cr_expect_null(shpmu_new(&want_bpf));
	cr_expect_eq(errno, EOPNOTSUPP);
	cr_expect(strstr(last_log, "BPF"), "log: %s", last_log);
	p = shpmu_new(&automatic);
	cr_assert(p);
	auto_up_to_crossover(p);
	log_count = 0;
	int h = cg_open(p, PERF_COUNT_SW_TASK_CLOCK, cg_make("fallback"));
	cr_expect_geq(h, 0);
	cr_expect(logged("classic", "cannot work here"), "log: %s", last_log);
	shpmu_get_stats(p, &st);
	cr_expect_eq(st.kernel_fds,
		     (uint64_t)auto_crossover(online_cpus()) * online_cpus(),
		     "classic: one cgroup event per CPU");
	shpmu_free(p);
}
