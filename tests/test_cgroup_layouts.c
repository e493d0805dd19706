// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Mount layouts other than this host's hybrid one, made in a private mount
 * namespace (each Criterion test runs in its own process): pure cgroup2 at
 * /sys/fs/cgroup, cgroup2 anywhere through opts.cgroup_root, and a v1
 * perf_event hierarchy.
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "cgroup_helpers.h"
#include "helpers.h"

static char tmpdir[64];

static void mount_at_tmp(const char *fstype, const char *opts)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/shpmu-cg-XXXXXX");
	cr_assert_neq(mkdtemp(tmpdir), NULL);
	cr_assert_eq(mount("none", tmpdir, fstype, 0, opts), 0,
		     "mount %s at %s: %s", fstype, tmpdir, strerror(errno));
}

static void teardown(void)
{
	cg_teardown();
	if (tmpdir[0]) {
		umount2(tmpdir, MNT_DETACH);
		rmdir(tmpdir);
	}
}

/* Counting with the BPF backend where it is built: its program sees
 * cgroups by id, which each layout must give it. (AUTO would count these
 * few cgroups with classic events.) */
static struct shpmu *new_with_root(const char *root)
{
#ifdef HAVE_BPF
	SHPMU_OPTS(opts, .cgroup_root = root, .log = record_log,
		   .cgroup_backend = SHPMU_CGROUP_BACKEND_BPF);
#else
	SHPMU_OPTS(opts, .cgroup_root = root, .log = record_log);
#endif
	struct shpmu *p = shpmu_new(&opts);

	cr_assert(p, "shpmu_new(root %s): %s", root ? root : "(discover)",
		  last_log);
	return p;
}

static void expect_root(struct shpmu *p, const char *want)
{
	char root[PATH_MAX];

	cr_assert_eq(shpmu_cgroup_root(p, root, sizeof(root)), 0);
	cr_expect_str_eq(root, want);
}

/* Resolves and counts a cgroup made under p's root. */
static void expect_works(struct shpmu *p)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS};
	char path[PATH_MAX];
	struct shpmu_count c;
	uint64_t id, cpu, twin_clock;
	double pct;

	cg_setup(p);
	const char *abs = cg_make("x y");
	cr_assert_eq(shpmu_cgroup_id(p, abs, &id), 0, "%s", last_log);
	cr_expect_eq(id, cg_ino(abs));
	cr_assert_eq(shpmu_cgroup_path(p, id, path, sizeof(path)), 0);
	cr_expect_str_eq(path, abs);

	t.cgroup_id = id;
	/* Counted by the BPF backend: its value may fall short by its bound
	 * (cg_read_bound()), 0 where it counts classically. */
	uint64_t bound;
	struct cg_child w = cg_spawn(abs, 50000000, 5);
	int h = shpmu_open(p, &a, &t);

	cr_assert_geq(h, 0, "%s", last_log);
	struct cg_twin twin = cg_twin_open(abs, a.config);

	cg_go(&w);
	cpu = cg_finish(&w);
	c = cg_read_bound(p, h, &bound);
	twin_clock = cg_twin_read(&twin);
	pct = cg_twin_bpf_pct(&twin, twin_clock);
	cg_twin_close(&twin);
	shpmu_close(p, h);
	cg_reap(&w);
	/* The twin is a classic cgroup event, the handle a BPF-counted one
	 * (without BPF a classic one): see cg_bpf_clock_pct(). */
	cg_expect_twin_bound(c.value, bound, twin_clock, pct,
			     "task-clock against its twin");
	cg_expect_covers(twin_clock, cpu, "task-clock");
}

Test(layouts, pure_v2_at_sys_fs_cgroup_is_discovered, .fini = teardown)
{
	struct shpmu *p;

	private_mount_namespace();
	/* Covers the hybrid tmpfs and its mounts, as on a pure-v2 host. */
	cr_assert_eq(mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL), 0,
		     "%s", strerror(errno));
	p = new_with_root(NULL);
	expect_root(p, "/sys/fs/cgroup");
	expect_works(p);
	shpmu_free(p);
}

Test(layouts, cgroup2_anywhere_through_opts, .fini = teardown)
{
	struct shpmu *p;

	private_mount_namespace();
	mount_at_tmp("cgroup2", NULL);
	p = new_with_root(tmpdir);
	expect_root(p, tmpdir);
	expect_works(p);
	shpmu_free(p);
}

Test(layouts, a_root_that_is_not_a_cgroup_is_refused)
{
	SHPMU_OPTS(not_cg, .cgroup_root = "/tmp");
	SHPMU_OPTS(missing, .cgroup_root = "/no/such/dir");

	errno = 0;
	cr_expect_null(shpmu_new(&not_cg));
	cr_expect_eq(errno, EINVAL);
	cr_expect_null(shpmu_new(&missing));
	cr_expect_eq(errno, ENOENT);
}

Test(layouts, a_mount_point_with_a_space_is_unescaped, .fini = teardown)
{
	char dir[80];
	struct shpmu *p;

	private_mount_namespace();
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/shpmu-cg-XXXXXX");
	cr_assert_neq(mkdtemp(tmpdir), NULL);
	snprintf(dir, sizeof(dir), "%s/with space", tmpdir);
	cr_assert_eq(mkdir(dir, 0755), 0);
	/* Hide every other cgroup2 mount so discovery must find this one,
	 * which mountinfo spells "with\040space". */
	cr_assert_eq(umount2("/sys/fs/cgroup/unified", MNT_DETACH), 0);
	cr_assert_eq(mount("none", dir, "cgroup2", 0, NULL), 0);
	p = new_with_root(NULL);
	expect_root(p, dir);
	expect_works(p);
	shpmu_free(p);
	cg_teardown(); /* before its mount goes */
	umount2(dir, MNT_DETACH);
	rmdir(dir);
}
