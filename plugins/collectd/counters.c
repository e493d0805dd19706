// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "counters.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

/* A message for say, built on the stack. */
#define SAY(say, arg, level, ...)                                              \
	do {                                                                   \
		char said_[512];                                               \
		snprintf(said_, sizeof(said_), __VA_ARGS__);                   \
		say(level, said_, arg);                                        \
	} while (0)

/* Appends text to a type instance, '/' made '_' (collectd splits
 * identifiers at '/'), cut where the room ends. */
static void append_name(char *dst, const char *text)
{
	size_t n = strlen(dst);

	for (; *text && n + 1 < NAME_ROOM; text++)
		dst[n++] = *text == '/' ? '_' : *text;
	dst[n] = '\0';
}

static void name_series(struct series *s, bool one_target)
{
	const struct where *w = s->where;
	char label[NAME_ROOM];

	s->type_instance[0] = '\0';
	append_name(s->type_instance, s->event);
	if (one_target)
		return;
	switch (w->kind) {
	case WHERE_CGROUP:
		/* "/a/b" reads a_b; the root, "/", reads root */
		snprintf(label, sizeof(label), "%s",
			 w->text[strspn(w->text, "/")]
				 ? w->text + strspn(w->text, "/")
				 : "root");
		break;
	case WHERE_ALL_CPUS:
		snprintf(label, sizeof(label), "all");
		break;
	case WHERE_CPU:
		snprintf(label, sizeof(label), "cpu%d", w->cpu);
		break;
	case WHERE_PROCESS:
		snprintf(label, sizeof(label), "pid%d", (int)w->pid);
		break;
	case WHERE_PROCESS_NAME:
		snprintf(label, sizeof(label), "%s", w->text);
		break;
	}
	append_name(s->type_instance, "-");
	append_name(s->type_instance, label);
}

/* The lowest pid whose /proc/PID/comm is name, or -1. /proc is the
 * kernel's, but a process names itself: comm is read, never trusted to
 * be terminated or short. */
static pid_t find_process(const char *name)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = -1;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[64], comm[32];
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		ssize_t n;
		int fd;

		if (*end || pid <= 0 || (found > 0 && pid >= found))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (n <= 0)
			continue;
		comm[n] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		if (!strcmp(comm, name))
			found = (pid_t)pid;
	}
	closedir(d);
	return found;
}

/*
 * A cgroup's id. Paths are written as collectd users see cgroups
 * (/system.slice/nginx.service): from the cgroup root, unless they name
 * the root's own directory first.
 */
static int cgroup_id(struct counters *c, const char *path, uint64_t *id)
{
	char root[4096];
	size_t n;

	if (shpmu_cgroup_root(c->pmu, root, sizeof(root)) == 0) {
		n = strlen(root);
		if (!strncmp(path, root, n) && (!path[n] || path[n] == '/'))
			return shpmu_cgroup_id(c->pmu, path, id);
		path += strspn(path, "/");
		if (!*path)
			return shpmu_cgroup_id(c->pmu, root, id);
	}
	return shpmu_cgroup_id(c->pmu, path, id);
}

/*
 * Fills t for s. Returns 0, -ENOENT (the cgroup or process is not there
 * now), or a libshpmu error for the cgroup path.
 */
static int target_of(struct counters *c, struct series *s,
		     struct shpmu_target *t)
{
	const struct where *w = s->where;
	int err;

	*t = (struct shpmu_target){0};
	switch (w->kind) {
	case WHERE_CGROUP:
		err = cgroup_id(c, w->text, &s->cgroup_id);
		if (err)
			return err;
		t->kind = SHPMU_TARGET_CGROUP;
		t->cgroup_id = s->cgroup_id;
		return 0;
	case WHERE_ALL_CPUS:
		t->kind = SHPMU_TARGET_CPU;
		t->cpu = SHPMU_ALL_CPUS;
		return 0;
	case WHERE_CPU:
		t->kind = SHPMU_TARGET_CPU;
		t->cpu = w->cpu;
		t->flags = SHPMU_TARGET_BIND_CPU;
		return 0;
	case WHERE_PROCESS:
		t->kind = SHPMU_TARGET_PROCESS;
		t->pid = w->pid;
		return 0;
	case WHERE_PROCESS_NAME:
		s->pid = find_process(w->text);
		if (s->pid < 0)
			return -ENOENT;
		t->kind = SHPMU_TARGET_PROCESS;
		t->pid = s->pid;
		return 0;
	}
	return -EINVAL;
}

