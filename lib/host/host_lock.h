/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A host domain's lock: flock() on the domain directory, through a fd
 * opened for each hold. A wait for it is bounded. A fork never carries it
 * past its holder: the child closes its copies of the fds held at the
 * fork (pthread_atfork), and an exec closes them (O_CLOEXEC). While it is
 * held, this thread's log messages wait (log.h), so that no caller's
 * logger runs with the whole domain stopped behind it.
 */
#ifndef SHPMU_HOST_LOCK_H
#define SHPMU_HOST_LOCK_H

#include <stdbool.h>

struct shpmu;

struct host_lock {
	int fd;		   /* -1 while not held */
	struct shpmu *pmu; /* whose syscall layer: the taker's */
	struct host_lock *prev, *next;
};

/* How long a wait lasts when the caller does not say. */
#define HOST_LOCK_TIMEOUT_MS 5000
/* For tests: when non-zero, that default instead (valgrind runs every
 * holder tens of times slower). */
extern unsigned int shpmu__host_lock_timeout_ms;

/* Takes the lock on the directory dir_fd (op: LOCK_SH to look, LOCK_EX to
 * change), waiting at most timeout_ms: 0, or -ETIMEDOUT with a message
 * naming path and, where this process can see it, the holder. */
int host_lock_take(struct shpmu *pmu, struct host_lock *l, int dir_fd, int op,
		   unsigned int timeout_ms, const char *path);
/* Gives it back, then passes on the messages held back meanwhile. */
void host_lock_drop(struct host_lock *l);

/* Keeps fd in l, to be closed by a forked child as a held lock's is (an
 * fd whose open file description holds locks of its own). */
void host_lock_keep_from_forks(struct shpmu *pmu, struct host_lock *l, int fd);
/* Closes what host_lock_keep_from_forks kept (nothing if l->fd < 0). */
void host_lock_close(struct host_lock *l);

#endif
