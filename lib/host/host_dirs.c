// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "host/host_dirs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "core/log.h"
#include "sys/sys.h"

#define SHARED_MODE 01777
#define DOMAIN_MODE 0700

/* A directory others share may hold our entries only if nobody else can
 * rename them: root's or ours, and writable by no one else unless sticky
 * (in a sticky directory, only an entry's owner or the directory's can).
 * Another uid's directory is refused even when sticky: its owner could
 * swap our entries. */
static int check_shared(struct shpmu *pmu, int fd, const char *path)
{
	struct stat st;
	int err = sys_fstat(pmu, fd, &st);

	if (err)
		return err;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if ((st.st_uid == 0 || st.st_uid == geteuid()) &&
	    (!(st.st_mode & (S_IWGRP | S_IWOTH)) || (st.st_mode & S_ISVTX)))
		return 0;
	pr_err(pmu,
	       "host scope: %s (uid %u, mode %04o) could have its entries "
	       "swapped by another uid: a directory on the way must be "
	       "root's or this uid's, and writable by nobody else unless "
	       "sticky (when several uids share a BPF filesystem, let root "
	       "make it: mkdir -m 1777)",
	       path, (unsigned int)st.st_uid,
	       (unsigned int)(st.st_mode & 07777));
	return -EACCES;
}

