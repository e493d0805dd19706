// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cg_burn CGROUP_DIR MS: moves itself into the cgroup, then burns MS
 * milliseconds of its own task-clock, measured from just after the move
 * by a raw perf event on itself, and prints that count (ns): the CPU time
 * it spent inside the cgroup, for tests to compare a cgroup's count with.
 */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint64_t task_clock(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		exit(3);
	return v;
}

int main(int argc, char **argv)
{
	struct perf_event_attr attr = {.size = sizeof(attr),
				       .type = PERF_TYPE_SOFTWARE,
				       .config = PERF_COUNT_SW_TASK_CLOCK};
	char procs[4096];
	volatile uint64_t spin = 0;
	uint64_t want;
	FILE *f;
	int fd;

	if (argc != 3)
		return 2;
	want = strtoull(argv[2], NULL, 10) * 1000000;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", argv[1]);
	f = fopen(procs, "w");
	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f)) {
		perror(procs);
		return 1;
	}
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		perror("perf_event_open");
		return 1;
	}
	while (task_clock(fd) < want)
		for (int i = 0; i < 100000; i++)
			spin += (uint64_t)i;
	printf("%llu\n", (unsigned long long)task_clock(fd));
	return 0;
}
