// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the exporter counts: its events on every online CPU, and on the
 * cgroups below a root, found again at each scrape so that cgroups made
 * or removed while it runs are picked up and dropped.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exporter.h"

static const char *const default_events[] = {
	"task-clock", "context-switches", "cpu-migrations", "page-faults",
	"cycles",     "instructions",	  "cache-misses",   NULL};

static void log_to_stderr(int level, const char *msg, void *arg)
{
	struct exporter *x = arg;

	/* A probe's failure is said once, by pick_events(), in the words
	 * of its first error: the open's, as shpmu-stat shows it. */
	if (x->probing && level == SHPMU_LOG_ERROR && !x->probe_said[0])
		snprintf(x->probe_said, sizeof(x->probe_said), "%s", msg);
	if ((level <= SHPMU_LOG_WARN && !x->probing) || x->opts->verbose)
		say_library(msg);
}

/* The online CPUs, from sysfs ("0-3,5"). */
static int online_cpus(struct exporter *x)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int a, b, n = 0, cap = 0;
	char sep;

	if (!f)
		return -errno;
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		sep = (char)fgetc(f);
		if (sep == '-' && fscanf(f, "%d", &b) == 1)
			sep = (char)fgetc(f);
		for (int c = a; c <= b; c++) {
			if (n == cap) {
				int *more = realloc(
					x->cpus,
					sizeof(int) *
						(size_t)(cap = cap * 2 + 8));

				if (!more) {
					fclose(f);
					return -ENOMEM;
				}
				x->cpus = more;
			}
			x->cpus[n++] = c;
		}
		if (sep != ',')
			break;
	}
	fclose(f);
	x->ncpus = n;
	return n ? 0 : -ENOENT;
}

static bool is_clock(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_TASK_CLOCK ||
		a->config == PERF_COUNT_SW_CPU_CLOCK);
}

/* Whether an event of attr a may be multiplexed, counting less than the
 * time it was enabled: a software event or a tracepoint takes no PMU
 * counter and never is; any other type may be (a hardware, cache, raw
 * or dynamic PMU's). */
static bool can_multiplex(const struct perf_event_attr *a)
{
	return a->type != PERF_TYPE_SOFTWARE && a->type != PERF_TYPE_TRACEPOINT;
}

/* The pieces of its samples: event="name", and what follows a target's
 * labels, ,event="name"} . */
static int event_labels(struct event *e)
{
	struct page tail = {0};

	e->label = label_pair("event", e->name);
	if (!e->label)
		return -ENOMEM;
	page_printf(&tail, ",%s} ", e->label);
	e->tail_len = tail.len;
	e->tail = page_text(&tail);
	return e->tail ? 0 : -ENOMEM;
}

/* Keeps the events that open here; the default set leaves out what the
 * machine lacks (hardware events without a PMU) with one line each. */
static int pick_events(struct exporter *x)
{
	const char *const *names =
		x->opts->default_events ? default_events : x->opts->events;
	struct shpmu_target cpu = {.kind = SHPMU_TARGET_CPU,
				   .cpu = x->cpus[0],
				   .flags = SHPMU_TARGET_BIND_CPU};

	for (size_t i = 0; names[i]; i++) {
		struct perf_event_attr attr;
		char why[EXPLAIN_MAX];
		struct event *e;
		int h, err;

		/* One line per event left out, not the library's too. */
		x->probing = true;
		x->probe_said[0] = '\0';
		err = shpmu_event_attr(x->pmu, names[i], &attr);
		if (!err) {
			h = shpmu_open(x->pmu, &attr, &cpu);
			err = h < 0 ? h : shpmu_close(x->pmu, h);
		}
		x->probing = false;
		if (err) {
			say("leaving out %s: %s", names[i],
			    x->probe_said[0]
				    ? x->probe_said
				    : explain(x, -1, err, why, sizeof(why)));
			continue;
		}
		e = &x->events[x->nevents++];
		snprintf(e->name, sizeof(e->name), "%s", names[i]);
		e->clock = is_clock(&attr);
		e->multiplexes = can_multiplex(&attr);
		if (event_labels(e))
			return -ENOMEM;
	}
	if (!x->nevents) {
		say("none of the events can be counted here");
		return -ENOENT;
	}
	return 0;
}

static int open_cpus(struct exporter *x)
{
	x->cpu_handles = malloc(sizeof(int) * (size_t)x->ncpus * x->nevents);
	if (!x->cpu_handles)
		return -ENOMEM;
	for (int c = 0; c < x->ncpus; c++) {
		struct shpmu_target t = {.kind = SHPMU_TARGET_CPU,
					 .cpu = x->cpus[c],
					 .flags = SHPMU_TARGET_BIND_CPU};

		for (size_t e = 0; e < x->nevents; e++) {
			int h = shpmu_open_name(x->pmu, x->events[e].name, &t);
			char why[EXPLAIN_MAX];

			if (h < 0) {
				say("cpu %d %s: %s", x->cpus[c],
				    x->events[e].name,
				    explain(x, -1, h, why, sizeof(why)));
				return h;
			}
			x->cpu_handles[(size_t)c * x->nevents + e] = h;
		}
	}
	return 0;
}

