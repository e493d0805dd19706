// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "cgroup_helpers.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

static char base[2 * PATH_MAX], base_rel[PATH_MAX];
static char bufs[8][3 * PATH_MAX];
static int next_buf;

static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw);

/* Test cgroups of test processes that died before their teardown. */
static void sweep_stale(const char *root)
{
	char path[2 * PATH_MAX];
	struct dirent *d;
	DIR *dir = opendir(root);
	int pid;

	if (!dir)
		return;
	while ((d = readdir(dir)))
		if (sscanf(d->d_name, "shpmu-test-%d-", &pid) == 1 &&
		    kill(pid, 0) < 0 && errno == ESRCH) {
			snprintf(path, sizeof(path), "%s/%s", root, d->d_name);
			nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
		}
	closedir(dir);
}

static int perf_event_lock_fd = -1;

void cg_perf_event_lock(bool exclusive)
{
	if (perf_event_lock_fd < 0)
		perf_event_lock_fd = open("/tmp/shpmu-tests-perf_event.lock",
					  O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	cr_assert_geq(perf_event_lock_fd, 0, "the tests' lock: %s",
		      strerror(errno));
	while (flock(perf_event_lock_fd, exclusive ? LOCK_EX : LOCK_SH) &&
	       errno == EINTR)
		;
}

void cg_perf_event_unlock(void)
{
	if (perf_event_lock_fd >= 0)
		flock(perf_event_lock_fd, LOCK_UN);
}

void cg_setup(struct shpmu *pmu)
{
	static int n;
	char root[PATH_MAX];
	struct rlimit fds;

	cg_perf_event_lock(false);
	/* A clock's twin holds two raw events a CPU, and a test may hold ten
	 * twins: past 1024 fds from 48 CPUs. As many as this process may. */
	if (getrlimit(RLIMIT_NOFILE, &fds) == 0 &&
	    fds.rlim_cur < fds.rlim_max) {
		fds.rlim_cur = fds.rlim_max;
		setrlimit(RLIMIT_NOFILE, &fds);
	}

	cr_assert_eq(shpmu_cgroup_root(pmu, root, sizeof(root)), 0,
		     "no cgroup root found");
	sweep_stale(root);
	snprintf(base_rel, sizeof(base_rel), "shpmu-test-%d-%d", getpid(), n++);
	snprintf(base, sizeof(base), "%s/%s", root, base_rel);
	cr_assert_eq(mkdir(base, 0755), 0, "mkdir %s: %s", base,
		     strerror(errno));
}

static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	/* Only directories: the cgroup interface files go with them. */
	if (flag == FTW_DP && rmdir(path) < 0)
		fprintf(stderr, "cannot remove %s: %s\n", path,
			strerror(errno));
	return 0;
}

void cg_teardown(void)
{
	if (base[0])
		nftw(base, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	base[0] = '\0';
	cg_perf_event_unlock();
}

const char *cg_base(void)
{
	return base;
}

const char *cg_base_rel(void)
{
	return base_rel;
}

const char *cg_abs(const char *rel)
{
	char *b = bufs[next_buf++ % 8];

	snprintf(b, sizeof(bufs[0]), "%s/%s", base, rel);
	return b;
}

const char *cg_make(const char *rel)
{
	const char *abs = cg_abs(rel);

	cr_assert_eq(mkdir(abs, 0755), 0, "mkdir %s: %s", abs, strerror(errno));
	return abs;
}

uint64_t cg_ino(const char *abs)
{
	struct stat st;

	cr_assert_eq(stat(abs, &st), 0, "stat %s", abs);
	return st.st_ino;
}

void cg_move_self(const char *abs)
{
	char procs[3 * PATH_MAX + 16];
	int fd;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", abs);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || dprintf(fd, "%d\n", getpid()) < 0)
		_exit(2);
	close(fd);
}

void cg_move(const char *abs, pid_t pid)
{
	char procs[3 * PATH_MAX + 16];
	FILE *f;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", abs);
	f = fopen(procs, "we");
	cr_assert(f, "%s: %s", procs, strerror(errno));
	cr_assert_gt(fprintf(f, "%d\n", pid), 0);
	cr_assert_eq(fclose(f), 0, "move %d to %s: %s", pid, abs,
		     strerror(errno));
}

void cg_keep_only(int a, int b, int c)
{
	int keep[3] = {a, b, c}, from = 3;

	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (keep[j] < keep[i]) {
				int t = keep[i];

				keep[i] = keep[j];
				keep[j] = t;
			}
	for (int i = 0; i < 3; i++) {
		if (keep[i] < from)
			continue; /* none, or stdin, stdout, stderr */
		if (keep[i] > from)
			syscall(SYS_close_range, from, keep[i] - 1, 0);
		from = keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0u, 0);
}

static void child_main(const char *abs, uint64_t cpu_ns, int nsleeps,
		       int ready_fd, int go_fd, int report_fd)
{
	uint64_t started, spent;
	char byte;
	int clock;

	cg_keep_only(ready_fd, go_fd, report_fd);
	burn_cpu_ns(CG_PRE_MOVE_NS);
	if (abs)
		cg_move_self(abs);
	clock = task_clock_open(false);
	if (clock < 0)
		_exit(5);
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &byte, 1) != 1)
		_exit(3);
	started = task_clock_read(clock);
	burn_cpu_ns(cpu_ns);
	sleep_switches(nsleeps);
	spent = task_clock_read(clock) - started;
	if (write(report_fd, &spent, sizeof(spent)) != sizeof(spent))
		_exit(4);
	/* Parked until cg_reap() closes the pipe. */
	while (read(go_fd, &byte, 1) > 0)
		;
	_exit(0);
}

