// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Who is alive among a domain's users. Each context that joins holds an
 * open file description lock (F_OFD_SETLK) for reading on byte <index>
 * of the directory users/, through its own descriptor of it: the kernel
 * drops it when the process dies or execs, whatever pid namespace it
 * lives in and however its pid is reused. A forked child closes its copy
 * of that descriptor (host_lock.h), so that it does not keep a dead
 * parent's entry alive. Another context, in this process or another,
 * sees the lock with F_OFD_GETLK through its own descriptor: one system
 * call per user, and one descriptor per context whatever the number of
 * users. A context's own lock is invisible to its own descriptor, so
 * this process's users are told by the process token instead.
 */
#include "host/host_private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/process.h"
#include "core/task.h"
#include "host/host.h"
#include "host/host_lock.h"
#include "host/host_step.h"
#include "sys/sys.h"

/* users/, opened once per context, never through a symlink (root's
 * operator tools work in other uids' domains, whose members could plant
 * one), and closed by a forked child. -errno on failure. */
static int open_users(struct host *h)
{
	int fd;

	if (h->users.fd >= 0)
		return h->users.fd;
	fd = sys_openat(h->pmu, h->dir_fd, "users",
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd >= 0)
		host_lock_keep_from_forks(h->pmu, &h->users, fd);
	return fd;
}

/* Bytes [first, first + n) of users/, for a lock of type. */
static struct flock users_bytes(short type, uint32_t first, uint32_t n)
{
	struct flock fl = {.l_type = type,
			   .l_whence = SEEK_SET,
			   .l_start = first,
			   .l_len = n};

	return fl;
}

/* The command and start time of this process, for operators. */
static int describe_self(struct shpmu *pmu, struct books_user *u)
{
	u->pid = getpid();
	return process_read_stat(pmu, 0, u->comm, &u->start_time);
}

int users_add(struct shpmu *pmu, struct host *h)
{
	struct books *b = h->books;
	struct flock fl;
	uint32_t i;
	int fd, err;

	for (i = 0; i < MAX_USERS && b->users[i].id; i++)
		;
	if (i == MAX_USERS) {
		pr_err(pmu,
		       "host domain %s: %d contexts have joined it, the "
		       "most it holds",
		       h->path, MAX_USERS);
		return -EUSERS;
	}
	err = fd = open_users(h);
	if (fd < 0)
		goto fail;
	host_step();
	fl = users_bytes(F_RDLCK, i, 1);
	err = sys_fcntl_lock(pmu, fd, F_OFD_SETLK, &fl);
	if (err)
		goto fail;
	memset(&b->users[i], 0, sizeof(b->users[i]));
	err = describe_self(pmu, &b->users[i]);
	if (err) {
		memset(&b->users[i], 0, sizeof(b->users[i]));
		fl = users_bytes(F_UNLCK, i, 1);
		sys_fcntl_lock(pmu, fd, F_OFD_SETLK, &fl);
		pr_err(pmu, "host domain %s: cannot read /proc/self/stat: %s",
		       h->path, strerror(-err));
		return err;
	}
	b->users[i].token = task_process_token();
	b->users[i].id = b->next_user_id++;
	h->user = i;
	h->user_id = b->users[i].id;
	return 0;
fail:
	pr_err(pmu, "host domain %s: cannot lock its byte %u of users/: %s",
	       h->path, i, strerror(-err));
	return err;
}

void users_remove(struct host *h)
{
	struct flock fl = users_bytes(F_UNLCK, h->user, 1);

	sys_fcntl_lock(h->pmu, h->users.fd, F_OFD_SETLK, &fl);
	memset(&h->books->users[h->user], 0, sizeof(h->books->users[h->user]));
}

/* Whether another open file description than ours holds a lock on
 * bytes [first, first + n) of users/: 1 or 0, or -errno when it cannot be
 * asked. A users/ that is gone has lost its holders. */
static int bytes_locked(struct host *h, uint32_t first, uint32_t n)
{
	struct flock fl = users_bytes(F_WRLCK, first, n);
	int fd = open_users(h), err;

	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	err = sys_fcntl_lock(h->pmu, fd, F_OFD_GETLK, &fl);
	if (err)
		return err;
	return fl.l_type != F_UNLCK;
}

/* For operators: one that cannot be asked is given the benefit of the
 * doubt. */
bool users_alive(struct host *h, uint32_t i)
{
	return h->books->users[i].id &&
	       (h->books->users[i].token == task_process_token() ||
		bytes_locked(h, i, 1) != 0);
}

int users_reap(struct shpmu *pmu, struct host *h)
{
	struct books *b = h->books;
	uint64_t token = task_process_token();
	bool dead[MAX_USERS] = {false};
	int any = 0;

	/* Every user asked before any is cleared: a failure changes
	 * nothing. */
	for (uint32_t i = 0; i < MAX_USERS; i++) {
		int locked;

		if (!b->users[i].id || b->users[i].token == token)
			continue;
		locked = bytes_locked(h, i, 1);
		if (locked < 0) {
			pr_err(pmu,
			       "host domain %s: cannot tell whether user %llu "
			       "lives: %s",
			       h->path, (unsigned long long)b->users[i].id,
			       strerror(-locked));
			return locked;
		}
		dead[i] = !locked;
	}
	for (uint32_t i = 0; i < MAX_USERS; i++) {
		if (!dead[i])
			continue;
		pr_info(pmu,
			"host domain %s: user %llu (pid %d, %.16s) is gone: "
			"reclaiming its refs",
			h->path, (unsigned long long)b->users[i].id,
			b->users[i].pid, b->users[i].comm);
		memset(&b->users[i], 0, sizeof(b->users[i]));
		any = 1;
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
	return bytes_locked(h, 0, MAX_USERS) != 0;
}
