/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Processes as /proc shows them: whether a pid names a thread-group
 * leader, and the threads a process has now.
 */
#ifndef SHPMU_PROCESS_H
#define SHPMU_PROCESS_H

#include <stdint.h>
#include <sys/types.h>

struct shpmu;

/* 0 when pid is a process (a thread-group leader), -EINVAL when it is
 * another thread of one (*tgid then says whose), -ESRCH when it is gone. */
int process_check(struct shpmu *pmu, pid_t pid, pid_t *tgid);

/* The threads of process tgid now, into a malloc'd *tids: how many, or
 * -ESRCH (gone), -ENOMEM. */
int process_threads(struct shpmu *pmu, pid_t tgid, pid_t **tids);

/* A task's command (comm, when given, 16 bytes) and its start in clock
 * ticks after boot (/proc/PID/stat field 22, task->start_boottime in
 * ticks). pid 0: this process. 0, or -ESRCH when it is gone. */
int process_read_stat(struct shpmu *pmu, pid_t pid, char *comm,
		      uint64_t *start_ticks);
/* The same through the kernel's syscall table, for lib/bpf/ until it
 * passes its context. */
int process_stat(pid_t pid, char *comm, uint64_t *start_ticks);

#endif
