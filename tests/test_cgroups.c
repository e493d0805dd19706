// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Cgroup ids and paths, and counting cgroups, on real cgroups made here. */
#include <criterion/criterion.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroup_helpers.h"
#include "helpers.h"
#include "sys/sys.h"

static struct shpmu *pmu;

/* Classic cgroup events: these tests compare with raw cgroup perf events
 * exactly; the BPF backend has its own suite (test_bpf.c). */
static void setup(void)
{
	SHPMU_OPTS(opts, .log = record_log,
		   .cgroup_backend = SHPMU_CGROUP_BACKEND_PERF);

	pmu = shpmu_new(&opts);
	cr_assert(pmu, "shpmu_new: %s", strerror(errno));
	cg_setup(pmu);
}

static void teardown(void)
{
	shpmu_free(pmu);
	cg_teardown();
}

TestSuite(cgroups, .init = setup, .fini = teardown);

static void expect_round_trip(struct shpmu *p, const char *abs, const char *rel)
{
	char path[PATH_MAX];
	uint64_t by_abs = 0, by_rel = 0;

	cr_assert_eq(shpmu_cgroup_id(p, abs, &by_abs), 0, "id of %s: %s", abs,
		     last_log);
	cr_assert_eq(shpmu_cgroup_id(p, rel, &by_rel), 0, "id of %s: %s", rel,
		     last_log);
	cr_expect_eq(by_abs, by_rel);
	cr_expect_eq(by_abs, cg_ino(abs), "%s: id is not the inode number",
		     abs);
	cr_assert_eq(shpmu_cgroup_path(p, by_abs, path, sizeof(path)), 0,
		     "path of %llu: %s", (unsigned long long)by_abs, last_log);
	cr_expect_str_eq(path, abs);
}

Test(cgroups, the_root_is_the_visible_cgroup2_mount)
{
	char root[PATH_MAX];
	struct statfs sfs;

	cr_assert_eq(shpmu_cgroup_root(pmu, root, sizeof(root)), 0);
	cr_assert_eq(statfs(root, &sfs), 0);
	cr_expect_eq(sfs.f_type, CGROUP2_SUPER_MAGIC, "%s is not cgroup2",
		     root);
	cr_expect_eq(shpmu_cgroup_root(pmu, root, strlen(root)), -ERANGE);
	cr_expect_eq(shpmu_cgroup_root(pmu, root, strlen(root) + 1), 0);
}

Test(cgroups, ids_and_paths_round_trip_for_nested_and_odd_names)
{
	const char *names[] = {"a", "a/b c", "a/b c/ünï ✓ d", "a/tab\tx",
			       "a/b c/ünï ✓ d/deep"};
	char rel[PATH_MAX];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *abs = cg_make(names[i]);

		snprintf(rel, sizeof(rel), "%s/%s", cg_base_rel(), names[i]);
		expect_round_trip(pmu, abs, rel);
	}
	expect_round_trip(pmu, cg_base(), cg_base_rel());
	/* Odd spellings of the same place. */
	uint64_t a, b;
	snprintf(rel, sizeof(rel), "%s/./a//", cg_base_rel());
	cr_expect_eq(shpmu_cgroup_id(pmu, rel, &a), 0);
	cr_expect_eq(shpmu_cgroup_id(pmu, cg_abs("a"), &b), 0);
	cr_expect_eq(a, b);
	snprintf(rel, sizeof(rel), "%s//./a", cg_base());
	cr_expect_eq(shpmu_cgroup_id(pmu, rel, &b), 0);
	cr_expect_eq(a, b);
	/* "." and empty components before the root's end are no escape. */
	char root[PATH_MAX], spelled[3 * PATH_MAX], *slash;

	cr_assert_eq(shpmu_cgroup_root(pmu, root, sizeof(root)), 0);
	slash = strrchr(root, '/');
	cr_assert(slash);
	*slash = '\0';
	snprintf(spelled, sizeof(spelled), "%s/./%s//%s/a", root, slash + 1,
		 cg_base_rel());
	b = 0;
	cr_expect_eq(shpmu_cgroup_id(pmu, spelled, &b), 0, "%s: %s", spelled,
		     last_log);
	cr_expect_eq(a, b);
	/* The kernel itself refuses newlines in cgroup names. */
	cr_expect_neq(mkdir(cg_abs("nl\nname"), 0755), 0);
}

