// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/task.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys/sys.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* include/uapi/linux/pidfd.h, Linux 6.9 */
#endif

/* The calling thread's tid and identity, found once per thread: a thread
 * counting itself then costs no syscall. A fork copies them into a child
 * whose tid differs, so the child forgets them (pthread_atfork). */
static __thread struct {
	pid_t tid;
	int64_t ino;
	int64_t ino_tid; /* the tid ino was found for */
} self __attribute__((tls_model("initial-exec")));

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
_Atomic uint64_t task_forks;

/* This process's token: drawn at first use, forgotten by a fork. */
static _Atomic uint64_t process_token;

static void forget_self(void)
{
	self.tid = 0;
	self.ino_tid = 0;
	task_forks++;
	process_token = 0;
}

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, forget_self);
}

uint64_t task_fork_generation(void)
{
	pthread_once(&atfork_once, register_atfork);
	return task_forks;
}

pid_t task_self(void)
{
	if (!self.tid) {
		pthread_once(&atfork_once, register_atfork);
		self.tid = gettid();
	}
	return self.tid;
}

/* *told: whether the answer stands (not a failure that may pass). */
static int64_t lookup(struct shpmu *pmu, pid_t tid, bool *told)
{
	struct stat st;
	int64_t ino = 0;
	int fd;

	fd = sys_pidfd_open(pmu, tid, PIDFD_THREAD);
	if (fd < 0) {
		/* EINVAL: a kernel without PIDFD_THREAD, ENOSYS: one without
		 * pidfd_open (or valgrind), which never can. */
		*told = fd == -ESRCH || fd == -EINVAL || fd == -ENOSYS;
		return fd == -ESRCH ? -ESRCH : 0;
	}
	*told = sys_fstat(pmu, fd, &st) == 0;
	if (*told)
		ino = (int64_t)st.st_ino;
	sys_close(pmu, fd);
	return ino;
}

int64_t task_identity(struct shpmu *pmu, pid_t tid)
{
	bool told;

	if (tid != task_self())
		return lookup(pmu, tid, &told);
	/* Kept once told: a lookup that failed is asked again. */
	if (self.ino_tid != tid) {
		self.ino = lookup(pmu, tid, &told);
		if (told)
			self.ino_tid = tid;
	}
	return self.ino;
}

uint64_t task_process_token(void)
{
	uint64_t token = process_token, drawn = 0;

	if (token)
		return token;
	pthread_once(&atfork_once, register_atfork);
	/* Never 0; a failed draw still differs between processes. */
	while (!drawn)
		if (getrandom(&drawn, sizeof(drawn), 0) != sizeof(drawn))
			drawn = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);
	/* Two threads drawing at once agree on the first. */
	if (!atomic_compare_exchange_strong(&process_token, &token, drawn))
		return token;
	return drawn;
}
