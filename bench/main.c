// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * shpmu-bench: what libshpmu costs and saves against raw perf_event_open
 * and PAPI, as ratios measured side by side in one run.
 *
 *   shpmu-bench          the table
 *   shpmu-bench --json   the table on stderr, one JSON object on stdout
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"

/* HALF_THE_TAX_OF: at most 1 + (ref - 1) / 2, ref a ratio of the same
 * run: half the overhead of what the figure replaces. */
enum goal_kind { NONE, AT_LEAST, AT_MOST, EQUALS, HALF_THE_TAX_OF };

struct row {
	struct figure fig;
	enum goal_kind goal;
	double target;
	const char *ref;
	/* A BPF program's figure: the JSON has key_ns_per_run too. */
	bool per_run;
	/* Where not 0, a goal for that run time: at most this many ns. */
	double run_ns_goal;
};

static struct row rows[] = {
	{.fig = {.key = "open_dup_speedup",
		 .what = "raw open / duplicate shpmu_open"},
	 .goal = AT_LEAST,
	 .target = 30},
	{.fig = {.key = "open_dup_vs_read",
		 .what = "duplicate shpmu_open / one raw read(2) of the event"},
	 .goal = AT_MOST,
	 .target = 1.3},
	{.fig = {.key = "read_overhead_ratio",
		 .what = "shpmu_read / raw read(2)"},
	 .goal = AT_MOST,
	 .target = 1.10},
	{.fig = {.key = "read_many_speedup",
		 .what = "1024 raw reads / read_many (8 events)"},
	 .goal = AT_LEAST,
	 .target = 100},
	{.fig = {.key = "fds_raw",
		 .what = "fds: 1000 consumers x 8 events x CPUs, raw"},
	 .goal = NONE,
	 .target = 0},
	{.fig = {.key = "fds_shared", .what = "fds: the same through libshpmu"},
	 .goal = EQUALS,
	 .target = 0},
	{.fig = {.key = "bytes_per_handle",
		 .what = "heap per extra handle at 100k"},
	 .goal = AT_MOST,
	 .target = 128},
	{.fig = {.key = "op_cost_growth",
		 .what = "open+read+close at 100k / at 100 handles"},
	 .goal = AT_MOST,
	 .target = 1.5},
	{.fig = {.key = "papi_read_ratio", .what = "PAPI_read / shpmu_read"},
	 .goal = AT_LEAST,
	 .target = 1},
	{.fig = {.key = "cgroup_switch_overhead_0",
		 .what = "ping-pong, 2 cgroups counted / none"},
	 .goal = NONE,
	 .target = 0},
	{.fig = {.key = "cgroup_switch_overhead_200",
		 .what = "ping-pong, 202 cgroups / none"},
	 .goal = NONE,
	 .target = 0},
	{.fig = {.key = "cgroup_switch_overhead_1000",
		 .what = "ping-pong, 1002 cgroups / none"},
	 .goal = NONE,
	 .target = 0},
	{.fig = {.key = "bpf_cgroup_switch_overhead_200",
		 .what = "the same, BPF backend, 202 cgroups; goal: half "
			 "classic's overhead"},
	 .goal = HALF_THE_TAX_OF,
	 .ref = "cgroup_switch_overhead_200",
	 .per_run = true,
	 .run_ns_goal = 250},
	{.fig = {.key = "bpf_cgroup_switch_overhead_1000",
		 .what = "the same, BPF backend, 1002 cgroups"},
	 .goal = AT_MOST,
	 .target = 1.05,
	 .per_run = true,
	 .run_ns_goal = 250},
	{.fig = {.key = "bpf_fds_1000_cgroups",
		 .what = "fds: 1000 cgroups x 8 events, BPF backend"},
	 .goal = EQUALS,
	 .target = 0},
	{.fig = {.key = "ladder_classic_switch_overhead_1",
		 .what = "ping-pong, 1 cgroup counted by classic events / "
			 "none"},
	 .goal = NONE},
	{.fig = {.key = "ladder_classic_switch_overhead_2",
		 .what = "ping-pong, 2 cgroups counted by classic events / "
			 "none"},
	 .goal = NONE},
	{.fig = {.key = "ladder_classic_switch_overhead_4",
		 .what = "ping-pong, 4 cgroups counted by classic events / "
			 "none"},
	 .goal = NONE},
	{.fig = {.key = "ladder_classic_switch_overhead_8",
		 .what = "ping-pong, 8 cgroups counted by classic events / "
			 "none"},
	 .goal = NONE},
	{.fig = {.key = "ladder_classic_switch_overhead_16",
		 .what = "ping-pong, 16 cgroups counted by classic events / "
			 "none"},
	 .goal = NONE},
	{.fig = {.key = "ladder_classic_switch_overhead_32",
		 .what = "ping-pong, 32 cgroups counted by classic events / "
			 "none"},
	 .goal = NONE},
	{.fig = {.key = "ladder_classic_switch_overhead_64",
		 .what = "ping-pong, 64 cgroups counted by classic events / "
			 "none"},
	 .goal = NONE},
	{.fig = {.key = "ladder_bpf_switch_overhead_1",
		 .what = "the same, 1 cgroup counted by BPF"},
	 .goal = NONE},
	{.fig = {.key = "ladder_bpf_switch_overhead_2",
		 .what = "the same, 2 cgroups counted by BPF"},
	 .goal = NONE},
	{.fig = {.key = "ladder_bpf_switch_overhead_4",
		 .what = "the same, 4 cgroups counted by BPF"},
	 .goal = NONE},
	{.fig = {.key = "ladder_bpf_switch_overhead_8",
		 .what = "the same, 8 cgroups counted by BPF"},
	 .goal = NONE},
	{.fig = {.key = "ladder_bpf_switch_overhead_16",
		 .what = "the same, 16 cgroups counted by BPF"},
	 .goal = NONE},
	{.fig = {.key = "ladder_bpf_switch_overhead_32",
		 .what = "the same, 32 cgroups counted by BPF"},
	 .goal = NONE},
	{.fig = {.key = "ladder_bpf_switch_overhead_64",
		 .what = "the same, 64 cgroups counted by BPF"},
	 .goal = NONE},
	{.fig = {.key = "switch_crossover_cgroups",
		 .what = "counted cgroups from which BPF's switch overhead "
			 "stays below classic's"},
	 .goal = NONE},
	{.fig = {.key = "bpf_backend_own_fds",
		 .what = "fds the BPF backend holds beyond one perf event per "
			 "CPU per attr"},
	 .goal = NONE},
	{.fig = {.key = "fd_crossover_cgroups",
		 .what = "counted cgroups from which a BPF context holds fewer "
			 "fds than a classic one"},
	 .goal = NONE},
	{.fig = {.key = "tax_uncounted_same_cgroup",
		 .what = "ping-pong in one cgroup, 2 others counted by BPF / "
			 "none"},
	 .goal = AT_MOST,
	 .target = 1.01,
	 .per_run = true},
	{.fig = {.key = "tax_counted_same_cgroup",
		 .what = "ping-pong in one cgroup, counted by BPF / none"},
	 .goal = AT_MOST,
	 .target = 1.01,
	 .per_run = true},
	{.fig = {.key = "tax_uncounted_cross_cgroup",
		 .what = "ping-pong between 2 cgroups, 2 others counted by "
			 "BPF / none"},
	 .goal = AT_MOST,
	 .target = 1.03,
	 .per_run = true},
	{.fig = {.key = "host_events_16_procs",
		 .what = "perf events host-wide: 16 processes x 8 attrs x "
			 "CPUs, host scope"},
	 .goal = EQUALS,
	 .target = 0},
	{.fig = {.key = "local_events_16_procs",
		 .what = "the same, process scope"},
	 .goal = NONE,
	 .target = 0},
	{.fig = {.key = "host_read_many_ratio",
		 .what = "read_many of 1000 cgroups: host / process-scope BPF"},
	 .goal = AT_MOST,
	 .target = 1.5},
	{.fig = {.key = "host_cached_read_ratio",
		 .what = "shpmu_read_cached / raw read(2)"},
	 .goal = AT_MOST,
	 .target = 0.3},
	{.fig = {.key = "host_switch_overhead_16_procs",
		 .what = "ping-pong, 16 host-scope processes x 1002 cgroups / "
			 "none"},
	 .goal = AT_MOST,
	 .target = 1.05},
	{.fig = {.key = "host_open_close_ratio",
		 .what = "open + close of a cgroup handle, host scope among 16 "
			 "members / process-scope BPF"},
	 .goal = NONE,
	 .target = 0},
	{.fig = {.key = "bpf_task_switch_overhead_1000",
		 .what = "ping-pong, 1000 processes counted by BPF / none"},
	 .goal = AT_MOST,
	 .target = 1.05,
	 .per_run = true},
	{.fig = {.key = "bpf_same_set_switch_overhead",
		 .what = "ping-pong in one cgroup, counted by BPF / not"},
	 .goal = AT_MOST,
	 .target = 1.02,
	 .per_run = true},
	{.fig = {.key = "bpf_empty_trigger_floor_context",
		 .what = "ping-pong, an empty program on context-switches "
			 "events / none"},
	 .goal = NONE,
	 .per_run = true},
	{.fig = {.key = "bpf_empty_trigger_floor_cgroup",
		 .what = "ping-pong between 2 cgroups, an empty program on "
			 "cgroup-switches events / none"},
	 .goal = NONE,
	 .per_run = true},
	{.fig = {.key = "bpf_task_switch_overhead_1000_over_floor",
		 .what = "bpf_task_switch_overhead_1000 / the context floor"},
	 .goal = NONE},
	{.fig = {.key = "bpf_same_set_switch_overhead_over_floor",
		 .what = "bpf_same_set_switch_overhead / the context floor"},
	 .goal = NONE},
	{.fig = {.key = "switches_missed_by_perf_hook_program",
		 .what = "switches a perf_event program on perf's switch hook "
			 "was not run at, per 1000"},
	 .goal = NONE},
	{.fig = {.key = "switches_missed_by_tracepoint_program",
		 .what = "switches a sched_switch raw_tp program was not run "
			 "at, per 1000"},
	 .goal = NONE},
	{.fig = {.key = "switches_unseen_per_1000",
		 .what = "switches the library's program was not run at, per "
			 "1000 the CPUs made (counted by the program itself)"},
	 .goal = NONE},
	{.fig = {.key = "unattributed_ms_per_cpu_s_quiet",
		 .what = "ms per CPU-second the BPF backend left unattributed, "
			 "quiet"},
	 .goal = NONE},
	{.fig = {.key = "unattributed_ms_per_cpu_s_busy",
		 .what = "the same beside a ping-pong and a sleeper in counted "
			 "cgroups"},
	 .goal = NONE},
	{.fig = {.key = "bound_share_busy",
		 .what = "a counted cgroup's bound / its count, there"},
	 .goal = NONE},
	{.fig = {.key = "process_fds_1000",
		 .what = "fds: 1000 processes x 4 attrs, BPF"},
	 .goal = EQUALS,
	 .target = 0},
	{.fig = {.key = "bytes_per_task_target",
		 .what = "kernel map bytes per counted process and attr"},
	 .goal = AT_MOST,
	 .target = 256},
	{.fig = {.key = "exporter_scrape_ms_1000_cgroups",
		 .what = "ms for one shpmu-exporter scrape"},
	 .goal = AT_MOST,
	 .target = 5},
	{.fig = {.key = "exporter_fds_1000_cgroups",
		 .what = "fds of shpmu-exporter for 1000 cgroups x 8 events"},
	 .goal = EQUALS,
	 .target = 0},
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

#ifndef HAVE_HOST_SCOPE
static const char *const host_keys[] = {
	"host_events_16_procs",
	"local_events_16_procs",
	"host_read_many_ratio",
	"host_cached_read_ratio",
	"host_switch_overhead_16_procs",
	"host_open_close_ratio",
	"bpf_task_switch_overhead_1000",
	"bpf_same_set_switch_overhead",
	"bpf_empty_trigger_floor_context",
	"bpf_empty_trigger_floor_cgroup",
	"bpf_task_switch_overhead_1000_over_floor",
	"bpf_same_set_switch_overhead_over_floor",
	"switches_missed_by_perf_hook_program",
	"switches_missed_by_tracepoint_program",
	"switches_unseen_per_1000",
	"unattributed_ms_per_cpu_s_quiet",
	"unattributed_ms_per_cpu_s_busy",
	"bound_share_busy",
	"process_fds_1000",
	"bytes_per_task_target",
	NULL};
#endif

static struct row *row_of(const char *key)
{
	for (size_t i = 0; i < NROWS; i++)
		if (!strcmp(rows[i].fig.key, key))
			return &rows[i];
	return NULL;
}

static struct figure *fig(const char *key)
{
	return &row_of(key)->fig;
}

/* Goals computed from other figures of the run; none where those were
 * skipped. */
static void compute_goals(void)
{
	for (size_t i = 0; i < NROWS; i++) {
		struct row *r = &rows[i];
		const struct figure *ref;

		if (r->goal != HALF_THE_TAX_OF)
			continue;
		ref = fig(r->ref);
		if (ref->skipped)
			r->goal = NONE;
		else
			r->target = 1 + (ref->median - 1) / 2;
	}
}

/* f as figure / floor: the figure's median, min and max over the floor's
 * median. */
static void over_floor(struct figure *f, const struct figure *figure,
		       const struct figure *floor)
{
	double s[3] = {figure->min, figure->median, figure->max};

	if (figure->skipped || floor->skipped) {
		figure_skip(f, figure->skipped ? figure->note : floor->note);
		return;
	}
	for (int i = 0; i < 3; i++)
		s[i] /= floor->median;
	figure_set(f, s, 3);
	snprintf(f->note, sizeof(f->note), "floor %.3f", floor->median);
}

/* The ladder's rows, rung by rung (bench_crossover()). */
static void ladder_rows(struct figure **classic, struct figure **bpf)
{
	char key[64];

	for (int k = 0; k < LADDER_RUNGS; k++) {
		snprintf(key, sizeof(key), "ladder_classic_switch_overhead_%d",
			 ladder[k]);
		classic[k] = fig(key);
		snprintf(key, sizeof(key), "ladder_bpf_switch_overhead_%d",
			 ladder[k]);
		bpf[k] = fig(key);
	}
}

static const char *verdict(const struct row *r)
{
	if (r->fig.skipped)
		return "skipped";
	switch (r->goal) {
	case AT_LEAST:
		return r->fig.median >= r->target ? "met" : "MISSED";
	case AT_MOST:
	case HALF_THE_TAX_OF:
		return r->fig.median <= r->target ? "met" : "MISSED";
	case EQUALS:
		return r->fig.median == r->target ? "met" : "MISSED";
	default:
		return "";
	}
}

/* The verdict on a row's run-time goal, as the note's last words; "" for
 * none. */
static void run_verdict(const struct row *r, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!r->run_ns_goal || r->fig.skipped)
		return;
	if (!r->fig.ns_per_run) {
		snprintf(buf, len, "; run time goal <= %g ns: not measured",
			 r->run_ns_goal);
		return;
	}
	snprintf(buf, len, "; run time goal <= %g ns: %s", r->run_ns_goal,
		 r->fig.ns_per_run <= r->run_ns_goal ? "met" : "MISSED");
}

