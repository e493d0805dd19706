// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * shpmu-stat: counts events for a command, a process, CPUs or cgroups, like
 * perf stat, through libshpmu. Every (event, target) pair is a handle;
 * requests that repeat one (the same event twice, or an event inside and
 * outside a group) share kernel events, which -v shows.
 */
#include <dirent.h>
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
	int row;       /* cgroup or thread index, or -1 */
	char comm[16]; /* --per-thread: the thread's name at the start */
};

static struct target_slot targets[MAX_TARGETS];
static size_t ntargets;
static int handles[MAX_EVENTS][MAX_TARGETS]; /* [unit][target] */
/* Units the machine cannot count: their open failed on every target with
 * an error perf stat calls "not supported", shown as perf shows them. */
static bool unsupported[MAX_EVENTS];

/* perf stat's list: the kernel has no such event (ENOENT, ENXIO), cannot
 * do it (EOPNOTSUPP, ENOSYS), or refused its attr (EINVAL). */
static bool not_supported(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -EINVAL ||
	       err == -ENOSYS || err == -ENXIO;
}
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Set while shpmu-stat checks what it then reports itself, in the command
 * line's terms: the library's message would say it a second time. */
static bool library_quiet;

static void log_cb(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level <= SHPMU_LOG_ERROR && !library_quiet)
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
	targets[ntargets++] = (struct target_slot){.t = t, .row = row};
	return 0;
}

/* The number after key ("Tgid:") in /proc/PID/status; -1 if none. */
static long status_field(pid_t pid, const char *key)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			v = strtol(line + strlen(key), NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* -p takes a process id: a process target refuses a thread's id, and
 * /proc/TID/task would list the whole process under the thread's id. So
 * say which id to give, before the library says it in its terms. */
static int check_process(pid_t pid)
{
	long tgid = status_field(pid, "Tgid:");

	if (tgid < 0) {
		fprintf(stderr, "shpmu-stat: no such process: %d\n", (int)pid);
		return -1;
	}
	if (tgid != pid) {
		fprintf(stderr,
			"shpmu-stat: %d is a thread of process %ld: -p takes "
			"a process id\n",
			(int)pid, tgid);
		return -1;
	}
	return 0;
}

/* A thread's name; -1 once the thread is gone. */
static int read_comm(pid_t pid, pid_t tid, char *comm, size_t len)
{
	char path[64];
	FILE *f;
	int err = -1;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid,
		 (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(comm, (int)len, f)) {
		comm[strcspn(comm, "\n")] = '\0';
		err = 0;
	}
	fclose(f);
	return err;
}

/* --per-thread: a task target for each thread there now, each its own
 * row, in /proc's order (the leader first). Threads started later have no
 * row: inherit counts them in the row of the thread that started them. */
static int add_thread_targets(pid_t pid)
{
	struct dirent *d;
	char path[64];
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir) {
		fprintf(stderr, "shpmu-stat: no such process: %d\n", (int)pid);
		return -1;
	}
	while ((d = readdir(dir))) {
		struct shpmu_target t = {.kind = SHPMU_TARGET_TASK, .cpu = -1};

		t.pid = atoi(d->d_name);
		if (t.pid <= 0)
			continue; /* "." and ".." */
		if (ntargets == MAX_THREADS) {
			fprintf(stderr,
				"shpmu-stat: more than %d threads to show "
				"apart\n",
				MAX_THREADS);
			closedir(dir);
			return -1;
		}
		/* A thread that has just exited has no row. */
		if (read_comm(pid, t.pid, targets[ntargets].comm,
			      sizeof(targets[ntargets].comm)))
			continue;
		targets[ntargets].t = t;
		targets[ntargets].row = (int)ntargets;
		ntargets++;
	}
	closedir(dir);
	if (!ntargets) {
		fprintf(stderr, "shpmu-stat: no such process: %d\n", (int)pid);
		return -1;
	}
	return 0;
}

/* Why the cgroup given as "given" cannot be counted. */
static void say_no_cgroup(struct shpmu *pmu, const char *given, int err)
{
	char root[4096];

	if (shpmu_cgroup_root(pmu, root, sizeof(root)))
		fprintf(stderr,
			"shpmu-stat: cgroup %s: no cgroup hierarchy "
			"on this host\n",
			given);
	else if (err == -ENOENT)
		fprintf(stderr,
			"shpmu-stat: cgroup %s: no such cgroup under %s\n",
			given, root);
	else if (err == -EXDEV)
		fprintf(stderr,
			"shpmu-stat: cgroup %s: outside the cgroup mount %s\n",
			given, root);
	else
		fprintf(stderr, "shpmu-stat: cgroup %s: %s\n", given,
			strerror(-err));
}

