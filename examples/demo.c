// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * shpmu-demo: a small monitoring agent whose plugins ask for overlapping
 * counters, the way independent plugins do.
 *
 *   cpu plugin        cpu-clock and context-switches on every CPU, per CPU
 *   container plugin  task-clock and context-switches for three cgroups it
 *                     makes and runs work in (by path), read in one batch
 *   sched plugin      context-switches on every CPU and per container (by
 *                     cgroup id): the same kernel events as the two above
 *   self-profilers    two plugins counting this thread's task-clock
 *
 * It prints every plugin's counts for a few intervals, then what sharing
 * saved: the same requests opened without sharing, counted for real.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <shpmu/shpmu.h>

#define INTERVALS   3
#define INTERVAL_MS 300
#define NCONTAINERS 3

struct request {
	const char *plugin;
	const char *event;
	struct shpmu_target target;
	const char *label; /* what the target is, for printing */
	int h;
};

static struct request reqs[32];
static size_t nreqs;
static const char *container_names[NCONTAINERS] = {"web", "db", "batch"};
static char container_paths[NCONTAINERS][600];
static uint64_t container_ids[NCONTAINERS];
static pid_t workers[NCONTAINERS];
static char demo_cgroup[512];

static void add(const char *plugin, const char *event,
		struct shpmu_target target, const char *label)
{
	reqs[nreqs++] = (struct request){plugin, event, target, label, -1};
}

/* A worker that moves itself into a cgroup, then mixes CPU and sleep in a
 * ratio that differs per container. */