/* Opens name under parent_fd as a directory, never through a symlink. */
static int open_below(struct shpmu *pmu, int parent_fd, const char *name,
		      int flags, const char *path)
{
	struct stat st;
	int fd = sys_openat(pmu, parent_fd, name,
			    flags | O_DIRECTORY | O_NOFOLLOW);

	if (fd >= 0)
		return fd;
	if (fd == -ENOTDIR &&
	    !sys_fstatat(pmu, parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISLNK(st.st_mode)) {
		pr_err(pmu, "host scope: %s is a symlink: not followed", path);
		return -ELOOP;
	}
	return fd;
}

/* mkdir with the mode given whatever the umask (chmod'ed only if ours:
 * another process may have made it first). */
static int make_dir(struct shpmu *pmu, int parent_fd, const char *name,
		    mode_t mode)
{
	struct stat st;
	int fd, err = sys_mkdirat(pmu, parent_fd, name, mode);

	if (err)
		return err == -EEXIST ? 0 : err;
	fd = sys_openat(pmu, parent_fd, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd == -ENOENT)
		return 0; /* gone again: the caller's open will tell */
	if (fd < 0) {
		err = fd;
		goto out;
	}
	err = sys_fstat(pmu, fd, &st);
	if (!err && st.st_uid == geteuid() && (st.st_mode & 07777) != mode)
		err = sys_fchmod(pmu, fd, mode);
	sys_close(pmu, fd);
out:
	/* Not left with the umask's mode, which a later open refuses. */
	if (err)
		sys_unlinkat(pmu, parent_fd, name, AT_REMOVEDIR);
	return err;
}

/* 1 on a BPF filesystem, 0 elsewhere, or -errno. */
static int on_bpffs(struct shpmu *pmu, int fd)
{
	struct statfs st;
	int err = sys_fstatfs(pmu, fd, &st);

	return err ? err : st.f_type == BPF_FS_MAGIC;
}

static int no_bpffs(struct shpmu *pmu, const char *dir)
{
	pr_err(pmu,
	       "host scope: %s is not on a BPF filesystem (mount one: "
	       "mount -t bpf bpf /sys/fs/bpf, or set opts.bpffs_dir)",
	       dir);
	return -ENOENT;
}

/* Steps from *fd into its entry comp, made if missing when make and *fd
 * is on a BPF filesystem; walked: the path so far, comp appended. Every
 * failure but ENOENT told. */
static int step(struct shpmu *pmu, int *fd, const char *comp, bool make,
		char *walked, size_t room)
{
	size_t used = strlen(walked);
	int next, err = 0;

	snprintf(walked + used, room - used, "%s%s",
		 used && walked[used - 1] == '/' ? "" : "/", comp);
	next = open_below(pmu, *fd, comp, O_PATH, walked);
	if (next == -ENOENT && make) {
		int bpffs = on_bpffs(pmu, *fd);

		if (bpffs < 0) {
			next = bpffs;
		} else if (bpffs) {
			err = make_dir(pmu, *fd, comp, SHARED_MODE);
			next = err ? err
				   : open_below(pmu, *fd, comp, O_PATH, walked);
		}
	}
	if (next < 0) {
		if (next != -ENOENT && next != -ELOOP)
			pr_err(pmu, "host scope: %s%s: %s",
			       err ? "cannot make " : "", walked,
			       strerror(-next));
		return next;
	}
	sys_close(pmu, *fd);
	*fd = next;
	return check_shared(pmu, next, walked);
}

int host_dirs_open_bpffs(struct shpmu *pmu, const char *bpffs_dir, bool create,
			 int *out)
{
	char buf[PATH_MAX], walked[PATH_MAX] = "", *save = NULL, *comp;
	size_t len = strlen(bpffs_dir);
	int fd, err = 0;

	if (len >= sizeof(buf)) {
		pr_err(pmu, "host scope: bpffs_dir is %zu bytes long", len);
		return -ENAMETOOLONG;
	}
	memcpy(buf, bpffs_dir, len + 1);
	if (buf[0] == '/')
		walked[0] = '/';
	fd = sys_openat(pmu, AT_FDCWD, buf[0] == '/' ? "/" : ".",
			O_PATH | O_DIRECTORY);
	if (fd < 0)
		return fd;
	err = check_shared(pmu, fd, buf[0] == '/' ? "/" : ".");
	for (comp = strtok_r(buf, "/", &save); comp && !err;
	     comp = strtok_r(NULL, "/", &save)) {
		if (!strcmp(comp, "..")) {
			pr_err(pmu, "host scope: bpffs_dir %s has a \"..\"",
			       bpffs_dir);
			err = -EINVAL;
		} else if (strcmp(comp, ".")) {
			err = step(pmu, &fd, comp, create, walked,
				   sizeof(walked));
		}
	}
	if (!err) {
		err = on_bpffs(pmu, fd);
		err = err > 0 ? 0 : err ? err : -ENOENT;
	}
	if (err == -ENOENT)
		err = no_bpffs(pmu, bpffs_dir);
	if (err) {
		sys_close(pmu, fd);
		return err;
	}
	*out = fd;
	return 0;
}

/* Makes name under parent_fd (when create) and opens it; every failure
 * but ENOENT (the caller's to judge) told. */
static int make_and_open(struct shpmu *pmu, int parent_fd, const char *name,
			 mode_t mode, bool create, int flags, const char *path)
{
	int err = create ? make_dir(pmu, parent_fd, name, mode) : 0;
	int fd = err ? err : open_below(pmu, parent_fd, name, flags, path);

	if (fd < 0 && fd != -ENOENT && fd != -ELOOP)
		pr_err(pmu, "host scope: %s%s: %s", err ? "cannot make " : "",
		       path, strerror(-fd));
	return fd;
}

int host_dirs_open_layout(struct shpmu *pmu, int bpffs_fd, const char *name,
			  const char *path, bool create, int *out)
{
	int fd = make_and_open(pmu, bpffs_fd, name, SHARED_MODE, create, O_PATH,
			       path),
	    err;

	if (fd < 0)
		return fd;
	err = check_shared(pmu, fd, path);
	if (err) {
		sys_close(pmu, fd);
		return err;
	}
	*out = fd;
	return 0;
}

int host_dirs_open_domain(struct shpmu *pmu, int layout_fd, const char *name,
			  const char *path, bool create, bool ours_only,
			  int *out)
{
	struct stat st;
	int fd = make_and_open(pmu, layout_fd, name, DOMAIN_MODE, create,
			       O_RDONLY, path),
	    err = 0;

	if (fd < 0)
		return fd;
	err = sys_fstat(pmu, fd, &st);
	if (err) {
	} else if (ours_only && st.st_uid != geteuid()) {
		pr_err(pmu,
		       "host domain %s belongs to uid %u: a domain is shared "
		       "by one uid",
		       path, (unsigned int)st.st_uid);
		err = -EACCES;
	} else if ((st.st_mode & 07777) != DOMAIN_MODE) {
		pr_err(pmu,
		       "host domain %s has mode %04o, not %04o: another "
		       "process changed it",
		       path, (unsigned int)(st.st_mode & 07777), DOMAIN_MODE);
		err = -EACCES;
	}
	if (err) {
		sys_close(pmu, fd);
		return err;
	}
	*out = fd;
	return 0;
}

int host_dirs_still_at(struct shpmu *pmu, int parent_fd, const char *name,
		       int fd)
{
	struct stat held, now;
	int err = sys_fstat(pmu, fd, &held);

	if (err)
		return err;
	err = sys_fstatat(pmu, parent_fd, name, &now, AT_SYMLINK_NOFOLLOW);
	if (err)
		return err == -ENOENT ? 0 : err;
	return held.st_ino == now.st_ino && held.st_dev == now.st_dev &&
	       held.st_nlink;
}