Test(cgroups, escapes_and_unknowns_are_refused)
{
	char root[PATH_MAX], path[PATH_MAX + 32], buf[2 * PATH_MAX];
	uint64_t id;

	cg_make("a");
	shpmu_cgroup_root(pmu, root, sizeof(root));
	snprintf(path, sizeof(path), "%s/a/../..", cg_base_rel());
	cr_expect_eq(shpmu_cgroup_id(pmu, path, &id), -EINVAL);
	cr_expect(strstr(last_log, "..") != NULL, "log: %s", last_log);
	cr_expect_eq(shpmu_cgroup_id(pmu, "..", &id), -EINVAL);
	cr_expect_eq(shpmu_cgroup_id(pmu, "/tmp", &id), -EXDEV);
	/* A prefix of the root's name is not the root. */
	snprintf(path, sizeof(path), "%sX", root);
	cr_expect_eq(shpmu_cgroup_id(pmu, path, &id), -EXDEV);
	/* A symlink from outside into the hierarchy is outside. */
	char link[] = "/tmp/shpmu-cglink-XXXXXX";
	cr_assert_neq(mkdtemp(link), NULL);
	snprintf(path, sizeof(path), "%s/l", link);
	cr_assert_eq(symlink(root, path), 0);
	snprintf(buf, sizeof(buf), "%s/%s", path, cg_base_rel());
	cr_expect_eq(shpmu_cgroup_id(pmu, buf, &id), -EXDEV);
	unlink(path);
	rmdir(link);

	cr_expect_eq(shpmu_cgroup_id(pmu, cg_abs("nope"), &id), -ENOENT);
	cr_expect(strstr(last_log, "nope") != NULL, "log names the path: %s",
		  last_log);
	cr_expect_eq(shpmu_cgroup_path(pmu, 0xfffffffffull, buf, sizeof(buf)),
		     -ENOENT);
	cr_assert_eq(shpmu_cgroup_id(pmu, cg_abs("a"), &id), 0);
	cr_expect_eq(shpmu_cgroup_path(pmu, id, buf, strlen(cg_abs("a"))),
		     -ERANGE);
	cr_expect_eq(shpmu_cgroup_path(pmu, id, buf, 1), -ERANGE);
	cr_expect_str_eq(last_log,
			 "shpmu_cgroup_path: buffer of 1 byte is too small");
	cr_expect_eq(shpmu_cgroup_path(pmu, id, buf, strlen(cg_abs("a")) + 1),
		     0);
}

/* Without CAP_DAC_READ_SEARCH open_by_handle_at is refused: ids resolve by
 * walking the hierarchy, and the walk's cache follows changes. */
