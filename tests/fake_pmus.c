// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The fake machine with a core PMU (fake_pmus.h). */
#include "fake_pmus.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "helpers.h"
#include "sys/sys.h"

#define DEVICES FAKE_DEVICES

static const struct fake_file *files;
static size_t nfiles;

struct fake_opened fake_opened[256];
int fake_nopened;
/* The hybrid's PMU type of each CPU, for refusing a mismatch. */
static uint32_t type_of_cpu[2];

static int fake_openat(int dirfd, const char *path, int flags, void *arg)
{
	static const char *const core[] = {"cpu/", "cpu_core/", "cpu_atom/"};
	int fd;

	for (size_t i = 0; i < nfiles; i++) {
		if (strcmp(path, files[i].path))
			continue;
		fd = memfd_create("fake", MFD_CLOEXEC);
		cr_assert(fd >= 0);
		cr_assert_eq(write(fd, files[i].text, strlen(files[i].text)),
			     (ssize_t)strlen(files[i].text));
		lseek(fd, 0, SEEK_SET);
		return fd;
	}
	for (size_t i = 0; i < 3; i++)
		if (!strncmp(path, DEVICES, strlen(DEVICES)) &&
		    !strncmp(path + strlen(DEVICES), core[i],
			     strlen(core[i]))) {
			errno = ENOENT;
			return -1;
		}
	if (!strcmp(path, "/proc/sys/kernel/nmi_watchdog")) {
		errno = ENOENT;
		return -1;
	}
	return shpmu_sys_kernel.openat(dirfd, path, flags, arg);
}

static int fake_perf_event_open(struct perf_event_attr *attr, pid_t pid,
				int cpu, int group_fd, unsigned long flags,
				void *arg)
{
	struct perf_event_attr sw = *attr;
	uint32_t ext = (uint32_t)(attr->config >> 32);

	if (attr->type == PERF_TYPE_SOFTWARE ||
	    attr->type == PERF_TYPE_TRACEPOINT)
		return shpmu_sys_kernel.perf_event_open(attr, pid, cpu,
							group_fd, flags, arg);
	/* A hybrid kernel: a CPU event of one PMU type on the other's CPU
	 * does not exist. */
	if (type_of_cpu[0] && cpu >= 0 && cpu < 2 &&
	    (attr->type == PERF_TYPE_HARDWARE ||
	     attr->type == PERF_TYPE_HW_CACHE) &&
	    ext && ext != type_of_cpu[cpu]) {
		errno = ENOENT;
		return -1;
	}
	if (fake_nopened < 256)
		fake_opened[fake_nopened++] = (struct fake_opened){
			attr->type, attr->config, cpu, pid};
	sw.type = PERF_TYPE_SOFTWARE;
	sw.config = PERF_COUNT_SW_CPU_CLOCK;
	return shpmu_sys_kernel.perf_event_open(&sw, pid, cpu, group_fd, flags,
						arg);
}

static struct shpmu_sys_ops fake_ops;

struct shpmu *fake_context(const struct fake_spec *spec,
			   const struct shpmu_opts *opts)
{
	SHPMU_OPTS(quiet, .log = record_log,
		   .cgroup_backend = SHPMU_CGROUP_BACKEND_PERF);
	struct shpmu *p;

	files = spec->files;
	nfiles = spec->n;
	fake_nopened = 0;
	type_of_cpu[0] = spec == &fake_hybrid ? 4 : 0;
	type_of_cpu[1] = spec == &fake_hybrid ? 10 : 0;
	fake_ops = shpmu_sys_kernel;
	fake_ops.openat = fake_openat;
	fake_ops.perf_event_open = fake_perf_event_open;
	shpmu__sys_ops_at_new = &fake_ops;
	p = shpmu_new(opts ? opts : &quiet);
	shpmu__sys_ops_at_new = NULL;
	cr_assert(p, "shpmu_new: %s", strerror(errno));
	return p;
}

void fake_budget(struct shpmu *p, struct shpmu_pmu_budget *b, int n)
{
	cr_assert_eq(shpmu_pmu_budget(p, NULL, 0), n);
	cr_assert_eq(shpmu_pmu_budget(p, b, (size_t)n), n);
}

static const struct fake_file plain[] = {
	{DEVICES "cpu/type", "4\n"},
	{DEVICES "cpu/caps/num_counters", "4\n"},
	{DEVICES "cpu/caps/num_fixed_counters", "3\n"},
	{"/proc/sys/kernel/nmi_watchdog", "0\n"},
};
const struct fake_spec fake_plain = FAKE_SPEC(plain);

static const struct fake_file tight[] = {
	{DEVICES "cpu/type", "4\n"},
	{DEVICES "cpu/caps/num_counters", "3\n"},
	{DEVICES "cpu/caps/num_fixed_counters", "0\n"},
	{"/proc/sys/kernel/nmi_watchdog", "1\n"},
};
const struct fake_spec fake_tight = FAKE_SPEC(tight);

static const struct fake_file hybrid[] = {
	{DEVICES "cpu_core/type", "4\n"},
	{DEVICES "cpu_core/cpus", "0\n"},
	{DEVICES "cpu_core/caps/num_counters", "8\n"},
	{DEVICES "cpu_core/caps/num_fixed_counters", "3\n"},
	{DEVICES "cpu_atom/type", "10\n"},
	{DEVICES "cpu_atom/cpus", "1\n"},
	{DEVICES "cpu_atom/caps/num_counters", "6\n"},
	{DEVICES "cpu_atom/caps/num_fixed_counters", "3\n"},
	{"/proc/sys/kernel/nmi_watchdog", "1\n"},
};
const struct fake_spec fake_hybrid = FAKE_SPEC(hybrid);

void fake_pmus_machine_check(void)
{
	/* The suites' numbers are worked out by hand for this project's
	 * machines; budget-model checks any CPU count against the model. */
	if (online_cpus() != 2)
		cr_skip_test(
			"the fake PMUs are for 2 CPUs; this machine has %d",
			online_cpus());
}