struct cg_child cg_spawn(const char *abs, uint64_t cpu_ns, int nsleeps)
{
	int go[2], ready[2], report[2];
	struct cg_child c;
	char byte;

	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(report), 0);
	c.pid = fork();
	cr_assert_geq(c.pid, 0);
	if (c.pid == 0) {
		close(go[1]);
		close(ready[0]);
		close(report[0]);
		child_main(abs, cpu_ns, nsleeps, ready[1], go[0], report[1]);
	}
	close(go[0]);
	close(ready[1]);
	close(report[1]);
	cr_assert_eq(read(ready[0], &byte, 1), 1, "child did not start");
	close(ready[0]);
	/* Parked: its run to the read of go is over, so that a count
	 * started now holds none of it. */
	wait_until_blocked(c.pid);
	c.go_fd = go[1];
	c.report_fd = report[0];
	return c;
}

void cg_go(struct cg_child *c)
{
	cr_assert_eq(write(c->go_fd, "g", 1), 1);
}

uint64_t cg_finish(struct cg_child *c)
{
	uint64_t spent;

	cr_assert_eq(read(c->report_fd, &spent, sizeof(spent)),
		     (ssize_t)sizeof(spent), "child %d did not report", c->pid);
	/* Parked again: a count read now holds all it will run before
	 * cg_reap(). */
	wait_until_blocked(c->pid);
	return spent;
}

void cg_reap(struct cg_child *c)
{
	int status;

	close(c->go_fd);
	close(c->report_fd);
	cr_assert_eq(waitpid(c->pid, &status, 0), c->pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child failed: %#x", status);
}

struct shpmu *cg_context(enum shpmu_cgroup_backend backend)
{
	SHPMU_OPTS(opts, .cgroup_backend = backend, .log = record_log);
	struct shpmu *p = shpmu_new(&opts);

	cr_assert(p, "backend %d: %s (%s)", backend, strerror(errno), last_log);
	return p;
}

static void record_told(int level, const char *msg, void *arg)
{
	struct cg_told *told = arg;

	if (level <= SHPMU_LOG_WARN) {
		if (strstr(msg, "counting cgroups with classic perf events"))
			told->classic++;
		if (strstr(msg, "counting cgroups with the BPF backend"))
			told->bpf++;
	}
	record_log(level, msg, NULL);
}

struct shpmu *cg_auto_context(struct cg_told *told)
{
	SHPMU_OPTS(opts, .log = record_told, .log_arg = told);
	struct shpmu *p;

	*told = (struct cg_told){0};
	p = shpmu_new(&opts);
	cr_assert(p, "AUTO: %s (%s)", strerror(errno), last_log);
	return p;
}

int cg_open(struct shpmu *p, uint64_t config, const char *path)
{
	struct perf_event_attr a = sw_attr(config, false);
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS,
				 .cgroup_path = path};
	int h = shpmu_open(p, &a, &t);

	cr_assert_geq(h, 0, "open %s: %s (%s)", path, strerror(-h), last_log);
	return h;
}

struct shpmu_count cg_read(struct shpmu *p, int h)
{
	struct shpmu_count c;

	cr_assert_eq(shpmu_read(p, h, &c), 0);
	return c;
}

struct shpmu_count cg_read_bound(struct shpmu *p, int h, uint64_t *bound)
{
	struct shpmu_count c;

	cr_assert_eq(shpmu_read_bound(p, h, &c, bound), 0);
	return c;
}