/* A kubelet's log directory: the flag's, or the default; NULL for none
 * (an empty flag). The default is kept where it is not there yet: the
 * exporter may start before the kubelet makes it, and the refresh says
 * it is missing, once, and reads it once it is there (kubelogs.h). */
static const char *log_dir(const char *flag, const char *fallback)
{
	if (flag)
		return *flag ? flag : NULL;
	return fallback;
}

/* The kubelet's names, where its directories are (kubelogs.h). */
static void open_names(struct exporter *x)
{
	const struct options *o = x->opts;
	const char *pods = log_dir(o->logs_dir, "/var/log/pods"),
		   *containers = log_dir(o->container_logs_dir,
					 "/var/log/containers");

	kubelogs_init(&x->logs, pods, containers);
	if (!o->per_cgroup || (!pods && !containers && !o->kinds))
		return;
	if (pods || containers)
		say("names from%s%s%s%s", pods ? " --kubernetes.logs-dir=" : "",
		    pods ? pods : "",
		    containers ? " --kubernetes.container-logs-dir=" : "",
		    containers ? containers : "");
	if (!containers && (o->kinds & (KIND_CONTAINER | KIND_SANDBOX)) &&
	    (o->kinds & (KIND_CONTAINER | KIND_SANDBOX)) !=
		    (KIND_CONTAINER | KIND_SANDBOX))
		say("no --kubernetes.container-logs-dir: a pod's sandbox "
		    "cannot be told from its containers, and counts as one");
}

int exporter_init(struct exporter *x, const struct options *o)
{
	/* Per cgroup it counts hundreds of cgroup events, far past AUTO's
	 * crossover to BPF: all of them through BPF from the first, not the
	 * first few classic for good. Where BPF cannot work, AUTO. */
	SHPMU_OPTS(opts, .log = log_to_stderr, .log_arg = x, .scope = o->scope,
		   .domain = o->domain, .bpffs_dir = o->bpffs_dir,
		   .cgroup_backend =
			   o->per_cgroup && o->scope == SHPMU_SCOPE_PROCESS
				   ? SHPMU_CGROUP_BACKEND_BPF
				   : SHPMU_CGROUP_BACKEND_AUTO);
	int err;

	*x = (struct exporter){.opts = o};
	pthread_mutex_init(&x->lock, NULL);
	open_names(x);
	x->pmu = shpmu_new(&opts);
	if (!x->pmu && errno == EOPNOTSUPP &&
	    opts.cgroup_backend == SHPMU_CGROUP_BACKEND_BPF) {
		say("the BPF backend cannot work here (see above): cgroups are "
		    "counted with classic perf events up to the crossover "
		    "libshpmu(7) describes");
		opts.cgroup_backend = SHPMU_CGROUP_BACKEND_AUTO;
		x->pmu = shpmu_new(&opts);
	}
	if (!x->pmu) {
		err = -errno;
		/* (The library's lines above, where it wrote any, say why.) */
		say("cannot start: %s", strerror(errno));
		return err;
	}
	if (o->per_cgroup &&
	    shpmu_cgroup_root(x->pmu, x->mount, sizeof(x->mount))) {
		say("no cgroup hierarchy here: per-CPU series only");
		x->mount[0] = '\0';
	}
	if (x->mount[0]) {
		char dir[PATH_MAX];
		uint64_t id;
		int n = snprintf(dir, sizeof(dir), "%s/%s", x->mount,
				 o->cgroup_root);

		/* Never a truncated path: it may name another cgroup. */
		err = n < 0 || (size_t)n >= sizeof(dir)
			      ? -ENAMETOOLONG
			      : shpmu_cgroup_id(x->pmu, dir, &id);
		if (err) {
			say("--cgroup.root %s: %s", o->cgroup_root,
			    strerror(-err));
			return err;
		}
	}
	err = online_cpus(x);
	if (!err)
		err = pick_events(x);
	if (!err && o->per_cpu)
		err = open_cpus(x);
	return err;
}

void exporter_fini(struct exporter *x)
{
	cgroups_close_all(x);
	free(x->cgroups);
	kubelogs_fini(&x->logs);
	free(x->cpu_handles);
	free(x->cpus);
	for (size_t e = 0; e < x->nevents; e++) {
		free(x->events[e].label);
		free(x->events[e].tail);
	}
	reading_fini(&x->reading);
	pages_fini(&x->pages);
	shpmu_free(x->pmu); /* closes the per-CPU handles */
	pthread_mutex_destroy(&x->lock);
}
