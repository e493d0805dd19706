// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The counted cgroups: the hierarchy below --cgroup.root walked at each
 * scrape to --cgroup.depth, filtered by --cgroup.match, capped by
 * --max-cgroups. Each counted cgroup holds one handle per event on all
 * CPUs; one that is gone is closed, one that is new is opened. A cgroup
 * whose path is longer than PATH_MAX cannot be opened by path: it is
 * skipped, said and counted as left out, never opened by a truncated
 * path (which may name another cgroup).
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "exporter.h"
#include "../plural.h"

static int by_id(const void *a, const void *b)
{
	const struct cgroup *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static bool wanted(const struct options *o, const char *label)
{
	if (!o->npatterns)
		return true;
	for (size_t i = 0; i < o->npatterns; i++)
		if (!fnmatch(o->patterns[i], label, 0))
			return true;
	return false;
}

static void close_handles(struct exporter *x, int *hs, size_t n)
{
	for (size_t e = 0; e < n; e++)
		shpmu_close(x->pmu, hs[e]);
}

/* dst = a, sep and b joined; -ENAMETOOLONG where it would not fit. */
static int join(char *dst, size_t size, const char *a, const char *sep,
		const char *b)
{
	int n = snprintf(dst, size, "%s%s%s", a, sep, b);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* The label the library gives id: its path under the mount. */
static char *label_of(struct exporter *x, uint64_t id, const char *walked)
{
	char path[PATH_MAX];
	size_t root = strlen(x->mount);

	if (shpmu_cgroup_path(x->pmu, id, path, sizeof(path)) ||
	    strncmp(path, x->mount, root))
		return strdup(walked);
	return strdup(path[root] ? path + root : "/");
}

/* Opens every event on the cgroup with this id; appended unsorted. */
static void add(struct exporter *x, uint64_t id, const char *walked)
{
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS,
				 .cgroup_id = id};
	struct cgroup c = {.id = id, .seen = true};

	if (x->ncgroups == x->cgroups_cap) {
		size_t cap = x->cgroups_cap * 2 + 64;
		struct cgroup *more = realloc(x->cgroups, cap * sizeof(*more));

		if (!more)
			return;
		x->cgroups = more;
		x->cgroups_cap = cap;
	}
	c.handles = malloc(sizeof(int) * x->nevents);
	c.label = label_of(x, id, walked);
	c.labels = c.label ? label_pair("cgroup", c.label) : NULL;
	if (!c.handles || !c.labels)
		goto fail;
	for (size_t e = 0; e < x->nevents; e++) {
		int h = shpmu_open_name(x->pmu, x->events[e].name, &t);
		char why[EXPLAIN_MAX];

		if (h < 0) {
			say("cgroup %s %s: %s", walked, x->events[e].name,
			    explain(x, -1, h, why, sizeof(why)));
			close_handles(x, c.handles, e);
			x->target_errors++;
			goto fail;
		}
		c.handles[e] = h;
	}
	x->cgroups[x->ncgroups++] = c;
	return;
fail:
	free(c.handles);
	free(c.label);
	free(c.labels);
}

struct walk {
	struct exporter *x;
	size_t before; /* entries sorted before this walk */
	size_t counted;
	char long_parent[PATH_MAX], long_name[NAME_MAX + 1]; /* one skipped */
};

static void too_long(struct walk *w, const char *label, const char *name)
{
	if (!w->x->too_long++) {
		snprintf(w->long_parent, sizeof(w->long_parent), "%s", label);
		snprintf(w->long_name, sizeof(w->long_name), "%s", name);
	}
	w->x->left_out++;
}

static void visit(struct walk *w, const char *dir, const char *label)
{
	struct exporter *x = w->x;
	uint64_t id;

	if (!wanted(x->opts, label) || shpmu_cgroup_id(x->pmu, dir, &id))
		return;
	{
		struct cgroup key = {.id = id},
			      *c = w->before ? bsearch(&key, x->cgroups,
						       w->before, sizeof(key),
						       by_id)
					     : NULL;

		if (c) {
			c->seen = true;
			w->counted++;
		} else if (w->counted >= x->opts->max_cgroups) {
			x->left_out++;
		} else {
			size_t n = x->ncgroups;

			add(x, id, label);
			w->counted += x->ncgroups > n;
		}
	}
}

static void walk(struct walk *w, const char *dir, const char *label, int depth)
{
	DIR *d;
	struct dirent *de;

	visit(w, dir, label);
	if (depth == 0 || !(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		char sub[PATH_MAX], sublabel[PATH_MAX];

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (join(sub, sizeof(sub), dir, "/", de->d_name) ||
		    join(sublabel, sizeof(sublabel), label,
			 strcmp(label, "/") ? "/" : "", de->d_name)) {
			too_long(w, label, de->d_name);
			continue;
		}
		walk(w, sub, sublabel, depth - 1);
	}
	closedir(d);
}

void cgroups_refresh(struct exporter *x)
{
	struct walk w = {.x = x, .before = x->ncgroups};
	const char *root = x->opts->cgroup_root;
	size_t kept = 0, skipped = x->too_long;
	char dir[PATH_MAX], label[PATH_MAX];

	if (!x->opts->per_cgroup || !x->mount[0])
		return;
	for (size_t i = 0; i < x->ncgroups; i++)
		x->cgroups[i].seen = false;
	x->left_out = 0;
	x->too_long = 0;
	/* Labels are paths under the mount, "/" first, as
	 * /proc/PID/cgroup shows them. */
	if (join(label, sizeof(label), root[0] == '/' ? "" : "/", "", root)) {
		too_long(&w, "", root);
		goto walked;
	}
	if (strlen(label) > 1 && label[strlen(label) - 1] == '/')
		label[strlen(label) - 1] = '\0';
	if (join(dir, sizeof(dir), x->mount, "",
		 strcmp(label, "/") ? label : "")) {
		too_long(&w, "", label);
		goto walked;
	}
	walk(&w, dir, label, x->opts->cgroup_depth);
walked:
	/* Said when it changes, not at every scrape. */
	if (x->too_long && x->too_long != skipped) {
		size_t n = strlen(w.long_parent);

		say("%zu cgroup%s skipped, %s past %d bytes (%s), "
		    "e.g. %s%s/%.40s",
		    x->too_long, plural(x->too_long, "s"),
		    x->too_long == 1 ? "its path" : "their paths", PATH_MAX - 1,
		    strerror(ENAMETOOLONG), n > 80 ? "..." : "",
		    w.long_parent + (n > 80 ? n - 80 : 0), w.long_name);
	}
	/* Gone (or no longer wanted): its series stop. */
	for (size_t i = 0; i < x->ncgroups; i++) {
		struct cgroup *c = &x->cgroups[i];

		if (!c->seen) {
			close_handles(x, c->handles, x->nevents);
			free(c->handles);
			free(c->label);
			free(c->labels);
			continue;
		}
		x->cgroups[kept++] = *c;
	}
	x->ncgroups = kept;
	qsort(x->cgroups, x->ncgroups, sizeof(*x->cgroups), by_id);
}

void cgroups_close_all(struct exporter *x)
{
	for (size_t i = 0; i < x->ncgroups; i++) {
		close_handles(x, x->cgroups[i].handles, x->nevents);
		free(x->cgroups[i].handles);
		free(x->cgroups[i].label);
		free(x->cgroups[i].labels);
	}
	x->ncgroups = 0;
}
