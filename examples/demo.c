// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * shpmu-demo: a tiny monitoring agent whose plugins ask for overlapping
 * counters. A CPU plugin counts system-wide per CPU and resets after each
 * interval; a scheduler plugin asks for some of the same events and keeps
 * running totals; two self-profilers count this process's main thread. A
 * child process makes work to see. At the end the demo opens the very same
 * requests without sharing, to show what sharing saved.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <shpmu/shpmu.h>

#define INTERVALS 3
#define INTERVAL_MS 300

struct request {
	const char *consumer;
	const char *event;
	uint64_t config; /* PERF_TYPE_SOFTWARE */
	enum shpmu_target_kind kind;
	int h;
};

static struct request requests[] = {
	{ "cpu-plugin", "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, SHPMU_TARGET_CPU, -1 },
	{ "cpu-plugin", "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES,
	  SHPMU_TARGET_CPU, -1 },
	{ "sched-plugin", "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES,
	  SHPMU_TARGET_CPU, -1 },
	{ "sched-plugin", "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS,
	  SHPMU_TARGET_CPU, -1 },
	{ "self-profiler-1", "task-clock", PERF_COUNT_SW_TASK_CLOCK,
	  SHPMU_TARGET_TASK, -1 },
	{ "self-profiler-1", "page-faults", PERF_COUNT_SW_PAGE_FAULTS,
	  SHPMU_TARGET_TASK, -1 },
	{ "self-profiler-2", "task-clock", PERF_COUNT_SW_TASK_CLOCK,
	  SHPMU_TARGET_TASK, -1 },
};
#define NREQ (sizeof(requests) / sizeof(requests[0]))

static int open_request(struct shpmu *pmu, const struct request *r)
{
	struct shpmu_target t = { .kind = r->kind, .cpu = -1 };
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = r->config;
	return shpmu_open(pmu, &attr, &t);
}

/* Work for the counters to see: page faults and time on this thread. */
static void self_work(void)
{
	size_t len = 8 << 20;
	char *p = malloc(len);

	if (p) {
		memset(p, 1, len);
		free(p);
	}
	for (volatile unsigned long i = 0; i < 20000000; i++)
		;
}

/* A child that alternates burning CPU and sleeping: switches and time. */
static pid_t start_workload(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct timespec nap = { 0, 1000000 };

		for (;;) {
			for (volatile int i = 0; i < 200000; i++)
				;
			nanosleep(&nap, NULL);
		}
	}
	return pid;
}

static void print_interval(struct shpmu *pmu, int n)
{
	printf("interval %d (%d ms):\n", n, INTERVAL_MS);
	for (size_t i = 0; i < NREQ; i++) {
		struct request *r = &requests[i];
		struct shpmu_count c;

		if (r->h < 0)
			continue;
		if (shpmu_read(pmu, r->h, &c)) {
			printf("  %-16s %-17s read failed: %s\n", r->consumer,
			       r->event, strerror(errno));
			continue;
		}
		printf("  %-16s %-17s %14llu%s\n", r->consumer, r->event,
		       (unsigned long long)shpmu_scale(&c),
		       r->kind == SHPMU_TARGET_CPU && !strcmp(r->consumer,
							      "cpu-plugin")
			       ? "  (this interval)"
			       : "  (running total)");
		/* The CPU plugin wants per-interval figures; resetting its
		 * handle leaves the other plugins' totals alone. */
		if (!strcmp(r->consumer, "cpu-plugin"))
			shpmu_reset(pmu, r->h);
	}
}

static void print_savings(const struct shpmu_stats *shared)
{
	SHPMU_OPTS(opts, .flags = SHPMU_F_NO_SHARING);
	struct shpmu *raw = shpmu_new(&opts);
	struct shpmu_stats alone = { 0 };

	if (raw) {
		for (size_t i = 0; i < NREQ; i++)
			if (requests[i].h >= 0)
				open_request(raw, &requests[i]);
		shpmu_get_stats(raw, &alone);
		shpmu_free(raw);
	}
	printf("\nsharing summary:\n");
	printf("  handles:        %llu\n", (unsigned long long)shared->handles);
	printf("  kernel events:  %llu (without sharing: %llu)\n",
	       (unsigned long long)shared->kernel_events,
	       (unsigned long long)alone.kernel_events);
	printf("  perf fds:       %llu (without sharing: %llu)\n",
	       (unsigned long long)shared->kernel_fds,
	       (unsigned long long)alone.kernel_fds);
	printf("  opens served by an existing event: %llu of %llu\n",
	       (unsigned long long)shared->shared_opens,
	       (unsigned long long)shared->opens);
}

int main(void)
{
	struct timespec interval = { 0, INTERVAL_MS * 1000000L };
	struct shpmu_stats st;
	struct shpmu *pmu;
	pid_t child;

	pmu = shpmu_new(NULL);
	if (!pmu) {
		fprintf(stderr, "shpmu_new: %s\n", strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < NREQ; i++) {
		requests[i].h = open_request(pmu, &requests[i]);
		if (requests[i].h < 0)
			printf("skipping %s %s: %s%s\n", requests[i].consumer,
			       requests[i].event, strerror(-requests[i].h),
			       requests[i].h == -EACCES
				       ? " (system-wide counting needs "
					 "CAP_PERFMON or perf_event_paranoid "
					 "<= 0)"
				       : "");
	}
	child = start_workload();
	for (int n = 1; n <= INTERVALS; n++) {
		self_work();
		nanosleep(&interval, NULL);
		print_interval(pmu, n);
	}
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	shpmu_get_stats(pmu, &st);
	print_savings(&st);
	shpmu_free(pmu);
	return 0;
}
