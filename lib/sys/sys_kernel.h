/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Inside lib/sys/: the kernel's side of the calls of sys_fs.c and
 * sys_bpf.c, for the table in sys.c (shpmu_sys_kernel), and the wrappers'
 * retry.
 */
#ifndef SHPMU_SYS_KERNEL_H
#define SHPMU_SYS_KERNEL_H

#include <errno.h>
#include <stddef.h>
#include <sys/types.h>

struct stat;
struct statx;
struct statfs;
struct rlimit;
struct flock;
struct bpf_object_skeleton;
struct bpf_program;
struct bpf_link;
struct __user_cap_header_struct;
struct __user_cap_data_struct;
union bpf_attr;

int kernel_mkdirat(int dirfd, const char *path, mode_t mode, void *arg);
int kernel_unlinkat(int dirfd, const char *path, int flags, void *arg);
int kernel_fstatat(int dirfd, const char *path, struct stat *st, int flags,
		   void *arg);
int kernel_statx(int dirfd, const char *path, int flags, unsigned int mask,
		 struct statx *stx, void *arg);
int kernel_fstatfs(int fd, struct statfs *st, void *arg);
int kernel_statfs(const char *path, struct statfs *st, void *arg);
int kernel_fchmod(int fd, mode_t mode, void *arg);
ssize_t kernel_readlinkat(int dirfd, const char *path, char *buf, size_t len,
			  void *arg);
ssize_t kernel_getdents64(int fd, void *buf, size_t len, void *arg);
int kernel_flock(int fd, int op, void *arg);
int kernel_fcntl_lock(int fd, int cmd, struct flock *fl, void *arg);
void *kernel_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off, void *arg);
int kernel_munmap(void *addr, size_t len, void *arg);
int kernel_pidfd_open(pid_t pid, unsigned int flags, void *arg);
int kernel_capget(struct __user_cap_header_struct *hdr,
		  struct __user_cap_data_struct *data, void *arg);
int kernel_getrlimit(int resource, struct rlimit *rl, void *arg);
int kernel_bpf(int cmd, union bpf_attr *attr, unsigned int size, void *arg);
int kernel_bpf_skeleton_load(struct bpf_object_skeleton *skel, void *arg);
struct bpf_link *kernel_bpf_attach(struct bpf_program *prog, void *arg);

/* A wrapper's call: its result, or -errno; EINTR retried. */
#define RETRY(ops, call)                                                       \
	({                                                                     \
		long ret_;                                                     \
		do                                                             \
			ret_ = (long)(ops)->call;                              \
		while (ret_ < 0 && errno == EINTR);                            \
		ret_ < 0 ? -errno : ret_;                                      \
	})

#endif
