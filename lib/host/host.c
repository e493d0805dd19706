// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Joining, changing and leaving a host domain (see host.h). */
#include "host/host.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "bpf/counted.h"
#include "core/env.h"
#include "core/log.h"
#include "host/books_check.h"
#include "host/host_dirs.h"
#include "host/host_layout.h"
#include "host/host_lock.h"
#include "host/host_private.h"
#include "host/host_step.h"
#include "sys/sys.h"

uint32_t shpmu__host_layout;
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective >> (cap % 32) & 1;
}

/* Host scope loads and test-runs BPF and opens CPU-wide events. */
static int check_privileges(struct shpmu *pmu)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2] = {{0}};

	int err = sys_capget(pmu, &hdr, data);

	if (err)
		return err;
	if (has_cap(data, CAP_SYS_ADMIN) ||
	    (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON)))
		return 0;
	pr_err(pmu,
	       "host scope needs CAP_BPF and CAP_PERFMON (or "
	       "CAP_SYS_ADMIN): this process has %s",
	       has_cap(data, CAP_BPF)	    ? "CAP_BPF only"
	       : has_cap(data, CAP_PERFMON) ? "CAP_PERFMON only"
					    : "neither");
	return -EPERM;
}

bool host_domain_name_ok(const char *d)
{
	size_t n = strlen(d);

	if (!n || n > 64 || d[0] == '.')
		return false;
	return strspn(d, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789_-.") == n;
}

int host_open_locked(struct shpmu *pmu, struct host *h, bool member, int op)
{
	for (int tries = 0; tries < 100; tries++) {
		int err = 0;

		if (h->layout_fd < 0)
			err = host_dirs_open_layout(
				pmu, h->bpffs_fd, h->layout_name,
				h->layout_path, member, &h->layout_fd);
		if (!err)
			err = host_dirs_open_domain(pmu, h->layout_fd,
						    h->domain, h->path, member,
						    member, &h->dir_fd);
		if (!err)
			err = host_lock_take(pmu, &h->lock, h->dir_fd, op,
					     h->lock_timeout_ms, h->path);
		if (err && (err != -ENOENT || !member))
			return err;
		if (!err) {
			err = host_dirs_still_at(pmu, h->layout_fd, h->domain,
						 h->dir_fd);
			if (err == 1)
				err = host_dirs_still_at(pmu, h->bpffs_fd,
							 h->layout_name,
							 h->layout_fd);
			if (err == 1)
				return 0;
		}
		host_lock_drop(&h->lock);
		close_fd(pmu, &h->dir_fd);
		close_fd(pmu, &h->layout_fd);
		if (err < 0 && err != -ENOENT)
			return err;
		/* Removed while we waited: one of that name now would be
		 * another domain, not the one asked for. */
		if (!member)
			return -ENOENT;
	}
	pr_err(pmu, "host domain %s: removed each time it was opened", h->path);
	return -EAGAIN;
}

/* Takes the domain's pinned state, made now if the domain is new (or a
 * maker died before finishing it). */
static int open_pins(struct shpmu *pmu, struct host *h, bool ipi_hook,
		     struct counted *c)
{
	int err = pins_complete(h);

	if (err < 0)
		return err;
	if (!err) {
		/* A maker that died left it, and no member can have joined
		 * since; a live member means the books' pin went (or could
		 * not be seen): its domain is not ours to wipe out. */
		if (users_live_on_disk(h)) {
			pr_err(pmu,
			       "host domain %s: its books are not pinned, yet "
			       "a "
			       "live process is a member: refused (shpmu-host "
			       "remove takes it away once its members are "
			       "gone)",
			       h->path);
			return -EPROTO;
		}
		/* What a maker that died left: what cannot go would stay in
		 * the way of our pins. */
		err = pins_remove(h);
		if (!err)
			err = pins_create(pmu, h, ipi_hook);
		if (err)
			return err;
		h->made = true;
		pr_info(pmu, "host domain %s: made", h->path);
	}
	return pins_open(pmu, h, c);
}

struct host *host_alloc(struct shpmu *pmu, const char *bpffs_dir,
			const char *domain)
{
	struct host *h = calloc(1, sizeof(*h));
	size_t len;

	if (!h || !bpffs_dir || !domain) {
		free(h);
		return NULL;
	}
	snprintf(h->layout_name, sizeof(h->layout_name), "layout-%u",
		 host_layout());
	len = strlen(bpffs_dir) + strlen(h->layout_name) + strlen(domain) + 3;
	h->path = malloc(len);
	if (!h->path) {
		free(h);
		return NULL;
	}
	snprintf(h->path, len, "%s/%s/%s", bpffs_dir, h->layout_name, domain);
	h->domain = h->path + len - 1 - strlen(domain);
	h->layout_path = strndup(h->path, (size_t)(h->domain - 1 - h->path));
	if (!h->layout_path) {
		free(h->path);
		free(h);
		return NULL;
	}
	h->pmu = pmu;
	h->bpffs_fd = h->layout_fd = h->dir_fd = -1;
	h->refs_fd = -1;
	h->users.fd = -1;
	h->lock.fd = -1;
	h->lock_timeout_ms = shpmu__host_lock_timeout_ms
				     ? shpmu__host_lock_timeout_ms
				     : HOST_LOCK_TIMEOUT_MS;
	h->joining = true;
	return h;
}

void close_fd(struct shpmu *pmu, int *fd)
{
	if (*fd >= 0)
		sys_close(pmu, *fd);
	*fd = -1;
}

void host_release(struct host *h, struct counted *c)
{
	if (c) {
		counter_prog_unload(&c->prog);
		c->books = NULL;
	}
	if (h->books)
		sys_munmap(h->pmu, h->books, h->books_len);
	close_fd(h->pmu, &h->refs_fd);
	/* (Closing it gives back our byte of users/, if still held.) */
	host_lock_close(&h->users);
	/* (In a forked child the lock's fd is closed already: host_lock.h.) */
	host_lock_drop(&h->lock);
	close_fd(h->pmu, &h->dir_fd);
	close_fd(h->pmu, &h->layout_fd);
	close_fd(h->pmu, &h->bpffs_fd);
	host_quota_fini(&h->quota);
	free(h->layout_path);
	free(h->path);
	free(h);
}

void host_remove_domain(struct host *h)
{
	pins_remove(h);
	sys_unlinkat(h->pmu, h->dir_fd, "users", AT_REMOVEDIR);
	sys_unlinkat(h->pmu, h->layout_fd, h->domain, AT_REMOVEDIR);
	/* The layout directory too, unless another domain is in it. */
	sys_unlinkat(h->pmu, h->bpffs_fd, h->layout_name, AT_REMOVEDIR);
}

int host_join(struct shpmu *pmu, const char *bpffs_dir, const char *domain,
	      bool ipi_hook, struct counted *c, struct host **out)
{
	struct host *h;
	int err;

	if (!host_domain_name_ok(domain)) {
		pr_err(pmu,
		       "host scope: bad domain name \"%s\": one to 64 "
		       "letters, digits, '_', '-' or '.', not "
		       "starting with '.'",
		       domain);
		return -EINVAL;
	}
	err = check_privileges(pmu);
	if (err)
		return err;
	h = host_alloc(pmu, bpffs_dir, domain);
	if (!h)
		return -ENOMEM;
	if (env_of(pmu)->lock_timeout_ms)
		h->lock_timeout_ms = env_of(pmu)->lock_timeout_ms;
	err = host_dirs_open_bpffs(pmu, bpffs_dir, true, &h->bpffs_fd);
	if (!err)
		err = host_open_locked(pmu, h, true, LOCK_EX);
	if (!err)
		err = open_pins(pmu, h, ipi_hook, c);
	if (!err)
		err = host_quota_init(&h->quota, h->max_slots, HOST_MAX_REFS);
	if (err) {
		/* A domain we made and could not finish goes again (its
		 * program attached for nobody, were it complete). */
		if (h->lock.fd >= 0 && (h->made || pins_complete(h) == 0))
			host_remove_domain(h);
		host_release(h, c);
		return err;
	}
	err = sys_mkdirat(pmu, h->dir_fd, "users", 0700);
	if (err == -EEXIST)
		err = 0;
	/* (We hold the lock: host_begin checks the books and reclaims.) */
	if (!err)
		err = host_begin(pmu, h, c);
	if (!err) {
		err = users_add(pmu, h);
		host_end(h, c);
	}
	/* A domain nobody uses goes, unless its books could not be read. */
	if (err && err != -EPROTO && !users_count(h))
		host_remove_domain(h);
	h->joining = false;
	host_lock_drop(&h->lock);
	if (err) {
		host_release(h, c);
		return err;
	}
	*out = h;
	return 0;
}

/* The books' dirty mark of a change under way, and of a repair that could
 * not finish (the next change tries again). */
#define DIRTY_REPAIR UINT64_MAX

/* The mark of a change under way, unless one is there already. */
static void mark_dirty(struct host *h)
{
	if (!h->books->dirty)
		h->books->dirty = h->user_id ? h->user_id : 1;
}

int host_begin(struct shpmu *pmu, struct host *h, struct counted *c)
{
	uint64_t was_dirty;
	const char *field;
	int err;

	/* While joining, the lock is ours already. */
	if (!h->joining) {
		err = host_lock_take(pmu, &h->lock, h->dir_fd, LOCK_EX,
				     h->lock_timeout_ms, h->path);
		if (err)
			return err;
	}
	err = books_check(h->books, c->prog.max_slots, &field);
	if (err) {
		if (err == -EPROTO)
			pr_err(pmu,
			       "host domain %s: its books do not check out "
			       "(%s): another process of uid %u wrote them; "
			       "remove the domain (shpmu-host remove) once "
			       "its members are gone",
			       h->path, field, (unsigned int)geteuid());
		if (!h->joining)
			host_lock_drop(&h->lock);
		return err;
	}
	/* Marked before the reaping: a death half way through it leaves
	 * dead users' refs that the next change must repair. */
	was_dirty = h->books->dirty;
	mark_dirty(h);
	err = users_reap(pmu, h);
	if (err < 0) {
		h->books->dirty = was_dirty; /* nothing changed */
		if (!h->joining)
			host_lock_drop(&h->lock);
		return err;
	}
	if (err || was_dirty)
		host_fsck(pmu, h, c);
	mark_dirty(h); /* (a repair that finished cleared it) */
	host_step();
	return 0;
}

void host_end(struct host *h, struct counted *c)
{
	(void)c;
	host_step();
	if (h->books->dirty != DIRTY_REPAIR)
		h->books->dirty = 0;
	/* While joining, the lock stays ours until the join is done. */
	if (!h->joining)
		host_lock_drop(&h->lock);
}

int host_ref(struct shpmu *pmu, struct host *h, uint32_t e, uint32_t s,
	     int delta)
{
	struct host_ref_key key = {.user = h->user_id, .event = e, .slot = s};
	uint32_t refs = 0;
	int err;

	if (delta > 0) {
		err = host_quota_check(pmu, &h->quota, s, h->path);
		if (err)
			return err;
	}
	/* None yet is 0; a lookup that failed otherwise says nothing of
	 * the count, which must not be written over. */
	err = sys_bpf_map_lookup(pmu, h->refs_fd, &key, &refs);
	if (err && err != -ENOENT)
		return err;
	refs += (uint32_t)delta;
	if (!refs)
		err = sys_bpf_map_delete(pmu, h->refs_fd, &key);
	else
		err = sys_bpf_map_update(pmu, h->refs_fd, &key, &refs, BPF_ANY);
	if (!err)
		host_quota_add(&h->quota, s, delta);
	return err;
}

void host_ref_forgotten(struct host *h, uint32_t s)
{
	host_quota_add(&h->quota, s, -1);
}

void host_leave(struct shpmu *pmu, struct host *h, struct counted *c)
{
	if (!h)
		return;
	if (env_of(pmu)->forked) {
		host_release(h, c);
		return;
	}
	/* Books that do not check out are not touched: the operator's
	 * remove takes the domain away once our user lock is gone. */
	if (host_begin(pmu, h, c)) {
		host_release(h, c);
		return;
	}
	/* Refs still held (handles a forked child never closed, say) go
	 * with us: fsck drops the refs of users not in the books. */
	users_remove(h);
	host_fsck(pmu, h, c);
	if (!users_count(h))
		host_remove_domain(h);
	host_end(h, c);
	host_release(h, c);
}
