/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Host scope: a context's membership of a domain, the state that every
 * process of the host that joins the domain shares through the BPF
 * filesystem:
 *
 *   <bpffs dir>/layout-N/              mode 01777 when made here
 *   <bpffs dir>/layout-N/<domain>/     mode 0700, its maker's uid
 *       prog, link_switch, link_move   the counter program, attached
 *       link_fork, link_tick           (link_tick where the kernel has
 *                                      hrtimer_expire_entry)
 *       map_events, map_slots, map_bss, map_views, map_totals
 *                                      its maps (bpf/prog/state.bpf.h)
 *       map_books                      the books (books.h), mmapable
 *       map_refs                       (user id, event, slot) -> refs
 *       users/                         each joined context holds a lock
 *                                      on its byte <index> while it lives
 *
 * Changes are serialized by flock() on the domain directory (host_lock.h:
 * bounded waits; a fork's copies closed in the child), which the kernel
 * releases when its holder dies. The directories are opened as host_dirs.h
 * says. A context that dies is found by the next one to take that lock (its
 * user directory is no longer locked), and its refs are reclaimed; so
 * are the leftovers of a change it was making (the books' dirty mark).
 * The last context to leave an emptied domain removes every pinned
 * object and directory.
 */
#ifndef SHPMU_HOST_H
#define SHPMU_HOST_H

#include <stdbool.h>
#include <stdint.h>

struct shpmu;
struct counted;
struct host;

/* The default bpffs directory and domain of host scope. */
#define HOST_DEFAULT_DIR    "/sys/fs/bpf/shpmu"
#define HOST_DEFAULT_DOMAIN "default"

/* Joins domain under bpffs_dir, making it if it is new: c->prog and
 * c->books then serve the domain. 0, or -errno logged with what is
 * missing: -ENOENT (no BPF filesystem there), -EPERM (no CAP_BPF and
 * CAP_PERFMON), -EACCES (another uid's domain, or a directory on the way
 * another uid could change), -ELOOP (a symlink on the way), -EINVAL (a
 * bad domain name), -EPROTO (pinned state this build does not
 * understand), -EUSERS (the domain is full), -EOPNOTSUPP (the program
 * cannot load here), -ETIMEDOUT (the lock was held too long), -EAGAIN
 * (the domain was removed each time it was opened). */
int host_join(struct shpmu *pmu, const char *bpffs_dir, const char *domain,
	      bool ipi_hook, struct counted *c, struct host **out);

/* Leaves the domain (every ref of this context already given back, or
 * reclaimed now); the last to leave removes it. In a forked child, only
 * lets go of this process's copies. */
void host_leave(struct shpmu *pmu, struct host *h, struct counted *c);

/* Takes the domain's lock for a change of the books, checks them
 * (books_check.h) and reclaims what dead users left. host_end() gives it
 * back. -EPROTO, with the lock given back and a message, when the books
 * do not check out; -ETIMEDOUT, with a message, when the lock was held
 * longer than the context's bound. */
int host_begin(struct shpmu *pmu, struct host *h, struct counted *c);
void host_end(struct host *h, struct counted *c);

/* Records (delta > 0) or drops this context's ref on event e and slot s
 * (UINT32_MAX for a CPU target). 0 or -errno: -ENOSPC, with a message,
 * past this member's share (host_quota.h). */
int host_ref(struct shpmu *pmu, struct host *h, uint32_t e, uint32_t s,
	     int delta);
/* A ref on slot s this context lets go of without the lock (a close that
 * timed out): out of its quota now, out of the domain when it leaves. */
void host_ref_forgotten(struct host *h, uint32_t s);

#endif
