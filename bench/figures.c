// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The core figures: opens, reads, batched reads, fds, memory, growth. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

static const struct shpmu_target self = {.kind = SHPMU_TARGET_TASK, .cpu = -1};

static struct shpmu *new_pmu(unsigned int flags)
{
	SHPMU_OPTS(opts, .flags = flags);
	struct shpmu *pmu = shpmu_new(&opts);

	if (!pmu)
		die("shpmu_new", errno);
	return pmu;
}

static int open_or_die(struct shpmu *pmu, const struct perf_event_attr *a,
		       const struct shpmu_target *t)
{
	int h = shpmu_open(pmu, a, t);

	if (h < 0)
		die("shpmu_open", -h);
	return h;
}

/* Raw perf_event_open of a request that is already open, against
 * shpmu_open of a duplicate. Both count from their open, so the duplicate
 * reads its base: against one raw read(2) of the same event (vs_read),
 * that read is its floor. */
void bench_open_dup(struct figure *f, struct figure *vs_read)
{
	enum { RAW = 100, DUP = 2000 };
	struct perf_event_attr a = bench_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct perf_event_attr stopped =
		bench_attr(PERF_COUNT_SW_TASK_CLOCK, true);
	static int fds[RAW], hs[DUP];
	double samples[REPS], raws[REPS], dups[REPS], idle[REPS];
	double per_read[REPS], reads[REPS];
	struct shpmu *pmu = new_pmu(0);
	int first = raw_open(PERF_COUNT_SW_TASK_CLOCK, 0, -1, -1);

	open_or_die(pmu, &a, &self);
	for (int rep = -1; rep < REPS; rep++) { /* rep -1: warm-up */
		double t0 = now_ns(), raw_ns, dup_ns, idle_ns, read_ns;
		uint64_t v[3];

		for (int i = 0; i < RAW; i++)
			fds[i] = raw_open(PERF_COUNT_SW_TASK_CLOCK, 0, -1, -1);
		raw_ns = (now_ns() - t0) / RAW;
		for (int i = 0; i < RAW; i++)
			close(fds[i]);
		t0 = now_ns();
		for (int i = 0; i < DUP; i++)
			hs[i] = shpmu_open(pmu, &a, &self);
		dup_ns = (now_ns() - t0) / DUP;
		for (int i = 0; i < DUP; i++)
			shpmu_close(pmu, hs[i]);
		t0 = now_ns();
		for (int i = 0; i < DUP; i++)
			if (read(first, v, sizeof(v)) != sizeof(v))
				die("read", errno);
		read_ns = (now_ns() - t0) / DUP;
		/* For the table: a duplicate opened disabled needs no base
		 * reading, so no syscall at all. */
		t0 = now_ns();
		for (int i = 0; i < DUP; i++)
			hs[i] = shpmu_open(pmu, &stopped, &self);
		idle_ns = (now_ns() - t0) / DUP;
		for (int i = 0; i < DUP; i++)
			shpmu_close(pmu, hs[i]);
		if (rep >= 0) {
			samples[rep] = raw_ns / dup_ns;
			raws[rep] = raw_ns;
			dups[rep] = dup_ns;
			idle[rep] = idle_ns;
			per_read[rep] = dup_ns / read_ns;
			reads[rep] = read_ns;
		}
	}
	figure_set(f, samples, REPS);
	figure_set(vs_read, per_read, REPS);
	{
		struct figure r, d, s;

		figure_set(&r, raws, REPS);
		figure_set(&d, dups, REPS);
		figure_set(&s, idle, REPS);
		snprintf(f->note, sizeof(f->note),
			 "raw %.2f us, duplicate %.2f us (one read(2) for its "
			 "base), disabled duplicate %.2f us (%.0fx)",
			 r.median / 1e3, d.median / 1e3, s.median / 1e3,
			 r.median / s.median);
		figure_set(&r, reads, REPS);
		snprintf(vs_read->note, sizeof(vs_read->note),
			 "read(2) of the same event %.2f us", r.median / 1e3);
	}
	close(first);
	shpmu_free(pmu);
}

/* shpmu_read of one handle against read(2) of a private fd. */
void bench_read_overhead(struct figure *f)
{
	enum { N = 20000 };
	struct perf_event_attr a = bench_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu *pmu = new_pmu(0);
	int h = open_or_die(pmu, &a, &self);
	int fd = raw_open(PERF_COUNT_SW_TASK_CLOCK, 0, -1, -1);
	double samples[REPS], raws[REPS];
	struct shpmu_count c;
	uint64_t v[3];

	for (int rep = -1; rep < REPS; rep++) {
		double t0 = now_ns(), raw_ns, lib_ns;

		for (int i = 0; i < N; i++)
			if (read(fd, v, sizeof(v)) != sizeof(v))
				die("read", errno);
		raw_ns = now_ns() - t0;
		t0 = now_ns();
		for (int i = 0; i < N; i++)
			if (shpmu_read(pmu, h, &c))
				die("shpmu_read", errno);
		lib_ns = now_ns() - t0;
		if (rep >= 0) {
			samples[rep] = lib_ns / raw_ns;
			raws[rep] = raw_ns / N;
		}
	}
	figure_set(f, samples, REPS);
	{
		struct figure r;

		figure_set(&r, raws, REPS);
		snprintf(f->note, sizeof(f->note), "raw read(2) %.0f ns",
			 r.median);
	}
	close(fd);
	shpmu_free(pmu);
}

/* The 8 distinct task events the batched-read figure spreads over. */
static struct perf_event_attr event_of(int i)
{
	static const uint64_t configs[4] = {
		PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CPU_CLOCK,
		PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES};
	struct perf_event_attr a = bench_attr(configs[i % 4], false);

