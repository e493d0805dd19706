// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "task.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* include/uapi/linux/pidfd.h, Linux 6.9 */
#endif

/* The calling thread's identity, computed once per thread: the common
 * case (a thread counting itself) then costs no syscall beyond gettid.
 * Keyed by tid, so that a forked child does not reuse its parent's. */
static __thread struct {
	pid_t tid;
	int64_t ino;
} self;

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
	if (tid != (pid_t)syscall(SYS_gettid))
		return lookup(tid);
	if (self.tid != tid) {
		self.ino = lookup(tid);
		self.tid = tid;
	}
	return self.ino;
}
