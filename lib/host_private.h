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

#include "books.h"

struct shpmu;
struct counted;

struct host {
	char *path;   /* the domain directory */
	int dir_fd;   /* it: flock()ed for changes */
	bool joining; /* the lock is held from the start to the end */
	int refs_fd;  /* map_refs */
	struct books *books;
	size_t books_len;
	/* What the books were checked to hold when mapped, kept here: the
	 * fields themselves can be rewritten at any time. */
	uint32_t max_slots, nr_cpus;
	uint32_t user;	  /* our entry in books->users */
	uint64_t user_id; /* its id */
	int user_fd;	  /* users/<user>, which we hold a lock on */
	/* Other users' directories, kept open to check their locks. */
	int lock_fds[MAX_USERS];
	uint64_t lock_ids[MAX_USERS];
};

/* host.c. A domain's host for bpffs_dir and domain, holding nothing yet;
 * layout receives its layout directory. */
struct host *host_alloc(const char *bpffs_dir, const char *domain, char *layout,
			size_t layout_len);
/* Lets go of everything this process holds of the domain (c: its
 * program, or NULL); unlock: give the lock back first (never in a forked
 * child: the lock it has a copy of may be its parent's, held now). */
void host_release(struct host *h, struct counted *c, bool unlock);
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
void pins_remove(struct host *h);
/* Whether the domain is complete: its books are pinned. */
bool pins_complete(const struct host *h);

/* host_users.c */
int users_add(struct shpmu *pmu, struct host *h);
void users_remove(struct host *h);
/* Whether user entry i is in use by a live context. */
bool users_alive(struct host *h, uint32_t i);
/* Clears the entries of users that died; true if there were any. */
bool users_reap(struct shpmu *pmu, struct host *h);
uint32_t users_count(const struct host *h);
/* For a domain whose books cannot be trusted: whether a live process
 * holds the lock of any users/<index> directory; when none does, those
 * directories are removed. */
bool users_live_on_disk(struct host *h);
void users_close_cache(struct host *h);

/* host_fsck.c: after users_reap, or with the books found dirty: drops
 * every ref of a user not in the books, recounts the refs of events and
 * slots, and frees those with none and whatever a change left half
 * made. */
void host_fsck(struct shpmu *pmu, struct host *h, struct counted *c);

#endif
