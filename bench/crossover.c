// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where the BPF backend starts to cost less than classic cgroup events,
 * as the number of counted cgroups (task-clock on every CPU) grows:
 *
 * - per switch: the ping-pong of cgroup_switch.c with 1, 2, 4 ... 64
 *   cgroups counted by each backend in turn, each against the same
 *   ping-pong with nothing counted measured just before it. Each rung
 *   makes a fresh context for each backend, so that the two are measured
 *   a second apart against one baseline; which goes first alternates, so
 *   that neither always runs on a warmer cache.
 * - in fds: every fd the process holds with 1 ... 64 cgroups counted,
 *   classic against BPF, whose program and maps hold fds of their own
 *   (the figure AUTO's threshold in lib/backend_choice.c is made of).
 *
 * Each crossover is the first number of cgroups from which BPF stays
 * below classic.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define FD_LADDER_TOP 64

const int ladder[LADDER_RUNGS] = {1, 2, 4, 8, 16, 32, 64};

/* The crossover where BPF never goes below classic. */
#define BEYOND (2 * FD_LADDER_TOP)

/* The ladder's cgroups in the order they are counted: ping and pong,
 * which the ping-pong runs in, then base/c0000 on. */
static void counted_name(int i, char *name, size_t size)
{
	if (i < 2)
		snprintf(name, size, "%s", i ? "pong" : "ping");
	else
		snprintf(name, size, "c%04d", i - 2);
}

static struct shpmu *context(enum shpmu_cgroup_backend which)
{
	SHPMU_OPTS(opts, .cgroup_backend = which);
	struct shpmu *pmu = shpmu_new(&opts);

	if (!pmu)
		die("shpmu_new", errno);
	return pmu;
}

/* Counts the ladder's cgroups [from, to) in pmu. */
static void count_cgroups(struct shpmu *pmu, int from, int to)
{
	char name[16];

	for (int i = from; i < to; i++) {
		int h;

		counted_name(i, name, sizeof(name));
		h = open_cgroup(pmu, name, PERF_COUNT_SW_TASK_CLOCK);
		if (h < 0)
			die("cgroup event", -h);
	}
}

/* The ping-pong with the first n of the ladder's cgroups counted by
 * which, over bare. */
static double ratio_with(enum shpmu_cgroup_backend which, int n, double bare)
{
	struct shpmu *pmu = context(which);
	double ratio;

	count_cgroups(pmu, 0, n);
	ratio = ping_pong() / bare;
	shpmu_free(pmu);
	return ratio;
}

/* The first rung from which bpf stays below classic: an index of the
 * ladder, n where it never does. */
static int first_below(const double *bpf, const double *classic, int n)
{
	int from = n;

	for (int k = n - 1; k >= 0 && bpf[k] < classic[k]; k--)
		from = k;
	return from;
}

static double switch_crossover(const double *bpf, const double *classic)
{
	int k = first_below(bpf, classic, LADDER_RUNGS);

	return k < LADDER_RUNGS ? ladder[k] : BEYOND;
}

/* One repetition of the switch ladder, into column rep of c and b. */
static double switch_rep(int rep, double c[][REPS], double b[][REPS])
{
	double rc[LADDER_RUNGS], rb[LADDER_RUNGS];

	for (int k = 0; k < LADDER_RUNGS; k++) {
		double bare = ping_pong();
		bool classic_first = (rep + k) % 2 == 0;

		if (classic_first)
			rc[k] = ratio_with(SHPMU_CGROUP_BACKEND_PERF, ladder[k],
					   bare);
		rb[k] = ratio_with(SHPMU_CGROUP_BACKEND_BPF, ladder[k], bare);
		if (!classic_first)
			rc[k] = ratio_with(SHPMU_CGROUP_BACKEND_PERF, ladder[k],
					   bare);
		c[k][rep] = rc[k];
		b[k][rep] = rb[k];
	}
	return switch_crossover(rb, rc);
}

static void switch_ladder(struct figure *const classic[LADDER_RUNGS],
			  struct figure *const bpf[LADDER_RUNGS],
			  struct figure *crossover)
{
	double c[LADDER_RUNGS][REPS], b[LADDER_RUNGS][REPS], per_rep[REPS];
	double mc[LADDER_RUNGS], mb[LADDER_RUNGS];

	ping_pong(); /* warm-up */
	for (int rep = 0; rep < REPS; rep++)
		per_rep[rep] = switch_rep(rep, c, b);
	for (int k = 0; k < LADDER_RUNGS; k++) {
		figure_set(classic[k], c[k], REPS);
		figure_set(bpf[k], b[k], REPS);
		mc[k] = classic[k]->median;
		mb[k] = bpf[k]->median;
	}
	/* The crossover of the medians; min and max are the repetitions'
	 * own, to show how far one run may stray. */
	figure_set(crossover, per_rep, REPS);
	crossover->median = switch_crossover(mb, mc);
	snprintf(crossover->note, sizeof(crossover->note),
		 "of the medians over the ladder 1-64; %d: BPF never below",
		 BEYOND);
}

static int fds_held(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		die("/proc/self/fd", errno);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Every fd the process holds beyond before, with 1 ... FD_LADDER_TOP
 * cgroups counted by which: fds[n - 1]. */
static void fds_ladder(enum shpmu_cgroup_backend which, int before, double *fds)
{
	struct shpmu *pmu = context(which);

	for (int n = 1; n <= FD_LADDER_TOP; n++) {
		count_cgroups(pmu, n - 1, n);
		fds[n - 1] = fds_held() - before;
	}
	shpmu_free(pmu);
}

static void fd_crossover(struct figure *own, struct figure *crossover)
{
	double classic[FD_LADDER_TOP], bpf[FD_LADDER_TOP], one[1];
	int before = fds_held(), k, at;

	fds_ladder(SHPMU_CGROUP_BACKEND_PERF, before, classic);
	fds_ladder(SHPMU_CGROUP_BACKEND_BPF, before, bpf);
	/* One cgroup takes one perf event per CPU either way: the rest is
	 * the program's and its maps'. */
	one[0] = bpf[0] - classic[0];
	figure_set(own, one, 1);
	snprintf(own->note, sizeof(own->note),
		 "1 cgroup: classic %.0f fds, BPF %.0f (%d CPUs)", classic[0],
		 bpf[0], online_cpus());
	k = first_below(bpf, classic, FD_LADDER_TOP);
	at = k < FD_LADDER_TOP ? k : FD_LADDER_TOP - 1;
	one[0] = k < FD_LADDER_TOP ? k + 1 : BEYOND;
	figure_set(crossover, one, 1);
	snprintf(crossover->note, sizeof(crossover->note),
		 "cgroups counted one at a time up to %d; at %d classic "
		 "holds %.0f fds, BPF %.0f; %d: BPF never below",
		 FD_LADDER_TOP, at + 1, classic[at], bpf[at], BEYOND);
}

static bool bpf_works(void)
{
	SHPMU_OPTS(opts, .cgroup_backend = SHPMU_CGROUP_BACKEND_BPF);
	struct shpmu *pmu = shpmu_new(&opts);

	shpmu_free(pmu);
	return pmu != NULL;
}

void bench_crossover(struct figure *const classic[LADDER_RUNGS],
		     struct figure *const bpf[LADDER_RUNGS],
		     struct figure *const crossovers[NCROSS])
{
	struct shpmu *probe = shpmu_new(NULL);
	bool made = probe && switch_cgroups_make(probe);
	const char *why = NULL;

	shpmu_free(probe);
	if (!made)
		why = "needs a cgroup hierarchy and root";
	else if (!bpf_works())
		why = "the BPF backend cannot work here";
	if (why) {
		for (int k = 0; k < LADDER_RUNGS; k++) {
			figure_skip(classic[k], why);
			figure_skip(bpf[k], why);
		}
		for (int i = 0; i < NCROSS; i++)
			figure_skip(crossovers[i], why);
	} else {
		switch_ladder(classic, bpf, crossovers[CROSS_SWITCH]);
		fd_crossover(crossovers[CROSS_OWN_FDS], crossovers[CROSS_FDS]);
	}
	switch_cgroups_remove();
}
