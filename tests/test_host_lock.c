// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A host domain's lock always ends: a wait for it is bounded and names
 * the holder, a member that forks while holding it and then dies leaves
 * it behind in no child, the log callback never runs under it, and a
 * member keeps no fd per other member.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <shpmu/shpmu.h>

#include "host/host_inspect.h"
#include "host/host_layout.h"
#include "host/host_quota.h"
#include "host/host_step.h"
#include "host_procs.h"

TestSuite(host_lock, .init = host_fs_setup, .fini = host_fs_teardown,
	  .timeout = 120);

static struct shpmu *join(unsigned int timeout_ms,
			  void (*log)(int, const char *, void *))
{
	SHPMU_OPTS(o, .scope = SHPMU_SCOPE_HOST, .domain = "default",
		   .bpffs_dir = host_bpffs(), .log = log,
		   .lock_timeout_ms = timeout_ms);

	return shpmu_new(&o);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int open_cpu0(struct shpmu *pmu)
{
	struct perf_event_attr attr = {.size = sizeof(attr),
				       .type = PERF_TYPE_SOFTWARE,
				       .config = PERF_COUNT_SW_TASK_CLOCK};
	struct shpmu_target t = {.kind = SHPMU_TARGET_CPU,
				 .cpu = 0,
				 .flags = SHPMU_TARGET_BIND_CPU};

	return shpmu_open(pmu, &attr, &t);
}

/* A process that takes the domain's lock, as a member stuck in a change
 * would hold it, until *release is closed. */
static pid_t stuck_holder(int *release)
{
	int go[2], taken[2];
	char byte;
	pid_t pid;

	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(taken), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		int fd = open(host_domain_dir("default"),
			      O_RDONLY | O_DIRECTORY);

		close(go[1]); /* (so that the parent's close ends the read) */
		if (fd < 0 || flock(fd, LOCK_EX) ||
		    write(taken[1], "t", 1) != 1)
			_exit(2);
		(void)!read(go[0], &byte, 1);
		_exit(0);
	}
	close(go[0]);
	close(taken[1]);
	cr_assert_eq(read(taken[0], &byte, 1), 1);
	close(taken[0]);
	*release = go[1];
	return pid;
}

/* The bound on a timed-out wait past its timeout: polls sleep at most
 * 5 ms, and a loaded 2-CPU machine may run the waiter late. */
#define OVERSHOOT_MS 3000

Test(host_lock, a_held_lock_times_out_naming_its_holder)
{
	struct shpmu *member = join(300, host_keep_log), *joiner;
	struct shpmu_stats st;
	struct host_view v;
	char holder[32];
	double start, took;
	int release, status;
	pid_t pid;

	cr_assert(member, "%s", host_logged);
	pid = stuck_holder(&release);
	snprintf(holder, sizeof(holder), "pid %d", pid);

	host_logged[0] = '\0';
	start = now_ms();
	joiner = join(300, host_keep_log);
	took = now_ms() - start;
	cr_expect_null(joiner);
	cr_expect_eq(errno, ETIMEDOUT, "%s", strerror(errno));
	cr_expect_geq(took, 300);
	cr_expect_lt(took, 300 + OVERSHOOT_MS);
	cr_expect(strstr(host_logged, holder), "no \"%s\" in: %s", holder,
		  host_logged);

	/* A member's open gives up the same way, and changes nothing. */
	cr_expect_eq(open_cpu0(member), -ETIMEDOUT);
	cr_assert_eq(shpmu_get_stats(member, &st), 0);
	cr_expect_eq(st.handles, 0);
	cr_expect_eq(st.kernel_events, 0);

	/* The operator's view, at its default bound. */
	start = now_ms();
	cr_expect_eq(host_view_read(host_bpffs(), "default", NULL, &v),
		     -ETIMEDOUT);
	took = now_ms() - start;
	cr_expect_lt(took, 5000 + OVERSHOOT_MS);

	close(release);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect_geq(open_cpu0(member), 0);
	joiner = join(300, host_keep_log);
	cr_expect(joiner, "%s", host_logged);
	shpmu_free(joiner);
	shpmu_free(member);
}

/* A close that cannot take the lock in time still closes the handle, and
 * gives back its share of the domain: the next open is not refused for a
 * ref the close could not drop (the domain drops it when this context
 * leaves). */
Test(host_lock, a_close_that_times_out_gives_its_share_back)
{
	SHPMU_OPTS(o, .scope = SHPMU_SCOPE_HOST, .bpffs_dir = host_bpffs(),
		   .cgroup_backend = SHPMU_CGROUP_BACKEND_BPF,
		   .log = host_keep_log, .lock_timeout_ms = 300);
	struct perf_event_attr attr = {.size = sizeof(attr),
				       .type = PERF_TYPE_SOFTWARE,
				       .config = PERF_COUNT_SW_TASK_CLOCK};
	struct shpmu_target t = {.kind = SHPMU_TARGET_TASK, .cpu = -1};
	struct shpmu *pmu;
	int h, release, status;
	pid_t holder;

	shpmu__host_quota = 1; /* one task entry */
	pmu = shpmu_new(&o);
	cr_assert(pmu, "%s", host_logged);
	h = shpmu_open(pmu, &attr, &t);
	cr_assert_geq(h, 0, "%s", host_logged);
	holder = stuck_holder(&release);
	cr_expect_eq(shpmu_close(pmu, h), 0);
	close(release);
	cr_assert_eq(waitpid(holder, &status, 0), holder);
	t.pid = getppid(); /* another task */
	host_logged[0] = '\0';
	h = shpmu_open(pmu, &attr, &t);
	cr_expect_geq(h, 0, "the share was not given back: %s", host_logged);
	shpmu_free(pmu);
}

