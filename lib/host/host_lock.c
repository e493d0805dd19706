// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "host/host_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"

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
		close(l->fd);
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
static void name_holder(int fd, char *buf, size_t len)
{
	char line[256], comm[64] = "gone: a child it forked without "
				   "O_CLOEXEC may hold a copy";
	unsigned int maj, min;
	unsigned long long ino;
	struct stat st;
	int pid = 0;
	FILE *f;

	snprintf(buf, len, "a process this one cannot see");
	if (fstat(fd, &st) || !(f = fopen("/proc/locks", "re")))
		return;
	while (!pid && fgets(line, sizeof(line), f))
		if (!strstr(line, "->") &&
		    sscanf(line, "%*d: FLOCK %*s %*s %d %x:%x:%llu", &pid, &maj,
			   &min, &ino) == 4 &&
		    !(ino == st.st_ino && maj == major(st.st_dev) &&
		      min == minor(st.st_dev)))
			pid = 0;
	fclose(f);
	if (pid <= 0)
		return;
	snprintf(line, sizeof(line), "/proc/%d/comm", pid);
	f = fopen(line, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
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
	fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Known to a fork from now on, before it is locked: a child forked
	 * while we wait must not keep a copy that becomes the holder. */
	l->fd = fd;
	remember(l);
	/* Polled: flock() itself has no timeout, and a signal to end it
	 * would be the whole process's. Short pauses, so that a long waiter
	 * is not always beaten by newcomers. */
	while (flock(fd, op | LOCK_NB)) {
		struct timespec pause = {0, pause_ns};
		int err = -errno;

		if (err == -EWOULDBLOCK || err == -EINTR) {
			if (now_ms() < deadline) {
				nanosleep(&pause, NULL);
				if (pause_ns < 1000000)
					pause_ns *= 2;
				continue;
			}
			name_holder(fd, holder, sizeof(holder));
			pr_err(pmu,
			       "host domain %s: its lock is held by %s: gave "
			       "up after %u ms (opts.lock_timeout_ms)",
			       path, holder, timeout_ms);
			err = -ETIMEDOUT;
		}
		forget(l);
		close(fd);
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
	flock(l->fd, LOCK_UN);
	close(l->fd);
	l->fd = -1;
	log_release();
}

void host_lock_keep_from_forks(struct host_lock *l, int fd)
{
	pthread_once(&atfork_once, register_atfork);
	l->fd = fd;
	remember(l);
}

void host_lock_close(struct host_lock *l)
{
	if (l->fd < 0)
		return;
	forget(l);
	close(l->fd);
	l->fd = -1;
}
