// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/explain.h"

#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/key.h"
#include "sys/sys.h"

static int read_paranoid(struct shpmu *pmu)
{
	char buf[32];

	if (sys_read_file(pmu, "/proc/sys/kernel/perf_event_paranoid", buf,
			  sizeof(buf)) <= 0)
		return -100;
	return atoi(buf);
}

static int fds_in_use(struct shpmu *pmu)
{
	int n = -1; /* the directory's own fd */
	struct sys_dir dir;
	unsigned char type;
	const char *name;

	if (sys_dir_open(pmu, &dir, AT_FDCWD, "/proc/self/fd"))
		return -1;
	while (sys_dir_next(pmu, &dir, &name, &type) > 0)
		n++;
	sys_dir_close(pmu, &dir);
	return n - 2; /* "." and ".." */
}

static bool is_hardware(const struct perf_event_attr *attr)
{
	return attr->type == PERF_TYPE_HARDWARE ||
	       attr->type == PERF_TYPE_HW_CACHE || attr->type == PERF_TYPE_RAW;
}

static bool have_cpu_pmu(struct shpmu *pmu)
{
	struct stat st;

	return !sys_fstatat(pmu, AT_FDCWD, "/sys/bus/event_source/devices/cpu",
			    &st, 0) ||
	       !sys_fstatat(pmu, AT_FDCWD,
			    "/sys/bus/event_source/devices/cpu_core", &st, 0);
}

/* The optional attr fields, each with a way to clear it. */
#define OPTIONAL_FIELDS(X)                                                     \
	X(precise_ip)                                                          \
	X(exclude_hv)                                                          \
	X(exclude_idle)                                                        \
	X(exclude_guest)                                                       \
	X(exclude_host)                                                        \
	X(exclude_kernel)                                                      \
	X(exclude_user)                                                        \
	X(pinned)                                                              \
	X(exclusive)                                                           \
	X(inherit)                                                             \
	X(inherit_stat)                                                        \
	X(inherit_thread)                                                      \
	X(enable_on_exec)                                                      \
	X(remove_on_exec)

/* Which single field, cleared, lets the open succeed; NULL if none. */
static const char *refused_field(struct shpmu *pmu,
				 const struct perf_event_attr *attr, pid_t pid,
				 int cpu, int group_fd, unsigned long flags)
{
	unsigned char buf[SHPMU_ATTR_SIZE_KNOWN];
	struct perf_event_attr *a = (struct perf_event_attr *)buf;
	int fd;

#define X(field)                                                               \
	if (attr->field) {                                                     \
		memcpy(buf, attr, sizeof(buf));                                \
		a->field = 0;                                                  \
		fd = sys_perf_event_open(pmu, a, pid, cpu, group_fd, flags);   \
		if (fd >= 0) {                                                 \
			sys_close(pmu, fd);                                    \
			return #field;                                         \
		}                                                              \
	}
	OPTIONAL_FIELDS(X)
#undef X
	return NULL;
}

bool explain_common(struct shpmu *pmu, int err,
		    const struct perf_event_attr *attr, char *buf, size_t len)
{
	char in_use_text[16];
	struct rlimit rl = {0};
	int paranoid, in_use;

	switch (err) {
	case -EACCES:
	case -EPERM:
		paranoid = read_paranoid(pmu);
		snprintf(
			buf, len,
			"not allowed with perf_event_paranoid=%d: grant "
			"CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8), or "
			"lower /proc/sys/kernel/perf_event_paranoid (-1 allows "
			"everything, 0 CPU-wide counting, 1 kernel and user "
			"counting of tasks and cgroups, 2 user-space-only "
			"counting of your own tasks)",
			paranoid);
		break;
	case -ENOENT:
		if (!attr)
			snprintf(buf, len,
				 "no such event here: this kernel or CPU does "
				 "not have it (a hardware event on a machine "
				 "without a hardware PMU, a VM without PMU "
				 "pass-through?), or no such cgroup");
		else if (is_hardware(attr) && !have_cpu_pmu(pmu))
			snprintf(buf, len,
				 "this machine has no hardware PMU (a VM "
				 "without PMU pass-through?): only software "
				 "events and tracepoints can be counted here");
		else
			snprintf(buf, len,
				 "this kernel or CPU does not have that event "
				 "(type %u, config %#llx)",
				 attr->type, (unsigned long long)attr->config);
		break;
	case -EOPNOTSUPP:
		snprintf(buf, len, "this PMU cannot do that (%s)",
			 !attr || is_hardware(attr)
				 ? "no such hardware feature, or "
				   "the counter cannot be shared"
				 : "unsupported for this event type");
		break;
	case -EMFILE:
		sys_getrlimit(pmu, RLIMIT_NOFILE, &rl);
		in_use = fds_in_use(pmu);
		/* Truly out of fds, even counting them takes one. */
		if (in_use < 0)
			snprintf(in_use_text, sizeof(in_use_text), "every one");
		else
			snprintf(in_use_text, sizeof(in_use_text), "%d",
				 in_use);
		snprintf(buf, len,
			 "out of file descriptors: %s in use, RLIMIT_NOFILE "
			 "%llu (hard %llu); raise it with setrlimit or ulimit "
			 "-n",
			 in_use_text, (unsigned long long)rl.rlim_cur,
			 (unsigned long long)rl.rlim_max);
		break;
	case -ENFILE:
		snprintf(buf, len,
			 "the system is out of file descriptors "
			 "(/proc/sys/fs/file-max)");
		break;
	default:
		return false;
	}
	return true;
}

void explain_open_error(struct shpmu *pmu, int err,
			const struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags, char *buf,
			size_t len)
{
	const char *field;

	if (explain_common(pmu, err, attr, buf, len))
		return;
	switch (err) {
	case -ESRCH:
		snprintf(buf, len, "no such task (pid %d)", pid);
		break;
	case -ENODEV:
		snprintf(buf, len,
			 "cpu %d is not online, or this PMU cannot "
			 "count that target",
			 cpu);
		break;
	case -EINVAL:
		field = refused_field(pmu, attr, pid, cpu, group_fd, flags);
		if (field)
			snprintf(buf, len,
				 "the kernel refused attr.%s for this event; "
				 "clear it",
				 field);
		else
			snprintf(buf, len,
				 "the kernel refused the attr (type %u, config "
				 "%#llx) or the target (pid %d, cpu %d)",
				 attr->type, (unsigned long long)attr->config,
				 pid, cpu);
		break;
	default:
		snprintf(buf, len, "%s", strerror(-err));
		break;
	}
}
