// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Joining, changing and leaving a host domain (see host.h). */
#include "host.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "books_check.h"
#include "counted.h"
#include "env.h"
#include "host_layout.h"
#include "host_private.h"
#include "host_step.h"
#include "log.h"

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

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
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

static bool on_bpffs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && st.f_type == BPF_FS_MAGIC;
}

/* bpffs_dir, made if its parent is a BPF filesystem. */
static int check_bpffs(struct shpmu *pmu, const char *dir)
{
	char *parent = strdup(dir), *slash;
	bool ok;

	if (!parent)
		return -ENOMEM;
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	ok = on_bpffs(dir) ||
	     (on_bpffs(parent) && (!mkdir(dir, 0755) || errno == EEXIST) &&
	      on_bpffs(dir));
	free(parent);
	if (ok)
		return 0;
	pr_err(pmu,
	       "host scope: %s is not on a BPF filesystem (mount one: "
	       "mount -t bpf bpf /sys/fs/bpf, or set opts.bpffs_dir)",
	       dir);
	return -ENOENT;
}

/* Opens the domain directory, made if new, and takes its lock: the
 * directory must still be the one at the path once we hold it (the last
 * user may have removed it meanwhile). */
static int open_locked(struct shpmu *pmu, struct host *h, const char *layout)
{
	for (int tries = 0; tries < 100; tries++) {
		struct stat held, now;
		int fd;

		if (mkdir(layout, 0755) && errno != EEXIST)
			goto fail;
		if (mkdir(h->path, 0700) && errno != EEXIST) {
			if (errno == ENOENT)
				continue; /* the layout went meanwhile */
			goto fail;
		}
		fd = open(h->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;
			goto fail;
		}
		while (flock(fd, LOCK_EX) && errno == EINTR)
			;
		if (!fstat(fd, &held) && !stat(h->path, &now) &&
		    held.st_ino == now.st_ino && held.st_dev == now.st_dev &&
		    held.st_nlink) {
			if (held.st_uid != geteuid()) {
				pr_err(pmu,
				       "host domain %s belongs to uid %u: a "
				       "domain is shared by one uid",
				       h->path, held.st_uid);
				close(fd);
				return -EACCES;
			}
			h->dir_fd = fd;
			return 0;
		}
		close(fd);
	}
	errno = EAGAIN;
fail:
	pr_err(pmu, "host domain %s: %s%s", h->path, strerror(errno),
	       errno == EACCES ? " (a domain belongs to the uid that made "
				 "it, its directory mode 0700)"
			       : "");
	return -errno;
}

/* Takes the domain's pinned state, made now if the domain is new (or a
 * maker died before finishing it). */
static int open_pins(struct shpmu *pmu, struct host *h, bool ipi_hook,
		     struct counted *c)
{
	int err;

	if (!pins_complete(h)) {
		pins_remove(h); /* what a maker that died left */
		err = pins_create(pmu, h, ipi_hook);
		if (err)
			return err;
		pr_info(pmu, "host domain %s: made", h->path);
	}
	return pins_open(pmu, h, c);
}

struct host *host_alloc(const char *bpffs_dir, const char *domain, char *layout,
			size_t layout_len)
{
	struct host *h = calloc(1, sizeof(*h));
	size_t len;

	if (!h)
		return NULL;
	snprintf(layout, layout_len, "%s/layout-%u", bpffs_dir, host_layout());
	len = strlen(layout) + strlen(domain) + 2;
	h->path = malloc(len);
	if (!h->path) {
		free(h);
		return NULL;
	}
	snprintf(h->path, len, "%s/%s", layout, domain);
	h->dir_fd = h->refs_fd = h->user_fd = -1;
	h->joining = true;
	for (uint32_t i = 0; i < MAX_USERS; i++)
		h->lock_fds[i] = -1;
	return h;
}

void host_release(struct host *h, struct counted *c, bool unlock)
{
	if (c) {
		counter_prog_unload(&c->prog);
		c->books = NULL;
	}
	if (h->books)
		munmap(h->books, h->books_len);
	if (h->refs_fd >= 0)
		close(h->refs_fd);
	if (h->user_fd >= 0)
		close(h->user_fd);
	users_close_cache(h);
	if (h->dir_fd >= 0) {
		/* (a forked child's copy of the fd would keep it held) */
		if (unlock)
			flock(h->dir_fd, LOCK_UN);
		close(h->dir_fd);
	}
	free(h->path);
	free(h);
}