Test(cgroups, ids_resolve_without_cap_dac_read_search)
{
	char buf[PATH_MAX];
	uint64_t id_a, id_late, id_again;
	struct shpmu *p;

	drop_dac_read_search();
	p = shpmu_new(&(struct shpmu_opts){.sz = sizeof(struct shpmu_opts),
					   .log = record_log});
	cr_assert(p);
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s/a", cg_base_rel());
	expect_round_trip(p, cg_make("a"), rel);
	cr_assert_eq(shpmu_cgroup_id(p, cg_abs("a"), &id_a), 0);
	cr_expect_eq(shpmu_cgroup_path(p, id_a, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, cg_abs("a"));

	/* Made after the first walk: a miss refreshes the cache. */
	cg_make("late");
	cr_assert_eq(shpmu_cgroup_id(p, cg_abs("late"), &id_late), 0);
	cr_expect_eq(shpmu_cgroup_path(p, id_late, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, cg_abs("late"));

	/* Removed, and the name reused: the old id is gone. */
	cr_assert_eq(rmdir(cg_abs("late")), 0);
	cg_make("late");
	cr_assert_eq(shpmu_cgroup_id(p, cg_abs("late"), &id_again), 0);
	cr_expect_neq(id_again, id_late);
	cr_expect_eq(shpmu_cgroup_path(p, id_late, buf, sizeof(buf)), -ENOENT);
	cr_expect_eq(shpmu_cgroup_path(p, id_again, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, cg_abs("late"));
	shpmu_free(p);
}

static int open_cg(struct shpmu *p, uint64_t config, uint64_t id,
		   const char *path, bool disabled)
{
	struct perf_event_attr a = sw_attr(config, disabled);
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS,
				 .cgroup_id = id,
				 .cgroup_path = path};
	int h = shpmu_open(p, &a, &t);

	cr_assert_geq(h, 0, "open cgroup %s/%llu: %s (%s)", path ? path : "",
		      (unsigned long long)id, strerror(-h), last_log);
	return h;
}

Test(cgroups, a_path_and_its_id_share_one_event_per_cpu)
{
	const char *abs = cg_make("shared");
	char rel[PATH_MAX];
	struct shpmu_stats st;

	snprintf(rel, sizeof(rel), "%s/shared", cg_base_rel());
	open_cg(pmu, PERF_COUNT_SW_TASK_CLOCK, 0, abs, false);
	open_cg(pmu, PERF_COUNT_SW_TASK_CLOCK, 0, rel, false);
	open_cg(pmu, PERF_COUNT_SW_TASK_CLOCK, cg_ino(abs), NULL, true);
	shpmu_get_stats(pmu, &st);
	cr_expect_eq(st.handles, 3);
	cr_expect_eq(st.kernel_events, 1);
	cr_expect_eq(st.kernel_fds, (uint64_t)online_cpus());
	cr_expect_eq(count_perf_fds(), online_cpus());
	/* One CPU only is another event. */
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target one = {.kind = SHPMU_TARGET_CGROUP,
				   .cpu = 0,
				   .flags = SHPMU_TARGET_BIND_CPU,
				   .cgroup_path = abs};
	cr_assert_geq(shpmu_open(pmu, &a, &one), 0);
	cr_expect_eq(count_perf_fds(), online_cpus() + 1);
}

Test(cgroups, a_cgroup_counts_exactly_what_its_task_did)
{
	const char *abs = cg_make("work");
	int raw[64], nraw;
	struct shpmu_count clock, cs;
	uint64_t cpu_ns, twin_clock;

	struct cg_child child = cg_spawn(abs, 200000000, 50);
	int hclock = open_cg(pmu, PERF_COUNT_SW_TASK_CLOCK, 0, abs, false);
	struct cg_twin twin = cg_twin_open(abs, PERF_COUNT_SW_TASK_CLOCK);
	int hcs = open_cg(pmu, PERF_COUNT_SW_CONTEXT_SWITCHES, cg_ino(abs),
			  NULL, true);
	nraw = cg_raw_open(abs, PERF_COUNT_SW_CONTEXT_SWITCHES, raw, 64);
	for (int i = 0; i < nraw; i++)
		raw_enable(raw[i]);
	cr_assert_eq(shpmu_enable(pmu, hcs), 0);
	cg_go(&child);
	cpu_ns = cg_finish(&child);
	cr_assert_eq(shpmu_disable(pmu, hcs), 0);
	for (int i = 0; i < nraw; i++)
		raw_disable(raw[i]);

	cr_assert_eq(shpmu_read(pmu, hclock, &clock), 0);
	twin_clock = cg_twin_read(&twin);
	cr_assert_eq(shpmu_read(pmu, hcs, &cs), 0);
	cg_reap(&child);
	/* (The tolerance: see CG_CLASSIC_TWIN_PCT.) */
	cg_expect_twin(clock.value, twin_clock, CG_CLASSIC_TWIN_PCT,
		       "cgroup task-clock against its twin");
	cg_expect_covers(clock.value, cpu_ns, "cgroup task-clock");
	cg_twin_close(&twin);
	cr_expect_eq(cs.value, cg_raw_sum(raw, nraw),
		     "context-switches: handle %llu, raw cgroup events %llu",
		     (unsigned long long)cs.value,
		     (unsigned long long)cg_raw_sum(raw, nraw));
	/* Its 50 sleeps: an order of magnitude only, the raw events above
	 * being the oracle. A 20 us sleep may end before the switch away (a
	 * vCPU its host holds up past the timer), as tests/test_stat.py's
	 * workload measures. */
	cr_expect_geq(cs.value, 50 / 2,
		      "context-switches %llu for 50 sleeps and a 200 ms burn",
		      (unsigned long long)cs.value);
	for (int i = 0; i < nraw; i++)
		close(raw[i]);
}

Test(cgroups, a_parent_counts_its_children)
{
	cg_make("p");
	const char *c1 = cg_make("p/c1"), *c2 = cg_make("p/c2");
	struct shpmu_count p, k1, k2, clock;
	uint64_t cpu, twin_clock;
	/* Started and moved before the handles open: the window holds their
	 * work only. */
	struct cg_child w1 = cg_spawn(c1, 100000000, 20);
	struct cg_child w2 = cg_spawn(c2, 100000000, 30);
	int hp = open_cg(pmu, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, cg_abs("p"),
			 false);
	int h1 = open_cg(pmu, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, c1, false);
	int h2 = open_cg(pmu, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, c2, false);
	int hclock =
		open_cg(pmu, PERF_COUNT_SW_TASK_CLOCK, 0, cg_abs("p"), false);
	struct cg_twin twin =
		cg_twin_open(cg_abs("p"), PERF_COUNT_SW_TASK_CLOCK);

	cg_go(&w1);
	cg_go(&w2);
	cpu = cg_finish(&w1);
	cpu += cg_finish(&w2);
	cr_assert_eq(shpmu_disable(pmu, hp), 0);
	cr_assert_eq(shpmu_disable(pmu, h1), 0);
	cr_assert_eq(shpmu_disable(pmu, h2), 0);
	shpmu_read(pmu, hp, &p);
	shpmu_read(pmu, h1, &k1);
	shpmu_read(pmu, h2, &k2);
	shpmu_read(pmu, hclock, &clock);
	twin_clock = cg_twin_read(&twin);
	cg_twin_close(&twin);
	cg_reap(&w1);
	cg_reap(&w2);
	shpmu_close(pmu, hp);
	shpmu_close(pmu, h1);
	shpmu_close(pmu, h2);
	shpmu_close(pmu, hclock);
	cr_expect_eq(p.value, k1.value + k2.value, "parent %llu != %llu + %llu",
		     (unsigned long long)p.value, (unsigned long long)k1.value,
		     (unsigned long long)k2.value);
	cr_expect_geq(k1.value, 20);
	cr_expect_geq(k2.value, 30);
	/* (The tolerance: see CG_CLASSIC_TWIN_PCT.) */
	cg_expect_twin(clock.value, twin_clock, CG_CLASSIC_TWIN_PCT,
		       "parent task-clock against its twin");
	cg_expect_covers(clock.value, cpu, "parent task-clock");
}

static int open_cg_err(struct shpmu *p, uint64_t id)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS,
				 .cgroup_id = id};

	return shpmu_open(p, &a, &t);
}

