// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "context.h"
#include "sys.h"

void shpmu_log(const struct shpmu *pmu, enum shpmu_log_level level,
	       const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!pmu || !pmu->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pmu->log((int)level, msg, pmu->log_arg);
}

static int read_paranoid(const struct shpmu *pmu)
{
	char buf[32];

	/* The cast is for the syscall layer, which counts calls. */
	if (sys_read_file((struct shpmu *)pmu,
			  "/proc/sys/kernel/perf_event_paranoid", buf,
			  sizeof(buf)) <= 0)
		return -100;
	return atoi(buf);
}

void shpmu_explain_open_error(const struct shpmu *pmu, int err, char *buf,
			      size_t len)
{
	struct rlimit rl;
	int paranoid;

	switch (err) {
	case -EACCES:
	case -EPERM:
		paranoid = read_paranoid(pmu);
		if (paranoid == -100)
			snprintf(buf, len,
				 "not allowed: grant CAP_PERFMON (CAP_SYS_ADMIN "
				 "before Linux 5.8) or lower "
				 "/proc/sys/kernel/perf_event_paranoid");
		else
			snprintf(buf, len,
				 "not allowed with perf_event_paranoid=%d: "
				 "grant CAP_PERFMON (CAP_SYS_ADMIN before Linux "
				 "5.8), or lower the sysctl (-1 allows all, 1 "
				 "allows per-task and per-cgroup counting, 2 "
				 "user-space-only counting of own tasks)",
				 paranoid);
		break;
	case -ENOENT:
		snprintf(buf, len,
			 "this kernel or CPU does not have that event (no "
			 "hardware PMU, or an unknown type/config)");
		break;
	case -EMFILE:
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
			snprintf(buf, len,
				 "out of file descriptors: RLIMIT_NOFILE is "
				 "%llu; raise it (ulimit -n) or share more",
				 (unsigned long long)rl.rlim_cur);
		else
			snprintf(buf, len, "out of file descriptors");
		break;
	case -ENFILE:
		snprintf(buf, len,
			 "the system is out of file descriptors "
			 "(/proc/sys/fs/file-max)");
		break;
	case -ESRCH:
		snprintf(buf, len, "no such task");
		break;
	case -ENODEV:
		snprintf(buf, len, "that CPU is not online, or the PMU does "
				   "not support this target");
		break;
	case -EINVAL:
		snprintf(buf, len, "the kernel refused the attr or target");
		break;
	default:
		snprintf(buf, len, "%s", strerror(-err));
		break;
	}
}
