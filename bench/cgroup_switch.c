// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What classic cgroup events cost a context switch: a pipe ping-pong
 * between two processes in two monitored cgroups, both pinned to CPU 0,
 * with 0, 200 and 1000 further cgroups each counted by one event per CPU.
 * Each round trip is two switches between the cgroups. Ratios are against
 * the same ping-pong with nothing counted, measured in the same repetition.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define ROUND_TRIPS 20000
#define EXTRA_MAX 1000

static char base[512];

static void move_to(const char *cgroup)
{
	char procs[600];
	FILE *f;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);
	f = fopen(procs, "w");
	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
		_exit(1);
}

static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* One ping-pong: the ns per round trip, as the pinger measured it. */
static double ping_pong(void)
{
	int ab[2], ba[2], res[2];
	pid_t ping, pong;
	double per_rt = -1;
	char byte = 0;

	if (pipe(ab) || pipe(ba) || pipe(res))
		die("pipe", errno);
	pong = fork();
	if (pong == 0) {
		char path[600];

		snprintf(path, sizeof(path), "%s/pong", base);
		move_to(path);
		pin_cpu0();
		for (int i = 0; i < ROUND_TRIPS; i++)
			if (read(ab[0], &byte, 1) != 1 ||
			    write(ba[1], &byte, 1) != 1)
				_exit(1);
		_exit(0);
	}
	ping = fork();
	if (ping == 0) {
		char path[600];
		double t0, ns;

		snprintf(path, sizeof(path), "%s/ping", base);
		move_to(path);
		pin_cpu0();
		t0 = now_ns();
		for (int i = 0; i < ROUND_TRIPS; i++)
			if (write(ab[1], &byte, 1) != 1 ||
			    read(ba[0], &byte, 1) != 1)
				_exit(1);
		ns = (now_ns() - t0) / ROUND_TRIPS;
		if (write(res[1], &ns, sizeof(ns)) != sizeof(ns))
			_exit(1);
		_exit(0);
	}
	if (read(res[0], &per_rt, sizeof(per_rt)) != sizeof(per_rt))
		per_rt = -1;
	waitpid(ping, NULL, 0);
	waitpid(pong, NULL, 0);
	close(ab[0]);
	close(ab[1]);
	close(ba[0]);
	close(ba[1]);
	close(res[0]);
	close(res[1]);
	return per_rt;
}

static int open_cgroup(struct shpmu *pmu, const char *name)
{
	struct perf_event_attr a = bench_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	char path[600];
	struct shpmu_target t = { .kind = SHPMU_TARGET_CGROUP,
				  .cpu = SHPMU_ALL_CPUS,
				  .cgroup_path = path };

	snprintf(path, sizeof(path), "%s/%s", base, name);
	return shpmu_open(pmu, &a, &t);
}

static void cleanup(void)
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

static bool make_cgroups(struct shpmu *pmu)
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

void bench_cgroup_switch(struct figure *f0, struct figure *f200,
			 struct figure *f1000)
{
	struct figure *figs[3] = { f0, f200, f1000 };
	static const int extra[3] = { 0, 200, EXTRA_MAX };
	double samples[3][REPS];
	struct shpmu *probe = shpmu_new(NULL);
	int hs[EXTRA_MAX + 2];

	if (!probe || !make_cgroups(probe)) {
		for (int k = 0; k < 3; k++)
			figure_skip(figs[k], "needs a cgroup hierarchy and root");
		cleanup();
		shpmu_free(probe);
		return;
	}
	shpmu_free(probe);
	ping_pong(); /* warm-up */
	for (int rep = 0; rep < REPS; rep++) {
		struct shpmu *pmu = shpmu_new(NULL);
		double bare = ping_pong();
		int n = 0;

		if (!pmu)
			die("shpmu_new", errno);
		hs[n++] = open_cgroup(pmu, "ping");
		hs[n++] = open_cgroup(pmu, "pong");
		for (int k = 0; k < 3; k++) {
			char name[16];

			while (n < extra[k] + 2) {
				snprintf(name, sizeof(name), "c%04d", n - 2);
				hs[n] = open_cgroup(pmu, name);
				if (hs[n] < 0)
					die("cgroup event", -hs[n]);
				n++;
			}
			samples[k][rep] = ping_pong() / bare;
		}
		shpmu_free(pmu);
	}
	for (int k = 0; k < 3; k++) {
		figure_set(figs[k], samples[k], REPS);
		snprintf(figs[k]->note, sizeof(figs[k]->note),
			 "%d cgroups counted, %d fds", extra[k] + 2,
			 (extra[k] + 2) * online_cpus());
	}
	cleanup();
}
