/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Turning a failed perf_event_open into advice a person can act on. */
#ifndef SHPMU_EXPLAIN_H
#define SHPMU_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/perf_event.h>

struct shpmu;

/* The errors whose advice needs no more than the attr (NULL: not known):
 * EACCES/EPERM, ENOENT, EOPNOTSUPP, EMFILE, ENFILE. Writes it and returns
 * true, or returns false for another err. */
bool explain_common(struct shpmu *pmu, int err,
		    const struct perf_event_attr *attr, char *buf, size_t len);

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
