// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "fault_sys.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <sys/file.h>
#include <execinfo.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct fault_state fault;

void fault_reset(void)
{
	memset(&fault, 0, sizeof(fault));
}

void fault_fail(enum fault_kind kind, int nth, int err)
{
	fault.calls = 0;
	memset(fault.calls_of, 0, sizeof(fault.calls_of));
	fault.fired = false;
	fault.kind = kind;
	fault.nth = nth;
	fault.err = err;
}

void fault_stop(void)
{
	fault.nth = 0;
}

static bool is_perf_fd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return strstr(link, "perf_event") != NULL;
}

/* Records a call; true when it must fail (errno set). A short read does
 * not fail: its read returns half. is_lookup: the call can find that
 * something is not there (a path, a pin, a map entry, a tracepoint), the
 * one kind of call the kernel answers with ENOENT. */
static bool hit_call(enum fault_kind k, bool is_lookup)
{
	int count;

	fault.calls++;
	fault.calls_of[k]++;
	if (fault.calls <= FAULT_MAX_CALLS) {
		fault.kinds[fault.calls] = k;
		fault.lookups[fault.calls] = is_lookup;
	}
	if (fault.eintr_first) {
		fault.eintr_pending = !fault.eintr_pending;
		if (fault.eintr_pending) {
			errno = EINTR;
			return true;
		}
	}
	count = fault.kind == FAULT_ANY ? fault.calls : fault.calls_of[k];
	if (!fault.nth || (fault.kind != FAULT_ANY && k != fault.kind) ||
	    count != fault.nth)
		return false;
	fault.fired = true;
	fault.fired_kind = k;
	fault.fired_lookup = is_lookup;
	if (getenv("FAULT_TRACE")) {
		/* Where the failing call came from (addr2line reads it). */
		void *frames[16];

		backtrace_symbols_fd(frames, backtrace(frames, 16), 2);
	}
	if (fault.err == FAULT_SHORT_READ)
		return false;
	errno = fault.err;
	return true;
}

static bool hit(enum fault_kind k)
{
	return hit_call(k, false);
}

static bool lookup(enum fault_kind k)
{
	return hit_call(k, true);
}

static int f_open(struct perf_event_attr *a, pid_t pid, int cpu, int gfd,
		  unsigned long flags, void *arg)
{
	if (!(flags & PERF_FLAG_FD_CLOEXEC))
		fault.opens_without_cloexec++;
	if (hit(FAULT_OPEN))
		return -1;
	return shpmu_sys_kernel.perf_event_open(a, pid, cpu, gfd, flags, arg);
}

static ssize_t f_read(int fd, void *buf, size_t len, void *arg)
{
	bool was_fired = fault.fired;
	ssize_t n;

	if (hit(is_perf_fd(fd) ? FAULT_READ : FAULT_FILE_READ))
		return -1;
	n = shpmu_sys_kernel.read(fd, buf, len, arg);
	if (fault.fired && !was_fired && n > 0)
		n /= 2; /* FAULT_SHORT_READ */
	return n;
}

static int f_ioctl(int fd, unsigned long req, unsigned long val, void *arg)
{
	if (req == PERF_EVENT_IOC_RESET)
		fault.resets++;
	if (hit(FAULT_IOCTL))
		return -1;
	return shpmu_sys_kernel.ioctl(fd, req, val, arg);
}

static int f_close(int fd, void *arg)
{
	/* Linux releases the fd even when close reports an error. */
	int ret = shpmu_sys_kernel.close(fd, arg);

	return hit(FAULT_CLOSE) ? -1 : ret;
}

static int f_openat(int dirfd, const char *path, int flags, void *arg)
{
	if (lookup(FAULT_OPENAT))
		return -1;
	return shpmu_sys_kernel.openat(dirfd, path, flags, arg);
}

static int f_openat2(int dirfd, const char *path, struct open_how *how,
		     size_t size, void *arg)
{
	if (lookup(FAULT_OPENAT))
		return -1;
	return shpmu_sys_kernel.openat2(dirfd, path, how, size, arg);
}

static int f_name_to_handle(int dirfd, const char *path, struct file_handle *fh,
			    int *mount_id, int flags, void *arg)
{
	if (lookup(FAULT_HANDLE))
		return -1;
	return shpmu_sys_kernel.name_to_handle_at(dirfd, path, fh, mount_id,
						  flags, arg);
}

static int f_open_by_handle(int mount_fd, struct file_handle *fh, int flags,
			    void *arg)
{
	if (hit(FAULT_HANDLE))
		return -1;
	return shpmu_sys_kernel.open_by_handle_at(mount_fd, fh, flags, arg);
}

static int f_mkdirat(int dirfd, const char *path, mode_t mode, void *arg)
{
	if (lookup(FAULT_FS))
		return -1;
	return shpmu_sys_kernel.mkdirat(dirfd, path, mode, arg);
}

static int f_unlinkat(int dirfd, const char *path, int flags, void *arg)
{
	if (lookup(FAULT_FS))
		return -1;
	return shpmu_sys_kernel.unlinkat(dirfd, path, flags, arg);
}

static int f_fstatat(int dirfd, const char *path, struct stat *st, int flags,
		     void *arg)
{
	if (lookup(FAULT_FS))
		return -1;
	return shpmu_sys_kernel.fstatat(dirfd, path, st, flags, arg);
}

