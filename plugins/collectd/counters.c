// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "counters.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

/* A message for say, built on the stack. */
#define SAY(say, arg, level, ...)                                              \
	do {                                                                   \
		char said_[512];                                               \
		snprintf(said_, sizeof(said_), __VA_ARGS__);                   \
		say(level, said_, arg);                                        \
	} while (0)

/* How a target is named: in messages, as the config gives it; in a
 * series' type instance, short. */
enum where_style { WHERE_CONFIG, WHERE_LABEL };

static void where_text(const struct counters *c, size_t target,
		       enum where_style style, char *buf, size_t len)
{
	const struct where *w = c->series[target * c->settings->nevents].where;
	bool label = style == WHERE_LABEL;

	switch (w->kind) {
	case WHERE_CGROUP:
		/* "a/b" labels as a_b (append_name), the root as root */
		if (label)
			snprintf(buf, len, "%s",
				 *c->cgroups[target] ? c->cgroups[target]
						     : "root");
		else
			snprintf(buf, len, "Cgroup \"%s\"", w->text);
		break;
	case WHERE_ALL_CPUS:
		snprintf(buf, len, label ? "all" : "CPUs \"all\"");
		break;
	case WHERE_CPU:
		snprintf(buf, len, label ? "cpu%d" : "CPU %d", w->cpu);
		break;
	case WHERE_PROCESS:
		snprintf(buf, len, label ? "pid%d" : "Process %d", (int)w->pid);
		break;
	case WHERE_PROCESS_NAME:
		snprintf(buf, len, label ? "%s" : "ProcessName \"%s\"",
			 w->text);
		break;
	}
}

/* Appends text to a type instance, '/' made '_' (collectd splits
 * identifiers at '/'), cut where the room ends. */
static void append_name(char *dst, const char *text)
{
	size_t n = strlen(dst);

	for (; *text && n + 1 < NAME_ROOM; text++)
		dst[n++] = *text == '/' ? '_' : *text;
	dst[n] = '\0';
}

static void name_series(const struct counters *c, struct series *s,
			size_t target)
{
	char label[NAME_ROOM];

	s->type_instance[0] = '\0';
	append_name(s->type_instance, s->event);
	if (c->settings->nwheres == 1)
		return;
	where_text(c, target, WHERE_LABEL, label, sizeof(label));
	append_name(s->type_instance, "-");
	append_name(s->type_instance, label);
}

/*
 * A cgroup path as it is under the root: collectd users write cgroups as
 * they see them (/system.slice/nginx.service), from the root unless the
 * root's own directory comes first. Empty and "." components are dropped,
 * so that one cgroup written two ways is one target. NULL: out of memory.
 */
static char *cgroup_below_root(const char *root, const char *text)
{
	size_t n = root ? strlen(root) : 0;
	char *out = malloc(strlen(text) + 1), *o = out;
	const char *p = text;

	if (!out)
		return NULL;
	if (n && !strncmp(text, root, n) && (!text[n] || text[n] == '/'))
		p += n;
	while (*p) {
		size_t len;

		p += strspn(p, "/");
		len = strcspn(p, "/");
		if (len && !(len == 1 && *p == '.')) {
			if (o != out)
				*o++ = '/';
			memcpy(o, p, len);
			o += len;
		}
		p += len;
	}
	*o = '\0';
	return out;
}

/* Whether a path has a ".." component: it would leave the cgroup root
 * (libshpmu refuses it too). */
