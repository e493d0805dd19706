// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One member of a host domain cannot take the shared tables from the
 * others: past its share of the counted cgroups, of the task entries or of
 * the refs, its open fails with ENOSPC and a message, changing nothing,
 * while another member still opens. The share is half of each table; the
 * test lowers it (shpmu__host_quota*) to reach it with a few handles.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <shpmu/shpmu.h>

#include "cgroup_helpers.h"
#include "host/host_quota.h"
#include "host_procs.h"

static struct shpmu *local; /* for cgroup paths */

static void setup(void)
{
	host_fs_setup();
	local = shpmu_new(NULL);
	cr_assert(local);
	cg_setup(local);
	shpmu__host_quota = 2;
}

static void teardown(void)
{
	cg_teardown();
	shpmu_free(local);
	host_fs_teardown();
}

TestSuite(host_quota, .init = setup, .fini = teardown, .timeout = 120);

/* backend: SHPMU_CGROUP_BACKEND_BPF to be refused past the share, AUTO
 * to be given classic events there. */
static struct shpmu *join_with(enum shpmu_cgroup_backend backend)
{
	SHPMU_OPTS(o, .scope = SHPMU_SCOPE_HOST, .bpffs_dir = host_bpffs(),
		   .cgroup_backend = backend, .log = host_keep_log);
	struct shpmu *pmu = shpmu_new(&o);

	cr_assert(pmu, "%s", host_logged);
	return pmu;
}

static struct shpmu *join(void)
{
	return join_with(SHPMU_CGROUP_BACKEND_BPF);
}

static int open_on(struct shpmu *pmu, uint64_t config,
		   const struct shpmu_target *t)
{
	struct perf_event_attr attr = {.size = sizeof(attr),
				       .type = PERF_TYPE_SOFTWARE,
				       .config = config};

	return shpmu_open(pmu, &attr, t);
}

/* The open past the share: ENOSPC naming what, nothing else changed. */
static void expect_over(struct shpmu *pmu, uint64_t config,
			const struct shpmu_target *t, const char *what)
{
	struct shpmu_stats before, after;

	cr_assert_eq(shpmu_get_stats(pmu, &before), 0);
	host_logged[0] = '\0';
	cr_expect_eq(open_on(pmu, config, t), -ENOSPC);
	cr_expect(strstr(host_logged, what), "no \"%s\" in: %s", what,
		  host_logged);
	cr_assert_eq(shpmu_get_stats(pmu, &after), 0);
	cr_expect_eq(after.handles, before.handles);
	cr_expect_eq(after.kernel_events, before.kernel_events);
}

/* Another member, a process of its own at the default share, opens what
 * this one was refused. */
static void expect_other_opens(const char *target)
{
	struct helper other;

	cr_assert(helper_start(&other, NULL, NULL));
	helper_ok(&other, "open h task-clock %s", target);
	helper_quit(&other);
}

Test(host_quota, a_member_counts_at_most_its_share_of_cgroups)
{
	struct shpmu *pmu = join();
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS};
	char rel[3][128], target[160];

	for (int i = 0; i < 3; i++) {
		snprintf(rel[i], sizeof(rel[i]), "q%d", i);
		cg_make(rel[i]);
		snprintf(rel[i], sizeof(rel[i]), "%s/q%d", cg_base_rel(), i);
	}
	for (int i = 0; i < 2; i++) {
		t.cgroup_path = rel[i];
		cr_assert_geq(open_on(pmu, PERF_COUNT_SW_TASK_CLOCK, &t), 0,
			      "%s", host_logged);
	}
	/* A second event on a cgroup it counts already takes no slot. */
	t.cgroup_path = rel[0];
	cr_expect_geq(open_on(pmu, PERF_COUNT_SW_CPU_CLOCK, &t), 0, "%s",
		      host_logged);
	t.cgroup_path = rel[2];
	expect_over(pmu, PERF_COUNT_SW_TASK_CLOCK, &t, "2 cgroups");
	snprintf(target, sizeof(target), "cg:%s", rel[2]);
	expect_other_opens(target);
	shpmu_free(pmu);
}

Test(host_quota, past_its_share_auto_counts_with_classic_events)
{
	struct shpmu *pmu = join_with(SHPMU_CGROUP_BACKEND_AUTO);
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS};
	struct shpmu_stats before, after;
	char rel[3][128];

	for (int i = 0; i < 3; i++) {
		snprintf(rel[i], sizeof(rel[i]), "a%d", i);
		cg_make(rel[i]);
		snprintf(rel[i], sizeof(rel[i]), "%s/a%d", cg_base_rel(), i);
		t.cgroup_path = rel[i];
		if (i == 2)
			cr_assert_eq(shpmu_get_stats(pmu, &before), 0);
		host_logged[0] = '\0';
		cr_assert_geq(open_on(pmu, PERF_COUNT_SW_TASK_CLOCK, &t), 0,
			      "%s", host_logged);
	}
	cr_expect(strstr(host_logged, "2 cgroups"), "%s", host_logged);
	cr_assert_eq(shpmu_get_stats(pmu, &after), 0);
	/* One classic event per CPU, where the BPF backend costs none. */
	cr_expect_gt(after.kernel_fds, before.kernel_fds);
	shpmu_free(pmu);
}

Test(host_quota, a_member_counts_at_most_its_share_of_tasks)
{
	struct shpmu *pmu = join();
	struct shpmu_target t = {.kind = SHPMU_TARGET_TASK, .cpu = -1};
	pid_t kids[2];

	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		cr_assert_geq(kids[i], 0);
		if (!kids[i]) {
			pause();
			_exit(0);
		}
	}
	t.pid = 0;
	cr_assert_geq(open_on(pmu, PERF_COUNT_SW_TASK_CLOCK, &t), 0, "%s",
		      host_logged);
	t.pid = kids[0];
	cr_assert_geq(open_on(pmu, PERF_COUNT_SW_TASK_CLOCK, &t), 0, "%s",
		      host_logged);
	t.pid = kids[1];
	expect_over(pmu, PERF_COUNT_SW_TASK_CLOCK, &t, "2 tasks");
	shpmu_free(pmu);
	for (int i = 0; i < 2; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
}

Test(host_quota, a_member_holds_at_most_its_share_of_refs)
{
	struct shpmu *pmu;
	struct shpmu_target t = {.kind = SHPMU_TARGET_CPU,
				 .cpu = 0,
				 .flags = SHPMU_TARGET_BIND_CPU};

	shpmu__host_quota_refs = 2;
	pmu = join();

	cr_assert_geq(open_on(pmu, PERF_COUNT_SW_TASK_CLOCK, &t), 0, "%s",
		      host_logged);
	cr_assert_geq(open_on(pmu, PERF_COUNT_SW_CPU_CLOCK, &t), 0, "%s",
		      host_logged);
	/* A handle on a kernel event it holds already costs no ref. */
	cr_expect_geq(open_on(pmu, PERF_COUNT_SW_TASK_CLOCK, &t), 0, "%s",
		      host_logged);
	expect_over(pmu, PERF_COUNT_SW_PAGE_FAULTS, &t, "2 kernel events");
	expect_other_opens("cpu:0");
	shpmu_free(pmu);
}
