// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "cgroup/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/cgroup_id.h"
#include "cgroup/cgroup_mount.h"
#include "cgroup/cgroup_walk.h"
#include "core/log.h"
#include "sys/sys.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY)

int cgroups_init(struct shpmu *pmu, struct cgroups *cg, const char *root)
{
	struct cgroup_handle h = {.fh.handle_bytes = sizeof(h.id)};
	int mount_id, err;

	memset(cg, 0, sizeof(*cg));
	cg->root_fd = -1;
	err = -pthread_mutex_init(&cg->lock, NULL);
	if (err)
		return err;
	err = root ? cgroup_mount_check(pmu, root, &cg->root, &cg->v2)
		   : cgroup_mount_discover(pmu, &cg->root, &cg->v2);
	/* No cgroups on this host, or no /proc to find them in: cgroup
	 * targets fail later, the rest works. */
	if ((err == -ENOENT || err == -EIO) && !root)
		return 0;
	if (err)
		goto fail;
	cg->root_len = strlen(cg->root);
	cg->root_fd =
		sys_openat(pmu, AT_FDCWD, cg->root, O_RDONLY | O_DIRECTORY);
	if (cg->root_fd < 0) {
		err = cg->root_fd;
		pr_err(pmu, "cannot open cgroup root %s: %s", cg->root,
		       strerror(-err));
		goto fail;
	}
	err = sys_name_to_handle_at(pmu, cg->root_fd, "", &h.fh, &mount_id,
				    AT_EMPTY_PATH);
	if (err) {
		pr_err(pmu, "cgroup root %s gives no file handle: %s", cg->root,
		       strerror(-err));
		goto fail;
	}
	cg->handle_type = h.fh.handle_type;
	return 0;
fail:
	cgroups_fini(pmu, cg);
	return err;
}

void cgroups_fini(struct shpmu *pmu, struct cgroups *cg)
{
	if (cg->root_fd >= 0)
		sys_close(pmu, cg->root_fd);
	cg->root_fd = -1;
	free(cg->root);
	cg->root = NULL;
	cgroup_path_map_clear(&cg->walked);
	pthread_mutex_destroy(&cg->lock);
}

static int need_root(struct shpmu *pmu, const struct cgroups *cg,
		     const char *fn)
{
	if (cg->root)
		return 0;
	pr_err(pmu,
	       "%s: no cgroup hierarchy was found on this host; set "
	       "opts.cgroup_root",
	       fn);
	return -ENOENT;
}

/* The next component of a path at p, skipping "/" and "." ones; its
 * length goes to len (0 at the end). */
static const char *next_component(const char *p, size_t *len)
{
	for (;;) {
		p += strspn(p, "/");
		*len = strcspn(p, "/");
		if (*len != 1 || p[0] != '.')
			return p;
		p++;
	}
}

/* Where an absolute path goes on past the root's components, or NULL if
 * it does not start with them ("//x/./y" spells "/x/y"). */
static const char *past_root(const char *root, const char *path)
{
	size_t rlen, plen;

	for (;;) {
		root = next_component(root, &rlen);
		if (!rlen)
			return path;
		path = next_component(path, &plen);
		if (plen != rlen || memcmp(root, path, rlen))
			return NULL;
		root += rlen;
		path += plen;
	}
}

/* Turns a caller's path into one relative to the root, refusing escapes.
 * Returns a pointer into path (nothing is copied). */
static int relative_path(struct shpmu *pmu, const struct cgroups *cg,
			 const char *path, const char **rel)
{
	const char *p;
	size_t len;

	/* RESOLVE_BENEATH would allow "a/../b"; we refuse ".." outright so
	 * that a path means what it says. */
	for (p = next_component(path, &len); len;
	     p = next_component(p + len, &len)) {
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			pr_err(pmu, "cgroup path %s: '..' is not allowed",
			       path);
			return -EINVAL;
		}
	}
	p = path;
	if (path[0] == '/') {
		p = past_root(cg->root, path);
		if (!p) {
			pr_err(pmu,
			       "cgroup path %s is outside the cgroup "
			       "root %s",
			       path, cg->root);
			return -EXDEV;
		}
	}
	p = next_component(p, &len);
	*rel = len ? p : ".";
	return 0;
}

