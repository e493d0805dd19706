// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: attr normalization, targets and the open path. The
 * input is an attr (up to 136 bytes, any size field), then a target, then
 * a group's worth of attrs. The syscall layer is faked, so no real event
 * is opened: perf_event_open hands out /dev/null fds, whose reads return
 * zeros and a count of one; files are read from the kernel.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <shpmu/shpmu.h>

#include "sys/sys.h"

static int null_fd = -1;

static int fake_open(struct perf_event_attr *attr, pid_t pid, int cpu,
		     int group_fd, unsigned long flags, void *arg)
{
	(void)attr, (void)pid, (void)cpu, (void)group_fd, (void)flags;
	(void)arg;
	return fcntl(null_fd, F_DUPFD_CLOEXEC, 0);
}

/* Whether fd is one fake_open handed out (a /dev/null): other reads,
 * of /proc and /sys files, go to the kernel. */
static bool is_fake(int fd)
{
	struct stat st, null_st;

	return fd >= 0 && !fstat(fd, &st) && !fstat(null_fd, &null_st) &&
	       st.st_rdev == null_st.st_rdev && S_ISCHR(st.st_mode);
}

static ssize_t fake_read(int fd, void *buf, size_t len, void *arg)
{
	uint64_t one = 1; /* a group of one, or a count */

	if (!is_fake(fd))
		return shpmu_sys_kernel.read(fd, buf, len, arg);
	memset(buf, 0, len);
	/* (buf may be a file's line buffer, at any alignment.) */
	if (len >= sizeof(one))
		memcpy(buf, &one, sizeof(one));
	return (ssize_t)len;
}

static int fake_ioctl(int fd, unsigned long req, unsigned long val, void *arg)
{
	(void)fd, (void)req, (void)val, (void)arg;
	return 0;
}

static struct shpmu_sys_ops ops;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* As big as any attr->size the library accepts (a page): the caller
	 * owns attr->size bytes, as with perf_event_open. */
	static unsigned char attr[4096];
	struct shpmu_target t = {0};
	struct perf_event_attr group[3];
	struct shpmu_count c[3];
	static struct shpmu *pmu;
	struct shpmu_stats st;
	size_t n;
	int h;

	if (!pmu) {
		null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		ops = shpmu_sys_kernel;
		ops.perf_event_open = fake_open;
		ops.read = fake_read;
		ops.ioctl = fake_ioctl;
		pmu = shpmu_new(NULL);
		if (!pmu)
			abort();
		shpmu__set_sys_ops(pmu, &ops);
	}
	memset(attr, 0, sizeof(attr));
	n = size < 136 ? size : 136;
	memcpy(attr, data, n);
	if (size > 136 + 12) {
		const uint8_t *p = data + 136;

		t.kind = (enum shpmu_target_kind)(p[0] % 4);
		memcpy(&t.pid, p + 1, sizeof(t.pid));
		t.pid &= 0x7; /* small pids: the fake ignores them anyway */
		memcpy(&t.cpu, p + 5, sizeof(t.cpu));
		t.cpu = t.cpu % 4 - 1;
		t.flags = p[11] % 3; /* bound, not, and an unknown flag */
		t.cgroup_path = (p[9] & 1) ? "" : NULL;
		t.cgroup_id = p[10];
	}
	h = shpmu_open(pmu, (struct perf_event_attr *)attr, &t);
	if (h >= 0) {
		shpmu_enable(pmu, h);
		shpmu_read(pmu, h, &c[0]);
		shpmu_read_cpu(pmu, h, 0, &c[0]);
		shpmu_read_many(pmu, &h, 1, &c[0]);
		shpmu_reset(pmu, h);
		shpmu_disable(pmu, h);
		shpmu_close(pmu, h);
	}
	memset(group, 0, sizeof(group));
	for (int i = 0; i < 3; i++) {
		memcpy(&group[i], attr, sizeof(group[i]));
		group[i].size = sizeof(group[i]);
		group[i].config += (uint64_t)i;
	}
	h = shpmu_open_group(pmu, group, 1 + size % 3, &t);
	if (h >= 0) {
		shpmu_read_group(pmu, h, c, 3);
		shpmu_close(pmu, h);
	}
	/* Everything opened was closed: nothing may be left behind. */
	shpmu_get_stats(pmu, &st);
	if (st.handles || st.kernel_events || st.kernel_fds)
		abort();
	return 0;
}
