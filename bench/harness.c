// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void figure_set(struct figure *f, const double *samples, int n)
{
	double s[64];

	memcpy(s, samples, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	f->min = s[0];
	f->max = s[n - 1];
	f->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

void figure_skip(struct figure *f, const char *why)
{
	f->skipped = true;
	snprintf(f->note, sizeof(f->note), "%s", why);
}

double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

struct perf_event_attr bench_attr(uint64_t config, bool disabled)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = config;
	a.disabled = disabled;
	a.read_format =
		PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return a;
}

int raw_open(uint64_t config, int pid, int cpu, int group_fd)
{
	struct perf_event_attr a = bench_attr(config, false);

	return (int)syscall(SYS_perf_event_open, &a, pid, cpu, group_fd,
			    PERF_FLAG_FD_CLOEXEC);
}

int online_cpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

void die(const char *what, int err)
{
	fprintf(stderr, "shpmu-bench: %s: %s\n", what, strerror(err));
	exit(1);
}

const char *beside(const char *name)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 64);
	char *slash;

	if (n <= 0 || strlen(name) > 60)
		return name;
	path[n] = '\0';
	slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, name);
	return path;
}

int perf_fds_of(pid_t pid)
{
	char dir[64], link[PATH_MAX + 64], target[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		ssize_t len;

		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = '\0';
			n += !strcmp(target, "anon_inode:[perf_event]");
		}
	}
	closedir(d);
	return n;
}

void attach_on_each_cpu(int prog, uint64_t config, int *fds)
{
	struct perf_event_attr a = {.size = sizeof(a),
				    .type = PERF_TYPE_SOFTWARE,
				    .config = config,
				    .sample_period = 1};

	for (int cpu = 0; cpu < online_cpus(); cpu++) {
		fds[cpu] = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1,
					PERF_FLAG_FD_CLOEXEC);
		if (fds[cpu] < 0)
			die("perf_event_open (sampling each switch)", errno);
		if (ioctl(fds[cpu], PERF_EVENT_IOC_SET_BPF, prog))
			die("PERF_EVENT_IOC_SET_BPF", errno);
	}
}
