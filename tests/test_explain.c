// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Errors that say what to do: the refused field, the fds in use and the
 * limit, the paranoid level and the capability. */
#include <criterion/criterion.h>
#include <linux/capability.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "cgroup_helpers.h"
#include "helpers.h"
#include "sys/sys.h"

LOGGED_CONTEXT_SUITE(errors);

static struct perf_event_attr named(const char *name)
{
	return named_attr(pmu, name);
}

Test(errors, einval_names_the_refused_field)
{
	struct perf_event_attr attrs[2] = {named("cs"), named("page-faults")};
	struct shpmu_target self = self_target();

	attrs[1].pinned = 1; /* only a group leader may be pinned */
	cr_expect_eq(shpmu_open_group(pmu, attrs, 2, &self), -EINVAL);
	cr_expect(strstr(last_log, "attr.pinned"), "log: %s", last_log);
	cr_expect_eq(count_perf_fds(), 0, "the leader was closed again");
}

static int opens_left;

static int open_until_emfile(struct perf_event_attr *attr, pid_t pid, int cpu,
			     int group_fd, unsigned long flags, void *arg)
{
	if (opens_left-- <= 0) {
		errno = EMFILE;
		return -1;
	}
	return shpmu_sys_kernel.perf_event_open(attr, pid, cpu, group_fd, flags,
						arg);
}

/* The process runs out of fds half way through the CPUs. */
Test(errors, emfile_gives_the_fds_in_use_and_the_limit)
{
	struct shpmu_sys_ops ops = shpmu_sys_kernel;
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	struct perf_event_attr a = named("cpu-clock");
	int used = count_fds();
	struct rlimit rl;
	char limit[64];

	getrlimit(RLIMIT_NOFILE, &rl);
	snprintf(limit, sizeof(limit), "RLIMIT_NOFILE %llu",
		 (unsigned long long)rl.rlim_cur);
	ops.perf_event_open = open_until_emfile;
	opens_left = 1;
	shpmu__set_sys_ops(pmu, &ops);
	cr_expect_eq(shpmu_open(pmu, &a, &all), -EMFILE);
	cr_expect(strstr(last_log, limit) && strstr(last_log, "in use"),
		  "log: %s", last_log);
	cr_expect_eq(count_fds(), used, "nothing left open");
	shpmu__set_sys_ops(pmu, NULL);
}

Test(errors, eacces_gives_paranoid_and_the_capability)
{
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	struct perf_event_attr a = named("cpu-clock");
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int paranoid = 0;

	cr_assert(f);
	cr_assert_eq(fscanf(f, "%d", &paranoid), 1);
	fclose(f);
	if (paranoid < 1)
		cr_skip_test("perf_event_paranoid is %d: CPU-wide counting is "
			     "open to everyone here",
			     paranoid);
	drop_capability(CAP_PERFMON);
	drop_capability(CAP_SYS_ADMIN);
	cr_expect_eq(shpmu_open(pmu, &a, &all), -EACCES);
	cr_expect(strstr(last_log, "perf_event_paranoid=") &&
			  strstr(last_log, "CAP_PERFMON"),
		  "log: %s", last_log);
}

/* -EOPNOTSUPP on an open handle is a call that only the BPF backend
 * answers, made on classic perf fds: said so, not blamed on the PMU. */
Test(errors, eopnotsupp_on_a_classic_handle_says_it_is_exact)
{
	struct perf_event_attr a = named("task-clock");
	struct shpmu_target self = self_target();
	struct shpmu_count c;
	uint64_t bound = 1;
	char text[1024];
	int h = shpmu_open(pmu, &a, &self);

	cr_assert_geq(h, 0);
	cr_expect_eq(shpmu_read_unattributed(pmu, h, -1, &c), -EOPNOTSUPP);
	cr_expect_eq(shpmu_read_cached(pmu, h, &c), -EOPNOTSUPP);
	cr_expect_eq(shpmu_read_bound(pmu, h, &c, &bound), 0);
	cr_expect_eq(bound, 0, "a classic handle's bound: %llu",
		     (unsigned long long)bound);
	cr_assert_eq(shpmu_explain(pmu, h, -EOPNOTSUPP, text, sizeof(text)), 0);
	cr_expect(strstr(text, "classic perf fds") &&
			  strstr(text, "shpmu_read_unattributed") &&
			  strstr(text, "shpmu_read_bound") &&
			  !strstr(text, "PMU cannot"),
		  "explain: %s", text);
	/* An open's -EOPNOTSUPP is still the PMU's. */
	cr_assert_eq(shpmu_explain(pmu, -1, -EOPNOTSUPP, text, sizeof(text)),
		     0);
	cr_expect(strstr(text, "PMU cannot"), "explain: %s", text);
}
