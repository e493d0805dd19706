// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Directories, stat, locks, mappings, pidfds and limits (sys.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys/sys.h"
#include "sys/sys_kernel.h"

int kernel_mkdirat(int dirfd, const char *path, mode_t mode, void *arg)
{
	(void)arg;
	return mkdirat(dirfd, path, mode);
}

int kernel_unlinkat(int dirfd, const char *path, int flags, void *arg)
{
	(void)arg;
	return unlinkat(dirfd, path, flags);
}

int kernel_fstatat(int dirfd, const char *path, struct stat *st, int flags,
		   void *arg)
{
	(void)arg;
	return fstatat(dirfd, path, st, flags);
}

int kernel_statx(int dirfd, const char *path, int flags, unsigned int mask,
		 struct statx *stx, void *arg)
{
	(void)arg;
	return statx(dirfd, path, flags, mask, stx);
}

int kernel_fstatfs(int fd, struct statfs *st, void *arg)
{
	(void)arg;
	return fstatfs(fd, st);
}

int kernel_statfs(const char *path, struct statfs *st, void *arg)
{
	(void)arg;
	return statfs(path, st);
}

int kernel_fchmod(int fd, mode_t mode, void *arg)
{
	(void)arg;
	return fchmod(fd, mode);
}

ssize_t kernel_readlinkat(int dirfd, const char *path, char *buf, size_t len,
			  void *arg)
{
	(void)arg;
	return readlinkat(dirfd, path, buf, len);
}

ssize_t kernel_getdents64(int fd, void *buf, size_t len, void *arg)
{
	(void)arg;
	return syscall(SYS_getdents64, fd, buf, len);
}

int kernel_flock(int fd, int op, void *arg)
{
	(void)arg;
	return flock(fd, op);
}

int kernel_fcntl_lock(int fd, int cmd, struct flock *fl, void *arg)
{
	(void)arg;
	return fcntl(fd, cmd, fl);
}

void *kernel_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off, void *arg)
{
	(void)arg;
	return mmap(addr, len, prot, flags, fd, off);
}

int kernel_munmap(void *addr, size_t len, void *arg)
{
	(void)arg;
	return munmap(addr, len);
}

int kernel_pidfd_open(pid_t pid, unsigned int flags, void *arg)
{
	(void)arg;
	return (int)syscall(SYS_pidfd_open, pid, flags);
}

int kernel_capget(struct __user_cap_header_struct *hdr,
		  struct __user_cap_data_struct *data, void *arg)
{
	(void)arg;
	return (int)syscall(SYS_capget, hdr, data);
}

int kernel_getrlimit(int resource, struct rlimit *rl, void *arg)
{
	(void)arg;
	return getrlimit(resource, rl);
}

int sys_mkdirat(struct shpmu *pmu, int dirfd, const char *path, mode_t mode)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	return (int)RETRY(ops, mkdirat(dirfd, path, mode, ops->arg));
}

int sys_unlinkat(struct shpmu *pmu, int dirfd, const char *path, int flags)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	return (int)RETRY(ops, unlinkat(dirfd, path, flags, ops->arg));
}

int sys_fstatat(struct shpmu *pmu, int dirfd, const char *path, struct stat *st,
		int flags)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	return (int)RETRY(ops, fstatat(dirfd, path, st, flags, ops->arg));
}

int sys_fstat(struct shpmu *pmu, int fd, struct stat *st)
{
	return sys_fstatat(pmu, fd, "", st, AT_EMPTY_PATH);
}

int sys_statx(struct shpmu *pmu, int dirfd, const char *path, int flags,
	      unsigned int mask, struct statx *stx)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	return (int)RETRY(ops, statx(dirfd, path, flags, mask, stx, ops->arg));
}

int sys_fstatfs(struct shpmu *pmu, int fd, struct statfs *st)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	return (int)RETRY(ops, fstatfs(fd, st, ops->arg));
}

int sys_statfs(struct shpmu *pmu, const char *path, struct statfs *st)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	return (int)RETRY(ops, statfs(path, st, ops->arg));
}

int sys_fchmod(struct shpmu *pmu, int fd, mode_t mode)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	return (int)RETRY(ops, fchmod(fd, mode, ops->arg));
}

ssize_t sys_readlinkat(struct shpmu *pmu, int dirfd, const char *path,
		       char *buf, size_t len)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	return RETRY(ops, readlinkat(dirfd, path, buf, len, ops->arg));
}

int sys_flock(struct shpmu *pmu, int fd, int op)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	return (int)RETRY(ops, flock(fd, op, ops->arg));
}

int sys_fcntl_lock(struct shpmu *pmu, int fd, int cmd, struct flock *fl)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	return (int)RETRY(ops, fcntl_lock(fd, cmd, fl, ops->arg));
}

int sys_mmap(struct shpmu *pmu, size_t len, int prot, int flags, int fd,
	     off_t off, void **out)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);
	void *p;

	do
		p = ops->mmap(NULL, len, prot, flags, fd, off, ops->arg);
	while (p == MAP_FAILED && errno == EINTR);
	if (p == MAP_FAILED)
		return -errno;
	*out = p;
	return 0;
}

/* Not retried: an interrupted munmap has unmapped already. */
int sys_munmap(struct shpmu *pmu, void *addr, size_t len)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	if (ops->munmap(addr, len, ops->arg) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

int sys_pidfd_open(struct shpmu *pmu, pid_t pid, unsigned int flags)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	return (int)RETRY(ops, pidfd_open(pid, flags, ops->arg));
}

int sys_capget(struct shpmu *pmu, struct __user_cap_header_struct *hdr,
	       struct __user_cap_data_struct *data)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	return (int)RETRY(ops, capget(hdr, data, ops->arg));
}

int sys_getrlimit(struct shpmu *pmu, int resource, struct rlimit *rl)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	return (int)RETRY(ops, getrlimit(resource, rl, ops->arg));
}
