// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * shpmu-stat: counts events for a command, a process, CPUs or cgroups, like
 * perf stat, through libshpmu. Every (event, target) pair is a handle;
 * requests that repeat one (the same event twice, or an event inside and
 * outside a group) share kernel events, which -v shows.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stat.h"

#define MAX_TARGETS (MAX_CGROUPS * 4 + MAX_CPUS)

struct target_slot {
	struct shpmu_target t;
	int row; /* cgroup index, or -1 */
};

static struct target_slot targets[MAX_TARGETS];
static size_t ntargets;
static int handles[MAX_EVENTS][MAX_TARGETS]; /* [unit][target] */
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void log_cb(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level <= SHPMU_LOG_ERROR)
		fprintf(stderr, "shpmu-stat: %s\n", msg);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int add_target(struct shpmu_target t, int row)
{
	if (ntargets == MAX_TARGETS) {
		fprintf(stderr,
			"shpmu-stat: more than %d cgroup x CPU "
			"targets\n",
			MAX_TARGETS);
		return -1;
	}
	targets[ntargets++] = (struct target_slot){t, row};
	return 0;
}

/* Cgroup g (by id or path) on the c-th CPU asked for, or on all. */
static int add_cgroup_target(const struct options *o, size_t g, int c)
{
	struct shpmu_target t = {
		.kind = SHPMU_TARGET_CGROUP,
		.cpu = o->ncpus ? o->cpus[c] : SHPMU_ALL_CPUS,
		.cgroup_id = o->cgroup_ids[g],
		.cgroup_path = o->cgroup_ids[g] ? NULL : o->cgroups[g],
	};

	return add_target(t, (int)g);
}

static int build_targets(const struct options *o, pid_t child)
{
	int ncpus = o->ncpus ? o->ncpus : 1;

	if (o->ncgroups) {
		for (size_t g = 0; g < o->ncgroups; g++)
			for (int c = 0; c < ncpus; c++)
				if (add_cgroup_target(o, g, c))
					return -1;
		return 0;
	}
	if (o->all_cpus || o->ncpus) {
		for (int c = 0; c < ncpus; c++)
			if (add_target(
				    (struct shpmu_target){
					    .kind = SHPMU_TARGET_CPU,
					    .cpu = o->ncpus ? o->cpus[c]
							    : SHPMU_ALL_CPUS},
				    -1))
				return -1;
		return 0;
	}
	return add_target((struct shpmu_target){.kind = SHPMU_TARGET_TASK,
						.pid = o->pid ? o->pid : child,
						.cpu = -1},
			  -1);
}

static int open_all(struct shpmu *pmu, const struct options *o, bool on_exec,
		    uint64_t *fds_unshared)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	for (size_t u = 0; u < o->nunits; u++) {
		const struct unit *un = &o->units[u];
		struct perf_event_attr attrs[MAX_EVENTS];

		for (size_t i = 0; i < un->n; i++) {
			if (shpmu_event_attr(pmu, o->events[un->first + i],
					     &attrs[i]))
				return -1;
			/* A command is counted from its exec on, children
			 * included, as perf stat does. */
			attrs[i].inherit = on_exec;
			attrs[i].enable_on_exec = on_exec && i == 0;
			attrs[i].disabled = on_exec && i == 0;
		}
		for (size_t t = 0; t < ntargets; t++) {
			int h = un->n == 1 ? shpmu_open(pmu, &attrs[0],
							&targets[t].t)
					   : shpmu_open_group(pmu, attrs, un->n,
							      &targets[t].t);

			if (h < 0) {
				fprintf(stderr,
					"shpmu-stat: cannot count %s: "
					"%s\n",
					o->events[un->first], strerror(-h));
				return -1;
			}
			handles[u][t] = h;
			*fds_unshared +=
				un->n *
				(targets[t].t.kind != SHPMU_TARGET_TASK &&
						 targets[t].t.cpu ==
							 SHPMU_ALL_CPUS
					 ? (uint64_t)online
					 : 1);
		}
	}
	return 0;
}

/* Adds one handle's reading of every member into sums (indexed by
 * event). */
static int read_unit(struct shpmu *pmu, const struct options *o, size_t u,
		     size_t t, struct shpmu_count *sums)
{
	const struct unit *un = &o->units[u];
	struct shpmu_count c[MAX_EVENTS];
	int err;

	err = un->n == 1 ? shpmu_read(pmu, handles[u][t], &c[0])
			 : shpmu_read_group(pmu, handles[u][t], c, un->n);
	if (err)
		return err;
	for (size_t i = 0; i < un->n; i++) {
		sums[un->first + i].value += c[i].value;
		sums[un->first + i].time_enabled += c[i].time_enabled;
		sums[un->first + i].time_running += c[i].time_running;
	}
	return 0;
}