/* The path of the cgroup with this id as -G takes it, under the cgroup
 * mount ("/" for the root): NULL (said why) if there is none. */
static char *cgroup_id_path(struct shpmu *pmu, const char *given, uint64_t id)
{
	char path[4096], root[4096];
	size_t n;
	int err = shpmu_cgroup_path(pmu, id, path, sizeof(path));

	if (!err)
		err = shpmu_cgroup_root(pmu, root, sizeof(root));
	if (err) {
		char what[64];

		snprintf(what, sizeof(what), "id %s", given);
		say_no_cgroup(pmu, what, err);
		return NULL;
	}
	n = strlen(root);
	if (!strncmp(path, root, n) && (path[n] == '/' || !path[n]))
		return strdup(path[n] ? path + n : "/");
	return strdup(path);
}

/* Every -G and --cgroup-id must name a cgroup (then an ENOENT at open is
 * the event's); a cgroup given by id is shown by its path. */
static int check_cgroups(struct shpmu *pmu, struct options *o)
{
	uint64_t id;
	int err = 0;

	library_quiet = true;
	for (size_t g = 0; g < o->ncgroups && !err; g++) {
		if (o->cgroup_ids[g]) {
			o->cgroup_paths[g] = cgroup_id_path(pmu, o->cgroups[g],
							    o->cgroup_ids[g]);
			err = o->cgroup_paths[g] ? 0 : -1;
			continue;
		}
		err = shpmu_cgroup_id(pmu, o->cgroups[g], &id);
		if (err)
			say_no_cgroup(pmu, o->cgroups[g], err);
	}
	library_quiet = false;
	return err ? -1 : 0;
}

/* Whether cpu is in a sysfs CPU list ("0-3,5"). */
static bool cpu_listed(const char *list, int cpu)
{
	const char *p = list;

	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			return false;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		if (cpu >= lo && cpu <= hi)
			return true;
		p = end + strspn(end, ",\n");
	}
	return false;
}

/* Every -C CPU must be online: perf stat would show an offline one as
 * <not supported>, which reads as if the events were to blame. */
static int check_cpus(const struct options *o)
{
	char online[4096] = "";
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");

	if (f) {
		if (!fgets(online, sizeof(online), f))
			online[0] = '\0';
		fclose(f);
	}
	online[strcspn(online, "\n")] = '\0';
	/* Unknown: the library will tell. */
	if (!online[0])
		return 0;
	for (int c = 0; c < o->ncpus; c++)
		if (!cpu_listed(online, o->cpus[c])) {
			fprintf(stderr,
				"shpmu-stat: cpu %d is not online (online: "
				"%s)\n",
				o->cpus[c], online);
			return -1;
		}
	return 0;
}

/* On the c-th CPU asked for (bound to it), or on every CPU. */
static void on_cpu(struct shpmu_target *t, const struct options *o, int c)
{
	t->cpu = o->ncpus ? o->cpus[c] : SHPMU_ALL_CPUS;
	t->flags = o->ncpus ? SHPMU_TARGET_BIND_CPU : 0;
}

/* Cgroup g (by id or path) on the c-th CPU asked for, or on all. */
static int add_cgroup_target(const struct options *o, size_t g, int c)
{
	struct shpmu_target t = {
		.kind = SHPMU_TARGET_CGROUP,
		.cgroup_id = o->cgroup_ids[g],
		.cgroup_path = o->cgroup_ids[g] ? NULL : o->cgroups[g],
	};

	on_cpu(&t, o, c);
	return add_target(t, (int)g);
}

/* Everything on the c-th CPU asked for, or on all. */
static int add_cpu_target(const struct options *o, int c)
{
	struct shpmu_target t = {.kind = SHPMU_TARGET_CPU};

	on_cpu(&t, o, c);
	return add_target(t, -1);
}