/* openat2's checks one component at a time, for kernels before 5.6 (and
 * valgrind, which does not know the call): no symlink (O_NOFOLLOW gives
 * ELOOP), no other mount (st_dev changes). ".." never gets here. */
static int open_by_components(struct shpmu *pmu, const struct cgroups *cg,
			      const char *rel)
{
	char copy[PATH_MAX], *comp, *save = NULL;
	struct stat root_st, st;
	int cur, next;

	if (strlen(rel) >= sizeof(copy))
		return -ENAMETOOLONG;
	strcpy(copy, rel);
	cur = sys_openat(pmu, cg->root_fd, ".", DIR_FLAGS);
	if (cur < 0)
		return cur;
	next = sys_fstat(pmu, cur, &root_st);
	if (next < 0)
		goto fail;
	for (comp = strtok_r(copy, "/", &save); comp;
	     comp = strtok_r(NULL, "/", &save)) {
		if (!strcmp(comp, "."))
			continue;
		next = sys_openat(pmu, cur, comp, DIR_FLAGS | O_NOFOLLOW);
		sys_close(pmu, cur);
		if (next < 0)
			return next;
		cur = next;
		next = sys_fstat(pmu, cur, &st);
		if (next < 0)
			goto fail;
		if (st.st_dev != root_st.st_dev) {
			sys_close(pmu, cur);
			return -EXDEV;
		}
	}
	return cur;
fail:
	sys_close(pmu, cur);
	return next;
}

