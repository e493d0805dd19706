/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the files of host scope share (host.c: joining and leaving;
 * host_pins.c: the pinned objects; host_users.c: who is alive;
 * host_fsck.c: reclaiming what the dead left).
 */
#ifndef SHPMU_HOST_PRIVATE_H
#define SHPMU_HOST_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/books.h"
#include "host/host_lock.h"
#include "host/host_quota.h"

struct shpmu;
struct counted;

struct host {
	struct shpmu *pmu;    /* whose syscall layer (NULL: the kernel's) */
	char *path;	      /* the domain directory, for messages */
	const char *domain;   /* its last component (in path) */
	char layout_name[24]; /* layout-N */
	char *layout_path;    /* bpffs_dir/layout-N, for messages */
	/* bpffs_dir, layout-N and the domain, opened as host_dirs.h says:
	 * every name below is looked up from them, never from a path. */
	int bpffs_fd, layout_fd, dir_fd;
	struct host_lock lock; /* the domain's: held for changes */
	unsigned int lock_timeout_ms;
	bool joining; /* the lock is held from the start to the end */
	bool made;    /* this join made the domain's pins */
	int refs_fd;  /* map_refs */
	struct books *books;
	size_t books_len;
	/* What the books were checked to hold when mapped, kept here: the
	 * fields themselves can be rewritten at any time. */
	uint32_t max_slots, nr_cpus;
	uint32_t user;		 /* our entry in books->users */
	uint64_t user_id;	 /* its id */
	struct host_lock users;	 /* users/, our byte of it locked */
	struct host_quota quota; /* what this member holds, and may */
};

/* host.c. A domain's host for bpffs_dir and domain, holding nothing yet;
 * its calls go through pmu's syscall layer. */
struct host *host_alloc(struct shpmu *pmu, const char *bpffs_dir,
			const char *domain);
/* Lets go of everything this process holds of the domain (c: its
 * program, or NULL), the lock first. */
void host_release(struct host *h, struct counted *c);
/* Opens the domain directory (h->bpffs_fd open) and takes its lock with
 * op (LOCK_SH to look, LOCK_EX to change). A member makes what is
 * missing, requires the domain to be its uid's, and tries again if the
 * last user removed it meanwhile; an operator (not a member) gets
 * -ENOENT then. 0 or -errno with a message. */
int host_open_locked(struct shpmu *pmu, struct host *h, bool member, int op);
/* Closes *fd if open, and marks it closed. */
void close_fd(struct shpmu *pmu, int *fd);
/* Removes an emptied domain: its pins, then its directories. */
void host_remove_domain(struct host *h);
/* A domain name is one path component of letters, digits, '_', '-' and
 * '.', not starting with '.'. */
bool host_domain_name_ok(const char *d);

/* A ref's key in map_refs. */
struct host_ref_key {
	uint64_t user;
	uint32_t event;
	uint32_t slot; /* UINT32_MAX: a CPU target */
};

#define HOST_MAX_REFS (1u << 20)

/* host_pins.c. The names of the pinned objects, books last: a domain
 * whose books are pinned is complete. */
int pins_create(struct shpmu *pmu, struct host *h, bool ipi_hook);
int pins_open(struct shpmu *pmu, struct host *h, struct counted *c);
/* The books and refs alone (operators: host_inspect.c). */
int pins_open_books(struct shpmu *pmu, struct host *h);
/* Whether the program's pins are what this build pins (after
 * pins_open_books): 0 or -EPROTO, with a message. */
int pins_check_program(struct shpmu *pmu, const struct host *h);
/* 0, or the first failure to remove a pin that is there. */
int pins_remove(struct host *h);
/* Whether the domain is complete (its books are pinned): 1 or 0, or
 * -errno when it cannot be told. */
int pins_complete(const struct host *h);

/* host_users.c */
int users_add(struct shpmu *pmu, struct host *h);
void users_remove(struct host *h);
/* Whether user entry i is in use by a live context. */
bool users_alive(struct host *h, uint32_t i);
/* Clears the entries of users that died: 1 if there were any, 0, or
 * -errno (nothing cleared) when one cannot be told. */
int users_reap(struct shpmu *pmu, struct host *h);
uint32_t users_count(const struct host *h);
/* For a domain whose books cannot be trusted: whether a live process
 * holds a lock on any byte of users/. */
bool users_live_on_disk(struct host *h);

/* host_fsck.c: after users_reap, or with the books found dirty: drops
 * every ref of a user not in the books, recounts the refs of events and
 * slots, and frees those with none and whatever a change left half
 * made. */
void host_fsck(struct shpmu *pmu, struct host *h, struct counted *c);

#endif