Test(cgroups, a_removed_cgroup_keeps_its_last_value)
{
	const char *abs = cg_make("doomed");
	struct shpmu_count before, after;
	char buf[PATH_MAX];
	uint64_t id = cg_ino(abs), cpu, twin_before;
	int fds = count_perf_fds();

	struct cg_child w = cg_spawn(abs, 50000000, 10);
	int h = open_cg(pmu, PERF_COUNT_SW_TASK_CLOCK, id, NULL, false);
	struct cg_twin twin = cg_twin_open(abs, PERF_COUNT_SW_TASK_CLOCK);
	cg_go(&w);
	cpu = cg_finish(&w);
	cg_reap(&w); /* the cgroup must be empty to go */
	cr_assert_eq(shpmu_read(pmu, h, &before), 0);
	twin_before = cg_twin_read(&twin);
	/* The child's exit is in both. (The tolerance: see
	 * CG_CLASSIC_TWIN_PCT.) */
	cg_expect_twin(before.value, twin_before, CG_CLASSIC_TWIN_PCT,
		       "task-clock against its twin");
	cg_expect_covers(before.value, cpu, "task-clock");
	cr_assert_eq(rmdir(abs), 0, "rmdir %s: %s", abs, strerror(errno));
	cr_assert_eq(shpmu_read(pmu, h, &after), 0);
	cr_expect_eq(after.value, before.value);
	cr_expect_eq(cg_twin_read(&twin), twin_before, "the twin moved");
	cg_twin_close(&twin);
	cr_expect_eq(shpmu_cgroup_path(pmu, id, buf, sizeof(buf)), -ENOENT);
	cr_expect_eq(open_cg_err(pmu, id), -ENOENT);
	cr_assert_eq(shpmu_close(pmu, h), 0);
	cr_expect_eq(count_perf_fds(), fds, "close released the fds");
}

