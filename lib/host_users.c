// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Who is alive among a domain's users. Each context that joins holds a
 * POSIX read lock on its own directory users/<index>: the kernel drops
 * it when the process dies or execs, whatever pid namespace it lives in
 * and however its pid is reused, and a forked child does not inherit it.
 * Another process sees the lock with F_GETLK; our own process cannot see
 * its own locks, so its users are told by the process token instead.
 */
#include "host_private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host.h"
#include "host_step.h"
#include "log.h"
#include "process.h"
#include "task.h"

/* users/, never through a symlink: root's operator tools work in other
 * uids' domains, whose members could plant one. -1 with errno. */
static int open_users(const struct host *h)
{
	return openat(h->dir_fd, "users",
		      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* The name of user index's directory under users/. */
static void user_dir(uint32_t index, char *buf, size_t len)
{
	snprintf(buf, len, "%u", index);
}

static struct flock lock_of_user(short type)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_len = 1};

	return fl;
}

/* The command and start time of this process, for operators. */
static void describe_self(struct books_user *u)
{
	u->pid = getpid();
	process_stat(0, u->comm, &u->start_time);
}

int users_add(struct shpmu *pmu, struct host *h)
{
	struct books *b = h->books;
	struct flock fl = lock_of_user(F_RDLCK);
	char dir[32];
	uint32_t i;
	int fd, users, err;

	for (i = 0; i < MAX_USERS && b->users[i].id; i++)
		;
	if (i == MAX_USERS) {
		pr_err(pmu,
		       "host domain %s: %d contexts have joined it, the "
		       "most it holds",
		       h->path, MAX_USERS);
		return -EUSERS;
	}
	user_dir(i, dir, sizeof(dir));
	users = open_users(h);
	if (users < 0)
		goto fail;
	fd = mkdirat(users, dir, 0700) && errno != EEXIST
		     ? -1
		     : openat(users, dir,
			      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	err = errno;
	close(users);
	errno = err;
	if (fd < 0)
		goto fail;
	host_step();
	if (fcntl(fd, F_SETLK, &fl)) {
		close(fd);
		goto fail;
	}
	memset(&b->users[i], 0, sizeof(b->users[i]));
	describe_self(&b->users[i]);
	b->users[i].token = task_process_token();
	b->users[i].id = b->next_user_id++;
	h->user = i;
	h->user_id = b->users[i].id;
	h->user_fd = fd;
	return 0;
fail:
	err = -errno;
	pr_err(pmu, "host domain %s: cannot make and lock users/%s: %s",
	       h->path, dir, strerror(-err));
	return err;
}

static void clear_user(struct host *h, uint32_t i)
{
	char dir[32];

	int users = open_users(h);

	memset(&h->books->users[i], 0, sizeof(h->books->users[i]));
	user_dir(i, dir, sizeof(dir));
	if (users >= 0) {
		unlinkat(users, dir, AT_REMOVEDIR);
		close(users);
	}
}

void users_remove(struct host *h)
{
	/* Closing it drops the lock. */
	close(h->user_fd);
	h->user_fd = -1;
	clear_user(h, h->user);
}

/* Whether the directory name (under at_fd) is locked by a live process:
 * one that is gone has lost its holder too (an operator removed it); one
 * we cannot open or ask is given the benefit of the doubt. */
static bool dir_locked(int at_fd, const char *name)
{
	struct flock fl = lock_of_user(F_WRLCK);
	int fd = openat(at_fd, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	bool locked;

	if (fd < 0)
		return errno != ENOENT;
	locked = fcntl(fd, F_GETLK, &fl) || fl.l_type != F_UNLCK;
	close(fd);
	return locked;
}

/* Whether user i's process holds its lock. Its directory is opened for
 * each look, so that a process keeps no fd per other user (there would
 * be as many across the host as the square of the users). */
static bool holds_lock(struct host *h, uint32_t i)
{
	int users = open_users(h);
	char dir[32];
	bool held;

	if (users < 0)
		return errno != ENOENT; /* ENOENT: gone */
	user_dir(i, dir, sizeof(dir));
	held = dir_locked(users, dir);
	close(users);
	return held;
}

bool users_alive(struct host *h, uint32_t i)
{
	return h->books->users[i].id &&
	       (h->books->users[i].token == task_process_token() ||
		holds_lock(h, i));
}

bool users_reap(struct shpmu *pmu, struct host *h)
{
	struct books *b = h->books;
	uint64_t token = task_process_token();
	bool any = false;

	for (uint32_t i = 0; i < MAX_USERS; i++) {
		if (!b->users[i].id || b->users[i].token == token ||
		    holds_lock(h, i))
			continue;
		pr_info(pmu,
			"host domain %s: user %llu (pid %d, %.16s) is gone: "
			"reclaiming its refs",
			h->path, (unsigned long long)b->users[i].id,
			b->users[i].pid, b->users[i].comm);
		clear_user(h, i);
		any = true;
	}
	return any;
}

uint32_t users_count(const struct host *h)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < MAX_USERS; i++)
		n += h->books->users[i].id != 0;
	return n;
}

bool users_live_on_disk(struct host *h)
{
	int users = open_users(h);
	struct dirent *d;
	bool live = false;
	DIR *dir;

	if (users < 0)
		return errno != ENOENT;
	dir = fdopendir(users);
	if (!dir) {
		close(users);
		return true;
	}
	while (!live && (d = readdir(dir)))
		if (d->d_name[0] != '.')
			live = dir_locked(users, d->d_name);
	if (!live) {
		rewinddir(dir);
		while ((d = readdir(dir)))
			if (d->d_name[0] != '.')
				unlinkat(users, d->d_name, AT_REMOVEDIR);
	}
	closedir(dir);
	return live;
}