/* Opens a directory under the root, refusing symlinks and other mounts. */
static int open_beneath(struct shpmu *pmu, const struct cgroups *cg,
			const char *rel)
{
	struct open_how how = {
		.flags = DIR_FLAGS,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	int fd = sys_openat2(pmu, cg->root_fd, rel, &how);

	return fd == -ENOSYS ? open_by_components(pmu, cg, rel) : fd;
}

int cgroup_open_path(struct shpmu *pmu, struct cgroups *cg, const char *path,
		     int *fd, uint64_t *id)
{
	const char *rel;
	int err;

	err = need_root(pmu, cg, "cgroup");
	if (err)
		return err;
	err = relative_path(pmu, cg, path, &rel);
	if (err)
		return err;
	*fd = open_beneath(pmu, cg, rel);
	if (*fd < 0) {
		err = *fd;
		if (err == -ELOOP)
			err = -EINVAL;
		pr_err(pmu, "cgroup %s/%s: %s", cg->root,
		       strcmp(rel, ".") ? rel : "",
		       err == -EINVAL  ? "a symlink is not allowed"
		       : err == -EXDEV ? "crossing into another mount is not "
					 "allowed"
				       : strerror(-err));
		return err;
	}
	err = cgroup_fd_id(pmu, *fd, id);
	if (err) {
		sys_close(pmu, *fd);
		pr_err(pmu, "cgroup %s: no id: %s", path, strerror(-err));
	}
	return err;
}

static int copy_out(const char *s, size_t n, char *buf, size_t len)
{
	if (n + 1 > len)
		return -ERANGE;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

/* The absolute path of the directory open as fd, from /proc/self/fd:
 * -ENOENT if it was removed or lies outside our root (a sub-tree root given
 * in opts: the file handle reaches the whole file system). */
int cgroup_root_copy(struct shpmu *pmu, const struct cgroups *cg, char *buf,
		     size_t len)
{
	int err = need_root(pmu, cg, "shpmu_cgroup_root");

	return err ? err : copy_out(cg->root, cg->root_len, buf, len);
}

int cgroup_fd_path(struct shpmu *pmu, const struct cgroups *cg, int fd,
		   char *buf, size_t len)
{
	static const char deleted[] = " (deleted)";
	char link[64], path[PATH_MAX];
	size_t dlen = sizeof(deleted) - 1;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = sys_readlinkat(pmu, AT_FDCWD, link, path, sizeof(path));
	if (n < 0)
		return (int)n;
	if ((size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	if ((size_t)n > dlen && !memcmp(path + n - dlen, deleted, dlen))
		return -ENOENT;
	if (strncmp(path, cg->root, cg->root_len) ||
	    ((size_t)n > cg->root_len && path[cg->root_len] != '/')) {
		pr_err(pmu, "cgroup %.*s is outside the cgroup root %s", (int)n,
		       path, cg->root);
		return -ENOENT;
	}
	return copy_out(path, (size_t)n, buf, len);
}

/* The cgroup by id through the kernel's file handle, which needs
 * CAP_DAC_READ_SEARCH. */
static int open_by_handle(struct shpmu *pmu, const struct cgroups *cg,
			  uint64_t id, int *fd)
{
	struct cgroup_handle h = {.fh.handle_bytes = sizeof(h.id),
				  .fh.handle_type = cg->handle_type,
				  .id = id};

	char path[PATH_MAX];
	int err;

	*fd = sys_open_by_handle_at(pmu, cg->root_fd, &h.fh, DIR_FLAGS);
	if (*fd >= 0) {
		err = cgroup_fd_path(pmu, cg, *fd, path, sizeof(path));
		if (err)
			sys_close(pmu, *fd);
		return err;
	}
	/* A stale or made-up handle, or a cgroup's file (kernfs gives its
	 * files ids too): no such cgroup (any more). */
	return *fd == -ESTALE || *fd == -EINVAL || *fd == -ENOTDIR ? -ENOENT
								   : *fd;
}

/* Opens the walked path for id if it still is that cgroup. Caller holds
 * the cgroups lock. */
static int open_walked(struct shpmu *pmu, const struct cgroups *cg, uint64_t id,
		       int *fd)
{
	const char *rel = cgroup_path_map_find(&cg->walked, id);
	uint64_t now;
	int err;

	if (!rel)
		return -ENOENT;
	*fd = open_beneath(pmu, cg, *rel ? rel : ".");
	if (*fd < 0)
		return *fd;
	err = cgroup_fd_id(pmu, *fd, &now);
	if (!err && now != id)
		err = -ENOENT; /* removed, and its name reused */
	if (err)
		sys_close(pmu, *fd);
	return err;
}

static int open_by_walk(struct shpmu *pmu, struct cgroups *cg, uint64_t id,
			int *fd)
{
	int err;

	pthread_mutex_lock(&cg->lock);
	err = open_walked(pmu, cg, id, fd);
	if (err == -ENOENT) {
		err = cgroup_walk(pmu, cg->root_fd, &cg->walked);
		if (!err)
			err = open_walked(pmu, cg, id, fd);
	}
	pthread_mutex_unlock(&cg->lock);
	return err;
}

int cgroup_open_id(struct shpmu *pmu, struct cgroups *cg, uint64_t id, int *fd)
{
	bool by_walk;
	int err;

	err = need_root(pmu, cg, "cgroup");
	if (err)
		return err;
	pthread_mutex_lock(&cg->lock);
	by_walk = cg->by_walk;
	pthread_mutex_unlock(&cg->lock);
	err = by_walk ? -EPERM : open_by_handle(pmu, cg, id, fd);
	if (err == -EPERM) {
		if (!by_walk) {
			pr_info(pmu,
				"open_by_handle_at needs "
				"CAP_DAC_READ_SEARCH: resolving cgroup "
				"ids by walking %s",
				cg->root);
			pthread_mutex_lock(&cg->lock);
			cg->by_walk = true;
			pthread_mutex_unlock(&cg->lock);
		}
		err = open_by_walk(pmu, cg, id, fd);
	}
	if (err)
		pr_err(pmu, "no cgroup with id %llu under %s%s%s",
		       (unsigned long long)id, cg->root,
		       err == -ENOENT ? "" : ": ",
		       err == -ENOENT ? "" : strerror(-err));
	return err;
}