static void print_table(FILE *out)
{
	int w = 0;

	for (size_t i = 0; i < NROWS; i++)
		if ((int)strlen(rows[i].fig.key) > w)
			w = (int)strlen(rows[i].fig.key);
	fprintf(out, "%-*s %12s %12s %12s  %-8s %s\n", w, "figure", "median",
		"min", "max", "goal", "what");
	for (size_t i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];
		char goal[32] = "", run[64];

		if (r->goal == AT_LEAST)
			snprintf(goal, sizeof(goal), ">= %g", r->target);
		else if (r->goal == AT_MOST)
			snprintf(goal, sizeof(goal), "<= %g", r->target);
		else if (r->goal == EQUALS)
			snprintf(goal, sizeof(goal), "= %g", r->target);
		else if (r->goal == HALF_THE_TAX_OF)
			snprintf(goal, sizeof(goal), "<= %.3f", r->target);
		if (r->fig.skipped) {
			fprintf(out, "%-*s %12s %12s %12s  %-8s skipped: %s\n",
				w, r->fig.key, "-", "-", "-", goal,
				r->fig.note);
			continue;
		}
		run_verdict(r, run, sizeof(run));
		fprintf(out, "%-*s %12.3f %12.3f %12.3f  %-8s %s %s%s%s%s\n", w,
			r->fig.key, r->fig.median, r->fig.min, r->fig.max, goal,
			verdict(r), r->fig.what, r->fig.note[0] ? "; " : "",
			r->fig.note, run);
	}
}

