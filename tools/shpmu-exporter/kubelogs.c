// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kubelet's log directories, listed (kubelogs.h). Each read builds a
 * new table, sorted by key for bsearch, whose strings live in one buffer;
 * it replaces the old one only once whole, so that a failed read leaves
 * the names as they were.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exporter.h"
#include "kubelogs.h"

/* A table as it is read. */
struct build {
	struct log_entry *entries;
	size_t n, cap;
	char *text;
	size_t len, size;
	/* The names refused: how many, a print of them, the first one. */
	size_t refused;
	uint64_t print;
	char example[NAME_MAX + 1];
	/* The keys given two sets of names: how many, a print of them, an
	 * entry of the first one. */
	size_t conflicts;
	uint64_t conflict_print;
	char conflict_example[2][NAME_MAX + 1];
};

static void build_free(struct build *b)
{
	free(b->entries);
	free(b->text);
}

/* s appended to the text with its NUL; its offset, 0 where there is no
 * memory (the empty string's). */
static uint32_t text(struct build *b, const char *s)
{
	size_t n = strlen(s) + 1;
	uint32_t at = (uint32_t)b->len;

	if (b->len + n > b->size) {
		size_t size = (b->size + n) * 2;
		char *more = realloc(b->text, size);

		if (!more)
			return 0;
		b->text = more;
		b->size = size;
	}
	memcpy(b->text + b->len, s, n);
	b->len += n;
	return at;
}

static int add(struct build *b, const char *name, const char *key,
	       const char *ns, const char *pod, const char *container)
{
	struct log_entry *e;

	if (b->n == b->cap) {
		size_t cap = b->cap * 2 + 64;
		struct log_entry *more = realloc(b->entries, cap * sizeof(*e));

		if (!more)
			return -ENOMEM;
		b->entries = more;
		b->cap = cap;
	}
	e = &b->entries[b->n];
	snprintf(e->key, sizeof(e->key), "%s", key);
	e->namespace = text(b, ns);
	e->pod = text(b, pod);
	e->container = *container ? text(b, container) : 0;
	e->name = text(b, name);
	e->conflict = false;
	if (!e->namespace || !e->pod || (*container && !e->container) ||
	    !e->name)
		return -ENOMEM;
	b->n++;
	return 0;
}

/* FNV-1a: the print of the names refused sums each name's, in whatever
 * order they are listed. */
static uint64_t fnv(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static void refuse(struct build *b, const char *name)
{
	if (!b->refused++)
		snprintf(b->example, sizeof(b->example), "%s", name);
	b->print += fnv(name);
}

/* Whether name in the directory fd is of the type the kubelet makes
 * there: a directory, or a link. Not followed, not opened. */
static bool kubelets_type(int fd, const struct dirent *de, bool dir)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == (dir ? DT_DIR : DT_LNK);
	if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
		return false;
	return dir ? S_ISDIR(st.st_mode) : S_ISLNK(st.st_mode);
}

static int take(struct build *b, bool pods, int fd, const struct dirent *de)
{
	struct pod_dir pd;
	struct log_link ll;

	if (!kubelets_type(fd, de, pods)) {
		refuse(b, de->d_name);
		return 0;
	}
	if (pods && workload_pod_dir(de->d_name, &pd))
		return add(b, de->d_name, pd.uid, pd.namespace, pd.pod, "");
	if (!pods && workload_log_link(de->d_name, &ll))
		return add(b, de->d_name, ll.id, ll.namespace, ll.pod,
			   ll.container);
	refuse(b, de->d_name);
	return 0;
}

static int by_key(const void *a, const void *b)
{
	const struct log_entry *x = a, *y = b;

	return strcmp(x->key, y->key);
}

static bool same_names(const struct build *b, const struct log_entry *x,
		       const struct log_entry *y)
{
	return !strcmp(b->text + x->namespace, b->text + y->namespace) &&
	       !strcmp(b->text + x->pod, b->text + y->pod) &&
	       !strcmp(b->text + x->container, b->text + y->container);
}

/* Sorted, and a key given two sets of names kept once without names:
 * which one holds is not guessed, but there is an entry for it. */
static void sort(struct build *b)
{
	size_t kept = 0;

	if (b->n)
		qsort(b->entries, b->n, sizeof(*b->entries), by_key);
	for (size_t i = 0, j; i < b->n; i = j) {
		bool agree = true;

		for (j = i + 1;
		     j < b->n && !by_key(&b->entries[i], &b->entries[j]); j++)
			agree &= same_names(b, &b->entries[i], &b->entries[j]);
		b->entries[kept] = b->entries[i];
		if (!agree) {
			struct log_entry *e = &b->entries[kept];

			/* Two of its entries: which one lies is not known. */
			for (int k = 0; !b->conflicts && k < 2; k++)
				snprintf(b->conflict_example[k],
					 sizeof(b->conflict_example[k]), "%s",
					 b->text + b->entries[i + k].name);
			b->conflicts++;
			b->conflict_print += fnv(e->key);
			e->namespace = e->pod = e->container = 0;
			e->conflict = true;
		}
		kept++;
	}
	b->n = kept;
}

