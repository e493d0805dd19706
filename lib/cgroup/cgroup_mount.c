// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Mount discovery reads /proc/self/mountinfo through libmount, which
 * unescapes mount points ("\040" for a space) and copes with optional
 * fields. libcgroup 2.0.2 was tried first and gives no answer for
 * perf_event on a hybrid host (it only knows v1 controller mounts), so it
 * is not used.
 */
#include "cgroup/cgroup_mount.h"

#include <errno.h>
#include <libmount.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "core/log.h"
#include "sys/sys.h"

#define MOUNTINFO "/proc/self/mountinfo"

int cgroup_mount_check(struct shpmu *pmu, const char *path, char **root,
		       bool *v2)
{
	struct statfs sfs;
	char *real;

	int err;

	real = realpath(path, NULL);
	if (!real) {
		err = errno;
		pr_err(pmu, "cgroup root %s: %s", path, strerror(err));
		return err == ENOMEM ? -ENOMEM : -ENOENT;
	}
	err = sys_statfs(pmu, real, &sfs);
	if (err) {
		pr_err(pmu, "cgroup root %s: %s", real, strerror(-err));
		free(real);
		return err;
	}
	if (sfs.f_type != CGROUP2_SUPER_MAGIC &&
	    sfs.f_type != CGROUP_SUPER_MAGIC) {
		pr_err(pmu, "cgroup root %s is not on a cgroup file system",
		       real);
		free(real);
		return -EINVAL;
	}
	*v2 = sfs.f_type == CGROUP2_SUPER_MAGIC;
	*root = real;
	return 0;
}

/* A mount entry is usable only if nothing was mounted over it since: the
 * mount we reach through its path must be the entry itself. 1 or 0; -errno
 * when its path cannot be looked at for another reason than not being
 * there. */
static int mount_is_visible(struct shpmu *pmu, struct libmnt_fs *fs)
{
	struct statx stx;
	int err = sys_statx(pmu, AT_FDCWD, mnt_fs_get_target(fs),
			    AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx);

	if (err)
		return err == -ENOENT ? 0 : err;
	if (!(stx.stx_mask & STATX_MNT_ID))
		return 1; /* kernel too old to tell: trust mountinfo */
	return stx.stx_mnt_id == (uint64_t)mnt_fs_get_id(fs);
}

static bool is_v1_perf_event(struct libmnt_fs *fs)
{
	return !strcmp(mnt_fs_get_fstype(fs), "cgroup") &&
	       mnt_fs_get_option(fs, "perf_event", NULL, NULL) == 0;
}

/* Lower is better. */
static int rank(struct libmnt_fs *fs)
{
	const char *target = mnt_fs_get_target(fs);

	if (!strcmp(mnt_fs_get_fstype(fs), "cgroup2")) {
		if (!strcmp(target, "/sys/fs/cgroup"))
			return 0;
		if (!strcmp(target, "/sys/fs/cgroup/unified"))
			return 1;
		return 2;
	}
	return is_v1_perf_event(fs) ? 3 : -1;
}

int cgroup_mount_discover(struct shpmu *pmu, char **root, bool *v2)
{
	struct libmnt_table *tb;
	struct libmnt_iter *it;
	struct libmnt_fs *fs, *best = NULL;
	int best_rank = INT_MAX, err = 0;

	tb = mnt_new_table_from_file(MOUNTINFO);
	if (!tb) {
		pr_err(pmu, "cannot parse %s", MOUNTINFO);
		return -EIO;
	}
	it = mnt_new_iter(MNT_ITER_FORWARD);
	if (!it) {
		err = -ENOMEM;
		goto free_table;
	}
	while (mnt_table_next_fs(tb, it, &fs) == 0) {
		int r = rank(fs), visible;

		if (r < 0 || r >= best_rank)
			continue;
		visible = mount_is_visible(pmu, fs);
		if (visible < 0) {
			err = visible;
			pr_err(pmu, "cgroup mount %s: %s",
			       mnt_fs_get_target(fs), strerror(-err));
			goto free_iter;
		}
		if (visible) {
			best = fs;
			best_rank = r;
		}
	}
	if (!best) {
		pr_info(pmu,
			"no cgroup2 or v1 perf_event cgroup mount in %s: "
			"cgroup targets are unavailable",
			MOUNTINFO);
		err = -ENOENT;
		goto free_iter;
	}
	*root = strdup(mnt_fs_get_target(best));
	*v2 = best_rank < 3;
	if (!*root)
		err = -ENOMEM;
	else
		pr_debug(pmu, "cgroup root: %s (%s)", *root,
			 *v2 ? "cgroup2" : "v1 perf_event");
free_iter:
	mnt_free_iter(it);
free_table:
	mnt_unref_table(tb);
	return err;
}
