/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which task a tid names. A tid is reused once its thread exits, and a
 * kernel event opened for the old thread counts nothing for the new one,
 * so a task event is shared only with requests for the same thread. The
 * thread's pidfs inode number tells: it is unique for the system's
 * lifetime (Linux 6.9 and later, pidfd_open with PIDFD_THREAD).
 */
#ifndef SHPMU_TASK_H
#define SHPMU_TASK_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

struct shpmu;

/* The calling thread's tid, without a syscall after the first call. */
pid_t task_self(void);

/* How many forks this process is from the one that loaded us: a context
 * remembers it, and refuses calls from a forked child, whose fds are
 * copies sharing the parent's kernel events. */
uint64_t task_fork_generation(void);

/* The same, without making sure the fork hook is in place: for hot paths
 * of a context, whose shpmu_new() called task_fork_generation(). */
extern _Atomic uint64_t task_forks;
static inline uint64_t task_fork_generation_now(void)
{
	return atomic_load_explicit(&task_forks, memory_order_relaxed);
}

/* A random token of this process, the same in all its threads and new in
 * a forked child: host scope tells its own process's users by it, whose
 * locks its lock checks cannot see. */
uint64_t task_process_token(void);

/* The identity of thread tid now: its pidfs inode, 0 where the kernel
 * cannot tell (then nothing is compared), or -ESRCH if it is gone. */
int64_t task_identity(struct shpmu *pmu, pid_t tid);

#endif