static bool climbs(const char *path)
{
	for (const char *p = path; (p = strstr(p, "..")); p += 2)
		if ((p == path || p[-1] == '/') && (!p[2] || p[2] == '/'))
			return true;
	return false;
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

/* A process's start time in clock ticks (field 22 of /proc/PID/stat,
 * after the name, which may hold spaces and ')'): false once it is gone.
 * A pid given to a later process comes with a later start. */
static bool start_time(pid_t pid, unsigned long long *t)
{
	char path[64], buf[1024];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* state and 18 more fields come before it */
	for (int field = 0; p && field < 20; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return false;
	*t = strtoull(p + 1, NULL, 10);
	return true;
}

/* Whether the process opened as (pid, t) is still the one there. */
static bool same_process(pid_t pid, unsigned long long t)
{
	unsigned long long now;

	return start_time(pid, &now) && now == t;
}

/* A target as it is now, looked up once a read for all its events'
 * series. err: 0, -ENOENT (a cgroup or named process that is not there),
 * or the error of a cgroup's lookup. */
struct target_now {
	int err;
	uint64_t cgroup_id;
	pid_t pid;
	unsigned long long start_time;
};

/*
 * A cgroup's id. A path that is not there is -ENOENT without asking the
 * library, which would log an error each interval for a cgroup the
 * config says may come and go.
 */
static int cgroup_lookup(const struct counters *c, const char *below_root,
			 uint64_t *id)
{
	char path[8192];
	struct stat st;

	if (c->cgroup_root &&
	    (size_t)snprintf(path, sizeof(path), "%s/%s", c->cgroup_root,
			     below_root) < sizeof(path) &&
	    lstat(path, &st) && (errno == ENOENT || errno == ENOTDIR))
		return -ENOENT;
	return shpmu_cgroup_id(c->pmu, below_root, id);
}

/* An open series of the target, or NULL. */
static const struct series *open_series_of(const struct counters *c,
					   size_t target)
{
	const struct series *s = &c->series[target * c->settings->nevents];

	for (size_t e = 0; e < c->settings->nevents; e++)
		if (s[e].h >= 0)
			return &s[e];
	return NULL;
}

static void look_up_target(struct counters *c, size_t target,
			   struct target_now *now)
{
	const struct where *w = c->series[target * c->settings->nevents].where;
	const struct series *open;

	*now = (struct target_now){0};
	if (w->kind == WHERE_CGROUP) {
		now->err =
			cgroup_lookup(c, c->cgroups[target], &now->cgroup_id);
	} else if (w->kind == WHERE_PROCESS) {
		now->pid = w->pid;
		if (!start_time(w->pid, &now->start_time))
			now->err = -ESRCH;
	} else if (w->kind == WHERE_PROCESS_NAME) {
		/* While one of its series counts a process, the others
		 * open on that one (its end is seen by its start time);
		 * /proc is walked only when none does. */
		open = open_series_of(c, target);
		if (open) {
			now->pid = open->pid;
			now->start_time = open->start_time;
			return;
		}
		now->pid = find_process(w->text);
		if (now->pid <= 0 || !start_time(now->pid, &now->start_time))
			now->err = -ENOENT;
	}
}

/* Whether a target that comes and goes is missing; others never are. */
static bool may_come_back(const struct where *w)
{
	return w->kind == WHERE_CGROUP || w->kind == WHERE_PROCESS_NAME;
}

/* Fills t from what the target is now. */
static void target_of(const struct series *s, const struct target_now *now,
		      struct shpmu_target *t)
{
	const struct where *w = s->where;

	*t = (struct shpmu_target){0};
	switch (w->kind) {
	case WHERE_CGROUP:
		t->kind = SHPMU_TARGET_CGROUP;
		t->cgroup_id = now->cgroup_id;
		break;
	case WHERE_ALL_CPUS:
		t->kind = SHPMU_TARGET_CPU;
		t->cpu = SHPMU_ALL_CPUS;
		break;
	case WHERE_CPU:
		t->kind = SHPMU_TARGET_CPU;
		t->cpu = w->cpu;
		t->flags = SHPMU_TARGET_BIND_CPU;
		break;
	case WHERE_PROCESS:
		t->kind = SHPMU_TARGET_PROCESS;
		t->pid = w->pid;
		break;
	case WHERE_PROCESS_NAME:
		t->kind = SHPMU_TARGET_PROCESS;
		t->pid = now->pid;
		break;
	}
}

/* Whether an open that failed with err failed because its target went
 * away after its lookup. An unknown event is -ENOENT too, on a cgroup
 * that is there: that is an error to say. */
static bool vanished(const struct counters *c, const struct series *s,
		     size_t target, int err)
{
	uint64_t id;

	switch (s->where->kind) {
	case WHERE_CGROUP:
		return err == -ENOENT &&
		       cgroup_lookup(c, c->cgroups[target], &id) == -ENOENT;
	case WHERE_PROCESS_NAME:
		return err == -ESRCH;
	default:
		return false;
	}
}

/* Says once that s's target is not there, until it is back. */
static void say_not_there(struct counters *c, struct series *s, size_t target,
			  say_cb say, void *arg)
{
	char where[NAME_ROOM + 32];

	if (!s->told_gone) {
		where_text(c, target, WHERE_CONFIG, where, sizeof(where));
		SAY(say, arg, LOG_NOTICE,
		    "shpmu: instance \"%s\": %s is not there: counting %s "
		    "there once it is",
		    c->settings->name, where, s->event);
	}
	s->told_gone = true;
}

/* Opens s. Returns 0 (open, or its target is not there: s->h stays -1),
 * or the error, said at level. */
static int open_series(struct counters *c, struct series *s, size_t target,
		       const struct target_now *now, int level, say_cb say,
		       void *arg)
{
	struct shpmu_target t;
	char where[NAME_ROOM + 32], why[256];
	int err = now->err;
	bool not_there = err == -ENOENT;

	if (!err) {
		target_of(s, now, &t);
		err = shpmu_open_name(c->pmu, s->event, &t);
		not_there = err < 0 && vanished(c, s, target, err);
	}
	if (not_there && may_come_back(s->where)) {
		say_not_there(c, s, target, say, arg);
		return 0;
	}
	if (err < 0) {
		/* Said once, not each interval, until an open works */
		if (s->told_failed)
			return err;
		if (shpmu_explain(c->pmu, -1, err, why, sizeof(why)))
			snprintf(why, sizeof(why), "%s", strerror(-err));
		where_text(c, target, WHERE_CONFIG, where, sizeof(where));
		SAY(say, arg, level,
		    "shpmu: instance \"%s\": cannot count Events \"%s\" on "
		    "%s: %s",
		    c->settings->name, s->event, where, why);
		s->told_failed = true;
		return err;
	}
	s->h = err;
	s->cgroup_id = now->cgroup_id;
	s->pid = now->pid;
	s->start_time = now->start_time;
	s->total = (struct total){0};
	if (s->told_gone) {
		where_text(c, target, WHERE_CONFIG, where, sizeof(where));
		SAY(say, arg, LOG_INFO,
		    "shpmu: instance \"%s\": %s is back: counting %s again "
		    "from 0",
		    c->settings->name, where, s->event);
	}
	s->told_gone = s->told_failed = false;
	return 0;
}

/* Lays out the series, target by target, and the cgroups' paths. */
static int lay_out(struct counters *c, say_cb say, void *arg)
{
	const struct instance_settings *in = c->settings;
	char root[4096];

	if (!shpmu_cgroup_root(c->pmu, root, sizeof(root)) &&
	    !(c->cgroup_root = strdup(root)))
		return -1;
	c->cgroups = calloc(in->nwheres, sizeof(*c->cgroups));
	c->series = calloc(in->nevents * in->nwheres, sizeof(*c->series));
	if (!c->cgroups || !c->series)
		return -1;
	for (size_t w = 0; w < in->nwheres; w++) {
		if (in->wheres[w].kind == WHERE_CGROUP &&
		    !(c->cgroups[w] = cgroup_below_root(c->cgroup_root,
							in->wheres[w].text)))
			return -1;
		if (c->cgroups[w] && climbs(c->cgroups[w])) {
			SAY(say, arg, LOG_ERR,
			    "shpmu: instance \"%s\": Cgroup \"%s\": a cgroup "
			    "path may not climb out with \"..\"",
			    in->name, in->wheres[w].text);
			return -2;
		}
		for (size_t e = 0; e < in->nevents; e++) {
			struct series *s = &c->series[c->nseries++];

			*s = (struct series){.event = in->events[e],
					     .where = &in->wheres[w],
					     .h = -1,
					     .pid = -1};
			name_series(c, s, w);
			for (struct series *o = c->series; o < s; o++)
				if (!strcmp(o->type_instance,
					    s->type_instance)) {
					SAY(say, arg, LOG_ERR,
					    "shpmu: instance \"%s\": two of "
					    "its series would be named "
					    "\"%s\": list each event and "
					    "target once",
					    in->name, s->type_instance);
					return -2;
				}
		}
	}
	return 0;
}

int counters_open(struct counters *c, struct shpmu *pmu,
		  const struct instance_settings *in, say_cb say, void *arg)
{
	struct target_now now;
	int err;

	*c = (struct counters){.settings = in, .pmu = pmu};
	err = lay_out(c, say, arg);
	if (err == -1)
		say(LOG_ERR, "shpmu: out of memory", arg);
	for (size_t t = 0; !err && t < in->nwheres; t++) {
		look_up_target(c, t, &now);
		for (size_t e = 0; !err && e < in->nevents; e++)
			err = open_series(c, &c->series[t * in->nevents + e], t,
					  &now, LOG_ERR, say, arg);
	}
	if (err)
		counters_close(c);
	return err ? -1 : 0;
}

/* Whether s's target went away since it was opened: a cgroup removed (or
 * removed and made again: another id), a process gone (or its pid given
 * to another: a Process's series then stops, it does not follow the
 * pid). A cgroup whose lookup failed otherwise (out of fds, say)
 * is not taken for gone: its series reads on. */
static bool target_gone(const struct series *s, const struct target_now *now)
{
	switch (s->where->kind) {
	case WHERE_CGROUP:
		if (now->err)
			return now->err == -ENOENT || now->err == -ENOTDIR;
		return now->cgroup_id != s->cgroup_id;
	case WHERE_PROCESS:
	case WHERE_PROCESS_NAME:
		return !same_process(s->pid, s->start_time);
	default:
		return false;
	}
}

static void drop_series(struct counters *c, struct series *s, size_t target,
			say_cb say, void *arg)
{
	char where[NAME_ROOM + 32];

	where_text(c, target, WHERE_CONFIG, where, sizeof(where));
	SAY(say, arg, LOG_NOTICE,
	    "shpmu: instance \"%s\": %s is gone: %s dropped%s",
	    c->settings->name, where, s->event,
	    may_come_back(s->where) ? " until it is back" : "");
	shpmu_close(c->pmu, s->h);
	s->h = -1;
	s->told_gone = true;
}

static void read_series(struct counters *c, struct series *s, size_t target,
			const struct target_now *now, reading_cb cb, say_cb say,
			void *arg)
{
	struct shpmu_count count;
	char why[256];
	int err;

	if (s->h < 0) {
		if (may_come_back(s->where))
			open_series(c, s, target, now, LOG_WARNING, say, arg);
		if (s->h < 0)
			return;
	} else if (target_gone(s, now)) {
		drop_series(c, s, target, say, arg);
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
	if (total_advance(&s->total, &count)) {
		SAY(say, arg, LOG_WARNING,
		    "shpmu: instance \"%s\": %s would pass what a derive "
		    "holds: skipped this interval",
		    c->settings->name, s->type_instance);
		return;
	}
	cb(c, s, s->total.value, arg);
}

void counters_read(struct counters *c, reading_cb cb, say_cb say, void *arg)
{
	size_t nevents = c->settings->nevents;
	struct target_now now;

	for (size_t t = 0; t < c->settings->nwheres; t++) {
		look_up_target(c, t, &now);
		for (size_t e = 0; e < nevents; e++)
			read_series(c, &c->series[t * nevents + e], t, &now, cb,
				    say, arg);
	}
}

void counters_close(struct counters *c)
{
	for (size_t i = 0; i < c->nseries; i++)
		if (c->series[i].h >= 0)
			shpmu_close(c->pmu, c->series[i].h);
	for (size_t w = 0; c->cgroups && w < c->settings->nwheres; w++)
		free(c->cgroups[w]);
	free(c->cgroups);
	free(c->series);
	free(c->cgroup_root);
	*c = (struct counters){.settings = c->settings, .pmu = c->pmu};
}
