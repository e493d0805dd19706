// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The BPF cgroup backend against classic cgroup events, on real cgroups. */
#include <criterion/criterion.h>
#include <linux/capability.h>
#include <stdio.h>

#include "cgroup_helpers.h"
#include "helpers.h"

static struct shpmu *bpf, *classic;

static struct shpmu *new_backend(enum shpmu_cgroup_backend backend)
{
	SHPMU_OPTS(opts, .cgroup_backend = backend, .log = record_log);
	struct shpmu *p = shpmu_new(&opts);

	cr_assert(p, "backend %d: %s (%s)", backend, strerror(errno),
		  last_log);
	return p;
}

static void setup(void)
{
	bpf = new_backend(SHPMU_CGROUP_BACKEND_BPF);
	classic = new_backend(SHPMU_CGROUP_BACKEND_PERF);
	cg_setup(classic);
}

static void teardown(void)
{
	shpmu_free(bpf);
	shpmu_free(classic);
	cg_teardown();
}

TestSuite(bpf, .init = setup, .fini = teardown);

static int open_cg(struct shpmu *p, uint64_t config, const char *path)
{
	struct perf_event_attr a = sw_attr(config, false);
	struct shpmu_target t = { .kind = SHPMU_TARGET_CGROUP,
				  .cpu = SHPMU_ALL_CPUS,
				  .cgroup_path = path };
	int h = shpmu_open(p, &a, &t);

	cr_assert_geq(h, 0, "open %s: %s (%s)", path, strerror(-h), last_log);
	return h;
}

static struct shpmu_count rd(struct shpmu *p, int h)
{
	struct shpmu_count c;

	cr_assert_eq(shpmu_read(p, h, &c), 0);
	return c;
}

/* Within slack. The BPF program runs at the sched_switch tracepoint,
 * before perf counts that switch and before it switches classic cgroup
 * events: a switch is credited to whoever switches out next on that CPU,
 * up to 2 per task that ran, and the switch path's own time goes to the
 * outgoing task (task-clock up to about 3% over classic with a sleep per
 * 1.5 ms of work). valgrind's scheduling adds a few more at the edges. */
static void expect_close(uint64_t a, uint64_t b, uint64_t slack,
			 const char *what)
{
	uint64_t d = a > b ? a - b : b - a;

	if (under_valgrind)
		slack += 4;
	cr_expect_leq(d, slack, "%s: BPF %llu, classic %llu", what,
		      (unsigned long long)a, (unsigned long long)b);
}

/* The same workload in the same cgroups, counted both ways, a parent
 * counting its two children included. */
Test(bpf, agrees_with_classic_cgroup_events)
{
	const char *names[3] = { "p", "p/c1", "p/c2" };
	const char *paths[3];
	int hb[3][2], hc[3][2];
	struct rusage ru;

	for (int i = 0; i < 3; i++)
		paths[i] = cg_make(names[i]);
	for (int i = 0; i < 3; i++) {
		hb[i][0] = open_cg(bpf, PERF_COUNT_SW_TASK_CLOCK, paths[i]);
		hb[i][1] = open_cg(bpf, PERF_COUNT_SW_CONTEXT_SWITCHES,
				   paths[i]);
		hc[i][0] = open_cg(classic, PERF_COUNT_SW_TASK_CLOCK, paths[i]);
		hc[i][1] = open_cg(classic, PERF_COUNT_SW_CONTEXT_SWITCHES,
				   paths[i]);
	}
	struct cg_child w1 = cg_spawn(paths[1], 150000000, 40);
	struct cg_child w2 = cg_spawn(paths[2], 100000000, 60);
	cg_go(&w1);
	cg_go(&w2);
	cg_wait(&w1, &ru);
	cg_wait(&w2, &ru);

	for (int i = 0; i < 3; i++) {
		struct shpmu_count bc = rd(bpf, hb[i][0]), cc = rd(classic, hc[i][0]);
		struct shpmu_count bs = rd(bpf, hb[i][1]), cs = rd(classic, hc[i][1]);
		char what[64];

		snprintf(what, sizeof(what), "%s task-clock", names[i]);
		expect_within_pct(bc.value, cc.value, 3, what);
		snprintf(what, sizeof(what), "%s context-switches", names[i]);
		/* p holds both workers */
		expect_close(bs.value, cs.value, i == 0 ? 4 : 2, what);
		cr_expect_gt(cc.value, 50000000, "%s counted nothing", names[i]);
	}
}

/* 1000 cgroups x 4 events: one kernel event per CPU per event, all 1000
 * readable. */
