// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which context switches a BPF program is run at, on each of the two
 * places a switch program can hang: the sched_switch raw tracepoint (where
 * the library's program is), and perf's own switch hook, through a
 * perf_event program on a context-switches software event per CPU with
 * sample period 1 (what bperf's cgroup counting uses). The events' own
 * counts are the truth: perf's hook counts every switch, as the kernel's
 * own switch count (/proc/stat ctxt) shows. A program that is not run at
 * a switch cannot settle it; the figure is how many per thousand
 * switches that happened to, over a workload that sleeps and wakes (idle
 * exits included), with whatever else the machine runs.
 */
#include "bench.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* A program that adds one to a per-CPU counter each run: map[0]++. */
static int load_run_counter(enum bpf_prog_type type, int map)
{
	const struct bpf_insn insns[] = {
		/* *(u32 *)(fp - 4) = 0: the key */
		{.code = BPF_ST | BPF_MEM | BPF_W,
		 .dst_reg = BPF_REG_10,
		 .off = -4},
		/* r1 = map */
		{.code = BPF_LD | BPF_DW | BPF_IMM,
		 .dst_reg = BPF_REG_1,
		 .src_reg = BPF_PSEUDO_MAP_FD,
		 .imm = map},
		{0},
		/* r2 = fp - 4 */
		{.code = BPF_ALU64 | BPF_MOV | BPF_X,
		 .dst_reg = BPF_REG_2,
		 .src_reg = BPF_REG_10},
		{.code = BPF_ALU64 | BPF_ADD | BPF_K,
		 .dst_reg = BPF_REG_2,
		 .imm = -4},
		{.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem},
		/* if (!r0) goto out */
		{.code = BPF_JMP | BPF_JEQ | BPF_K,
		 .dst_reg = BPF_REG_0,
		 .off = 3},
		/* (*r0)++ (per CPU: no other CPU writes it) */
		{.code = BPF_LDX | BPF_MEM | BPF_DW,
		 .dst_reg = BPF_REG_1,
		 .src_reg = BPF_REG_0},
		{.code = BPF_ALU64 | BPF_ADD | BPF_K,
		 .dst_reg = BPF_REG_1,
		 .imm = 1},
		{.code = BPF_STX | BPF_MEM | BPF_DW,
		 .dst_reg = BPF_REG_0,
		 .src_reg = BPF_REG_1},
		/* out: return 0 */
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int prog = bpf_prog_load(type, "shpmu_runs", "GPL", insns,
				 sizeof(insns) / sizeof(insns[0]), NULL);

	if (prog < 0)
		die("bpf_prog_load (run counter)", -prog);
	return prog;
}

/* The runs a run counter's map holds, summed over the CPUs. */
static uint64_t runs_of(int map)
{
	int n = libbpf_num_possible_cpus();
	uint64_t *per_cpu = calloc((size_t)n, sizeof(*per_cpu)), sum = 0;
	uint32_t key = 0;

	if (!per_cpu || bpf_map_lookup_elem(map, &key, per_cpu))
		die("reading a run counter", errno);
	for (int i = 0; i < n; i++)
		sum += per_cpu[i];
	free(per_cpu);
	return sum;
}

/* The switches the events counted so far, summed over the CPUs. */
static uint64_t switches_of(const int *fds)
{
	uint64_t sum = 0, v;

	for (int cpu = 0; cpu < online_cpus(); cpu++) {
		if (read(fds[cpu], &v, sizeof(v)) != sizeof(v))
			die("read (context-switches)", errno);
		sum += v;
	}
	return sum;
}

/* A child that sleeps 1 ms, 1000 times: each wake-up leaves idle on a
 * quiet machine. */
static void sleep_and_wake(void)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		struct timespec ms = {.tv_nsec = 1000000};

		for (int i = 0; i < 1000; i++)
			nanosleep(&ms, NULL);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
}

void bench_switch_hooks(struct figure *perf_hook, struct figure *tracepoint)
{
	double missed_perf[REPS], missed_tp[REPS];
	int ncpus = online_cpus(), *fds = calloc((size_t)ncpus, sizeof(*fds));
	int perf_runs = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "perf_runs",
				       4, 8, 1, NULL);
	int tp_runs = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "tp_runs", 4, 8,
				     1, NULL);
	int perf_prog, tp_prog, tp_link;

	if (!fds || perf_runs < 0 || tp_runs < 0)
		die("bpf_map_create (run counters)", errno);
	perf_prog = load_run_counter(BPF_PROG_TYPE_PERF_EVENT, perf_runs);
	tp_prog = load_run_counter(BPF_PROG_TYPE_RAW_TRACEPOINT, tp_runs);
	attach_on_each_cpu(perf_prog, PERF_COUNT_SW_CONTEXT_SWITCHES, fds);
	tp_link = bpf_raw_tracepoint_open("sched_switch", tp_prog);
	if (tp_link < 0)
		die("bpf_raw_tracepoint_open (sched_switch)", -tp_link);
	for (int rep = 0; rep < REPS; rep++) {
		uint64_t s0 = switches_of(fds), p0 = runs_of(perf_runs),
			 t0 = runs_of(tp_runs);
		double s;

		sleep_and_wake();
		s = (double)(switches_of(fds) - s0);
		missed_perf[rep] =
			1000.0 * (s - (double)(runs_of(perf_runs) - p0)) / s;
		missed_tp[rep] =
			1000.0 * (s - (double)(runs_of(tp_runs) - t0)) / s;
	}
	figure_set(perf_hook, missed_perf, REPS);
	figure_set(tracepoint, missed_tp, REPS);
	snprintf(perf_hook->note, sizeof(perf_hook->note),
		 "per 1000 switches perf's hook counted");
	snprintf(tracepoint->note, sizeof(tracepoint->note),
		 "per 1000 switches perf's hook counted");
	close(tp_link);
	for (int cpu = 0; cpu < ncpus; cpu++)
		close(fds[cpu]);
	close(tp_prog);
	close(perf_prog);
	close(tp_runs);
	close(perf_runs);
	free(fds);
}
