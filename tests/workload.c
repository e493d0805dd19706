// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A fixed workload for comparing counters: workload CPU_MS SLEEPS PAGES
 * burns CPU_MS of CPU time, sleeps SLEEPS times (a context switch each)
 * and touches PAGES fresh pages (a page fault each). */
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double until;
	long page = sysconf(_SC_PAGESIZE);
	int sleeps, pages;
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
	for (int i = 0; i < sleeps; i++)
		nanosleep(&nap, NULL);
	p = mmap(NULL, (size_t)pages * (size_t)page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	madvise(p, (size_t)pages * (size_t)page, MADV_NOHUGEPAGE);
	for (int i = 0; i < pages; i++)
		p[(size_t)i * (size_t)page] = 1;
	return 0;
}
