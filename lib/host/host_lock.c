// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "host/host_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "sys/sys.h"

unsigned int shpmu__host_lock_timeout_ms;

/* The locks this process holds, for a forked child to let go of. */
static pthread_mutex_t held_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct host_lock *held;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void before_fork(void)
{
	pthread_mutex_lock(&held_mutex);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&held_mutex);
}

/* Closing the child's copy leaves the parent's hold as it is; the lock
 * ends with the parent's own close. */
static void after_fork_child(void)
{
	for (struct host_lock *l = held; l; l = l->next) {
		sys_close(l->pmu, l->fd);
		l->fd = -1;
	}
	held = NULL;
	pthread_mutex_unlock(&held_mutex);
	log_forget_held();
}

static void register_atfork(void)
{
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

static void remember(struct host_lock *l)
{
	pthread_mutex_lock(&held_mutex);
	l->prev = NULL;
	l->next = held;
	if (held)
		held->prev = l;
	held = l;
	pthread_mutex_unlock(&held_mutex);
}

static void forget(struct host_lock *l)
{
	pthread_mutex_lock(&held_mutex);
	if (l->prev)
		l->prev->next = l->next;
	else if (held == l)
		held = l->next;
	if (l->next)
		l->next->prev = l->prev;
	l->prev = l->next = NULL;
	pthread_mutex_unlock(&held_mutex);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Who holds a flock on fd's file, from /proc/locks: "pid N (comm)". */
static void name_holder(struct shpmu *pmu, int fd, char *buf, size_t len)
{
	char line[256], comm[64] = "gone: a child it forked without "
				   "O_CLOEXEC may hold a copy";
	unsigned int maj, min;
	unsigned long long ino;
	struct sys_lines *f;
	struct stat st;
	int pid = 0;
	ssize_t n;

	snprintf(buf, len, "a process this one cannot see");
	f = malloc(sizeof(*f));
	if (!f)
		return;
	if (sys_fstat(pmu, fd, &st) || sys_lines_open(pmu, f, "/proc/locks")) {
		free(f);
		return;
	}
	while (!pid && sys_lines_next(pmu, f, line, sizeof(line)) > 0)
		if (!strstr(line, "->") &&
		    sscanf(line, "%*d: FLOCK %*s %*s %d %x:%x:%llu", &pid, &maj,
			   &min, &ino) == 4 &&
		    !(ino == st.st_ino && maj == major(st.st_dev) &&
		      min == minor(st.st_dev)))
			pid = 0;
	sys_lines_close(pmu, f);
	free(f);
	if (pid <= 0)
		return;
	snprintf(line, sizeof(line), "/proc/%d/comm", pid);
	n = sys_read_file(pmu, line, line, sizeof(line));
	if (n > 0)
		snprintf(comm, sizeof(comm), "%.*s", (int)strcspn(line, "\n"),
			 line);
	snprintf(buf, len, "pid %d (%s)", pid, comm);
}

int host_lock_take(struct shpmu *pmu, struct host_lock *l, int dir_fd, int op,
		   unsigned int timeout_ms, const char *path)
{
	uint64_t deadline = now_ms() + timeout_ms;
	long pause_ns = 20000;
	char holder[160];
	int fd;

	pthread_once(&atfork_once, register_atfork);
	fd = sys_openat(pmu, dir_fd, ".", O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	/* Known to a fork from now on, before it is locked: a child forked
	 * while we wait must not keep a copy that becomes the holder. */
	l->fd = fd;
	l->pmu = pmu;
	remember(l);
	/* Polled: flock() itself has no timeout, and a signal to end it
	 * would be the whole process's. Short pauses, so that a long waiter
	 * is not always beaten by newcomers. */
	for (;;) {
		struct timespec pause = {0, pause_ns};
		int err = sys_flock(pmu, fd, op | LOCK_NB);

		if (!err)
			break;
		if (err == -EWOULDBLOCK) {
			if (now_ms() < deadline) {
				nanosleep(&pause, NULL);
				if (pause_ns < 1000000)
					pause_ns *= 2;
				continue;
			}
			name_holder(pmu, fd, holder, sizeof(holder));
			pr_err(pmu,
			       "host domain %s: its lock is held by %s: gave "
			       "up after %u ms (opts.lock_timeout_ms)",
			       path, holder, timeout_ms);
			err = -ETIMEDOUT;
		}
		forget(l);
		sys_close(pmu, fd);
		l->fd = -1;
		return err;
	}
	log_hold();
	return 0;
}

void host_lock_drop(struct host_lock *l)
{
	if (l->fd < 0)
		return;
	forget(l);
	sys_flock(l->pmu, l->fd, LOCK_UN);
	sys_close(l->pmu, l->fd);
	l->fd = -1;
	log_release();
}

void host_lock_keep_from_forks(struct shpmu *pmu, struct host_lock *l, int fd)
{
	pthread_once(&atfork_once, register_atfork);
	l->fd = fd;
	l->pmu = pmu;
	remember(l);
}

void host_lock_close(struct host_lock *l)
{
	if (l->fd < 0)
		return;
	forget(l);
	sys_close(l->pmu, l->fd);
	l->fd = -1;
}
