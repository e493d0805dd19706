// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A fixed workload for comparing counters: workload CPU_MS SLEEPS PAGES
 * burns CPU_MS of CPU time, sleeps SLEEPS times (a context switch each,
 * unless the sleep ends before the switch away: a vCPU held up by its host
 * past a 100 us timer) and touches PAGES fresh pages (a page fault each).
 * With WORKLOAD_COUNT_SLEEPS set it prints to stderr how many switches a
 * raw context-switches event on itself counted over its sleeps: the
 * kernel's count of them, which a test can bound a tool's count by. */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A raw context-switches event on this thread, counting from now. */
static int open_switches(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

int main(int argc, char **argv)
{
	double until;
	long page = sysconf(_SC_PAGESIZE);
	int sleeps, pages, switches_fd = -1;
	unsigned long long switches;
	struct timespec nap = {0, 100000};
	volatile unsigned long x = 0;
	char *p;

	if (argc != 4)
		return 2;
	until = cpu_s() + atoi(argv[1]) / 1000.0;
	sleeps = atoi(argv[2]);
	pages = atoi(argv[3]);
	while (cpu_s() < until)
		for (int i = 0; i < 10000; i++)
			x += (unsigned long)i;
	if (getenv("WORKLOAD_COUNT_SLEEPS")) {
		switches_fd = open_switches();
		if (switches_fd < 0)
			return 1;
	}
	for (int i = 0; i < sleeps; i++)
		nanosleep(&nap, NULL);
	if (switches_fd >= 0) {
		if (read(switches_fd, &switches, sizeof(switches)) !=
		    sizeof(switches))
			return 1;
		fprintf(stderr, "sleep switches: %llu\n", switches);
		close(switches_fd);
	}
	p = mmap(NULL, (size_t)pages * (size_t)page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	madvise(p, (size_t)pages * (size_t)page, MADV_NOHUGEPAGE);
	for (int i = 0; i < pages; i++)
		p[(size_t)i * (size_t)page] = 1;
	return 0;
}
