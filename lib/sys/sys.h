/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The syscall boundary: every perf_event_open, read, ioctl, close and file
 * open the library makes goes through here, so that tests can make any one
 * of them fail. Wrappers return a negative errno, never -1, and retry EINTR.
 */
#ifndef SHPMU_SYS_H
#define SHPMU_SYS_H

#include <stddef.h>
#include <sys/types.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/perf_event.h>

struct shpmu;

/* The raw calls, each returning -1 with errno set like the libc call. */
struct shpmu_sys_ops {
	int (*perf_event_open)(struct perf_event_attr *attr, pid_t pid, int cpu,
			       int group_fd, unsigned long flags, void *arg);
	ssize_t (*read)(int fd, void *buf, size_t len, void *arg);
	int (*ioctl)(int fd, unsigned long request, unsigned long val,
		     void *arg);
	int (*close)(int fd, void *arg);
	int (*openat)(int dirfd, const char *path, int flags, void *arg);
	/* openat2(2) with RESOLVE_* flags: the path-safety check. */
	int (*openat2)(int dirfd, const char *path, struct open_how *how,
		       size_t size, void *arg);
	int (*name_to_handle_at)(int dirfd, const char *path,
				 struct file_handle *fh, int *mount_id,
				 int flags, void *arg);
	int (*open_by_handle_at)(int mount_fd, struct file_handle *fh,
				 int flags, void *arg);
	void *arg;
};

/* The real kernel. */
extern const struct shpmu_sys_ops shpmu_sys_kernel;

/* Tests swap in their own table; NULL restores the kernel's. */
void shpmu__set_sys_ops(struct shpmu *pmu, const struct shpmu_sys_ops *ops);

int sys_perf_event_open(struct shpmu *pmu, struct perf_event_attr *attr,
			pid_t pid, int cpu, int group_fd, unsigned long flags);
/* Bytes read, or -errno. */
ssize_t sys_read(struct shpmu *pmu, int fd, void *buf, size_t len);
int sys_ioctl(struct shpmu *pmu, int fd, unsigned long request,
	      unsigned long val);
/* close(2) is not retried on EINTR: Linux has released the fd already. */
int sys_close(struct shpmu *pmu, int fd);
int sys_openat(struct shpmu *pmu, int dirfd, const char *path, int flags);
int sys_openat2(struct shpmu *pmu, int dirfd, const char *path,
		struct open_how *how);
int sys_name_to_handle_at(struct shpmu *pmu, int dirfd, const char *path,
			  struct file_handle *fh, int *mount_id, int flags);
int sys_open_by_handle_at(struct shpmu *pmu, int mount_fd,
			  struct file_handle *fh, int flags);
/* Reads a whole small file (at most len - 1 bytes) NUL-terminated. */
ssize_t sys_read_file(struct shpmu *pmu, const char *path, char *buf,
		      size_t len);

#endif
