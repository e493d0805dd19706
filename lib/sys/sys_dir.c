// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Directories read entry by entry, small text files line by line, both
 * through the syscall layer (sys.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sys/sys.h"
#include "sys/sys_kernel.h"

#define DIR_BUF 4096

struct dirent64_ {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

int sys_dir_from_fd(struct shpmu *pmu, struct sys_dir *d, int fd)
{
	d->buf = malloc(DIR_BUF);
	if (!d->buf) {
		sys_close(pmu, fd);
		d->fd = -1;
		return -ENOMEM;
	}
	d->fd = fd;
	d->pos = d->end = 0;
	return 0;
}

int sys_dir_open(struct shpmu *pmu, struct sys_dir *d, int dirfd,
		 const char *path)
{
	int fd = sys_openat(pmu, dirfd, path, O_RDONLY | O_DIRECTORY);

	if (fd < 0) {
		d->fd = -1;
		d->buf = NULL;
		return fd;
	}
	return sys_dir_from_fd(pmu, d, fd);
}

int sys_dir_next(struct shpmu *pmu, struct sys_dir *d, const char **name,
		 unsigned char *type)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);
	struct dirent64_ *e;

	if (d->pos >= d->end) {
		ssize_t n = RETRY(ops,
				  getdents64(d->fd, d->buf, DIR_BUF, ops->arg));

		if (n <= 0)
			return (int)n;
		d->pos = 0;
		d->end = (size_t)n;
	}
	e = (struct dirent64_ *)(d->buf + d->pos);
	d->pos += e->d_reclen;
	*name = e->d_name;
	*type = e->d_type;
	return 1;
}

void sys_dir_close(struct shpmu *pmu, struct sys_dir *d)
{
	if (d->fd >= 0)
		sys_close(pmu, d->fd);
	free(d->buf);
	d->fd = -1;
	d->buf = NULL;
}

/* ---- lines ---- */

int sys_lines_open(struct shpmu *pmu, struct sys_lines *l, const char *path)
{
	l->start = l->end = 0;
	l->eof = false;
	l->fd = sys_openat(pmu, AT_FDCWD, path, O_RDONLY);
	return l->fd < 0 ? l->fd : 0;
}

int sys_lines_next(struct shpmu *pmu, struct sys_lines *l, char *line,
		   size_t len)
{
	for (;;) {
		char *nl = memchr(l->buf + l->start, '\n', l->end - l->start);
		size_t n, keep;
		ssize_t got;

		if (nl || (l->eof && l->end > l->start) ||
		    (l->start == 0 && l->end == sizeof(l->buf))) {
			n = nl ? (size_t)(nl - (l->buf + l->start))
			       : l->end - l->start;
			keep = n < len - 1 ? n : len - 1;
			memcpy(line, l->buf + l->start, keep);
			line[keep] = '\0';
			l->start += n + (nl ? 1 : 0);
			return 1;
		}
		if (l->eof)
			return 0;
		memmove(l->buf, l->buf + l->start, l->end - l->start);
		l->end -= l->start;
		l->start = 0;
		got = sys_read(pmu, l->fd, l->buf + l->end,
			       sizeof(l->buf) - l->end);
		if (got < 0)
			return (int)got;
		if (!got)
			l->eof = true;
		l->end += (size_t)got;
	}
}

void sys_lines_close(struct shpmu *pmu, struct sys_lines *l)
{
	if (l->fd >= 0)
		sys_close(pmu, l->fd);
	l->fd = -1;
}
