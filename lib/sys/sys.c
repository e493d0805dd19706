// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "sys/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/env.h"
#include "sys/sys_kernel.h"

static int kernel_perf_event_open(struct perf_event_attr *attr, pid_t pid,
				  int cpu, int group_fd, unsigned long flags,
				  void *arg)
{
	(void)arg;
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
			    flags);
}

static ssize_t kernel_read(int fd, void *buf, size_t len, void *arg)
{
	(void)arg;
	return read(fd, buf, len);
}

static int kernel_ioctl(int fd, unsigned long request, unsigned long val,
			void *arg)
{
	(void)arg;
	return ioctl(fd, request, val);
}

static int kernel_close(int fd, void *arg)
{
	(void)arg;
	return close(fd);
}

static int kernel_openat(int dirfd, const char *path, int flags, void *arg)
{
	(void)arg;
	return openat(dirfd, path, flags);
}

static int kernel_openat2(int dirfd, const char *path, struct open_how *how,
			  size_t size, void *arg)
{
	(void)arg;
	return (int)syscall(SYS_openat2, dirfd, path, how, size);
}

static int kernel_name_to_handle_at(int dirfd, const char *path,
				    struct file_handle *fh, int *mount_id,
				    int flags, void *arg)
{
	(void)arg;
	return name_to_handle_at(dirfd, path, fh, mount_id, flags);
}

static int kernel_open_by_handle_at(int mount_fd, struct file_handle *fh,
				    int flags, void *arg)
{
	(void)arg;
	return open_by_handle_at(mount_fd, fh, flags);
}

const struct shpmu_sys_ops shpmu_sys_kernel = {
	.perf_event_open = kernel_perf_event_open,
	.read = kernel_read,
	.ioctl = kernel_ioctl,
	.close = kernel_close,
	.openat = kernel_openat,
	.openat2 = kernel_openat2,
	.name_to_handle_at = kernel_name_to_handle_at,
	.open_by_handle_at = kernel_open_by_handle_at,
	.mkdirat = kernel_mkdirat,
	.unlinkat = kernel_unlinkat,
	.fstatat = kernel_fstatat,
	.statx = kernel_statx,
	.fstatfs = kernel_fstatfs,
	.statfs = kernel_statfs,
	.fchmod = kernel_fchmod,
	.readlinkat = kernel_readlinkat,
	.getdents64 = kernel_getdents64,
	.flock = kernel_flock,
	.fcntl_lock = kernel_fcntl_lock,
	.mmap = kernel_mmap,
	.munmap = kernel_munmap,
	.pidfd_open = kernel_pidfd_open,
	.capget = kernel_capget,
	.getrlimit = kernel_getrlimit,
	.bpf = kernel_bpf,
	.bpf_skeleton_load = kernel_bpf_skeleton_load,
	.bpf_attach = kernel_bpf_attach,
};

const struct shpmu_sys_ops *shpmu__sys_ops_at_new;

void shpmu__set_sys_ops(struct shpmu *pmu, const struct shpmu_sys_ops *ops)
{
	env_of(pmu)->sys = ops ? ops : &shpmu_sys_kernel;
}

const struct shpmu_sys_ops *sys_ops_of(const struct shpmu *pmu)
{
	return pmu && env_of(pmu)->sys ? env_of(pmu)->sys : &shpmu_sys_kernel;
}

int sys_perf_event_open(struct shpmu *pmu, struct perf_event_attr *attr,
			pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);
	int fd;

	do
		fd = ops->perf_event_open(attr, pid, cpu, group_fd, flags,
					  ops->arg);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

ssize_t sys_read(struct shpmu *pmu, int fd, void *buf, size_t len)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);
	ssize_t n;

	/* The hot path: a direct call, not an indirect one through the
	 * table (which costs a retpoline where those are on). */
	do
		n = ops == &shpmu_sys_kernel
			    ? read(fd, buf, len)
			    : ops->read(fd, buf, len, ops->arg);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int sys_ioctl(struct shpmu *pmu, int fd, unsigned long request,
	      unsigned long val)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);
	int ret;

	do
		ret = ops->ioctl(fd, request, val, ops->arg);
	while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

int sys_close(struct shpmu *pmu, int fd)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);

	if (ops->close(fd, ops->arg) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

int sys_openat(struct shpmu *pmu, int dirfd, const char *path, int flags)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);
	int fd;

	do
		fd = ops->openat(dirfd, path, flags | O_CLOEXEC, ops->arg);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

int sys_openat2(struct shpmu *pmu, int dirfd, const char *path,
		struct open_how *how)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);
	int fd, races = 0;

	how->flags |= O_CLOEXEC;
	/* EAGAIN: a rename or mount raced the RESOLVE_* walk; worth a few
	 * more tries, not an endless loop. */
	do
		fd = ops->openat2(dirfd, path, how, sizeof(*how), ops->arg);
	while (fd < 0 && (errno == EINTR || (errno == EAGAIN && ++races < 16)));
	return fd < 0 ? -errno : fd;
}

int sys_name_to_handle_at(struct shpmu *pmu, int dirfd, const char *path,
			  struct file_handle *fh, int *mount_id, int flags)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);
	int ret;

	do
		ret = ops->name_to_handle_at(dirfd, path, fh, mount_id, flags,
					     ops->arg);
	while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

int sys_open_by_handle_at(struct shpmu *pmu, int mount_fd,
			  struct file_handle *fh, int flags)
{
	const struct shpmu_sys_ops *ops = sys_ops_of(pmu);
	int fd;

	do
		fd = ops->open_by_handle_at(mount_fd, fh, flags | O_CLOEXEC,
					    ops->arg);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

ssize_t sys_read_file(struct shpmu *pmu, const char *path, char *buf,
		      size_t len)
{
	size_t used = 0;
	ssize_t n = 0;
	int fd;

	fd = sys_openat(pmu, AT_FDCWD, path, O_RDONLY);
	if (fd < 0)
		return fd;
	while (used + 1 < len) {
		n = sys_read(pmu, fd, buf + used, len - 1 - used);
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	sys_close(pmu, fd);
	if (n < 0)
		return n;
	buf[used] = '\0';
	return (ssize_t)used;
}
