// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Switches the kernel makes without running the BPF program, made on
 * purpose on any kernel: the test knobs (shpmu__bpf_skip_tid,
 * shpmu__bpf_skip_every, fixed when a context loads its program) skip the
 * program's runs as a kernel that hides switches does. The program must
 * count each such switch, credit nothing it cannot prove, and report a
 * bound that covers what it did not credit.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "backend_choice.h"
#include "bpf/counter_prog.h"
#include "cgroup_helpers.h"
#include "helpers.h"

static struct shpmu *bpf, *classic;

static void setup(void)
{
	bpf = NULL;
	shpmu__bpf_skip_tid = 0;
	shpmu__bpf_skip_every = 0;
	classic = cg_context(SHPMU_CGROUP_BACKEND_PERF);
	cg_setup(classic);
#ifndef HAVE_BPF
	cr_skip_test("libshpmu was built without the BPF backend (no clang, "
		     "bpftool, libbpf or kernel BTF, or -Dbpf=disabled)");
#endif
}

static void teardown(void)
{
	shpmu_free(bpf);
	shpmu_free(classic);
	shpmu__bpf_skip_tid = 0;
	shpmu__bpf_skip_every = 0;
	cg_teardown();
}

TestSuite(hidden, .init = setup, .fini = teardown);

/* A handle's reading and bound; asserts it reads. */
static struct shpmu_count read_bound(struct shpmu *p, int h, uint64_t *bound)
{
	struct shpmu_count c;

	cr_assert_eq(shpmu_read_bound(p, h, &c, bound), 0);
	return c;
}

/* The context-switches of every online CPU, by raw per-CPU events. */
struct cpu_switches {
	int n, fds[CG_TWIN_CPUS];
};

static struct cpu_switches cpu_switches_open(void)
{
	struct cpu_switches s = {.n = 0};

	for (int cpu = 0; cpu < online_cpus() && s.n < CG_TWIN_CPUS; cpu++) {
		s.fds[s.n] = raw_open(PERF_COUNT_SW_CONTEXT_SWITCHES, -1, cpu);
		raw_enable(s.fds[s.n++]);
	}
	return s;
}

static uint64_t cpu_switches_read(const struct cpu_switches *s)
{
	uint64_t sum = 0, v[3];

	for (int i = 0; i < s->n; i++) {
		raw_read(s->fds[i], v);
		sum += v[0];
	}
	return sum;
}

static void cpu_switches_close(struct cpu_switches *s)
{
	for (int i = 0; i < s->n; i++)
		close(s->fds[i]);
}

static const char *root_abs(void)
{
	static char root[PATH_MAX];

	cr_assert_eq(shpmu_cgroup_root(classic, root, sizeof(root)), 0);
	return root;
}

/*
 * With every switch run skipped, the program sees no switch: the checks
 * (the tick, a flush) find each one from the CPU's sequence. Counting only
 * the root, which every task is in, nothing is unknown but who ran between
 * two hidden switches: the root's count and the CPUs' unattributed time
 * add up to the root's own count, and the switches unseen are every
 * switch the CPUs made.
 */
