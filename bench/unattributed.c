// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the BPF backend cannot attribute on this kernel: the context
 * switches its program was not run at, per 1000 the CPUs made (their own
 * raw context-switches events are the truth), and the CPU time whose
 * counts went unattributed, in ms per CPU-second: with the machine quiet,
 * and beside the ping-pong between two counted cgroups plus a task that
 * sleeps and wakes in a third. There, also the counted cgroup's bound as
 * a share of its count. Upstream kernels run the program at every switch:
 * all of these are 0 there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* The CPUs' own switch counts. */
static uint64_t cpu_switches(const int *fds, int n)
{
	uint64_t sum = 0, v[3]; /* value, time enabled, time running */

	for (int i = 0; i < n; i++)
		if (read(fds[i], v, sizeof(v)) == sizeof(v))
			sum += v[0];
	return sum;
}

/* A child in cgroup that sleeps 100 us and burns a little, 2000 times:
 * idle entries and exits on whatever CPU it lands. */
static pid_t sleeper_in(struct shpmu *pmu, const char *cgroup)
{
	char root[256], procs[700];
	pid_t pid = fork();

	if (pid < 0)
		die("fork", errno);
	if (pid > 0)
		return pid;
	if (shpmu_cgroup_root(pmu, root, sizeof(root)) == 0) {
		FILE *f;

		snprintf(procs, sizeof(procs),
			 "%s/shpmu-bench-%d/%s/cgroup.procs", root, getppid(),
			 cgroup);
		f = fopen(procs, "w");
		if (f) {
			fprintf(f, "0\n");
			fclose(f);
		}
	}
	for (int i = 0; i < 2000; i++) {
		struct timespec us = {.tv_nsec = 100000};
		double until = now_ns() + 20000;

		nanosleep(&us, NULL);
		while (now_ns() < until)
			;
	}
	_exit(0);
}

struct sample {
	uint64_t switches, unseen, unattributed_ns, value, bound;
	double at;
};

static void sample(struct shpmu *pmu, int h, const int *fds, int n,
		   struct sample *s)
{
	struct shpmu_count c;
	struct shpmu_stats st;

	/* The read settles every CPU first. */
	if (shpmu_read_bound(pmu, h, &c, &s->bound) ||
	    shpmu_get_stats(pmu, &st))
		die("shpmu_read_bound", errno);
	s->value = c.value;
	s->unseen = st.switches_unseen;
	s->unattributed_ns = st.unattributed_ns;
	s->switches = cpu_switches(fds, n);
	s->at = now_ns();
}

static double ms_per_cpu_s(const struct sample *a, const struct sample *b,
			   int ncpus)
{
	double cpu_s = (b->at - a->at) / 1e9 * ncpus;

	return (double)(b->unattributed_ns - a->unattributed_ns) / 1e6 / cpu_s;
}

void bench_unattributed(struct figure *unseen, struct figure *quiet,
			struct figure *busy, struct figure *share)
{
	double per_1000[REPS], q[REPS], b[REPS], sh[REPS];
	int ncpus = online_cpus(), *fds = calloc((size_t)ncpus, sizeof(*fds));
	SHPMU_OPTS(opts, .cgroup_backend = SHPMU_CGROUP_BACKEND_BPF);
	struct shpmu *pmu = shpmu_new(&opts);
	int h;

	if (!pmu || !fds || !switch_cgroups_make(pmu)) {
		const char *why = "needs the BPF backend, cgroups and root";

		figure_skip(unseen, why);
		figure_skip(quiet, why);
		figure_skip(busy, why);
		figure_skip(share, why);
		switch_cgroups_remove();
		shpmu_free(pmu);
		free(fds);
		return;
	}
	for (int cpu = 0; cpu < ncpus; cpu++)
		fds[cpu] =
			raw_open(PERF_COUNT_SW_CONTEXT_SWITCHES, -1, cpu, -1);
	h = open_cgroup(pmu, "ping", PERF_COUNT_SW_TASK_CLOCK);
	if (h < 0 || open_cgroup(pmu, "pong", PERF_COUNT_SW_TASK_CLOCK) < 0 ||
	    open_cgroup(pmu, "c0000", PERF_COUNT_SW_TASK_CLOCK) < 0)
		die("open_cgroup", h < 0 ? -h : EINVAL);
	for (int rep = 0; rep < REPS; rep++) {
		struct sample s0, s1, s2;
		struct timespec half = {.tv_nsec = 500000000};
		pid_t sleeper;

		sample(pmu, h, fds, ncpus, &s0);
		nanosleep(&half, NULL);
		sample(pmu, h, fds, ncpus, &s1);
		sleeper = sleeper_in(pmu, "c0000");
		ping_pong();
		waitpid(sleeper, NULL, 0);
		sample(pmu, h, fds, ncpus, &s2);
		q[rep] = ms_per_cpu_s(&s0, &s1, ncpus);
		b[rep] = ms_per_cpu_s(&s1, &s2, ncpus);
		per_1000[rep] = 1000.0 * (double)(s2.unseen - s0.unseen) /
				(double)(s2.switches - s0.switches);
		sh[rep] = s2.value > s1.value
				  ? (double)(s2.bound - s1.bound) /
					    (double)(s2.value - s1.value)
				  : 0;
	}
	figure_set(unseen, per_1000, REPS);
	figure_set(quiet, q, REPS);
	figure_set(busy, b, REPS);
	figure_set(share, sh, REPS);
	snprintf(share->note, sizeof(share->note),
		 "bound / count of the ping cgroup's task-clock");
	for (int cpu = 0; cpu < ncpus; cpu++)
		close(fds[cpu]);
	free(fds);
	shpmu_free(pmu);
	switch_cgroups_remove();
}