/* name written for a log line: printable ASCII as it is, each other
 * byte as \xNN, at most 64 bytes of it. */
static const char *printable(const char *name, char *buf, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; name[i] && n + 8 < size; i++) {
		unsigned char c = (unsigned char)name[i];

		if (i == 64) {
			n += (size_t)snprintf(buf + n, size - n, "...");
			break;
		}
		n += (size_t)snprintf(
			buf + n, size - n,
			c > 0x20 && c < 0x7f && c != '\\' ? "%c" : "\\x%02x",
			c);
	}
	buf[n] = '\0';
	return buf;
}

/* Says err once, until another error or a good read. */
static void trouble(struct logdir *d, int err)
{
	d->ok = false;
	if (d->said == err)
		return;
	d->said = err;
	say("%s %s: %s; %s", d->flag, d->path, strerror(-err),
	    d->read   ? "its names are those read before"
	    : d->pods ? "pods are not named, sandboxes not told apart"
		      : "containers are not named, sandboxes not told apart");
}

/* What a good read found said, where it changed. */
static void tell(struct logdir *d, const struct build *b, bool full)
{
	char name[64 * 4 + 8], other[64 * 4 + 8];

	if (d->said) {
		say("%s %s: read again", d->flag, d->path);
		d->said = 0;
	}
	if (full && !d->full)
		say("%s %s: only %d entries are kept, %d listed%s", d->flag,
		    d->path, LOG_ENTRIES_MAX, LOG_SCAN_MAX,
		    d->pods ? ""
			    : "; until it holds fewer, a container without "
			      "a link is not taken for a sandbox");
	d->full = full;
	if (b->refused && b->print != d->refused)
		say("%s %s: %zu entr%s refused (%s), e.g. '%s'", d->flag,
		    d->path, b->refused, b->refused == 1 ? "y" : "ies",
		    d->pods ? "not a directory <namespace>_<pod>_<uid>"
			    : "not a link <pod>_<namespace>_<container>-<id>"
			      ".log",
		    printable(b->example, name, sizeof(name)));
	d->refused = b->refused ? b->print : 0;
	if (b->conflicts && b->conflict_print != d->conflicts)
		say("%s %s: %zu %s given two sets of names, e.g. '%s' and "
		    "'%s'; %s unnamed",
		    d->flag, d->path, b->conflicts,
		    d->pods ? (b->conflicts == 1 ? "pod uid" : "pod uids")
			    : (b->conflicts == 1 ? "container id"
						 : "container ids"),
		    printable(b->conflict_example[0], name, sizeof(name)),
		    printable(b->conflict_example[1], other, sizeof(other)),
		    b->conflicts == 1 ? "it is" : "they are");
	d->conflicts = b->conflicts ? b->conflict_print : 0;
}

/* Lists d into a new table; the old one stays where it fails. */
static void read_dir(struct logdir *d)
{
	int fd = open(d->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				       O_NONBLOCK | O_CLOEXEC);
	struct build b = {0};
	struct timespec now;
	struct dirent *de;
	struct stat st;
	bool full = false;
	size_t listed = 0;
	long long age;
	bool again;
	int err = 0;
	DIR *dir;

	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		trouble(d, err);
		return;
	}
	dir = fdopendir(fd);
	if (!dir) {
		err = -errno;
		close(fd);
		trouble(d, err);
		return;
	}
	/* Offset 0 is the empty string. */
	if (!text(&b, "") && !b.len)
		err = -ENOMEM;
	while (!err) {
		errno = 0;
		de = readdir(dir);
		if (!de) {
			err = -errno;
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (b.n == LOG_ENTRIES_MAX || listed++ == LOG_SCAN_MAX) {
			full = true;
			break;
		}
		err = take(&b, d->pods, fd, de);
	}
	closedir(dir);
	if (err) {
		build_free(&b);
		trouble(d, err);
		return;
	}
	sort(&b);
	tell(d, &b, full);
	free(d->entries);
	free(d->text);
	d->entries = b.entries;
	d->n = b.n;
	d->text = b.text;
	again = d->read && d->ok && d->dev == st.st_dev && d->ino == st.st_ino;
	d->read = d->ok = true;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	/* A change in the mtime's tick after the listing leaves it as it
	 * was: such a read is not trusted to be the last one. An mtime
	 * ahead of the clock (set so, or the clock stepped back) is
	 * trusted once read twice: a change now would stamp another. */
	clock_gettime(CLOCK_REALTIME, &now);
	/* In seconds first: an mtime centuries away (any its owner sets)
	 * would overflow the nanoseconds. */
	if (__builtin_sub_overflow((long long)now.tv_sec,
				   (long long)st.st_mtim.tv_sec, &age))
		age = st.st_mtim.tv_sec > 0 ? -4 : 4;
	if (age >= -3 && age <= 3)
		age = age * 1000000000LL + (now.tv_nsec - st.st_mtim.tv_nsec);
	else
		age = age > 0 ? LOG_RACY_NS : -1; /* old, or ahead */
	d->racy = age >= 0 ? age < LOG_RACY_NS
			   : !(again && d->mtime.tv_sec == st.st_mtim.tv_sec &&
			       d->mtime.tv_nsec == st.st_mtim.tv_nsec);
	d->mtime = st.st_mtim;
}

