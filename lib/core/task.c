// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/task.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

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
		self.tid = (pid_t)syscall(SYS_gettid);
	}
	return self.tid;
}

/* pidfd_open, fstat and close of a pidfd are not perf calls, so they skip
 * the syscall layer. */
static int64_t lookup(pid_t tid)
{
	struct stat st;
	int64_t ino = 0;
	int fd;

	fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (fd < 0)
		return errno == ESRCH ? -ESRCH : 0;
	if (fstat(fd, &st) == 0)
		ino = (int64_t)st.st_ino;
	close(fd);
	return ino;
}

int64_t task_identity(pid_t tid)
{
	if (tid != task_self())
		return lookup(tid);
	if (self.ino_tid != tid) {
		self.ino = lookup(tid);
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
