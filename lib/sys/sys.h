/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The syscall boundary: every system call the library makes (perf events,
 * reads, ioctls, files and directories, locks, mappings, pidfds and
 * bpf(2)) goes through here, so that tests can make any one of them fail.
 * Wrappers return a negative errno, never -1, and retry EINTR. A NULL
 * context (the operator's tools) means the kernel's table.
 *
 * sys.c: the table, perf events and files; sys_fs.c: directories, stat,
 * locks, mappings and the rest; sys_dir.c: reading directories and text
 * files; sys_bpf.c: bpf(2) and loading an object.
 */
#ifndef SHPMU_SYS_H
#define SHPMU_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/perf_event.h>

struct shpmu;
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
	/* Files and directories. */
	int (*mkdirat)(int dirfd, const char *path, mode_t mode, void *arg);
	int (*unlinkat)(int dirfd, const char *path, int flags, void *arg);
	int (*fstatat)(int dirfd, const char *path, struct stat *st, int flags,
		       void *arg);
	int (*statx)(int dirfd, const char *path, int flags, unsigned int mask,
		     struct statx *stx, void *arg);
	int (*fstatfs)(int fd, struct statfs *st, void *arg);
	int (*statfs)(const char *path, struct statfs *st, void *arg);
	int (*fchmod)(int fd, mode_t mode, void *arg);
	ssize_t (*readlinkat)(int dirfd, const char *path, char *buf,
			      size_t len, void *arg);
	ssize_t (*getdents64)(int fd, void *buf, size_t len, void *arg);
	/* Locks: flock(2), and fcntl(2)'s lock commands (F_OFD_*, F_*LK). */
	int (*flock)(int fd, int op, void *arg);
	int (*fcntl_lock)(int fd, int cmd, struct flock *fl, void *arg);
	/* Mappings: mmap returns MAP_FAILED with errno set. */
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off, void *arg);
	int (*munmap)(void *addr, size_t len, void *arg);
	/* Processes and limits. */
	int (*pidfd_open)(pid_t pid, unsigned int flags, void *arg);
	int (*capget)(struct __user_cap_header_struct *hdr,
		      struct __user_cap_data_struct *data, void *arg);
	int (*getrlimit)(int resource, struct rlimit *rl, void *arg);
	/* bpf(2), every command; and libbpf's load of an object (which
	 * makes its own bpf(2) calls, out of this table's reach). */
	int (*bpf)(int cmd, union bpf_attr *attr, unsigned int size, void *arg);
	int (*bpf_skeleton_load)(struct bpf_object_skeleton *skel, void *arg);
	/* bpf_program__attach: NULL with errno set. */
	struct bpf_link *(*bpf_attach)(struct bpf_program *prog, void *arg);
	void *arg;
};

/* The real kernel. */
extern const struct shpmu_sys_ops shpmu_sys_kernel;
/* For tests: when set, the table a new context starts with (so that the
 * calls shpmu_new makes can fail too). */
extern const struct shpmu_sys_ops *shpmu__sys_ops_at_new;

/* Tests swap in their own table; NULL restores the kernel's. */
void shpmu__set_sys_ops(struct shpmu *pmu, const struct shpmu_sys_ops *ops);
/* The table a context uses (the kernel's for NULL). */
const struct shpmu_sys_ops *sys_ops_of(const struct shpmu *pmu);

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

/* sys_fs.c */
int sys_mkdirat(struct shpmu *pmu, int dirfd, const char *path, mode_t mode);
int sys_unlinkat(struct shpmu *pmu, int dirfd, const char *path, int flags);
int sys_fstatat(struct shpmu *pmu, int dirfd, const char *path, struct stat *st,
		int flags);
/* fstatat(fd, "", AT_EMPTY_PATH) */
int sys_fstat(struct shpmu *pmu, int fd, struct stat *st);
int sys_statx(struct shpmu *pmu, int dirfd, const char *path, int flags,
	      unsigned int mask, struct statx *stx);
int sys_fstatfs(struct shpmu *pmu, int fd, struct statfs *st);
int sys_statfs(struct shpmu *pmu, const char *path, struct statfs *st);
int sys_fchmod(struct shpmu *pmu, int fd, mode_t mode);
/* Bytes placed (not NUL-terminated), or -errno. */
ssize_t sys_readlinkat(struct shpmu *pmu, int dirfd, const char *path,
		       char *buf, size_t len);