static const char *where_text(const struct where *w, char *buf, size_t len)
{
	switch (w->kind) {
	case WHERE_CGROUP:
		snprintf(buf, len, "Cgroup \"%s\"", w->text);
		break;
	case WHERE_ALL_CPUS:
		snprintf(buf, len, "CPUs \"all\"");
		break;
	case WHERE_CPU:
		snprintf(buf, len, "CPU %d", w->cpu);
		break;
	case WHERE_PROCESS:
		snprintf(buf, len, "Process %d", (int)w->pid);
		break;
	case WHERE_PROCESS_NAME:
		snprintf(buf, len, "ProcessName \"%s\"", w->text);
		break;
	}
	return buf;
}

/* Whether a target that comes and goes is missing; others never are. */
static bool may_come_back(const struct where *w)
{
	return w->kind == WHERE_CGROUP || w->kind == WHERE_PROCESS_NAME;
}

/* Opens s. Returns 0 (open, or its target is not there: s->h stays -1),
 * or the error, said at level. */
static int open_series(struct counters *c, struct series *s, int level,
		       say_cb say, void *arg)
{
	struct shpmu_target t;
	char where[NAME_ROOM + 32], why[256];
	int err = target_of(c, s, &t);

	if (err == -ENOENT && may_come_back(s->where)) {
		if (!s->told_gone)
			SAY(say, arg, LOG_NOTICE,
			    "shpmu: instance \"%s\": %s is not there: "
			    "counting %s there once it is",
			    c->settings->name,
			    where_text(s->where, where, sizeof(where)),
			    s->event);
		s->told_gone = true;
		return 0;
	}
	if (!err)
		err = shpmu_open_name(c->pmu, s->event, &t);
	if (err < 0) {
		/* Said once, not each interval, until an open works */
		if (s->told_failed)
			return err;
		if (shpmu_explain(c->pmu, -1, err, why, sizeof(why)))
			snprintf(why, sizeof(why), "%s", strerror(-err));
		SAY(say, arg, level,
		    "shpmu: instance \"%s\": cannot count Events \"%s\" on "
		    "%s: %s",
		    c->settings->name, s->event,
		    where_text(s->where, where, sizeof(where)), why);
		s->told_failed = true;
		return err;
	}
	s->h = err;
	if (s->told_gone)
		SAY(say, arg, LOG_INFO,
		    "shpmu: instance \"%s\": %s is back: counting %s again "
		    "from 0",
		    c->settings->name,
		    where_text(s->where, where, sizeof(where)), s->event);
	s->told_gone = s->told_failed = false;
	return 0;
}

int counters_open(struct counters *c, struct shpmu *pmu,
		  const struct instance_settings *in, say_cb say, void *arg)
{
	size_t n = in->nevents * in->nwheres;

	*c = (struct counters){.settings = in, .pmu = pmu};
	c->series = calloc(n, sizeof(*c->series));
	if (!c->series) {
		say(LOG_ERR, "shpmu: out of memory", arg);
		return -1;
	}
	pthread_mutex_init(&c->lock, NULL);
	for (size_t w = 0; w < in->nwheres; w++)
		for (size_t e = 0; e < in->nevents; e++) {
			struct series *s = &c->series[c->nseries++];

			*s = (struct series){.event = in->events[e],
					     .where = &in->wheres[w],
					     .h = -1,
					     .pid = -1};
			name_series(s, in->nwheres == 1);
			for (struct series *o = c->series; o < s; o++)
				if (!strcmp(o->type_instance,
					    s->type_instance)) {
					SAY(say, arg, LOG_ERR,
					    "shpmu: instance \"%s\": two of "
					    "its series would be named "
					    "\"%s\": list each event and "
					    "target once",
					    in->name, s->type_instance);
					goto fail;
				}
			if (open_series(c, s, LOG_ERR, say, arg))
				goto fail;
		}
	return 0;
fail:
	counters_close(c);
	return -1;
}

