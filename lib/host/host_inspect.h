/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Host domains as an operator sees them (shpmu-host, and tests): what a
 * domain counts and who uses it, and removing one that no live process
 * uses. Nothing here joins a domain.
 */
#ifndef SHPMU_HOST_INSPECT_H
#define SHPMU_HOST_INSPECT_H

#include <stdbool.h>
#include <stdint.h>

#include "host/books.h"

struct host_view_user {
	uint64_t id;
	int32_t pid;
	char comm[16];
	uint64_t start_time; /* clock ticks after boot */
	bool alive;	     /* holds its lock */
	uint32_t refs;	     /* kernel events it counts through the domain */
};

struct host_view {
	bool complete; /* its books are pinned (else a maker died early) */
	uint32_t nr_cpus, max_slots;
	struct books_event events[MAX_EVENTS]; /* state EVENT_FREE: none */
	uint32_t perf_events;		       /* held: CPUs of live events */
	uint32_t nslots;
	struct books_slot *slots; /* the counted ones */
	uint32_t nusers;
	struct host_view_user *users;
};

/* Calls cb with each domain under bpffs_dir of this build's layout; 0,
 * cb's non-zero return, or -errno. */
int host_list_domains(const char *bpffs_dir,
		      int (*cb)(const char *domain, void *arg), void *arg);

/* Where the functions below say why they refused a domain: a callback
 * as shpmu_opts.log (NULL: nowhere). */
typedef void (*host_log_fn)(int level, const char *msg, void *arg);

/* A snapshot of domain, read under its lock once every pin checks out:
 * 0, -ENOENT, -EPROTO (a pin is not what this build makes), or -errno. */
int host_view_read(const char *bpffs_dir, const char *domain, host_log_fn log,
		   struct host_view *out);
void host_view_free(struct host_view *v);

/* Removes domain if no live process uses it: 0, -EBUSY (one does),
 * -ENOENT, or -errno. A domain whose pins do not check out is removed
 * too, once no process holds a user lock in it. */
int host_remove(const char *bpffs_dir, const char *domain, host_log_fn log);

/* Checks every pin and the books of domain, then reclaims what its dead
 * users left, as the next member's change would: 0, -EPROTO (a pin or
 * the books do not check out: nothing to repair from; or the domain is
 * incomplete), -EIO (the repair could not finish), -ENOENT, or -errno. */
int host_repair(const char *bpffs_dir, const char *domain, host_log_fn log);

#endif
