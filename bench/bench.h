/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * shpmu-bench: every figure is a ratio against a baseline measured in the
 * same run (this machine is shared and noisy), repeated, median quoted.
 */
#ifndef SHPMU_BENCH_H
#define SHPMU_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <shpmu/shpmu.h>

#define REPS 5

/* A figure's repetitions: median, min and max. */
struct figure {
	const char *key;
	const char *what;
	double median, min, max;
	bool skipped;
	char note[256];
	/* ns per run of the BPF program behind the figure, 0 if none. */
	double ns_per_run;
};

/* Sorts REPS samples into a figure. */
void figure_set(struct figure *f, const double *samples, int n);
void figure_skip(struct figure *f, const char *why);

double now_ns(void);
struct perf_event_attr bench_attr(uint64_t config, bool disabled);
int raw_open(uint64_t config, int pid, int cpu, int group_fd);
int online_cpus(void);
void die(const char *what, int err);
/* The perf_event program prog on one software event (config) per online
 * CPU with sample_period 1, so that it runs at each one: fds[cpu]. */
void attach_on_each_cpu(int prog, uint64_t config, int *fds);
/* The perf_event fds process pid holds (0 if it cannot be read). */
int perf_fds_of(pid_t pid);
/* The program name built beside this one (a static buffer). */
const char *beside(const char *name);

/* The figures, one function each; each fills one or two struct figure. */
void bench_open_dup(struct figure *f, struct figure *vs_read);
void bench_read_overhead(struct figure *f);
void bench_read_many(struct figure *f);
void bench_fds(struct figure *raw, struct figure *shared);
void bench_bytes_per_handle(struct figure *f);
void bench_op_cost_growth(struct figure *f);
void bench_papi_read(struct figure *f);
/* The tax counting cgroups through BPF puts on others' switches. */
enum tax { TAX_UNCOUNTED_SAME, TAX_COUNTED_SAME, TAX_UNCOUNTED_CROSS, NTAX };
void bench_cgroup_switch(struct figure *f0, struct figure *f200,
			 struct figure *f1000, struct figure *b200,
			 struct figure *b1000, struct figure *bfds,
			 struct figure *const tax[NTAX]);
/* A ping-pong whose two processes, each moved into its cgroup (NULL:
 * where it is), wait for pair_run before they start: the caller may count
 * them (by pid) in between. pair_run gives the ns per round trip, -1 if
 * it failed. */
struct pair {
	pid_t ping, pong;
	int go, result;
};
#define ROUND_TRIPS 20000
void pair_start(struct pair *p, const char *ping_cgroup,
		const char *pong_cgroup);
double pair_run(struct pair *p);

/* What a BPF program costs a run, from the kernel's run-time stats over
 * one more ping-pong after a measured one: the stats read the clock twice
 * a run, which a measured ping-pong must not pay. Per repetition. */
struct prog_cost {
	double ns[REPS], runs[REPS];
	char name[16];
	int stats, prog;
	uint64_t ns0, runs0;
};
/* The library's switch program, by its name before and after issue 23. */
extern const char *const library_prog[];
/* Around one pair_run: stats on and the program's counts, then their
 * difference as repetition rep. */
void prog_cost_start(struct prog_cost *c, const char *const *names);
void prog_cost_stop(struct prog_cost *c, int rep);
/* The same around a ping-pong of its own, ping and pong in those
 * cgroups. */
void prog_cost_pair(struct prog_cost *c, int rep, const char *const *names,
		    const char *ping_cgroup, const char *pong_cgroup);
/* The medians: into f->ns_per_run and f's note. */
void prog_cost_note(struct figure *f, const struct prog_cost *c);

/* Where BPF starts to cost less than classic cgroup events: the switch
 * overhead of 1, 2, 4 ... 64 counted cgroups by each, the number of them
 * from which BPF's stays below classic's, the fds BPF holds of its own,
 * and the number of cgroups from which BPF holds fewer fds (each
 * crossover twice the ladder's top where BPF never goes below). */
#define LADDER_RUNGS 7
extern const int ladder[LADDER_RUNGS];
enum crossover { CROSS_SWITCH, CROSS_OWN_FDS, CROSS_FDS, NCROSS };
void bench_crossover(struct figure *const classic[LADDER_RUNGS],
		     struct figure *const bpf[LADDER_RUNGS],
		     struct figure *const crossovers[NCROSS]);

/* The ping-pong's cgroups (base/ping, base/pong, base/c0000 ...
 * base/c0999), made under pmu's cgroup root; the ns per round trip; a
 * task-clock-like handle on base/name. */
#define SWITCH_EXTRA 1000
bool switch_cgroups_make(struct shpmu *pmu);
void switch_cgroups_remove(void);
double ping_pong(void);
int open_cgroup(struct shpmu *pmu, const char *name, uint64_t config);
/* Host scope: events with 16 processes, reads, the ping-pong, an open
 * and close among 16 other members. */
void bench_host(struct figure *host_events, struct figure *local_events,
		struct figure *read_many, struct figure *cached,
		struct figure *switches, struct figure *open_close);
/* Task and process targets through BPF: the ping-pong with 1000 counted
 * processes, in one counted cgroup, and with an empty program on the
 * context-switches and the cgroup-switches software events (what any
 * program there costs); fds and map bytes for 1000 processes x 4 attrs. */
void bench_task_targets(struct figure *task_switch, struct figure *same_set,
			struct figure *floor_context,
			struct figure *floor_cgroup, struct figure *fds,
			struct figure *bytes);
/* Per 1000 context switches perf's hook counted, how many a BPF program
 * was not run at: on perf's hook (a perf_event program) and on the
 * sched_switch raw tracepoint. */
void bench_switch_hooks(struct figure *perf_hook, struct figure *tracepoint);
/* What the BPF backend left unattributed: switches its program was not
 * run at per 1000, ms per CPU-second quiet and busy, and a counted
 * cgroup's bound as a share of its count. */
void bench_unattributed(struct figure *unseen, struct figure *quiet,
			struct figure *busy, struct figure *share);
/* exe: the shpmu-exporter to measure, or NULL. */
void bench_exporter(const char *exe, struct figure *ms, struct figure *fds);

#endif
