// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What classic cgroup events cost a context switch: a pipe ping-pong
 * between two processes in two monitored cgroups, both pinned to CPU 0,
 * with 0, 200 and 1000 further cgroups each counted by one event per CPU.
 * Each round trip is two switches between the cgroups. The same through
 * the BPF backend, and the tax its program puts on switches in and between
 * cgroups it does not count. Ratios are against the same ping-pong with
 * nothing counted, measured in the same repetition.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

#define EXTRA_MAX SWITCH_EXTRA

static char base[512];

static void path_of(char *path, const char *name)
{
	snprintf(path, 600, "%s/%s", base, name);
}

/* One ping-pong between base/ping_name and base/pong_name: the ns per
 * round trip, as the pinger measured it. */
static double pair_in(const char *ping_name, const char *pong_name)
{
	char ping[600], pong[600];
	struct pair p;

	path_of(ping, ping_name);
	path_of(pong, pong_name);
	pair_start(&p, ping, pong);
	return pair_run(&p);
}

double ping_pong(void)
{
	return pair_in("ping", "pong");
}

int open_cgroup(struct shpmu *pmu, const char *name, uint64_t config)
{
	struct perf_event_attr a = bench_attr(config, false);
	char path[600];
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS,
				 .cgroup_path = path};

	path_of(path, name);
	return shpmu_open(pmu, &a, &t);
}

/* The library program's cost over a ping-pong between base/ping_name and
 * base/pong_name. */
static void cost_pair(struct prog_cost *c, int rep, const char *ping_name,
		      const char *pong_name)
{
	char ping[600], pong[600];

	path_of(ping, ping_name);
	path_of(pong, pong_name);
	prog_cost_pair(c, rep, library_prog, ping, pong);
}

void switch_cgroups_remove(void)
{
	char path[600];

	for (int i = 0; i < EXTRA_MAX; i++) {
		snprintf(path, sizeof(path), "%s/c%04d", base, i);
		rmdir(path);
	}
	snprintf(path, sizeof(path), "%s/ping", base);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/pong", base);
	rmdir(path);
	rmdir(base);
}

bool switch_cgroups_make(struct shpmu *pmu)
{
	char root[256], path[600];

	if (shpmu_cgroup_root(pmu, root, sizeof(root)))
		return false;
	snprintf(base, sizeof(base), "%s/shpmu-bench-%d", root, getpid());
	if (mkdir(base, 0755))
		return false;
	snprintf(path, sizeof(path), "%s/ping", base);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/pong", base);
	mkdir(path, 0755);
	for (int i = 0; i < EXTRA_MAX; i++) {
		snprintf(path, sizeof(path), "%s/c%04d", base, i);
		if (mkdir(path, 0755))
			return false;
	}
	return true;
}

static struct shpmu *backend(enum shpmu_cgroup_backend which)
{
	SHPMU_OPTS(opts, .cgroup_backend = which);
	struct shpmu *pmu = shpmu_new(&opts);

	if (!pmu)
		die("shpmu_new", errno);
	return pmu;
}

/* One backend's figures for 2, 202 and 1002 counted cgroups. */
static void run_backend(enum shpmu_cgroup_backend which, struct figure **figs,
			int nfigs, const int *extra)
{
	bool bpf = which == SHPMU_CGROUP_BACKEND_BPF;
	struct prog_cost cost[3];
	double samples[3][REPS];
	int hs[EXTRA_MAX + 2];

	for (int rep = 0; rep < REPS; rep++) {
		/* Before the context: a BPF context attaches its program at
		 * shpmu_new, and it runs at every switch from then on. */
		double bare = ping_pong();
		struct shpmu *pmu = backend(which);
		int n = 0, k = 0;

		hs[n++] = open_cgroup(pmu, "ping", PERF_COUNT_SW_TASK_CLOCK);
		hs[n++] = open_cgroup(pmu, "pong", PERF_COUNT_SW_TASK_CLOCK);
		for (k = 0; k < nfigs; k++) {
			char name[16];

			while (n < extra[k] + 2) {
				snprintf(name, sizeof(name), "c%04d", n - 2);
				hs[n] = open_cgroup(pmu, name,
						    PERF_COUNT_SW_TASK_CLOCK);
				if (hs[n] < 0)
					die("cgroup event", -hs[n]);
				n++;
			}
			samples[k][rep] = ping_pong() / bare;
			if (bpf)
				cost_pair(&cost[k], rep, "ping", "pong");
		}
		shpmu_free(pmu);
	}
	for (int k = 0; k < nfigs; k++) {
		figure_set(figs[k], samples[k], REPS);
		snprintf(figs[k]->note, sizeof(figs[k]->note),
			 "%d cgroups counted", extra[k] + 2);
		if (bpf)
			prog_cost_note(figs[k], &cost[k]);
	}
}