/* A target as it is now, looked up once a read for all its events'
 * series: a cgroup's id, or the error of its lookup (it is gone). */
struct target_now {
	int cgroup_err;
	uint64_t cgroup_id;
};

static void look_up_target(struct counters *c, const struct where *w,
			   struct target_now *now)
{
	*now = (struct target_now){0};
	if (w->kind == WHERE_CGROUP)
		now->cgroup_err = cgroup_id(c, w->text, &now->cgroup_id);
}

/* Whether s's target went away since it was opened: a cgroup removed (or
 * removed and made again: another id), a process gone. */
static bool target_gone(const struct series *s, const struct target_now *now)
{
	switch (s->where->kind) {
	case WHERE_CGROUP:
		return now->cgroup_err || now->cgroup_id != s->cgroup_id;
	case WHERE_PROCESS:
		return kill(s->where->pid, 0) && errno == ESRCH;
	case WHERE_PROCESS_NAME:
		return kill(s->pid, 0) && errno == ESRCH;
	default:
		return false;
	}
}

static void drop_series(struct counters *c, struct series *s, say_cb say,
			void *arg)
{
	char where[NAME_ROOM + 32];

	SAY(say, arg, LOG_NOTICE,
	    "shpmu: instance \"%s\": %s is gone: %s dropped%s",
	    c->settings->name, where_text(s->where, where, sizeof(where)),
	    s->event, may_come_back(s->where) ? " until it is back" : "");
	shpmu_close(c->pmu, s->h);
	s->h = -1;
	s->told_gone = true;
}

static void read_series(struct counters *c, struct series *s,
			const struct target_now *now, reading_cb cb, say_cb say,
			void *arg)
{
	struct shpmu_count count;
	char why[256];
	uint64_t value;
	int err;

	if (s->h < 0) {
		if (may_come_back(s->where))
			open_series(c, s, LOG_WARNING, say, arg);
		if (s->h < 0)
			return;
	} else if (target_gone(s, now)) {
		drop_series(c, s, say, arg);
		return;
	}
	err = shpmu_read(c->pmu, s->h, &count);
	if (err) {
		if (shpmu_explain(c->pmu, s->h, err, why, sizeof(why)))
			snprintf(why, sizeof(why), "%s", strerror(-err));
		SAY(say, arg, LOG_WARNING,
		    "shpmu: instance \"%s\": reading %s failed, skipped this "
		    "interval: %s",
		    c->settings->name, s->type_instance, why);
		return;
	}
	value = count.value;
	if (count.time_running < count.time_enabled) {
		value = shpmu_scale(&count);
		if (value > INT64_MAX) {
			SAY(say, arg, LOG_WARNING,
			    "shpmu: instance \"%s\": %s ran %llu of %llu ns: "
			    "too little to scale, skipped this interval",
			    c->settings->name, s->type_instance,
			    (unsigned long long)count.time_running,
			    (unsigned long long)count.time_enabled);
			return;
		}
	}
	cb(c, s, value, arg);
}

void counters_read(struct counters *c, reading_cb cb, say_cb say, void *arg)
{
	struct target_now now;

	pthread_mutex_lock(&c->lock);
	/* counters_open() lays the series out target by target, an event
	 * each: a target's state is looked up once for its events. */
	for (size_t i = 0; i < c->nseries; i++) {
		if (i % c->settings->nevents == 0)
			look_up_target(c, c->series[i].where, &now);
		read_series(c, &c->series[i], &now, cb, say, arg);
	}
	pthread_mutex_unlock(&c->lock);
}

void counters_close(struct counters *c)
{
	if (!c->series)
		return;
	for (size_t i = 0; i < c->nseries; i++)
		if (c->series[i].h >= 0)
			shpmu_close(c->pmu, c->series[i].h);
	free(c->series);
	c->series = NULL;
	c->nseries = 0;
	pthread_mutex_destroy(&c->lock);
}
