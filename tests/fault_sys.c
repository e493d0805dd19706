// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "fault_sys.h"

#include <errno.h>
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
 * not fail: its read returns half. */
static bool hit(enum fault_kind k)
{
	int count;

	fault.calls++;
	fault.calls_of[k]++;
	if (fault.calls <= FAULT_MAX_CALLS)
		fault.kinds[fault.calls] = k;
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
	if (fault.err == FAULT_SHORT_READ)
		return false;
	errno = fault.err;
	return true;
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
	if (hit(FAULT_OPENAT))
		return -1;
	return shpmu_sys_kernel.openat(dirfd, path, flags, arg);
}

static int f_openat2(int dirfd, const char *path, struct open_how *how,
		     size_t size, void *arg)
{
	if (hit(FAULT_OPENAT))
		return -1;
	return shpmu_sys_kernel.openat2(dirfd, path, how, size, arg);
}

static int f_name_to_handle(int dirfd, const char *path, struct file_handle *fh,
			    int *mount_id, int flags, void *arg)
{
	if (hit(FAULT_HANDLE))
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

const struct shpmu_sys_ops fault_sys = {
	.perf_event_open = f_open,
	.read = f_read,
	.ioctl = f_ioctl,
	.close = f_close,
	.openat = f_openat,
	.openat2 = f_openat2,
	.name_to_handle_at = f_name_to_handle,
	.open_by_handle_at = f_open_by_handle,
};