/* fds for 1000 cgroups x 8 events through the BPF backend. */
static void bpf_fds(struct figure *f)
{
	struct shpmu *pmu = backend(SHPMU_CGROUP_BACKEND_BPF);
	struct shpmu_stats st;
	char name[16];
	double one[1];

	for (int i = 0; i < EXTRA_MAX; i++)
		for (uint64_t e = 0; e < 8; e++) {
			snprintf(name, sizeof(name), "c%04d", i);
			/* 8 distinct events: 4 configs, with and without
			 * the kernel's share. */
			static const uint64_t configs[4] = {
				PERF_COUNT_SW_CPU_CLOCK,
				PERF_COUNT_SW_TASK_CLOCK,
				PERF_COUNT_SW_PAGE_FAULTS,
				PERF_COUNT_SW_CONTEXT_SWITCHES};
			struct perf_event_attr a =
				bench_attr(configs[e % 4], false);
			char path[600];
			struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
						 .cpu = SHPMU_ALL_CPUS,
						 .cgroup_path = path};

			a.exclude_kernel = e >= 4;
			snprintf(path, sizeof(path), "%s/%s", base, name);
			if (shpmu_open(pmu, &a, &t) < 0)
				die("BPF cgroup event", errno);
		}
	shpmu_get_stats(pmu, &st);
	one[0] = (double)st.kernel_fds;
	figure_set(f, one, 1);
	snprintf(f->note, sizeof(f->note),
		 "%llu handles on %llu kernel events; classic: %d fds",
		 (unsigned long long)st.handles,
		 (unsigned long long)st.kernel_events,
		 EXTRA_MAX * 8 * online_cpus());
	shpmu_free(pmu);
}

/* What counting cgroups through BPF costs switches: ping in base/ping,
 * pong in base/<pong>, while task-clock and context-switches are counted
 * in two cgroups. */
static const struct tax_case {
	const char *pong, *counted[2], *note;
} tax_cases[NTAX] = {
	[TAX_UNCOUNTED_SAME] = {"ping",
				{"c0000", "c0001"},
				"ping and pong in one uncounted cgroup, 2 "
				"others counted"},
	[TAX_COUNTED_SAME] = {"ping",
			      {"ping", "c0000"},
			      "ping and pong in one counted cgroup, 1 other "
			      "counted"},
	[TAX_UNCOUNTED_CROSS] = {"pong",
				 {"c0000", "c0001"},
				 "ping and pong in two uncounted cgroups, 2 "
				 "others counted"},
};

/* One repetition: the ping-pong against the same before the context. */
static double tax_rep(const struct tax_case *t, struct prog_cost *c, int rep)
{
	double bare = pair_in("ping", t->pong), ratio;
	struct shpmu *pmu = backend(SHPMU_CGROUP_BACKEND_BPF);

	for (int i = 0; i < 2; i++) {
		int clock = open_cgroup(pmu, t->counted[i],
					PERF_COUNT_SW_TASK_CLOCK);
		int cs = open_cgroup(pmu, t->counted[i],
				     PERF_COUNT_SW_CONTEXT_SWITCHES);

		if (clock < 0 || cs < 0)
			die("cgroup event", clock < 0 ? -clock : -cs);
	}
	ratio = pair_in("ping", t->pong) / bare;
	cost_pair(c, rep, "ping", t->pong);
	shpmu_free(pmu);
	return ratio;
}

/* The cases side by side in each repetition. */
static void tax(struct figure *const figs[NTAX])
{
	struct prog_cost cost[NTAX];
	double samples[NTAX][REPS];

	for (int rep = 0; rep < REPS; rep++)
		for (int t = 0; t < NTAX; t++)
			samples[t][rep] = tax_rep(&tax_cases[t], &cost[t], rep);
	for (int t = 0; t < NTAX; t++) {
		figure_set(figs[t], samples[t], REPS);
		snprintf(figs[t]->note, sizeof(figs[t]->note), "%s",
			 tax_cases[t].note);
		prog_cost_note(figs[t], &cost[t]);
	}
}

static void skip_all(struct figure *const *figs, int n, const char *why)
{
	for (int k = 0; k < n; k++)
		figure_skip(figs[k], why);
}

void bench_cgroup_switch(struct figure *f0, struct figure *f200,
			 struct figure *f1000, struct figure *b200,
			 struct figure *b1000, struct figure *bfds,
			 struct figure *const taxes[NTAX])
{
	struct figure *classic[3] = {f0, f200, f1000};
	struct figure *bpf[3] = {b200, b1000, bfds};
	static const int extra[3] = {0, 200, EXTRA_MAX};
	struct shpmu *probe = shpmu_new(NULL);
	struct shpmu *try_bpf;

	if (!probe || !switch_cgroups_make(probe)) {
		const char *why = "needs a cgroup hierarchy and root";

		skip_all(classic, 3, why);
		skip_all(bpf, 3, why);
		skip_all(taxes, NTAX, why);
		switch_cgroups_remove();
		shpmu_free(probe);
		return;
	}
	shpmu_free(probe);
	ping_pong(); /* warm-up */
	run_backend(SHPMU_CGROUP_BACKEND_PERF, classic, 3, extra);
	try_bpf = shpmu_new(&(struct shpmu_opts){
		.sz = sizeof(struct shpmu_opts),
		.cgroup_backend = SHPMU_CGROUP_BACKEND_BPF});
	if (!try_bpf) {
		skip_all(bpf, 3, "the BPF backend cannot work here");
		skip_all(taxes, NTAX, "the BPF backend cannot work here");
	} else {
		shpmu_free(try_bpf);
		run_backend(SHPMU_CGROUP_BACKEND_BPF, bpf, 2, extra + 1);
		bpf_fds(bfds);
		tax(taxes);
	}
	switch_cgroups_remove();
}