int sys_flock(struct shpmu *pmu, int fd, int op);
int sys_fcntl_lock(struct shpmu *pmu, int fd, int cmd, struct flock *fl);
/* 0 with *out mapped, or -errno. */
int sys_mmap(struct shpmu *pmu, size_t len, int prot, int flags, int fd,
	     off_t off, void **out);
int sys_munmap(struct shpmu *pmu, void *addr, size_t len);
int sys_pidfd_open(struct shpmu *pmu, pid_t pid, unsigned int flags);
int sys_capget(struct shpmu *pmu, struct __user_cap_header_struct *hdr,
	       struct __user_cap_data_struct *data);
int sys_getrlimit(struct shpmu *pmu, int resource, struct rlimit *rl);

/* sys_dir.c: a directory read entry by entry (getdents64). */
struct sys_dir {
	int fd;
	size_t pos, end;
	char *buf;
};

/* Opens path under dirfd as a directory to read. */
int sys_dir_open(struct shpmu *pmu, struct sys_dir *d, int dirfd,
		 const char *path);
/* Reads fd, which it takes over (closed by sys_dir_close, or now on
 * failure). */
int sys_dir_from_fd(struct shpmu *pmu, struct sys_dir *d, int fd);
/* 1 with the next entry's name and d_type, 0 at the end, or -errno. */
int sys_dir_next(struct shpmu *pmu, struct sys_dir *d, const char **name,
		 unsigned char *type);
void sys_dir_close(struct shpmu *pmu, struct sys_dir *d);

/* A small text file read line by line. */
struct sys_lines {
	int fd;
	size_t start, end;
	bool eof;
	char buf[4096];
};

int sys_lines_open(struct shpmu *pmu, struct sys_lines *l, const char *path);
/* The next line, without its newline: 1, 0 at the end, or -errno. A line
 * longer than len - 1 bytes comes in pieces of that size. */
int sys_lines_next(struct shpmu *pmu, struct sys_lines *l, char *line,
		   size_t len);
void sys_lines_close(struct shpmu *pmu, struct sys_lines *l);

/* sys_bpf.c: bpf(2) commands, each 0 (or a new fd) or -errno. */
int sys_bpf(struct shpmu *pmu, int cmd, union bpf_attr *attr,
	    unsigned int size);
int sys_bpf_map_lookup(struct shpmu *pmu, int fd, const void *key, void *value);
int sys_bpf_map_update(struct shpmu *pmu, int fd, const void *key,
		       const void *value, uint64_t flags);
int sys_bpf_map_delete(struct shpmu *pmu, int fd, const void *key);
/* key NULL: the first; -ENOENT past the last. */
int sys_bpf_map_next_key(struct shpmu *pmu, int fd, const void *key,
			 void *next);
int sys_bpf_map_create(struct shpmu *pmu, uint32_t type, const char *name,
		       uint32_t key_size, uint32_t value_size,
		       uint32_t max_entries, uint32_t flags);
int sys_bpf_obj_get(struct shpmu *pmu, const char *path);
int sys_bpf_obj_pin(struct shpmu *pmu, int fd, const char *path);
/* BPF_OBJ_GET_INFO_BY_FD into info (*len bytes, set to what the kernel
 * wrote). */
int sys_bpf_obj_info(struct shpmu *pmu, int fd, void *info, uint32_t *len);
/* BPF_PROG_TEST_RUN of prog_fd on ctx_in (flags: BPF_F_TEST_RUN_ON_CPU
 * with cpu), the program's return value into *retval. */
int sys_bpf_prog_test_run(struct shpmu *pmu, int prog_fd, uint32_t flags,
			  uint32_t cpu, const void *ctx_in, uint32_t ctx_size,
			  uint32_t *retval);
/* BPF_RAW_TRACEPOINT_OPEN: prog_fd on raw tracepoint name; the link's fd. */
int sys_bpf_raw_tp_open(struct shpmu *pmu, const char *name, int prog_fd);
/* bpf_object__load_skeleton (libbpf): loads a skeleton's object and
 * maps its memory. 0 or -errno. */
int sys_bpf_skeleton_load(struct shpmu *pmu, struct bpf_object_skeleton *skel);
/* bpf_program__attach (libbpf): 0 with *link, or -errno. */
int sys_bpf_attach(struct shpmu *pmu, struct bpf_program *prog,
		   struct bpf_link **link);

#endif
