// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "bpffs_mount.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "host/host_lock.h"

static char mnt[PATH_MAX], dir[PATH_MAX + 16];

/* Under valgrind (--trace-children) every member holds the domain's lock
 * tens of times longer: the default bound on waits would end them. */
void host_slow_locks_under_valgrind(void)
{
	if (getenv("SHPMU_TEST_VALGRIND"))
		shpmu__host_lock_timeout_ms = 300000;
}

void host_fs_setup(void)
{
	host_slow_locks_under_valgrind();
	private_mount_namespace();
	snprintf(mnt, sizeof(mnt), "/tmp/shpmu-bpffs-XXXXXX");
	cr_assert(mkdtemp(mnt));
	cr_assert_eq(mount("bpf", mnt, "bpf", 0, "mode=0755"), 0,
		     "mount -t bpf: %s", strerror(errno));
	snprintf(dir, sizeof(dir), "%s/shpmu", mnt);
}

static char residue[1 << 14];

static int note(const char *path, const struct stat *st, int flag,
		struct FTW *ftw)
{
	size_t used = strlen(residue);

	(void)st;
	(void)flag;
	if (ftw->level > 0)
		snprintf(residue + used, sizeof(residue) - used, "%s\n", path);
	return 0;
}

const char *host_residue(void)
{
	residue[0] = '\0';
	nftw(dir, note, 16, FTW_PHYS);
	return residue;
}

void host_fs_teardown(void)
{
	cr_expect_str_empty(host_residue(), "left in bpffs:\n%s", residue);
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
}

const char *host_bpffs(void)
{
	return dir;
}
