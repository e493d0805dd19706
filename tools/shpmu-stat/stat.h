/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* shpmu-stat: a perf-stat-like command on libshpmu. */
#ifndef SHPMU_STAT_H
#define SHPMU_STAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include <shpmu/shpmu.h>

#define MAX_EVENTS  64
#define MAX_CGROUPS 256
#define MAX_CPUS    4096
#define MAX_THREADS 1024 /* --per-thread */
#define MAX_ROWS    (MAX_THREADS > MAX_CGROUPS ? MAX_THREADS : MAX_CGROUPS)

/* One thing opened as a unit: a single event, or a {group}. */
struct unit {
	size_t first, n; /* events[first .. first + n) */
};

enum output_format { OUT_HUMAN, OUT_CSV, OUT_JSON };

struct options {
	char *events[MAX_EVENTS];
	size_t nevents;
	struct unit units[MAX_EVENTS];
	size_t nunits;
	bool all_cpus;
	int cpus[MAX_CPUS];
	int ncpus;	      /* 0: not given */
	const char *cpu_list; /* -C as given, for the header */
	pid_t pid;	      /* -p; 0: none */
	bool per_thread;
	const char *cgroups[MAX_CGROUPS];
	uint64_t cgroup_ids[MAX_CGROUPS];
	/* Each --cgroup-id's path under the cgroup mount, for its rows (NULL
	 * for a -G path, shown as given). */
	char *cgroup_paths[MAX_CGROUPS];
	size_t ncgroups;
	int interval_ms;
	const char *sep; /* -x */
	enum output_format format;
	bool verbose;
	bool list;
	bool help;	/* --help: usage printed, nothing else to do */
	bool budget;	/* --budget */
	char **command; /* after "--" */
};

/* Fills opts from argv; prints the reason and returns -1 on bad usage. */
int parse_args(int argc, char **argv, struct options *opts);
void usage(FILE *f);

/* A reading of one event for one row (a cgroup, a thread, or
 * everything). */
struct row {
	const char *event;
	const char *cgroup; /* NULL when not per cgroup */
	const char *comm;   /* the thread's name; NULL when not per thread */
	pid_t tid;
	bool unsupported; /* its open failed: ENOENT, EOPNOTSUPP */
	struct shpmu_count count;
	/* How far below the truth count.value may be (shpmu_read_bound(),
	 * summed over the row's handles): 0 where it is exact. */
	uint64_t bound;
};

/* budget.c: whether there is a core PMU (printing a line saying so where
 * there is none): the rows there are, or -errno. */
int budget_has_pmu(struct shpmu *pmu);
/* The counter budget's table: 0 or -errno. */
int print_budget(struct shpmu *pmu);

void print_header(const struct options *o);
void print_row(const struct options *o, const struct row *r, double ts);
void print_footer(const struct options *o, double elapsed_s,
		  const struct shpmu_stats *st, uint64_t fds_unshared);

#endif