/* Reads d again where it changed since it was read; whether it did. */
static bool refresh(struct logdir *d)
{
	struct stat st;

	if (!d->path)
		return false;
	if (fstatat(AT_FDCWD, d->path, &st, AT_SYMLINK_NOFOLLOW)) {
		trouble(d, -errno);
		return false;
	}
	if (!S_ISDIR(st.st_mode)) {
		trouble(d, S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR);
		return false;
	}
	if (d->ok && !d->racy && d->dev == st.st_dev && d->ino == st.st_ino &&
	    d->mtime.tv_sec == st.st_mtim.tv_sec &&
	    d->mtime.tv_nsec == st.st_mtim.tv_nsec)
		return false;
	read_dir(d);
	return d->ok;
}

void kubelogs_refresh(struct kubelogs *k, uint64_t scrape)
{
	bool pods, containers;

	if (k->tried == scrape)
		return;
	k->tried = scrape;
	pods = refresh(&k->pods);
	containers = refresh(&k->containers);
	if (pods || containers)
		k->generation++;
}

static const struct log_entry *find(const struct logdir *d, const char *key)
{
	struct log_entry want;

	if (!*key || !d->n)
		return NULL;
	snprintf(want.key, sizeof(want.key), "%s", key);
	return bsearch(&want, d->entries, d->n, sizeof(want), by_key);
}

/* What the tables say; whether they hold all that was asked. */
static bool look(const struct kubelogs *k, const char *uid, const char *id,
		 struct kube_names *out)
{
	const struct log_entry *pod = find(&k->pods, uid),
			       *ctr = find(&k->containers, id);
	const char *pt = k->pods.text, *ct = k->containers.text;

	*out = (struct kube_names){0};
	if (pod && pod->conflict)
		pod = NULL;
	/* A link names its container, unless its key is in conflict or it
	 * puts the container in another pod than the uid's; it is a link
	 * all the same. */
	out->linked = ctr;
	if (ctr && (ctr->conflict ||
		    (pod && (strcmp(pt + pod->namespace, ct + ctr->namespace) ||
			     strcmp(pt + pod->pod, ct + ctr->pod)))))
		ctr = NULL;
	out->pod_known = pod;
	if (pod) {
		out->namespace = pt + pod->namespace;
		out->pod = pt + pod->pod;
	} else if (ctr) {
		out->namespace = ct + ctr->namespace;
		out->pod = ct + ctr->pod;
	}
	if (ctr)
		out->container = ct + ctr->container;
	return (!*uid || !k->pods.path || pod) &&
	       (!*id || !k->containers.path || out->linked);
}

void kubelogs_find(struct kubelogs *k, uint64_t scrape, const char *uid,
		   const char *id, struct kube_names *out)
{
	if (look(k, uid, id, out) || k->tried == scrape)
		return;
	kubelogs_refresh(k, scrape);
	look(k, uid, id, out);
}

bool kubelogs_knows_containers(const struct kubelogs *k)
{
	return k->containers.path && k->containers.read && k->containers.ok &&
	       !k->containers.full;
}

void kubelogs_init(struct kubelogs *k, const char *pods_dir,
		   const char *containers_dir)
{
	*k = (struct kubelogs){
		.pods = {.path = pods_dir,
			 .flag = "--kubernetes.logs-dir",
			 .pods = true},
		.containers = {.path = containers_dir,
			       .flag = "--kubernetes.container-logs-dir"},
		/* No scrape has looked yet. */
		.tried = UINT64_MAX,
	};
}

void kubelogs_fini(struct kubelogs *k)
{
	free(k->pods.entries);
	free(k->pods.text);
	free(k->containers.entries);
	free(k->containers.text);
}