static int build_targets(struct shpmu *pmu, const struct options *o,
			 pid_t child)
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
			if (add_cpu_target(o, c))
				return -1;
		return 0;
	}
	if (o->pid && check_process(o->pid))
		return -1;
	if (o->per_thread)
		return add_thread_targets(o->pid);
	/* -p: every thread, those to come too, as perf stat -p counts. */
	if (o->pid)
		return add_target(
			(struct shpmu_target){.kind = SHPMU_TARGET_PROCESS,
					      .pid = o->pid,
					      .cpu = -1},
			-1);
	return add_target((struct shpmu_target){.kind = SHPMU_TARGET_TASK,
						.pid = child,
						.cpu = -1},
			  -1);
}

/* The fds a target's event would take without sharing: one per CPU it
 * spans, or for a process one per thread, as perf stat -p opens them. */
static uint64_t fds_alone(const struct shpmu_target *t, long online)
{
	long threads;

	if (t->kind == SHPMU_TARGET_PROCESS) {
		threads = status_field(t->pid, "Threads:");
		return threads > 0 ? (uint64_t)threads : 1;
	}
	if (t->kind == SHPMU_TARGET_TASK || t->cpu != SHPMU_ALL_CPUS)
		return 1;
	return (uint64_t)online;
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
			/* A command is counted from its exec on, a process
			 * (-p) from now on, children included, as perf stat
			 * does. */
			attrs[i].inherit = on_exec || o->pid;
			attrs[i].enable_on_exec = on_exec && i == 0;
			attrs[i].disabled = on_exec && i == 0;
		}
		for (size_t t = 0; t < ntargets; t++) {
			int h = un->n == 1 ? shpmu_open(pmu, &attrs[0],
							&targets[t].t)
					   : shpmu_open_group(pmu, attrs, un->n,
							      &targets[t].t);

			/* Listed, then gone before its open: the row shows
			 * it, not counted. */
			if (h == -ESRCH && o->per_thread) {
				handles[u][t] = -1;
				continue;
			}
			/* No such event here: perf stat shows it as <not
			 * supported> and counts the others. */
			if (not_supported(h)) {
				handles[u][t] = -1;
				unsupported[u] = t == 0 || unsupported[u];
				continue;
			}
			if (h < 0) {
				fprintf(stderr,
					"shpmu-stat: cannot count %s: "
					"%s\n",
					o->events[un->first], strerror(-h));
				return -1;
			}
			handles[u][t] = h;
			unsupported[u] = false;
			*fds_unshared +=
				un->n * fds_alone(&targets[t].t, online);
		}
	}
	return 0;
}

/* Adds one handle's reading of every member into sums, and its bound
 * into bounds (both indexed by event). */
static int read_unit(struct shpmu *pmu, const struct options *o, size_t u,
		     size_t t, struct shpmu_count *sums, uint64_t *bounds)
{
	const struct unit *un = &o->units[u];
	struct shpmu_count c[MAX_EVENTS];
	uint64_t bound = 0;
	int err;

	if (handles[u][t] < 0)
		return 0;
	/* A group is counted by classic perf fds, which are exact: only a
	 * single event may have a bound. */
	err = un->n == 1 ? shpmu_read_bound(pmu, handles[u][t], &c[0], &bound)
			 : shpmu_read_group(pmu, handles[u][t], c, un->n);
	/* A pinned event that could not get a counter (the library logged
	 * why): it counted nothing, as perf stat shows it. */
	if (err == -ENODATA)
		return 0;
	if (err)
		return err;
	for (size_t i = 0; i < un->n; i++) {
		sums[un->first + i].value += c[i].value;
		sums[un->first + i].time_enabled += c[i].time_enabled;
		sums[un->first + i].time_running += c[i].time_running;
	}
	bounds[un->first] += bound;
	return 0;
}

/* Each row's events now, and what they had reached at the last
 * interval; the same of their bounds. */
static struct shpmu_count sums[MAX_ROWS][MAX_EVENTS];
static struct shpmu_count previous[MAX_ROWS][MAX_EVENTS];
static uint64_t bounds[MAX_ROWS][MAX_EVENTS];
static uint64_t previous_bounds[MAX_ROWS][MAX_EVENTS];

static void subtract(struct shpmu_count *now, struct shpmu_count *before)
{
	struct shpmu_count total = *now;

	now->value -= before->value;
	now->time_enabled -= before->time_enabled;
	now->time_running -= before->time_running;
	*before = total;
}

/* What a bound grew by in an interval bounds what the interval's count
 * may miss: what a count misses accrues only from what went unattributed
 * meanwhile. */
static void subtract_bound(uint64_t *now, uint64_t *before)
{
	uint64_t total = *now;

	*now -= *before;
	*before = total;
}