static void print_json(void)
{
	printf("{");
	for (size_t i = 0; i < NROWS; i++) {
		const struct figure *f = &rows[i].fig;

		/* Numbers only: a skipped figure is 0 (the table says why),
		 * so is a program's run time not measured. */
		printf("%s\"%s\": %.6g", i ? ", " : "", f->key,
		       f->skipped ? 0 : f->median);
		if (rows[i].per_run)
			printf(", \"%s_ns_per_run\": %.6g", f->key,
			       f->skipped ? 0 : f->ns_per_run);
	}
	printf("}\n");
}

int main(int argc, char **argv)
{
	bool json = argc > 1 && !strcmp(argv[1], "--json");
	struct figure *const taxes[NTAX] = {
		[TAX_UNCOUNTED_SAME] = fig("tax_uncounted_same_cgroup"),
		[TAX_COUNTED_SAME] = fig("tax_counted_same_cgroup"),
		[TAX_UNCOUNTED_CROSS] = fig("tax_uncounted_cross_cgroup")};
	struct figure *ladder_classic[LADDER_RUNGS], *ladder_bpf[LADDER_RUNGS];
	struct figure *const crossovers[NCROSS] = {
		[CROSS_SWITCH] = fig("switch_crossover_cgroups"),
		[CROSS_OWN_FDS] = fig("bpf_backend_own_fds"),
		[CROSS_FDS] = fig("fd_crossover_cgroups")};
	struct rlimit rl;

	if (argc > 1 && !json) {
		fprintf(stderr, "usage: shpmu-bench [--json]\n");
		return 2;
	}
	/* As many fds as the hard limit allows: the fd figures need them. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* One event per CPU for each of the 8 attrs. */
	row_of("fds_shared")->target = 8.0 * online_cpus();
	row_of("bpf_fds_1000_cgroups")->target = 8.0 * online_cpus();
	row_of("exporter_fds_1000_cgroups")->target = 8.0 * online_cpus();
	row_of("host_events_16_procs")->target = 8.0 * online_cpus();
	row_of("process_fds_1000")->target = 4.0 * online_cpus();

	ladder_rows(ladder_classic, ladder_bpf);

	bench_open_dup(fig("open_dup_speedup"), fig("open_dup_vs_read"));
	bench_read_overhead(fig("read_overhead_ratio"));
	bench_read_many(fig("read_many_speedup"));
	bench_fds(fig("fds_raw"), fig("fds_shared"));
	bench_bytes_per_handle(fig("bytes_per_handle"));
	bench_op_cost_growth(fig("op_cost_growth"));
	bench_papi_read(fig("papi_read_ratio"));
	bench_cgroup_switch(fig("cgroup_switch_overhead_0"),
			    fig("cgroup_switch_overhead_200"),
			    fig("cgroup_switch_overhead_1000"),
			    fig("bpf_cgroup_switch_overhead_200"),
			    fig("bpf_cgroup_switch_overhead_1000"),
			    fig("bpf_fds_1000_cgroups"), taxes);
	bench_crossover(ladder_classic, ladder_bpf, crossovers);
#ifdef HAVE_HOST_SCOPE
	bench_host(fig("host_events_16_procs"), fig("local_events_16_procs"),
		   fig("host_read_many_ratio"), fig("host_cached_read_ratio"),
		   fig("host_switch_overhead_16_procs"),
		   fig("host_open_close_ratio"));
	bench_task_targets(fig("bpf_task_switch_overhead_1000"),
			   fig("bpf_same_set_switch_overhead"),
			   fig("bpf_empty_trigger_floor_context"),
			   fig("bpf_empty_trigger_floor_cgroup"),
			   fig("process_fds_1000"),
			   fig("bytes_per_task_target"));
	bench_switch_hooks(fig("switches_missed_by_perf_hook_program"),
			   fig("switches_missed_by_tracepoint_program"));
	bench_unattributed(fig("switches_unseen_per_1000"),
			   fig("unattributed_ms_per_cpu_s_quiet"),
			   fig("unattributed_ms_per_cpu_s_busy"),
			   fig("bound_share_busy"));
#else
	for (const char *const *k = host_keys; *k; k++)
		figure_skip(fig(*k), "built without the BPF backend");
#endif
	over_floor(fig("bpf_task_switch_overhead_1000_over_floor"),
		   fig("bpf_task_switch_overhead_1000"),
		   fig("bpf_empty_trigger_floor_context"));
	over_floor(fig("bpf_same_set_switch_overhead_over_floor"),
		   fig("bpf_same_set_switch_overhead"),
		   fig("bpf_empty_trigger_floor_context"));
	bench_exporter(beside("shpmu-exporter"),
		       fig("exporter_scrape_ms_1000_cgroups"),
		       fig("exporter_fds_1000_cgroups"));

	compute_goals();
	print_table(json ? stderr : stdout);
	if (json)
		print_json();
	return 0;
}
