// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A host with no cgroup2 mount but a v1 perf_event hierarchy, made in a
 * private mount namespace. Mounting v1 perf_event moves the controller off
 * cgroup2 for the whole machine while it lasts, so this suite runs alone
 * and makes no child cgroups: with none, the hierarchy dies with the mount
 * namespace even if the test crashes, and perf_event returns to cgroup2.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/perf_event.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "cgroup_helpers.h"
#include "helpers.h"

/* Raw context-switch events on the cgroup at path, one per CPU, counting
 * from now: the oracle for a handle opened on it. */
static int raw_cgroup_open(const char *path, int *fds, int max)
{
	struct perf_event_attr a =
		sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES, false);
	int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0;

	cr_assert_geq(dir, 0, "%s: %s", path, strerror(errno));
	for (int cpu = 0; cpu < online_cpus() && n < max; cpu++)
		fds[n++] = raw_open_attr(&a, dir, cpu, PERF_FLAG_PID_CGROUP);
	close(dir);
	return n;
}

static uint64_t raw_cgroup_read(const int *fds, int n)
{
	uint64_t sum = 0, v[3];

	for (int i = 0; i < n; i++) {
		raw_read(fds[i], v);
		sum += v[0];
	}
	return sum;
}

/* The hierarchy perf_event is bound to: 0 is cgroup2. */
static int perf_event_hierarchy(void)
{
	char name[64];
	int hier = -1, n, enabled;
	FILE *f = fopen("/proc/cgroups", "r");

	if (!f)
		return -1;
	fscanf(f, "%*[^\n]\n"); /* header */
	while (fscanf(f, "%63s %d %d %d", name, &hier, &n, &enabled) == 4)
		if (!strcmp(name, "perf_event"))
			break;
	fclose(f);
	return hier;
}

Test(cgroup_v1, a_v1_perf_event_hierarchy_is_found_and_counts)
{
	char tmpdir[] = "/tmp/shpmu-v1-XXXXXX", root[PATH_MAX], path[PATH_MAX];
	SHPMU_OPTS(opts, .log = record_log);
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS,
				 .cgroup_path = ""};
	struct perf_event_attr a =
		sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES, false);
	struct shpmu_count c;
	struct stat st;
	struct shpmu *p;
	uint64_t id, in, out;
	int h, inner[64], outer[64], n_outer;

	/* Nobody else counts cgroups while perf_event is bound here. */
	cg_perf_event_lock(true);
	private_mount_namespace();
	cr_assert_eq(umount2("/sys/fs/cgroup/unified", MNT_DETACH), 0);
	cr_assert_neq(mkdtemp(tmpdir), NULL);
	cr_assert_eq(mount("none", tmpdir, "cgroup", 0, "perf_event"), 0,
		     "mount v1 perf_event: %s", strerror(errno));

	p = shpmu_new(&opts);
	cr_assert(p);
	cr_assert_eq(shpmu_cgroup_root(p, root, sizeof(root)), 0, "%s",
		     last_log);
	cr_expect_str_eq(root, tmpdir);
	cr_assert_eq(shpmu_cgroup_id(p, tmpdir, &id), 0);
	cr_assert_eq(stat(tmpdir, &st), 0);
	cr_expect_eq(id, st.st_ino);
	cr_assert_eq(shpmu_cgroup_path(p, id, path, sizeof(path)), 0);
	cr_expect_str_eq(path, tmpdir);

	/* Every task is in the new hierarchy's root, this one too: the
	 * handle is bracketed by raw events on that root, one opened before
	 * it and read after it, one opened after it and read before it.
	 * Classic events on one cgroup count the same switches, so the
	 * handle lies between the two exactly. */
	n_outer = raw_cgroup_open(tmpdir, outer, 64);
	h = shpmu_open(p, &a, &t);
	cr_assert_geq(h, 0, "%s", last_log);
	raw_cgroup_open(tmpdir, inner, 64);
	sleep_switches(50);
	in = raw_cgroup_read(inner, n_outer);
	cr_assert_eq(shpmu_read(p, h, &c), 0);
	out = raw_cgroup_read(outer, n_outer);
	cr_log_info("context switches in the root: raw %llu .. %llu, handle "
		    "%llu",
		    (unsigned long long)in, (unsigned long long)out,
		    (unsigned long long)c.value);
	/* The 50 this test made exactly, and all the machine's others. */
	cr_expect_geq(in, 50);
	cr_expect(c.value >= in && c.value <= out,
		  "the handle's %llu switches are outside the raw [%llu, "
		  "%llu] around it",
		  (unsigned long long)c.value, (unsigned long long)in,
		  (unsigned long long)out);
	for (int i = 0; i < n_outer; i++) {
		close(inner[i]);
		close(outer[i]);
	}
	shpmu_free(p);
	umount2(tmpdir, MNT_DETACH);
	rmdir(tmpdir);
	/* The kernel frees the hierarchy a little later; the next suite
	 * needs perf_event back on cgroup2. The free is deferred work with
	 * nothing to wait on: polled, with a deadline of 10 s. */
	for (uint64_t deadline = wall_ns() + 10000000000ull;
	     perf_event_hierarchy() != 0 && wall_ns() < deadline;)
		usleep(10000); /* between polls */
	cr_expect_eq(perf_event_hierarchy(), 0,
		     "perf_event did not return to cgroup2");
}