static int grandchild_pipe[2];
static bool grandchild_execs;

/* In the member, with the domain's lock held: a child that outlives it,
 * then the member's death. */
static void fork_then_die(void)
{
	pid_t kid = fork();

	if (!kid) {
		if (grandchild_execs)
			execl("/bin/sleep", "sleep", "60", (char *)NULL);
		sleep(60);
		_exit(0);
	}
	(void)!write(grandchild_pipe[1], &kid, sizeof(kid));
	raise(SIGKILL);
}

static void fork_leaves_no_lock(bool execs)
{
	struct host_view v;
	struct shpmu *joiner;
	pid_t member, kid;
	int status;

	/* The orphaned child comes to us, to be killed and reaped. */
	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	cr_assert_eq(pipe(grandchild_pipe), 0);
	grandchild_execs = execs;
	member = fork();
	cr_assert_geq(member, 0);
	if (!member) {
		shpmu__host_step_hook = fork_then_die;
		join(0, NULL);
		_exit(1);
	}
	cr_assert_eq(read(grandchild_pipe[0], &kid, sizeof(kid)), sizeof(kid));
	cr_assert_eq(waitpid(member, &status, 0), member);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	cr_assert_eq(kill(kid, 0), 0, "the member's child lives on");

	/* With the lock kept by the child, this join would time out; with
	 * the member's byte of users/ kept, the member would still count
	 * as alive. */
	host_logged[0] = '\0';
	joiner = join(5000, host_keep_log);
	cr_expect(joiner, "the member's child kept the lock: %s", host_logged);
	cr_assert_eq(host_view_read(host_bpffs(), "default", NULL, &v), 0);
	cr_expect_eq(v.nusers, 1, "the killed member is still a user");
	host_view_free(&v);
	shpmu_free(joiner);
	kill(kid, SIGKILL);
	waitpid(kid, &status, 0);
}

Test(host_lock, a_fork_leaves_no_lock_behind)
{
	fork_leaves_no_lock(false);
}

Test(host_lock, a_fork_and_exec_leave_no_lock_behind)
{
	fork_leaves_no_lock(true);
}

static int logs_seen, logs_under_lock;

/* Whether the domain's lock is free now: taken and given back at once. */
static void check_lock_free(int level, const char *msg, void *arg)
{
	int fd = open(host_domain_dir("default"), O_RDONLY | O_DIRECTORY);

	(void)level;
	(void)arg;
	host_keep_log(level, msg, arg);
	logs_seen++;
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB))
		logs_under_lock++;
	else
		flock(fd, LOCK_UN);
	if (fd >= 0)
		close(fd);
}

Test(host_lock, the_log_callback_runs_without_the_lock)
{
	struct shpmu *pmu;
	pid_t member;
	int status;

	/* A member that dies without leaving: the next change reclaims it,
	 * and says so, with the lock held. */
	member = fork();
	cr_assert_geq(member, 0);
	if (!member)
		_exit(join(0, NULL) ? 0 : 1);
	cr_assert_eq(waitpid(member, &status, 0), member);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	host_logged[0] = '\0';
	pmu = join(0, check_lock_free);
	cr_assert(pmu, "%s", host_logged);
	cr_expect(strstr(host_logged, "is gone: reclaiming"), "%s",
		  host_logged);
	cr_expect_gt(logs_seen, 0);
	cr_expect_eq(logs_under_lock, 0, "%d of %d messages under the lock",
		     logs_under_lock, logs_seen);
	shpmu_free(pmu);
}

/* This process's fds, but the pipes to helpers. */
static int count_fds(void)
{
	char path[300], link[64];
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	ssize_t len;
	int n = 0;

	cr_assert(d);
	while ((e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		n += strncmp(link, "pipe:", 5) != 0;
	}
	closedir(d);
	return n;
}

Test(host_lock, a_member_keeps_no_fd_per_other_member)
{
	struct shpmu *pmu = join(0, host_keep_log);
	struct helper others[6];
	int before, after, h;

	cr_assert(pmu, "%s", host_logged);
	/* A change looks at every user's lock. */
	h = open_cpu0(pmu);
	cr_assert_geq(h, 0);
	cr_assert_eq(shpmu_close(pmu, h), 0);
	before = count_fds();
	for (int i = 0; i < 6; i++)
		cr_assert(helper_start(&others[i], NULL, NULL));
	h = open_cpu0(pmu);
	cr_assert_geq(h, 0);
	cr_assert_eq(shpmu_close(pmu, h), 0);
	after = count_fds();
	cr_expect_eq(after, before, "%d fds with 6 other members, %d without",
		     after, before);
	for (int i = 0; i < 6; i++)
		helper_quit(&others[i]);
	shpmu_free(pmu);
}
