/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The directories of host scope, opened so that no other uid can redirect
 * them: every component of the path is opened on its own, never through a
 * symlink, and each must be a directory nobody else can swap entries of.
 *
 *   bpffs_dir and its ancestors, layout-N   shared: owned by root or by us,
 *                                           and writable by nobody else
 *                                           unless sticky (01777) as /tmp
 *                                           is (another uid's directory,
 *                                           sticky or not, could have our
 *                                           entries renamed by its owner)
 *   layout-N/<domain>                       owned by its uid, mode 0700
 *
 * What a directory made here gets: bpffs_dir and layout-N 01777, so that
 * several uids keep their own domains side by side where root made them
 * (made by another uid, they are refused by the others); a domain 0700.
 */
#ifndef SHPMU_HOST_DIRS_H
#define SHPMU_HOST_DIRS_H

#include <stdbool.h>

struct shpmu;

/* Opens bpffs_dir (O_PATH), every component checked, and checks that it
 * is on a BPF filesystem; create: make what is missing of it inside a
 * BPF filesystem. 0 or -errno, with a message: -ENOENT (no BPF filesystem
 * there), -ELOOP (a symlink on the way), -EACCES (a directory another uid could
 * change), -EINVAL (a ".." component), -ENAMETOOLONG. */
int host_dirs_open_bpffs(struct shpmu *pmu, const char *bpffs_dir, bool create,
			 int *out);

/* Opens layout-N under bpffs_fd (O_PATH), made if missing when create:
 * 0, -ENOENT (untold: the caller's to judge) or -errno as above. path
 * names it in messages. */
int host_dirs_open_layout(struct shpmu *pmu, int bpffs_fd, const char *name,
			  const char *path, bool create, int *out);

/* Opens the domain directory name under layout_fd (O_RDONLY, so that it
 * can be locked), made 0700 if missing when create. It must be mode
 * 0700, and owned by this process's euid when ours_only (a member), by
 * anyone otherwise (an operator looking). path names it in messages;
 * -ENOENT is untold. */
int host_dirs_open_domain(struct shpmu *pmu, int layout_fd, const char *name,
			  const char *path, bool create, bool ours_only,
			  int *out);

/* Whether fd is still the entry name under parent_fd (not removed or
 * replaced since it was opened): 1 or 0, or -errno when it cannot be
 * told. */
int host_dirs_still_at(struct shpmu *pmu, int parent_fd, const char *name,
		       int fd);

#endif