Test(bpf, a_thousand_cgroups_cost_one_event_per_cpu_per_attr)
{
	static const uint64_t configs[4] = { PERF_COUNT_SW_TASK_CLOCK,
					     PERF_COUNT_SW_CPU_CLOCK,
					     PERF_COUNT_SW_CONTEXT_SWITCHES,
					     PERF_COUNT_SW_PAGE_FAULTS };
	static int hs[4000];
	static struct shpmu_count out[4000];
	struct shpmu_stats st;
	char name[32];

	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "g%04d", i);
		const char *path = cg_make(name);

		for (int e = 0; e < 4; e++)
			hs[i * 4 + e] = open_cg(bpf, configs[e], path);
	}
	shpmu_get_stats(bpf, &st);
	cr_expect_eq(st.handles, 4000);
	cr_expect_eq(st.kernel_events, 4);
	cr_expect_eq(st.kernel_fds, 4 * (uint64_t)online_cpus());
	cr_expect_eq(count_perf_fds(), 4 * online_cpus());
	cr_assert_eq(shpmu_read_many(bpf, hs, 4000, out), 0);
	/* A worker in the last cgroup shows up there and nowhere else. */
	struct cg_child w = cg_spawn(cg_abs("g0999"), 30000000, 5);
	struct rusage ru;
	cg_go(&w);
	uint64_t cpu = cg_wait(&w, &ru);
	cr_assert_eq(shpmu_read_many(bpf, hs, 4000, out), 0);
	expect_within_pct(out[999 * 4].value, cpu, 3, "g0999 task-clock");
	cr_expect_eq(out[998 * 4].value, 0, "g0998 counted another's work");
	for (int i = 0; i < 4000; i++)
		cr_assert_eq(shpmu_close(bpf, hs[i]), 0);
	shpmu_get_stats(bpf, &st);
	cr_expect_eq(st.kernel_fds, 0);
}

/* Cgroups come and go while one is counted: its count loses nothing. */
Test(bpf, adding_and_removing_cgroups_loses_nothing)
{
	const char *steady = cg_make("steady");
	int hb = open_cg(bpf, PERF_COUNT_SW_TASK_CLOCK, steady);
	int hc = open_cg(classic, PERF_COUNT_SW_TASK_CLOCK, steady);
	int hbs = open_cg(bpf, PERF_COUNT_SW_CONTEXT_SWITCHES, steady);
	int hcs = open_cg(classic, PERF_COUNT_SW_CONTEXT_SWITCHES, steady);
	struct cg_child w = cg_spawn(steady, 200000000, 100);
	struct rusage ru;
	char name[32];
	int churn[50];

	cg_go(&w);
	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < 50; i++) {
			snprintf(name, sizeof(name), "c%d-%d", round, i);
			churn[i] = open_cg(bpf, PERF_COUNT_SW_TASK_CLOCK,
					   cg_make(name));
		}
		for (int i = 0; i < 50; i++)
			cr_assert_eq(shpmu_close(bpf, churn[i]), 0);
	}
	cg_wait(&w, &ru);
	expect_within_pct(rd(bpf, hb).value, rd(classic, hc).value, 3,
			  "steady task-clock");
	expect_close(rd(bpf, hbs).value, rd(classic, hcs).value, 2,
		     "steady context-switches");
}

/* dup_count windows hold on the BPF backend too. */
Test(bpf, handles_report_only_their_own_windows)
{
	const char *path = cg_make("windows");
	int a = open_cg(bpf, PERF_COUNT_SW_TASK_CLOCK, path);
	struct rusage ru;

	struct cg_child w1 = cg_spawn(path, 100000000, 5);
	cg_go(&w1);
	uint64_t first = cg_wait(&w1, &ru);
	int b = open_cg(bpf, PERF_COUNT_SW_TASK_CLOCK, path);
	struct cg_child w2 = cg_spawn(path, 60000000, 5);
	cg_go(&w2);
	uint64_t second = cg_wait(&w2, &ru);

	expect_within_pct(rd(bpf, a).value, first + second, 3, "A");
	expect_within_pct(rd(bpf, b).value, second, 3, "B only since open");
	cr_assert_eq(shpmu_disable(bpf, a), 0);
	uint64_t frozen = rd(bpf, a).value;
	struct cg_child w3 = cg_spawn(path, 30000000, 5);
	cg_go(&w3);
	cg_wait(&w3, &ru);
	cr_expect_eq(rd(bpf, a).value, frozen, "disabled A moved");
}

/* Without the privileges to load BPF, asking for it fails clearly; AUTO
 * falls back to classic events and says why. */
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
	log_count = 0;
	int h = open_cg(p, PERF_COUNT_SW_TASK_CLOCK, cg_make("fallback"));
	cr_expect_geq(h, 0);
	cr_expect(strstr(last_log, "classic"), "log: %s", last_log);
	shpmu_get_stats(p, &st);
	cr_expect_eq(st.kernel_fds, (uint64_t)online_cpus(),
		     "classic: one cgroup event per CPU");
	shpmu_free(p);
}