int cg_raw_open(const char *abs, uint64_t config, int *fds, int max)
{
	struct perf_event_attr a = sw_attr(config, true);
	int dir = open(abs, O_RDONLY | O_DIRECTORY);
	int n = 0;

	cr_assert_geq(dir, 0);
	a.read_format =
		PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	for (int cpu = 0; cpu < online_cpus() && n < max; cpu++) {
		fds[n] = (int)syscall(SYS_perf_event_open, &a, dir, cpu, -1,
				      PERF_FLAG_PID_CGROUP |
					      PERF_FLAG_FD_CLOEXEC);
		cr_assert_geq(fds[n], 0, "raw cgroup event: %s",
			      strerror(errno));
		n++;
	}
	close(dir);
	return n;
}

uint64_t cg_raw_sum(const int *fds, int n)
{
	uint64_t sum = 0, v[3];

	for (int i = 0; i < n; i++) {
		raw_read(fds[i], v);
		sum += v[0];
	}
	return sum;
}

struct cg_twin cg_twin_open(const char *abs, uint64_t config)
{
	struct cg_twin t = {.nswitch = 0};

	t.n = cg_raw_open(abs, config, t.fds, CG_TWIN_CPUS);
	if (config == PERF_COUNT_SW_TASK_CLOCK ||
	    config == PERF_COUNT_SW_CPU_CLOCK)
		t.nswitch = cg_raw_open(abs, PERF_COUNT_SW_CONTEXT_SWITCHES,
					t.switch_fds, CG_TWIN_CPUS);
	/* The switches first: each switch of the clock's window is in
	 * theirs. */
	for (int i = 0; i < t.nswitch; i++)
		raw_enable(t.switch_fds[i]);
	for (int i = 0; i < t.n; i++)
		raw_enable(t.fds[i]);
	return t;
}

void cg_twin_disable(struct cg_twin *t)
{
	for (int i = 0; i < t->n; i++)
		raw_disable(t->fds[i]);
	for (int i = 0; i < t->nswitch; i++)
		raw_disable(t->switch_fds[i]);
}

uint64_t cg_twin_read(const struct cg_twin *t)
{
	uint64_t sum = 0, v[3];

	for (int i = 0; i < t->n; i++) {
		raw_read(t->fds[i], v);
		/* Software events are never multiplexed: a scaled twin
		 * would be an estimate, not a measurement. */
		cr_expect_eq(v[1], v[2], "twin on CPU %d ran %llu of %llu ns",
			     i, (unsigned long long)v[2],
			     (unsigned long long)v[1]);
		sum += v[0];
	}
	return sum;
}

uint64_t cg_twin_switches(const struct cg_twin *t)
{
	return cg_raw_sum(t->switch_fds, t->nswitch);
}

void cg_twin_close(struct cg_twin *t)
{
	for (int i = 0; i < t->n; i++)
		close(t->fds[i]);
	for (int i = 0; i < t->nswitch; i++)
		close(t->switch_fds[i]);
	t->n = t->nswitch = 0;
}

void cg_expect_twin(uint64_t counted, uint64_t twin, double pct,
		    const char *what)
{
	cg_expect_twin_bound(counted, 0, twin, pct, what);
}

/* The bound as a share of the count, for the logs. */
static double bound_pct(uint64_t bound, uint64_t counted)
{
	return counted ? 100.0 * (double)bound / (double)counted : 0;
}

double cg_bpf_clock_pct(uint64_t twin_clock, uint64_t twin_switches)
{
	double per_switch = twin_clock ? 100 * CG_BPF_SWITCH_NS *
						 (double)twin_switches /
						 (double)twin_clock
				       : 0;

	return per_switch > CG_BPF_CLOCK_PCT ? per_switch : CG_BPF_CLOCK_PCT;
}

double cg_twin_bpf_pct(const struct cg_twin *t, uint64_t twin_clock)
{
	return cg_bpf_clock_pct(twin_clock, cg_twin_switches(t));
}