static pid_t start_worker(const char *cgroup, int busy_share)
{
	pid_t pid = fork();

	if (pid == 0) {
		char procs[2048];
		FILE *f;

		/* Gone with the demo, however it ends. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);
		f = fopen(procs, "w");
		if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
			_exit(1);
		for (;;) {
			struct timespec nap = {0, 1000000L * (10 - busy_share)};

			for (volatile long i = 0; i < 300000L * busy_share; i++)
				;
			nanosleep(&nap, NULL);
		}
	}
	return pid;
}

/* Makes the containers under the cgroup root; false if it cannot. */
static bool make_containers(struct shpmu *pmu)
{
	char root[256];

	if (shpmu_cgroup_root(pmu, root, sizeof(root))) {
		printf("container plugin: skipped, no cgroup hierarchy here\n");
		return false;
	}
	snprintf(demo_cgroup, sizeof(demo_cgroup), "%s/shpmu-demo-%d", root,
		 getpid());
	if (mkdir(demo_cgroup, 0755)) {
		printf("container plugin: skipped, cannot make cgroups under "
		       "%s (%s): run as root\n",
		       root, strerror(errno));
		demo_cgroup[0] = '\0';
		return false;
	}
	for (int i = 0; i < NCONTAINERS; i++) {
		snprintf(container_paths[i], sizeof(container_paths[i]),
			 "%s/%s", demo_cgroup, container_names[i]);
		if (mkdir(container_paths[i], 0755) ||
		    shpmu_cgroup_id(pmu, container_paths[i], &container_ids[i]))
			return false;
		workers[i] = start_worker(container_paths[i], 3 + 3 * i);
	}
	return true;
}

static void remove_containers(void)
{
	for (int i = 0; i < NCONTAINERS; i++) {
		if (workers[i] > 0) {
			kill(workers[i], SIGKILL);
			waitpid(workers[i], NULL, 0);
		}
		if (container_paths[i][0])
			rmdir(container_paths[i]);
	}
	if (demo_cgroup[0])
		rmdir(demo_cgroup);
}

static void plan(bool containers)
{
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	struct shpmu_target self = {.kind = SHPMU_TARGET_TASK}; /* any CPU */

	add("cpu", "cpu-clock", all, "all CPUs");
	add("cpu", "context-switches", all, "all CPUs");
	add("sched", "context-switches", all, "all CPUs");
	for (int i = 0; containers && i < NCONTAINERS; i++) {
		struct shpmu_target by_path = {.kind = SHPMU_TARGET_CGROUP,
					       .cpu = SHPMU_ALL_CPUS,
					       .cgroup_path =
						       container_paths[i]};
		struct shpmu_target by_id = {.kind = SHPMU_TARGET_CGROUP,
					     .cpu = SHPMU_ALL_CPUS,
					     .cgroup_id = container_ids[i]};

		add("container", "task-clock", by_path, container_names[i]);
		add("container", "context-switches", by_path,
		    container_names[i]);
		add("sched", "context-switches", by_id, container_names[i]);
	}
	add("self-profiler-1", "task-clock", self, "this thread");
	add("self-profiler-1", "page-faults", self, "this thread");
	add("self-profiler-2", "task-clock", self, "this thread");
}

static int open_all(struct shpmu *pmu, bool report)
{
	int opened = 0;

	for (size_t i = 0; i < nreqs; i++) {
		int h = shpmu_open_name(pmu, reqs[i].event, &reqs[i].target);

		if (report)
			reqs[i].h = h;
		if (h < 0 && report)
			printf("%s: skipped %s on %s: %s%s\n", reqs[i].plugin,
			       reqs[i].event, reqs[i].label, strerror(-h),
			       h == -EACCES ? " (needs CAP_PERFMON or "
					      "perf_event_paranoid <= 0)"
					    : "");
		opened += h >= 0;
	}
	return opened;
}

static void self_work(void)
{
	size_t len = 4 << 20;
	char *p = malloc(len);

	if (p) {
		memset(p, 1, len);
		free(p);
	}
	for (volatile unsigned long i = 0; i < 20000000; i++)
		;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* When something happened: between two CLOCK_MONOTONIC readings (ns).
 * A busy or stolen CPU can delay a read or reset by milliseconds. */
struct moment {
	uint64_t earliest, latest;
};

/* The cpu plugin reports per interval: its reset opens the next window
 * and leaves the other plugins' totals alone. Returns when it happened. */
static struct moment restart_cpu_plugin(struct shpmu *pmu)
{
	struct moment m = {.earliest = now_ns()};

	for (size_t i = 0; i < nreqs; i++)
		if (reqs[i].h >= 0 && !strcmp(reqs[i].plugin, "cpu"))
			shpmu_reset(pmu, reqs[i].h);
	m.latest = now_ns();
	return m;
}

/* Prints interval n, whose window the cpu plugin opened at started, and
 * starts the next: returns when it did. */
static struct moment print_interval(struct shpmu *pmu, int n,
				    struct moment started)
{
	int hs[32];
	struct shpmu_count counts[32];
	size_t nh = 0;
	struct moment read = {.earliest = now_ns()};
	struct moment next;
	double longest, shortest;

	/* One batched read for everything: one read(2) per kernel fd. */
	for (size_t i = 0; i < nreqs; i++)
		if (reqs[i].h >= 0)
			hs[nh++] = reqs[i].h;
	if (shpmu_read_many(pmu, hs, nh, counts)) {
		printf("read failed: %s\n", strerror(errno));
		return restart_cpu_plugin(pmu);
	}
	read.latest = now_ns();
	next = restart_cpu_plugin(pmu);
	/* The window the cpu plugin's counts cover: work, then a sleep. */
	longest = (double)(read.latest - started.earliest) / 1e6;
	shortest = (double)(read.earliest - started.latest) / 1e6;
	printf("\ninterval %d (%.1f ms of wall time, +- %.1f ms)\n", n,
	       (longest + shortest) / 2, (longest - shortest) / 2);
	for (size_t i = 0, k = 0; i < nreqs; i++) {
		const struct shpmu_count *c;
		uint64_t v;

		if (reqs[i].h < 0)
			continue;
		c = &counts[k++];
		v = shpmu_scale(c);
		if (strstr(reqs[i].event, "clock"))
			printf("  %-16s %-17s %-12s %12.2f ms\n",
			       reqs[i].plugin, reqs[i].event, reqs[i].label,
			       (double)v / 1e6);
		else
			printf("  %-16s %-17s %-12s %12" PRIu64 "\n",
			       reqs[i].plugin, reqs[i].event, reqs[i].label, v);
	}
	for (size_t i = 0; i < nreqs; i++) {
		struct shpmu_count c;
		int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);

		if (reqs[i].h < 0 || strcmp(reqs[i].plugin, "sched") ||
		    reqs[i].target.kind != SHPMU_TARGET_CPU)
			continue;
		printf("  sched per CPU:");
		for (int cpu = 0; cpu < cpus; cpu++)
			if (!shpmu_read_cpu(pmu, reqs[i].h, cpu, &c))
				printf("  cpu%d %" PRIu64, cpu, c.value);
		printf(" context switches so far\n");
	}
	return next;
}

static void print_savings(const struct shpmu_stats *shared)
{
	SHPMU_OPTS(opts, .flags = SHPMU_F_NO_SHARING);
	struct shpmu *alone = shpmu_new(&opts);
	struct shpmu_stats st = {0};

	if (alone) {
		open_all(alone, false);
		shpmu_get_stats(alone, &st);
		shpmu_free(alone);
	}
	printf("\nsharing summary\n");
	printf("  handles (plugin requests): %" PRIu64 "\n", shared->handles);
	printf("  kernel events:             %" PRIu64
	       "   (without sharing: %" PRIu64 ")\n",
	       shared->kernel_events, st.kernel_events);
	printf("  perf fds:                  %" PRIu64
	       "   (without sharing: %" PRIu64 ")\n",
	       shared->kernel_fds, st.kernel_fds);
	printf("  opens served by an existing event: %" PRIu64 " of %" PRIu64
	       "\n",
	       shared->shared_opens, shared->opens);
}

int main(void)
{
	struct timespec interval = {0, INTERVAL_MS * 1000000L};
	struct shpmu_stats st;
	struct shpmu *pmu;
	bool containers;

	pmu = shpmu_new(NULL);
	if (!pmu) {
		fprintf(stderr, "shpmu_new: %s\n", strerror(errno));
		return 1;
	}
	containers = make_containers(pmu);
	plan(containers);
	if (!open_all(pmu, true)) {
		fprintf(stderr, "nothing could be counted here\n");
		remove_containers();
		shpmu_free(pmu);
		return 1;
	}
	/* The first interval starts here, not at the opens before. */
	struct moment started = restart_cpu_plugin(pmu);

	for (int n = 1; n <= INTERVALS; n++) {
		self_work();
		nanosleep(&interval, NULL);
		started = print_interval(pmu, n, started);
	}
	shpmu_get_stats(pmu, &st);
	print_savings(&st);
	shpmu_free(pmu);
	remove_containers();
	return 0;
}