void host_remove_domain(struct host *h)
{
	char *layout = strdup(h->path), *slash;

	pins_remove(h);
	unlinkat(h->dir_fd, "users", AT_REMOVEDIR);
	rmdir(h->path);
	/* The layout directory too, unless another domain is in it. */
	slash = layout ? strrchr(layout, '/') : NULL;
	if (slash) {
		*slash = '\0';
		rmdir(layout);
	}
	free(layout);
}

int host_join(struct shpmu *pmu, const char *bpffs_dir, const char *domain,
	      bool ipi_hook, struct counted *c, struct host **out)
{
	char layout[4096];
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
	if (!err)
		err = check_bpffs(pmu, bpffs_dir);
	if (err)
		return err;
	h = host_alloc(bpffs_dir, domain, layout, sizeof(layout));
	if (!h)
		return -ENOMEM;
	err = open_locked(pmu, h, layout);
	if (!err)
		err = open_pins(pmu, h, ipi_hook, c);
	if (err) {
		/* A domain we made and could not finish goes again. */
		if (h->dir_fd >= 0 && !pins_complete(h))
			host_remove_domain(h);
		host_release(h, c, true);
		return err;
	}
	if (mkdirat(h->dir_fd, "users", 0700) && errno != EEXIST)
		err = -errno;
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
	flock(h->dir_fd, LOCK_UN);
	if (err) {
		host_release(h, c, true);
		return err;
	}
	*out = h;
	return 0;
}

/* The books' dirty mark of a change under way, and of a repair that could
 * not finish (the next change tries again). */
#define DIRTY_REPAIR UINT64_MAX

int host_begin(struct shpmu *pmu, struct host *h, struct counted *c)
{
	const char *field;
	int err;

	/* While joining, the lock is ours already. */
	if (!h->joining)
		while (flock(h->dir_fd, LOCK_EX) && errno == EINTR)
			;
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
			flock(h->dir_fd, LOCK_UN);
		return err;
	}
	if (users_reap(pmu, h) || h->books->dirty)
		host_fsck(pmu, h, c);
	if (!h->books->dirty)
		h->books->dirty = h->user_id ? h->user_id : 1;
	host_step();
	return 0;
}

void host_end(struct host *h, struct counted *c)
{
	(void)c;
	host_step();
	if (h->books->dirty != DIRTY_REPAIR)
		h->books->dirty = 0;
	/* While joining, the lock stays ours until the join is done. A
	 * forked child may hold a copy of the fd: closing ours would not
	 * give the lock back. */
	if (!h->joining)
		flock(h->dir_fd, LOCK_UN);
}

int host_ref(struct host *h, uint32_t e, uint32_t s, int delta)
{
	struct host_ref_key key = {.user = h->user_id, .event = e, .slot = s};
	uint32_t refs = 0;

	bpf_map_lookup_elem(h->refs_fd, &key, &refs);
	refs += (uint32_t)delta;
	if (!refs)
		return bpf_map_delete_elem(h->refs_fd, &key) ? -errno : 0;
	return bpf_map_update_elem(h->refs_fd, &key, &refs, BPF_ANY) ? -errno
								     : 0;
}

void host_leave(struct shpmu *pmu, struct host *h, struct counted *c)
{
	if (!h)
		return;
	if (env_of(pmu)->forked) {
		host_release(h, c, false);
		return;
	}
	/* Books that do not check out are not touched: the operator's
	 * remove takes the domain away once our user lock is gone. */
	if (host_begin(pmu, h, c)) {
		host_release(h, c, true);
		return;
	}
	/* Refs still held (handles a forked child never closed, say) go
	 * with us: fsck drops the refs of users not in the books. */
	users_remove(h);
	host_fsck(pmu, h, c);
	if (!users_count(h))
		host_remove_domain(h);
	host_end(h, c);
	host_release(h, c, true);
}