static int f_statx(int dirfd, const char *path, int flags, unsigned int mask,
		   struct statx *stx, void *arg)
{
	if (lookup(FAULT_FS))
		return -1;
	return shpmu_sys_kernel.statx(dirfd, path, flags, mask, stx, arg);
}

static int f_fstatfs(int fd, struct statfs *st, void *arg)
{
	if (hit(FAULT_FS))
		return -1;
	return shpmu_sys_kernel.fstatfs(fd, st, arg);
}

static int f_statfs(const char *path, struct statfs *st, void *arg)
{
	if (lookup(FAULT_FS))
		return -1;
	return shpmu_sys_kernel.statfs(path, st, arg);
}

static int f_fchmod(int fd, mode_t mode, void *arg)
{
	if (hit(FAULT_FS))
		return -1;
	return shpmu_sys_kernel.fchmod(fd, mode, arg);
}

static ssize_t f_readlinkat(int dirfd, const char *path, char *buf, size_t len,
			    void *arg)
{
	if (lookup(FAULT_FS))
		return -1;
	return shpmu_sys_kernel.readlinkat(dirfd, path, buf, len, arg);
}

static ssize_t f_getdents64(int fd, void *buf, size_t len, void *arg)
{
	if (lookup(FAULT_FS))
		return -1;
	return shpmu_sys_kernel.getdents64(fd, buf, len, arg);
}

static int f_flock(int fd, int op, void *arg)
{
	if (hit(op & LOCK_UN ? FAULT_UNLOCK : FAULT_LOCK))
		return -1;
	return shpmu_sys_kernel.flock(fd, op, arg);
}

static int f_fcntl_lock(int fd, int cmd, struct flock *fl, void *arg)
{
	bool unlock =
		cmd != F_OFD_GETLK && cmd != F_GETLK && fl->l_type == F_UNLCK;

	if (hit(unlock ? FAULT_UNLOCK : FAULT_LOCK))
		return -1;
	return shpmu_sys_kernel.fcntl_lock(fd, cmd, fl, arg);
}

static void *f_mmap(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off, void *arg)
{
	if (hit(FAULT_MMAP))
		return MAP_FAILED;
	return shpmu_sys_kernel.mmap(addr, len, prot, flags, fd, off, arg);
}

static int f_munmap(void *addr, size_t len, void *arg)
{
	int ret = shpmu_sys_kernel.munmap(addr, len, arg);

	return hit(FAULT_MUNMAP) ? -1 : ret;
}

static int f_pidfd_open(pid_t pid, unsigned int flags, void *arg)
{
	if (hit(FAULT_PROC))
		return -1;
	return shpmu_sys_kernel.pidfd_open(pid, flags, arg);
}

static int f_capget(struct __user_cap_header_struct *hdr,
		    struct __user_cap_data_struct *data, void *arg)
{
	if (hit(FAULT_PROC))
		return -1;
	return shpmu_sys_kernel.capget(hdr, data, arg);
}

static int f_getrlimit(int resource, struct rlimit *rl, void *arg)
{
	if (hit(FAULT_PROC))
		return -1;
	return shpmu_sys_kernel.getrlimit(resource, rl, arg);
}

static int f_bpf(int cmd, union bpf_attr *attr, unsigned int size, void *arg)
{
	/* What may be missing: a pin, a map entry, the next key. */
	bool is_lookup = cmd == BPF_OBJ_GET || cmd == BPF_MAP_LOOKUP_ELEM ||
			 cmd == BPF_MAP_DELETE_ELEM ||
			 cmd == BPF_MAP_GET_NEXT_KEY;

	if (hit_call(FAULT_BPF, is_lookup))
		return -1;
	return shpmu_sys_kernel.bpf(cmd, attr, size, arg);
}

static int f_bpf_skeleton_load(struct bpf_object_skeleton *skel, void *arg)
{
	if (hit(FAULT_BPF_LOAD))
		return -1;
	return shpmu_sys_kernel.bpf_skeleton_load(skel, arg);
}

static struct bpf_link *f_bpf_attach(struct bpf_program *prog, void *arg)
{
	/* A tracepoint the kernel lacks: ENOENT. */
	if (lookup(FAULT_BPF_LOAD))
		return NULL;
	return shpmu_sys_kernel.bpf_attach(prog, arg);
}

const struct shpmu_sys_ops fault_sys = {
	.perf_event_open = f_open,
	.read = f_read,
	.ioctl = f_ioctl,
	.close = f_close,
	.openat = f_openat,
	.openat2 = f_openat2,
	.name_to_handle_at = f_name_to_handle,
	.open_by_handle_at = f_open_by_handle,
	.mkdirat = f_mkdirat,
	.unlinkat = f_unlinkat,
	.fstatat = f_fstatat,
	.statx = f_statx,
	.fstatfs = f_fstatfs,
	.statfs = f_statfs,
	.fchmod = f_fchmod,
	.readlinkat = f_readlinkat,
	.getdents64 = f_getdents64,
	.flock = f_flock,
	.fcntl_lock = f_fcntl_lock,
	.mmap = f_mmap,
	.munmap = f_munmap,
	.pidfd_open = f_pidfd_open,
	.capget = f_capget,
	.getrlimit = f_getrlimit,
	.bpf = f_bpf,
	.bpf_skeleton_load = f_bpf_skeleton_load,
	.bpf_attach = f_bpf_attach,
};
