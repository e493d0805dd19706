// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What classic cgroup events cost a context switch: a pipe ping-pong
 * between two processes in two monitored cgroups, both pinned to CPU 0,
 * with 0, 200 and 1000 further cgroups each counted by one event per CPU.
 * Each round trip is two switches between the cgroups. Ratios are against
 * the same ping-pong with nothing counted, measured in the same repetition.
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

/* One ping-pong between base/ping and base/pong: the ns per round trip,
 * as the pinger measured it. */
double ping_pong(void)
{
	char ping[600], pong[600];
	struct pair p;

	snprintf(ping, sizeof(ping), "%s/ping", base);
	snprintf(pong, sizeof(pong), "%s/pong", base);
	pair_start(&p, ping, pong);
	return pair_run(&p);
}

int open_cgroup(struct shpmu *pmu, const char *name, uint64_t config)
{
	struct perf_event_attr a = bench_attr(config, false);
	char path[600];
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS,
				 .cgroup_path = path};

	snprintf(path, sizeof(path), "%s/%s", base, name);
	return shpmu_open(pmu, &a, &t);
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
		}
		shpmu_free(pmu);
	}
	for (int k = 0; k < nfigs; k++) {
		figure_set(figs[k], samples[k], REPS);
		snprintf(figs[k]->note, sizeof(figs[k]->note),
			 "%d cgroups counted", extra[k] + 2);
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

void bench_cgroup_switch(struct figure *f0, struct figure *f200,
			 struct figure *f1000, struct figure *b200,
			 struct figure *b1000, struct figure *bfds)
{
	struct figure *classic[3] = {f0, f200, f1000};
	struct figure *bpf[2] = {b200, b1000};
	static const int extra[3] = {0, 200, EXTRA_MAX};
	struct shpmu *probe = shpmu_new(NULL);
	struct shpmu *try_bpf;

	if (!probe || !switch_cgroups_make(probe)) {
		for (int k = 0; k < 3; k++)
			figure_skip(classic[k], "needs a cgroup hierarchy and "
						"root");
		figure_skip(b200, "needs a cgroup hierarchy and root");
		figure_skip(b1000, "needs a cgroup hierarchy and root");
		figure_skip(bfds, "needs a cgroup hierarchy and root");
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
		figure_skip(b200, "the BPF backend cannot work here");
		figure_skip(b1000, "the BPF backend cannot work here");
		figure_skip(bfds, "the BPF backend cannot work here");
	} else {
		shpmu_free(try_bpf);
		run_backend(SHPMU_CGROUP_BACKEND_BPF, bpf, 2, extra + 1);
		bpf_fds(bfds);
	}
	switch_cgroups_remove();
}