void cg_expect_twin_bound(uint64_t counted, uint64_t bound, uint64_t twin,
			  double pct, const char *what)
{
	double tol = pct / 100.0 * (under_valgrind ? 10 : 1) * (double)twin;
	double c = (double)counted, t = (double)twin;
	double dev = twin ? (c - t) / t : (double)(counted != 0);

	if (bound)
		cr_log_info("deviation %s: %+.3f%% (%llu vs %llu, tolerance "
			    "%.3f%%), bound %llu (%.3f%% of the count)",
			    what, 100 * dev, (unsigned long long)counted,
			    (unsigned long long)twin, pct,
			    (unsigned long long)bound,
			    bound_pct(bound, counted));
	else
		cr_log_info("deviation %s: %+.3f%% (%llu vs %llu, tolerance "
			    "%.3f%%)",
			    what, 100 * dev, (unsigned long long)counted,
			    (unsigned long long)twin, pct);
	cr_expect(c <= t + tol,
		  "%s: %llu is %+.3f%% from its twin's %llu, above it by more "
		  "than the tolerance (%.2f%%)",
		  what, (unsigned long long)counted, 100 * dev,
		  (unsigned long long)twin, pct * (under_valgrind ? 10 : 1));
	cr_expect(c + (double)bound + tol >= t,
		  "%s: %llu is %+.3f%% from its twin's %llu, below it by more "
		  "than its bound %llu and the tolerance (%.2f%%)",
		  what, (unsigned long long)counted, 100 * dev,
		  (unsigned long long)twin, (unsigned long long)bound,
		  pct * (under_valgrind ? 10 : 1));
}

void cg_expect_count_bound(uint64_t counted, uint64_t bound, uint64_t twin,
			   uint64_t slack, const char *what)
{
	cr_log_info("deviation %s: %+lld (%llu vs %llu), bound %llu", what,
		    (long long)(counted - twin), (unsigned long long)counted,
		    (unsigned long long)twin, (unsigned long long)bound);
	cr_expect_leq(counted, twin + slack,
		      "%s: %llu, above its twin's %llu by more than %llu", what,
		      (unsigned long long)counted, (unsigned long long)twin,
		      (unsigned long long)slack);
	cr_expect_geq(counted + bound + slack, twin,
		      "%s: %llu, below its twin's %llu by more than its bound "
		      "%llu and %llu",
		      what, (unsigned long long)counted,
		      (unsigned long long)twin, (unsigned long long)bound,
		      (unsigned long long)slack);
}

void cg_expect_covers(uint64_t counted, uint64_t own, const char *what)
{
	cr_log_info(
		"%s: counted %llu ns, the child's own clock %llu ns (%+.3f%%)",
		what, (unsigned long long)counted, (unsigned long long)own,
		own ? 100.0 * ((double)counted - (double)own) / (double)own
		    : 0);
	cr_expect_geq(counted, own,
		      "%s: counted %llu ns, less than the %llu ns the child "
		      "ran by its own clock",
		      what, (unsigned long long)counted,
		      (unsigned long long)own);
}

void cg_expect_between(uint64_t x, uint64_t lo, uint64_t hi, double pct,
		       const char *what)
{
	cg_expect_between_bound(x, 0, lo, hi, pct, what);
}

void cg_expect_between_bound(uint64_t x, uint64_t bound, uint64_t lo,
			     uint64_t hi, double pct, const char *what)
{
	double tol = pct / 100.0 * (under_valgrind ? 10 : 1);
	double below = (double)lo * (1 - tol), above = (double)hi * (1 + tol);

	cr_log_info(
		"deviation %s: %llu in [%llu, %llu] (%+.3f%% below, %+.3f%% "
		"above, tolerance %.3f%%), bound %llu (%.3f%% of the count)",
		what, (unsigned long long)x, (unsigned long long)lo,
		(unsigned long long)hi,
		lo ? 100 * ((double)x - (double)lo) / (double)lo : 0,
		hi ? 100 * ((double)x - (double)hi) / (double)hi : 0, pct,
		(unsigned long long)bound, bound_pct(bound, x));
	cr_expect((double)x + (double)bound >= below && (double)x <= above,
		  "%s: %llu (bound %llu) is not within %.2f%% of [%llu, %llu]",
		  what, (unsigned long long)x, (unsigned long long)bound,
		  tol * 100, (unsigned long long)lo, (unsigned long long)hi);
}

void cg_wait_for(bool (*cond)(void *arg), void *arg, const char *what)
{
	const struct timespec pause = {0, 1000000};
	uint64_t deadline = wall_ns() + 30000000000ull;
	bool held;

	while (!(held = cond(arg)) && wall_ns() < deadline)
		nanosleep(&pause, NULL);
	cr_assert(held, "still waiting after 30 s: %s", what);
}

void drop_capability(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];

	cr_assert_eq(syscall(SYS_capget, &hdr, data), 0);
	data[CAP_TO_INDEX(cap)].effective &= ~CAP_TO_MASK(cap);
	cr_assert_eq(syscall(SYS_capset, &hdr, data), 0, "capset: %s",
		     strerror(errno));
}

void drop_dac_read_search(void)
{
	drop_capability(CAP_DAC_READ_SEARCH);
}