static size_t row_count(const struct options *o)
{
	if (o->ncgroups)
		return o->ncgroups;
	return o->per_thread ? ntargets : 1;
}

static bool event_unsupported(const struct options *o, size_t e)
{
	for (size_t u = 0; u < o->nunits; u++)
		if (e >= o->units[u].first &&
		    e < o->units[u].first + o->units[u].n)
			return unsupported[u];
	return false;
}

/* Row r's cgroup as shown: as given, by path for one given by id, "/"
 * for the root; NULL when not per cgroup. */
static const char *row_cgroup(const struct options *o, size_t r)
{
	if (!o->ncgroups)
		return NULL;
	if (o->cgroup_paths[r])
		return o->cgroup_paths[r];
	return *o->cgroups[r] ? o->cgroups[r] : "/";
}

static void print_one(const struct options *o, size_t r, size_t e, double ts)
{
	struct row row = {
		.event = o->events[e],
		.cgroup = row_cgroup(o, r),
		.comm = o->per_thread ? targets[r].comm : NULL,
		.tid = o->per_thread ? targets[r].t.pid : 0,
		.unsupported = event_unsupported(o, e),
		.count = sums[r][e],
		.bound = bounds[r][e],
	};

	print_row(o, &row, ts);
}

/* Prints every row: totals, or with per_interval what changed since the
 * last call (nothing is reset, so nothing is lost between read and
 * reset). */
static int report(struct shpmu *pmu, const struct options *o, double ts,
		  bool per_interval)
{
	size_t nrows = row_count(o);

	memset(sums, 0, sizeof(sums[0]) * nrows);
	memset(bounds, 0, sizeof(bounds[0]) * nrows);
	for (size_t t = 0; t < ntargets; t++) {
		size_t r = targets[t].row < 0 ? 0 : (size_t)targets[t].row;

		for (size_t u = 0; u < o->nunits; u++)
			if (read_unit(pmu, o, u, t, sums[r], bounds[r]))
				return -1;
	}
	for (size_t r = 0; per_interval && r < nrows; r++)
		for (size_t e = 0; e < o->nevents; e++) {
			subtract(&sums[r][e], &previous[r][e]);
			subtract_bound(&bounds[r][e], &previous_bounds[r][e]);
		}
	/* Cgroups row by row; threads event by event, in perf stat
	 * --per-thread's order. */
	for (size_t i = 0; i < nrows * o->nevents; i++) {
		if (o->per_thread)
			print_one(o, i % nrows, i / nrows, ts);
		else
			print_one(o, i / o->nevents, i % o->nevents, ts);
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

/* --budget: the events opened (on this process, without a target), the
 * budget printed; where there is no core PMU, one line saying so. */
static int budget_mode(struct shpmu *pmu, const struct options *o)
{
	uint64_t fds_unshared = 0;
	int n = budget_has_pmu(pmu);

	if (n <= 0)
		return n < 0;
	if (build_targets(pmu, o, 0) || open_all(pmu, o, false, &fds_unshared))
		return 1;
	return print_budget(pmu) ? 1 : 0;
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
	bool bad_usage;
	double start;

	bad_usage = parse_args(argc, argv, &o) != 0;
	if (bad_usage || o.help) {
		/* -e may have been parsed before the error or --help. */
		for (size_t i = 0; i < o.nevents; i++)
			free(o.events[i]);
		return bad_usage ? 2 : 0;
	}
	pmu = shpmu_new(&popts);
	if (!pmu) {
		fprintf(stderr, "shpmu-stat: %s\n", strerror(errno));
		return 1;
	}
	if (o.list) {
		ret = shpmu_list_events(pmu, list_event, NULL) ? 1 : 0;
		goto out;
	}
	/* Before the command starts, and before any table. */
	if (check_cpus(&o) || check_cgroups(pmu, &o))
		goto out;
	if (o.budget) {
		ret = budget_mode(pmu, &o);
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (o.command) {
		child = start_command(o.command, &go);
		if (child < 0)
			goto out;
	}
	if (build_targets(pmu, &o, child))
		goto kill_child;
	/* With -p, the command is only a timer. */
	if (open_all(pmu, &o,
		     o.command && !o.pid && !o.all_cpus && !o.ncpus &&
			     !o.ncgroups,
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
	for (size_t g = 0; g < o.ncgroups; g++)
		free(o.cgroup_paths[g]);
	shpmu_free(pmu);
	return ret;
}
