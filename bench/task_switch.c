// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Task and process targets through the BPF program: what 1000 counted
 * processes cost a context switch (the ping-pong's two processes among
 * them), what a switch between two processes of one counted cgroup costs
 * (no counter is read), what an empty program costs on the software
 * events the library's program runs on (the floor under both), and what
 * counting 1000 processes x 4 attrs takes in fds and in the kernel's
 * memory. Ratios are against the same ping-pong with nothing counted (or
 * attached), measured in the same repetition.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bench.h"

#define NPROCS 1000

static const uint64_t four_attrs[] = {
	PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CPU_CLOCK,
	PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES};

/* Processes that sleep until their pipe closes. */
struct sleepers {
	pid_t pids[NPROCS];
	int hold;
};

static void sleepers_start(struct sleepers *s, int n)
{
	int p[2];
	char c;

	if (pipe(p))
		die("pipe", errno);
	for (int i = 0; i < n; i++) {
		s->pids[i] = fork();
		if (s->pids[i] < 0)
			die("fork", errno);
		if (s->pids[i] == 0) {
			close(p[1]);
			while (read(p[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
	}
	close(p[0]);
	s->hold = p[1];
}

static void sleepers_end(struct sleepers *s, int n)
{
	close(s->hold);
	for (int i = 0; i < n; i++)
		waitpid(s->pids[i], NULL, 0);
}

/* The ping-pong with nothing counted, its processes in those cgroups
 * (NULL: where the benchmark runs). */
static double bare_pair(const char *ping_cgroup, const char *pong_cgroup)
{
	struct pair p;

	pair_start(&p, ping_cgroup, pong_cgroup);
	return pair_run(&p);
}

static struct shpmu *bpf_context(void)
{
	SHPMU_OPTS(opts, .cgroup_backend = SHPMU_CGROUP_BACKEND_BPF);
	struct shpmu *pmu = shpmu_new(&opts);

	if (!pmu)
		die("shpmu_new (BPF)", errno);
	return pmu;
}

static struct shpmu *classic_context(void)
{
	SHPMU_OPTS(opts, .cgroup_backend = SHPMU_CGROUP_BACKEND_PERF);
	struct shpmu *pmu = shpmu_new(&opts);

	if (!pmu)
		die("shpmu_new", errno);
	return pmu;
}

static int open_process(struct shpmu *pmu, pid_t pid, uint64_t config)
{
	struct perf_event_attr a = bench_attr(config, false);
	struct shpmu_target t = {
		.kind = SHPMU_TARGET_PROCESS, .pid = pid, .cpu = -1};
	int h = shpmu_open(pmu, &a, &t);

	if (h < 0)
		die("process target", -h);
	return h;
}

/* The ping-pong with its two processes and 998 sleepers counted. */
static void task_switch(struct figure *f)
{
	static struct sleepers s;
	struct prog_cost cost;
	double samples[REPS];

	for (int rep = 0; rep < REPS; rep++) {
		double bare = bare_pair(NULL, NULL);
		struct shpmu *pmu = bpf_context();
		struct pair p;

		sleepers_start(&s, NPROCS - 2);
		pair_start(&p, NULL, NULL);
		open_process(pmu, p.ping, PERF_COUNT_SW_TASK_CLOCK);
		open_process(pmu, p.pong, PERF_COUNT_SW_TASK_CLOCK);
		for (int i = 0; i < NPROCS - 2; i++)
			open_process(pmu, s.pids[i], PERF_COUNT_SW_TASK_CLOCK);
		samples[rep] = pair_run(&p) / bare;
		/* The program's cost over a second pair, counted too. */
		pair_start(&p, NULL, NULL);
		open_process(pmu, p.ping, PERF_COUNT_SW_TASK_CLOCK);
		open_process(pmu, p.pong, PERF_COUNT_SW_TASK_CLOCK);
		prog_cost_start(&cost, library_prog);
		pair_run(&p);
		prog_cost_stop(&cost, rep);
		shpmu_free(pmu);
		sleepers_end(&s, NPROCS - 2);
	}
	figure_set(f, samples, REPS);
	snprintf(f->note, sizeof(f->note),
		 "%d processes counted by BPF, ping and pong among them",
		 NPROCS);
	prog_cost_note(f, &cost);
}

/* The ping-pong in one counted cgroup, neither process counted itself,
 * against the same ping-pong in that cgroup uncounted: being in a cgroup
 * costs a switch something of its own here (about 3%). */
static void same_set_switch(struct figure *f, const char *base)
{
	struct prog_cost cost;
	double samples[REPS];
	char path[600];

	snprintf(path, sizeof(path), "%s/ping", base);
	for (int rep = 0; rep < REPS; rep++) {
		double bare = bare_pair(path, path);
		struct shpmu *pmu = bpf_context();
		struct perf_event_attr a =
			bench_attr(PERF_COUNT_SW_TASK_CLOCK, false);
		struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
					 .cpu = SHPMU_ALL_CPUS,
					 .cgroup_path = path};
		struct pair p;

		if (shpmu_open(pmu, &a, &t) < 0)
			die("cgroup target", errno);
		pair_start(&p, path, path);
		samples[rep] = pair_run(&p) / bare;
		prog_cost_pair(&cost, rep, library_prog, path, path);
		shpmu_free(pmu);
	}
	figure_set(f, samples, REPS);
	snprintf(f->note, sizeof(f->note),
		 "ping and pong in one counted cgroup: no counter read; "
		 "baseline in that cgroup");
	prog_cost_note(f, &cost);
}

/* An empty program (r0 = 0; exit) of the library's kind: a perf_event
 * program, run at every overflow of an event sampling each switch. */
static int load_empty_program(void)
{
	const struct bpf_insn empty[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0},
		{.code = BPF_JMP | BPF_EXIT}};
	int prog = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, "shpmu_floor", "GPL",
				 empty, 2, NULL);

	if (prog < 0)
		die("bpf_prog_load (empty program)", -prog);
	return prog;
}

/* The ping-pong, ping and pong in those cgroups, with the empty program on
 * config's events against the same with nothing attached. */
static void trigger_floor(struct figure *f, uint64_t config, const char *ping,
			  const char *pong, const char *note)
{
	static const char *const floor_prog[] = {"shpmu_floor", NULL};
	int *fds = calloc((size_t)online_cpus(), sizeof(*fds));
	struct prog_cost cost;
	double samples[REPS];

	if (!fds)
		die("calloc", ENOMEM);
	for (int rep = 0; rep < REPS; rep++) {
		double bare = bare_pair(ping, pong);
		int prog = load_empty_program();

		attach_on_each_cpu(prog, config, fds);
		samples[rep] = bare_pair(ping, pong) / bare;
		prog_cost_pair(&cost, rep, floor_prog, ping, pong);
		for (int cpu = 0; cpu < online_cpus(); cpu++)
			close(fds[cpu]);
		close(prog);
	}
	figure_set(f, samples, REPS);
	snprintf(f->note, sizeof(f->note), "%s", note);
	prog_cost_note(f, &cost);
	free(fds);
}

/* What the task maps of this process's BPF program take: their memlock
 * in fdinfo, found by their shape (links: 16-byte values, 65536 entries;
 * totals: 24-byte values, 131072 entries). */
static uint64_t task_map_bytes(void)
{
	uint64_t total = 0;

	for (int fd = 0; fd < 65536; fd++) {
		char path[64], line[128];
		unsigned long long v, memlock = 0, size = 0, entries = 0;
		FILE *fi;

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		fi = fopen(path, "re");
		if (!fi) {
			if (errno == ENOENT && fd > 4096)
				break;
			continue;
		}
		while (fgets(line, sizeof(line), fi)) {
			if (sscanf(line, "value_size: %llu", &v) == 1)
				size = v;
			else if (sscanf(line, "max_entries: %llu", &v) == 1)
				entries = v;
			else if (sscanf(line, "memlock: %llu", &v) == 1)
				memlock = v;
		}
		fclose(fi);
		if ((size == 16 && entries == 65536) ||
		    (size == 24 && entries == 131072))
			total += memlock;
	}
	return total;
}

/* fds and kernel memory for 1000 processes x 4 attrs. */
static void process_fds(struct figure *fds, struct figure *bytes)
{
	static struct sleepers s;
	struct shpmu *pmu = bpf_context(), *classic = classic_context();
	struct shpmu_stats st, cst;
	uint64_t before = task_map_bytes(), after;
	double one[1];

	sleepers_start(&s, NPROCS);
	for (int i = 0; i < NPROCS; i++)
		for (int a = 0; a < 4; a++) {
			open_process(pmu, s.pids[i], four_attrs[a]);
			open_process(classic, s.pids[i], four_attrs[a]);
		}
	after = task_map_bytes();
	shpmu_get_stats(pmu, &st);
	shpmu_get_stats(classic, &cst);
	one[0] = (double)st.kernel_fds;
	figure_set(fds, one, 1);
	snprintf(fds->note, sizeof(fds->note),
		 "BPF; classic: %llu fds (one per thread per attr)",
		 (unsigned long long)cst.kernel_fds);
	one[0] = (double)(after - before) / (NPROCS * 4);
	figure_set(bytes, one, 1);
	snprintf(bytes->note, sizeof(bytes->note),
		 "task maps %llu -> %llu bytes for %d targets x 4 attrs",
		 (unsigned long long)before, (unsigned long long)after, NPROCS);
	shpmu_free(classic);
	shpmu_free(pmu);
	sleepers_end(&s, NPROCS);
}

void bench_task_targets(struct figure *task_switch_fig, struct figure *same_set,
			struct figure *floor_context,
			struct figure *floor_cgroup, struct figure *fds,
			struct figure *bytes)
{
	struct shpmu *probe = shpmu_new(NULL);
	char root[256], base[512], ping[600], pong[600];

	if (!probe || shpmu_cgroup_root(probe, root, sizeof(root))) {
		shpmu_free(probe);
		figure_skip(same_set, "needs a cgroup hierarchy and root");
		figure_skip(floor_cgroup, "needs a cgroup hierarchy and root");
	} else {
		shpmu_free(probe);
		snprintf(base, sizeof(base), "%s/shpmu-bench-tasks-%d", root,
			 getpid());
		snprintf(ping, sizeof(ping), "%s/ping", base);
		snprintf(pong, sizeof(pong), "%s/pong", base);
		if (mkdir(base, 0755) || mkdir(ping, 0755) || mkdir(pong, 0755))
			die("mkdir", errno);
		same_set_switch(same_set, base);
		/* Cgroup switches fire only between two cgroups. */
		trigger_floor(floor_cgroup, PERF_COUNT_SW_CGROUP_SWITCHES, ping,
			      pong,
			      "ping and pong in two cgroups, baseline too");
		rmdir(pong);
		rmdir(ping);
		rmdir(base);
	}
	task_switch(task_switch_fig);
	trigger_floor(floor_context, PERF_COUNT_SW_CONTEXT_SWITCHES, NULL, NULL,
		      "the floor under the task and same-set figures");
	process_fds(fds, bytes);
}
