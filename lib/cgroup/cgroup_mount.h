/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Finding the cgroup mount that perf cgroup events work on. */
#ifndef SHPMU_CGROUP_MOUNT_H
#define SHPMU_CGROUP_MOUNT_H

#include <stdbool.h>

struct shpmu;

/*
 * Finds the cgroup hierarchy to count on, in order of preference: a
 * cgroup2 mount (pure v2 at /sys/fs/cgroup, hybrid at
 * /sys/fs/cgroup/unified, or anywhere else), else a v1 hierarchy carrying
 * the perf_event controller. Mounts hidden under later mounts are skipped.
 * Returns 0 with a malloc'd path in *root, -ENOENT if there is none, or
 * -errno.
 */
int cgroup_mount_discover(struct shpmu *pmu, char **root, bool *v2);

/* Checks that path is a directory on a cgroup file system and returns
 * its canonical form: 0, -ENOENT, or -EINVAL (not a cgroup fs). */
int cgroup_mount_check(struct shpmu *pmu, const char *path, char **root,
		       bool *v2);

#endif
