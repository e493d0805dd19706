// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "helpers.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

char last_log[512];
int log_count;
bool under_valgrind;

__attribute__((constructor)) static void detect_valgrind(void)
{
	under_valgrind = getenv("SHPMU_TEST_VALGRIND") != NULL;
}

static char kept_logs[LOG_KEPT][512];

void record_log(int level, const char *msg, void *arg)
{
	(void)level;
	(void)arg;
	snprintf(last_log, sizeof(last_log), "%s", msg);
	snprintf(kept_logs[(unsigned)log_count % LOG_KEPT],
		 sizeof(kept_logs[0]), "%s", msg);
	log_count++;
}

bool logged(const char *a, const char *b)
{
	for (int i = 0; i < LOG_KEPT && i < log_count; i++)
		if (strstr(kept_logs[i], a) && (!b || strstr(kept_logs[i], b)))
			return true;
	return false;
}

struct perf_event_attr sw_attr(uint64_t config, bool disabled)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = config;
	a.disabled = disabled;
	return a;
}

/* The fd behind task_clock_ns(), which the fd counts leave out. */
static int oracle_fd = -1;

struct perf_event_attr named_attr(struct shpmu *p, const char *name)
{
	struct perf_event_attr a;
	int err = shpmu_event_attr(p, name, &a);

	cr_assert_eq(err, 0, "%s: %s (%s)", name, strerror(-err), last_log);
	return a;
}

static int count_fds_matching(const char *target)
{
	char path[300], link[256];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	cr_assert(dir, "opendir /proc/self/fd");
	while ((d = readdir(dir))) {
		ssize_t len;

		if (d->d_name[0] == '.' || atoi(d->d_name) == oracle_fd)
			continue;
		if (!target) {
			n++;
			continue;
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = '\0';
		if (strstr(link, target))
			n++;
	}
	closedir(dir);
	/* The directory stream's own fd is not ours to count. */
	return target ? n : n - 1;
}

int count_perf_fds(void)
{
	return count_fds_matching("[perf_event]");
}

int nth_perf_fd(int n)
{
	char path[64], link[128];

	for (int fd = 0; fd < 4096; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0 || fd == oracle_fd)
			continue;
		link[len] = '\0';
		if (strstr(link, "[perf_event]") && n-- == 0)
			return fd;
	}
	return -1;
}

int count_fds(void)
{
	return count_fds_matching(NULL);
}

int online_cpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

int raw_open(uint64_t config, pid_t pid, int cpu)
{
	struct perf_event_attr a = sw_attr(config, true);

	return raw_open_attr(&a, pid, cpu, 0);
}

int raw_open_attr(const struct perf_event_attr *attr, pid_t pid, int cpu,
		  unsigned long flags)
{
	struct perf_event_attr a = *attr;
	int fd;

	a.read_format =
		PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	fd = (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1,
			  flags | PERF_FLAG_FD_CLOEXEC);
	cr_assert(fd >= 0, "raw perf_event_open: %s", strerror(errno));
	return fd;
}

void raw_enable(int fd)
{
	cr_assert(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == 0);
}

void raw_disable(int fd)
{
	cr_assert(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) == 0);
}

void raw_read(int fd, uint64_t v[3])
{
	cr_assert(read(fd, v, 3 * sizeof(uint64_t)) == 3 * sizeof(uint64_t));
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t wall_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

int task_clock_open(bool disabled)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, disabled);

	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

uint64_t task_clock_read(int fd)
{
	uint64_t v;

	return read(fd, &v, sizeof(v)) == sizeof(v) ? v : 0;
}

uint64_t task_clock_ns(void)
{
	static pid_t owner;

	if (oracle_fd < 0) {
		oracle_fd = task_clock_open(false);
		owner = (pid_t)syscall(SYS_gettid);
		cr_assert_geq(oracle_fd, 0, "task-clock oracle: %s",
			      strerror(errno));
	}
	cr_assert_eq(owner, (pid_t)syscall(SYS_gettid),
		     "task_clock_ns() counts the thread that first called it");
	return task_clock_read(oracle_fd);
}

void burn_cpu_ns(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;
	volatile uint64_t x = 0;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 1000; i++)
			x += (uint64_t)i;
}

void sleep_switches(int n)
{
	struct timespec ts = {0, 20000};

	for (int i = 0; i < n; i++)
		nanosleep(&ts, NULL);
}

void touch_pages(int n)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)n * (size_t)page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert(p != MAP_FAILED);
	/* Small pages, so that each touch is exactly one fault. */
	madvise(p, (size_t)n * (size_t)page, MADV_NOHUGEPAGE);
	for (int i = 0; i < n; i++)
		p[(size_t)i * (size_t)page] = 1;
	munmap(p, (size_t)n * (size_t)page);
}

void die_with_parent(void)
{
	pid_t parent = getppid();

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent) /* it died before we asked */
		_exit(0);
}

void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	cr_assert(sched_setaffinity(0, sizeof(set), &set) == 0,
		  "pin to cpu %d: %s", cpu, strerror(errno));
}

void private_mount_namespace(void)
{
	cr_assert_eq(unshare(CLONE_NEWNS), 0, "unshare: %s", strerror(errno));
	/* The kernel ignores source and type here; valgrind wants strings. */
	cr_assert_eq(mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL), 0,
		     "mount --make-rprivate /: %s", strerror(errno));
}

/* The state letter of /proc/<tid>/stat, or 0 once the task is gone. */
static char task_state(pid_t tid)
{
	char path[64], state = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
		state = 0;
	fclose(f);
	return state;
}

void wait_until_blocked(pid_t tid)
{
	/* Generous: a child under valgrind or beside another suite may take
	 * seconds to reach its blocking call. */
	uint64_t deadline = wall_ns() + 30000000000ull;
	char state;

	while ((state = task_state(tid)) == 'R' && wall_ns() < deadline)
		sched_yield();
	cr_assert(state != 'R', "task %d still running after 30 s", (int)tid);
}