/* What each row's events had reached at the last interval. */
static struct shpmu_count previous[MAX_CGROUPS][MAX_EVENTS];

static void subtract(struct shpmu_count *now, struct shpmu_count *before)
{
	struct shpmu_count total = *now;

	now->value -= before->value;
	now->time_enabled -= before->time_enabled;
	now->time_running -= before->time_running;
	*before = total;
}

/* Prints every row: totals, or with per_interval what changed since the
 * last call (nothing is reset, so nothing is lost between read and
 * reset). */
static int report(struct shpmu *pmu, const struct options *o, double ts,
		  bool per_interval)
{
	int nrows = o->ncgroups ? (int)o->ncgroups : 1;

	for (int r = 0; r < nrows; r++) {
		struct shpmu_count sums[MAX_EVENTS];

		memset(sums, 0, sizeof(sums));
		for (size_t t = 0; t < ntargets; t++) {
			if (o->ncgroups && targets[t].row != r)
				continue;
			for (size_t u = 0; u < o->nunits; u++)
				if (read_unit(pmu, o, u, t, sums))
					return -1;
		}
		for (size_t e = 0; per_interval && e < o->nevents; e++)
			subtract(&sums[e], &previous[r][e]);
		for (size_t e = 0; e < o->nevents; e++) {
			const char *cg = o->ncgroups ? o->cgroups[r] : NULL;
			struct row row = {o->events[e], cg && !*cg ? "/" : cg,
					  sums[e]};

			print_row(o, &row, ts);
		}
	}
	fflush(stdout);
	return 0;
}

static int list_event(const char *name, const char *desc, void *arg)
{
	(void)arg;
	printf("%-50s %s\n", name, desc);
	return 0;
}

static pid_t start_command(char **argv, int *go)
{
	int p[2];
	pid_t pid;
	char b;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		/* Counting starts at the exec, once the parent is ready. */
		if (read(p[0], &b, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "shpmu-stat: cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

/* Waits for the command (or a signal), printing every interval. */
static int run(struct shpmu *pmu, const struct options *o, pid_t child,
	       double start, int *status)
{
	struct timespec next;

	/* Absolute deadlines, so that the intervals do not drift. */
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		if (child > 0 && waitpid(child, status,
					 o->interval_ms ? WNOHANG : 0) == child)
			return 0;
		if (stop)
			return 0;
		if (o->interval_ms) {
			next.tv_nsec += (o->interval_ms % 1000) * 1000000L;
			next.tv_sec += o->interval_ms / 1000 +
				       next.tv_nsec / 1000000000L;
			next.tv_nsec %= 1000000000L;
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
					NULL);
			if (report(pmu, o, now_s() - start, true))
				return -1;
		} else if (child <= 0) {
			pause();
		}
	}
}

int main(int argc, char **argv)
{
	SHPMU_OPTS(popts, .log = log_cb);
	struct options o;
	struct shpmu_stats st;
	struct shpmu *pmu;
	uint64_t fds_unshared = 0;
	int go = -1, status = 0, ret = 1;
	pid_t child = 0;
	double start;

	if (parse_args(argc, argv, &o))
		return 2;
	pmu = shpmu_new(&popts);
	if (!pmu) {
		fprintf(stderr, "shpmu-stat: %s\n", strerror(errno));
		return 1;
	}
	if (o.list) {
		ret = shpmu_list_events(pmu, list_event, NULL) ? 1 : 0;
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (o.command) {
		child = start_command(o.command, &go);
		if (child < 0)
			goto out;
	}
	if (build_targets(&o, child))
		goto kill_child;
	if (open_all(pmu, &o,
		     o.command && !o.all_cpus && !o.ncpus && !o.ncgroups,
		     &fds_unshared))
		goto kill_child;
	print_header(&o);
	start = now_s();
	if (go >= 0) {
		if (write(go, "g", 1) != 1)
			goto kill_child;
		close(go);
		go = -1;
	}
	if (run(pmu, &o, child, start, &status))
		goto kill_child;
	if (!o.interval_ms && report(pmu, &o, now_s() - start, false))
		goto kill_child;
	shpmu_get_stats(pmu, &st);
	print_footer(&o, now_s() - start, &st, fds_unshared);
	ret = child > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 0;
	child = 0;
kill_child:
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
out:
	if (go >= 0)
		close(go);
	for (size_t i = 0; i < o.nevents; i++)
		free(o.events[i]);
	shpmu_free(pmu);
	return ret;
}