Test(hidden, every_switch_hidden_adds_up)
{
	struct shpmu_stats before, after;
	struct cpu_switches sw;
	struct shpmu_count b;
	uint64_t bound, twin, switches, unseen;
	int h, twin_fds[CG_TWIN_CPUS], ntwin;

	shpmu__bpf_skip_every = 1;
	bpf = cg_context(SHPMU_CGROUP_BACKEND_BPF);
	h = cg_open(bpf, PERF_COUNT_SW_TASK_CLOCK, root_abs());
	/* (The root's raw events, not a cg_twin: the root's time running
	 * may lag its time enabled, which cg_twin_read() refuses.) */
	ntwin = cg_raw_open(root_abs(), PERF_COUNT_SW_TASK_CLOCK, twin_fds,
			    CG_TWIN_CPUS);
	for (int i = 0; i < ntwin; i++)
		raw_enable(twin_fds[i]);
	sw = cpu_switches_open();
	/* Each read settles every CPU, so that the switches unseen are
	 * counted up to the moment the raw switch events are read. */
	b = read_bound(bpf, h, &bound);
	cr_assert_eq(shpmu_get_stats(bpf, &before), 0);
	switches = cpu_switches_read(&sw);

	struct cg_child w = cg_spawn(cg_make("w"), 100000000, 50);
	cg_go(&w);
	cg_finish(&w);

	b = read_bound(bpf, h, &bound);
	cr_assert_eq(shpmu_get_stats(bpf, &after), 0);
	switches = cpu_switches_read(&sw) - switches;
	twin = cg_raw_sum(twin_fds, ntwin);
	cg_reap(&w);
	unseen = after.switches_unseen - before.switches_unseen;

	cr_log_info("root task-clock: counted %llu, bound %llu, twin %llu; "
		    "%llu switches, %llu unseen",
		    (unsigned long long)b.value, (unsigned long long)bound,
		    (unsigned long long)twin, (unsigned long long)switches,
		    (unsigned long long)unseen);
	cr_expect_gt(bound, 0, "no switch was seen, yet nothing unattributed");
	cg_expect_twin(b.value + bound, twin, CG_BPF_TWIN_PCT,
		       "root task-clock + bound");
	cr_expect_leq(b.value, twin + twin / 100, "counted above the twin");
	/* Between the settle and the raw reads each CPU may switch a few
	 * times more (the reader's own wake-ups, an interrupted idle). */
	cr_expect_leq(unseen, switches, "more switches unseen than made");
	cr_expect_geq(unseen + 3 * (uint64_t)sw.n, switches,
		      "switches unseen %llu of %llu made",
		      (unsigned long long)unseen, (unsigned long long)switches);
	for (int i = 0; i < ntwin; i++)
		close(twin_fds[i]);
	cpu_switches_close(&sw);
}

/*
 * A worker whose switches out are all hidden, as some kernels hide a
 * supervisor's threads: its cgroup's count falls short of the truth by no
 * more than its bound, and never exceeds it.
 */
Test(hidden, a_hidden_worker_is_within_its_bound)
{
	const char *x = cg_make("x");
	struct cg_child w = cg_spawn(x, 150000000, 60);
	struct shpmu_stats before, after;
	struct shpmu_count b;
	uint64_t bound, twin;
	struct cg_twin t;
	int h;

	shpmu__bpf_skip_tid = (uint32_t)w.pid;
	bpf = cg_context(SHPMU_CGROUP_BACKEND_BPF);
	h = cg_open(bpf, PERF_COUNT_SW_TASK_CLOCK, x);
	t = cg_twin_open(x, PERF_COUNT_SW_TASK_CLOCK);
	cr_assert_eq(shpmu_get_stats(bpf, &before), 0);
	cg_go(&w);
	cg_finish(&w);
	b = read_bound(bpf, h, &bound);
	twin = cg_twin_read(&t);
	cr_assert_eq(shpmu_get_stats(bpf, &after), 0);
	cg_reap(&w);

	cr_log_info("x task-clock: counted %llu, bound %llu, twin %llu; "
		    "%llu unseen",
		    (unsigned long long)b.value, (unsigned long long)bound,
		    (unsigned long long)twin,
		    (unsigned long long)(after.switches_unseen -
					 before.switches_unseen));
	cr_expect_geq(after.switches_unseen - before.switches_unseen, 60,
		      "the worker's switches out were not all found");
	cr_expect_gt(bound, 0);
	cr_expect_leq(b.value, twin + twin / 100, "counted above the twin");
	cr_expect_geq(b.value + bound + twin / 100, twin,
		      "the bound does not cover what was missed");
	cg_twin_close(&t);
}