/* A sub-tree root confines ids too: the kernel's file handles reach the
 * whole hierarchy, the library must not. */
Test(cgroups, a_sub_tree_root_confines_ids_and_paths)
{
	const char *inside = cg_make("mine"), *outside = cg_make("theirs");
	const char *child = cg_make("mine/c");
	SHPMU_OPTS(opts, .cgroup_root = inside, .log = record_log);
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS,
				 .cgroup_id = cg_ino(outside)};
	char buf[PATH_MAX];
	uint64_t id;
	struct shpmu *p = shpmu_new(&opts);

	cr_assert(p, "%s", last_log);
	cr_expect_eq(shpmu_open(p, &a, &t), -ENOENT);
	cr_expect_eq(shpmu_cgroup_path(p, cg_ino(outside), buf, sizeof(buf)),
		     -ENOENT);
	cr_expect_eq(shpmu_cgroup_id(p, outside, &id), -EXDEV);
	cr_expect_eq(shpmu_cgroup_id(p, "c", &id), 0);
	cr_expect_eq(id, cg_ino(child));
	cr_expect_eq(shpmu_cgroup_path(p, id, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, child);
	t.cgroup_id = id;
	cr_expect_geq(shpmu_open(p, &a, &t), 0);
	shpmu_free(p);
}

static int no_openat2(int dirfd, const char *path, struct open_how *how,
		      size_t size, void *arg)
{
	(void)dirfd;
	(void)path;
	(void)how;
	(void)size;
	(void)arg;
	errno = ENOSYS;
	return -1;
}

/* Kernels before 5.6 have no openat2: the same checks, a component at a
 * time. */
