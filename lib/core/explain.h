/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Turning a failed perf_event_open into advice a person can act on. */
#ifndef SHPMU_EXPLAIN_H
#define SHPMU_EXPLAIN_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/perf_event.h>

struct shpmu;

/*
 * Writes what err from perf_event_open(attr, pid, cpu, group_fd, flags)
 * means and what to do: the perf_event_paranoid value and capability for
 * EACCES/EPERM, a missing hardware PMU for ENOENT, the fds in use and
 * RLIMIT_NOFILE for EMFILE, and for EINVAL the attr field the kernel
 * refused, found by retrying without each optional field in turn.
 */
void explain_open_error(struct shpmu *pmu, int err,
			const struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags, char *buf,
			size_t len);

#endif
