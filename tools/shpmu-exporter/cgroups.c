// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The counted cgroups: the hierarchy below --cgroup.root walked at each
 * scrape to --cgroup.depth, filtered by --cgroup.match and --cgroup.kind,
 * capped by --max-cgroups. Each counted cgroup holds one handle per event
 * on all CPUs, and its label set, made when it is opened (naming.c); one
 * that is gone is closed, one that is new is opened. A cgroup whose names
 * were not known when it was opened is named again when the kubelet's
 * log directories have been read again: its series then gains them. A
 * cgroup whose path is longer than PATH_MAX cannot be opened by path: it
 * is skipped, said and counted as left out, never opened by a truncated
 * path (which may name another cgroup).
 *
 * A cgroup is known by its directory's inode number, which the listing
 * of its parent gives (d_ino) without a syscall per cgroup; only a new
 * one is asked the library for its id (shpmu_cgroup_id), which its
 * handles count. On cgroup2 the two are the same number, kernfs's id of
 * the directory, never given again on a 64-bit kernel: a cgroup removed
 * and made again under the same name is a new one.
 *
 * With --cgroup.kind the walk does not go below a container's or a
 * monitor's cgroup (what is there is the container's own), and a cgroup
 * is judged by its path before the library is asked its id: of every
 * cgroup walked, only those of the kinds asked for cost more than a
 * parse.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exporter.h"
#include "../plural.h"

static int by_ino(const void *a, const void *b)
{
	const struct cgroup *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
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
	size_t na = strlen(a), ns = strlen(sep), nb = strlen(b);

	if (na + ns + nb >= size)
		return -ENAMETOOLONG;
	memcpy(dst, a, na);
	memcpy(dst + na, sep, ns);
	memcpy(dst + na + ns, b, nb + 1);
	return 0;
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

/* Opens every event on the cgroup with this inode and id, named n;
 * appended unsorted. */
static void add(struct exporter *x, uint64_t ino, uint64_t id,
		const char *walked, const struct naming *n)
{
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS,
				 .cgroup_id = id};
	struct cgroup c = {.ino = ino,
			   .id = id,
			   .seen = true,
			   .unnamed = n->unnamed,
			   .generation = x->logs.generation};

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
	c.labels = c.label ? naming_labels(c.label, n) : NULL;
	if (!c.handles || !c.labels)
		goto fail;
	c.labels_len = strlen(c.labels);
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
	size_t root; /* bytes of the root's label above the layouts */
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

/* Whether label lies in the kubelet's hierarchy: one of its components
 * is kubepods (the cgroupfs driver), kubepods.slice or, below the slices
 * of the kubelet's --cgroup-root, <root>-kubepods.slice. */
static bool in_kubepods(const char *label)
{
	static const char slice[] = "kubepods.slice";
	const size_t len = sizeof(slice) - 1;

	for (const char *p = label; (p = strchr(p, '/'));) {
		size_t n = strcspn(++p, "/");

		if ((n == 8 && !strncmp(p, "kubepods", 8)) ||
		    (n >= len && !strncmp(p + n - len, slice, len) &&
		     (n == len || p[n - len - 1] == '-')))
			return true;
	}
	return false;
}

/* label's path below the root of the walk, where layouts begin ("" for
 * the root itself, or a label elsewhere). */
static const char *below_root(const struct walk *w, const char *label)
{
	return strlen(label) >= w->root ? label + w->root : "";
}

/* Counts the cgroup at dir, its inode ino, if it is wanted; whether the
 * walk goes below it. */
static bool visit(struct walk *w, const char *dir, const char *label,
		  uint64_t ino)
{
	struct exporter *x = w->x;
	unsigned int kinds = x->opts->kinds;
	struct cgroup key = {.ino = ino}, *c;
	struct naming n;
	bool below = true;
	uint64_t id;

	/* Without --cgroup.kind a path is parsed only when it is new. */
	if (kinds) {
		naming_parse(&n, below_root(w, label));
		below = n.w.kind != WORKLOAD_CONTAINER &&
			n.w.kind != WORKLOAD_CONMON;
	}
	if (!wanted(x->opts, label) || (kinds && !naming_may_be(&n, kinds)))
		return below;
	c = w->before
		    ? bsearch(&key, x->cgroups, w->before, sizeof(key), by_ino)
		    : NULL;
	if (c) {
		c->seen = true;
		w->counted++;
		return below;
	}
	/* New: what it is decides whether it is counted. */
	if (kinds) {
		naming_find(x, &n);
		if (!(kinds & n.kind))
			return below;
	}
	if (w->counted >= x->opts->max_cgroups) {
		x->left_out++;
	} else if (!shpmu_cgroup_id(x->pmu, dir, &id)) {
		size_t before = x->ncgroups;

		if (!kinds) {
			naming_parse(&n, below_root(w, label));
			naming_find(x, &n);
		}
		add(x, ino, id, label, &n);
		w->counted += x->ncgroups > before;
	}
	return below;
}

static void walk(struct walk *w, const char *dir, const char *label,
		 uint64_t ino, int depth)
{
	DIR *d;
	struct dirent *de;

	if (!visit(w, dir, label, ino) || depth == 0 || !(d = opendir(dir)))
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
		walk(w, sub, sublabel, de->d_ino, depth - 1);
	}
	closedir(d);
}

/* The cgroups opened before their names were known, named again where
 * the kubelet's directories were read since. */
static void rename_unnamed(struct walk *w)
{
	struct exporter *x = w->x;
	bool any = false;

	for (size_t i = 0; i < x->ncgroups; i++)
		any |= x->cgroups[i].unnamed;
	if (!any)
		return;
	kubelogs_refresh(&x->logs, x->scrapes);
	for (size_t i = 0; i < x->ncgroups; i++) {
		struct cgroup *c = &x->cgroups[i];
		struct naming n;
		char *labels;

		if (!c->unnamed || c->generation == x->logs.generation)
			continue;
		naming_parse(&n, below_root(w, c->label));
		naming_find(x, &n);
		labels = naming_labels(c->label, &n);
		if (!labels)
			continue;
		free(c->labels);
		c->labels = labels;
		c->labels_len = strlen(labels);
		c->unnamed = n.unnamed;
		c->generation = x->logs.generation;
	}
}

void cgroups_refresh(struct exporter *x)
{
	struct walk w = {.x = x, .before = x->ncgroups};
	const char *root = x->opts->cgroup_root;
	size_t kept = 0, skipped = x->too_long;
	char dir[PATH_MAX], label[PATH_MAX];
	struct stat st;

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
	/* The layouts are below the root: "/" is none of their path. A root
	 * inside the kubelet's hierarchy (--cgroup.root=/kubepods.slice,
	 * to leave system.slice out) meets them partway: they are read from
	 * the mount's top there, as the kubelet makes them. */
	w.root = strcmp(label, "/") && !in_kubepods(label) ? strlen(label) : 0;
	if (join(dir, sizeof(dir), x->mount, "",
		 strcmp(label, "/") ? label : "")) {
		too_long(&w, "", label);
		goto walked;
	}
	/* (The root's inode from stat: no listing gives it.) */
	if (!stat(dir, &st))
		walk(&w, dir, label, st.st_ino, x->opts->cgroup_depth);
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
	qsort(x->cgroups, x->ncgroups, sizeof(*x->cgroups), by_ino);
	rename_unnamed(&w);
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