Test(cgroups, paths_resolve_without_openat2)
{
	struct shpmu_sys_ops ops = shpmu_sys_kernel;
	const char *abs;

	cg_make("old kernel");
	abs = cg_make("old kernel/nested dir");
	char rel[PATH_MAX], buf[PATH_MAX];
	uint64_t id;

	ops.openat2 = no_openat2;
	shpmu__set_sys_ops(pmu, &ops);
	snprintf(rel, sizeof(rel), "%s/old kernel/./nested dir", cg_base_rel());
	cr_assert_eq(shpmu_cgroup_id(pmu, rel, &id), 0, "%s", last_log);
	cr_expect_eq(id, cg_ino(abs));
	cr_assert_eq(shpmu_cgroup_path(pmu, id, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, abs);
	cr_expect_eq(shpmu_cgroup_id(pmu, cg_abs("missing"), &id), -ENOENT);
	cr_expect_eq(shpmu_cgroup_id(pmu, "a/../..", &id), -EINVAL);
	cr_expect_eq(shpmu_cgroup_id(pmu, "cgroup.procs", &id), -ENOTDIR);
	shpmu__set_sys_ops(pmu, NULL);
}

/* AUTO says which backend counts its cgroups once per context, at a level
 * a log callback showing warnings shows: its first cgroups are classic
 * (the BPF backend's own suite sees it turn to BPF). */
Test(cgroups, auto_says_once_per_context_that_it_counts_classic)
{
	const char *paths[2] = {cg_make("told1"), cg_make("told2")};
	struct cg_told told[2];
	struct shpmu *autos[2];
	int h;

	for (int i = 0; i < 2; i++) {
		autos[i] = cg_auto_context(&told[i]);
		/* (One open at a time: below any crossover.) */
		for (int c = 0; c < 2; c++) {
			h = cg_open(autos[i], PERF_COUNT_SW_TASK_CLOCK,
				    paths[c]);
			cr_assert_eq(shpmu_close(autos[i], h), 0);
		}
	}
	for (int i = 0; i < 2; i++) {
		cr_expect_eq(told[i].classic, 1,
			     "context %d said classic %d times", i,
			     told[i].classic);
		cr_expect_eq(told[i].bpf, 0, "context %d said BPF", i);
		shpmu_free(autos[i]);
	}
}

/*
 * A child that makes about a thousand switches a second with a task-clock
 * event of its own: each time it is scheduled in, a kernel can set the
 * stamp of every cgroup clock above it on that CPU back to the CPU
 * context's last one, and a cgroup event's times run ahead of the wall
 * clock (measured: 4.5 s a 100 ms window). Counts stay right.
 */
static pid_t start_task_event_switcher(void)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		die_with_parent();
		if (task_clock_open(false) < 0)
			_exit(1);
		for (;;)
			usleep(1000);
	}
	return pid;
}

static void stop_child(pid_t pid)
{
	int status;

	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFSIGNALED(status), "the switcher exited by itself (%#x)",
		  status);
}

/* A cgroup's clock reads its times from its count (see times_from_count()
 * in backend_perf.c): a handle's times are its own window's (over every
 * CPU), after a spell with no event on the cgroup and beside a task with
 * events of its own, and a software clock runs whenever enabled. */
Test(cgroups, a_new_handle_times_only_its_own_window)
{
	char root[PATH_MAX];
	struct shpmu_count c;
	uint64_t wall;

	cr_assert_eq(shpmu_cgroup_root(pmu, root, sizeof(root)), 0);
	pid_t switcher = start_task_event_switcher();

	for (int round = 0; round < 2; round++) {
		/* No event on the root: a spell for the kernel to add. */
		usleep(1200 * 1000);
		wall = wall_ns();
		int h = open_cg(pmu, PERF_COUNT_SW_TASK_CLOCK, 0, root, false);

		usleep(200 * 1000);
		cr_assert_eq(shpmu_read(pmu, h, &c), 0);
		wall = wall_ns() - wall;
		cr_expect_leq(c.time_enabled, wall * (uint64_t)online_cpus(),
			      "round %d: enabled %.3f ms in %.3f ms on %d CPUs",
			      round, (double)c.time_enabled / 1e6,
			      (double)wall / 1e6, online_cpus());
		cr_expect_eq(c.time_running, c.time_enabled,
			     "round %d: running %llu, enabled %llu", round,
			     (unsigned long long)c.time_running,
			     (unsigned long long)c.time_enabled);
		cr_assert_eq(shpmu_close(pmu, h), 0);
	}
	stop_child(switcher);
}