	a.exclude_kernel = (i / 4) % 2;
	return a;
}

/* 1024 raw fds read one by one, against shpmu_read_many of 1024 handles
 * on 8 kernel events. */
void bench_read_many(struct figure *f)
{
	enum { N = 1024, LOOPS = 20 };
	static int fds[N], hs[N];
	static struct shpmu_count out[N];
	struct shpmu *pmu = new_pmu(0);
	double samples[REPS];
	uint64_t v[3];

	for (int i = 0; i < N; i++) {
		struct perf_event_attr a = event_of(i);

		fds[i] = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1,
				      PERF_FLAG_FD_CLOEXEC);
		if (fds[i] < 0)
			die("perf_event_open", errno);
		hs[i] = open_or_die(pmu, &a, &self);
	}
	for (int rep = -1; rep < REPS; rep++) {
		double t0 = now_ns(), raw_ns, many_ns;

		for (int l = 0; l < LOOPS; l++)
			for (int i = 0; i < N; i++)
				if (read(fds[i], v, sizeof(v)) != sizeof(v))
					die("read", errno);
		raw_ns = now_ns() - t0;
		t0 = now_ns();
		for (int l = 0; l < LOOPS; l++)
			if (shpmu_read_many(pmu, hs, N, out))
				die("shpmu_read_many", errno);
		many_ns = now_ns() - t0;
		if (rep >= 0)
			samples[rep] = raw_ns / many_ns;
	}
	figure_set(f, samples, REPS);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	shpmu_free(pmu);
}

/* 1000 consumers x 8 events x every CPU: fds really held, raw and shared. */
void bench_fds(struct figure *raw, struct figure *shared)
{
	enum { CONSUMERS = 1000, EVENTS = 8 };
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	int cpus = online_cpus(), held = 0, wanted = CONSUMERS * EVENTS * cpus;
	int *fds = calloc((size_t)wanted, sizeof(*fds));
	struct shpmu *pmu = new_pmu(0);
	struct shpmu_stats st;
	double one[1];

	if (!fds)
		die("calloc", ENOMEM);
	for (int c = 0; c < CONSUMERS && held == c * EVENTS * cpus; c++)
		for (int e = 0; e < EVENTS; e++)
			for (int cpu = 0; cpu < cpus; cpu++) {
				struct perf_event_attr a = event_of(e);
				int fd = (int)syscall(SYS_perf_event_open, &a,
						      -1, cpu, -1,
						      PERF_FLAG_FD_CLOEXEC);

				if (fd < 0)
					break;
				fds[held++] = fd;
			}
	one[0] = held;
	figure_set(raw, one, 1);
	if (held < wanted)
		snprintf(raw->note, sizeof(raw->note),
			 "only %d of %d fit under RLIMIT_NOFILE", held, wanted);
	for (int i = 0; i < held; i++)
		close(fds[i]);
	free(fds);

	for (int c = 0; c < CONSUMERS; c++)
		for (int e = 0; e < EVENTS; e++) {
			struct perf_event_attr a = event_of(e);

			open_or_die(pmu, &a, &all);
		}
	shpmu_get_stats(pmu, &st);
	one[0] = (double)st.kernel_fds;
	figure_set(shared, one, 1);
	snprintf(shared->note, sizeof(shared->note),
		 "%llu handles; goal 8 x %d CPUs = %d",
		 (unsigned long long)st.handles, cpus, 8 * cpus);
	shpmu_free(pmu);
}

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* Memory each extra handle on a shared event costs, at 100k handles. */
void bench_bytes_per_handle(struct figure *f)
{
	enum { N = 100000 };
	struct perf_event_attr a = bench_attr(PERF_COUNT_SW_TASK_CLOCK, true);
	double samples[REPS];

	for (int rep = 0; rep < REPS; rep++) {
		struct shpmu *pmu = new_pmu(0);
		size_t before;

		open_or_die(pmu, &a, &self);
		before = heap_in_use();
		for (int i = 0; i < N; i++)
			open_or_die(pmu, &a, &self);
		samples[rep] = (double)(heap_in_use() - before) / N;
		shpmu_free(pmu);
	}
	figure_set(f, samples, REPS);
}

static double op_cost(struct shpmu *pmu, const struct perf_event_attr *a)
{
	enum { OPS = 2000 };
	struct shpmu_count c;
	double t0 = now_ns();

	for (int i = 0; i < OPS; i++) {
		int h = shpmu_open(pmu, a, &self);

		if (h < 0 || shpmu_read(pmu, h, &c) || shpmu_close(pmu, h))
			die("open/read/close", errno);
	}
	return (now_ns() - t0) / OPS;
}

/* open+read+close with 100k handles open, against with 100 open. */
void bench_op_cost_growth(struct figure *f)
{
	struct perf_event_attr a = bench_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct perf_event_attr idle =
		bench_attr(PERF_COUNT_SW_TASK_CLOCK, true);
	struct shpmu *small = new_pmu(0), *big = new_pmu(0);
	double samples[REPS];

	for (int i = 0; i < 100; i++)
		open_or_die(small, &idle, &self);
	for (int i = 0; i < 100000; i++)
		open_or_die(big, &idle, &self);
	for (int rep = -1; rep < REPS; rep++) {
		double at100 = op_cost(small, &a), at100k = op_cost(big, &a);

		if (rep >= 0)
			samples[rep] = at100k / at100;
	}
	figure_set(f, samples, REPS);
	shpmu_free(small);
	shpmu_free(big);
}
