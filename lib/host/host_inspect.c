// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "host/host_inspect.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "bpf/counted.h"
#include "core/env.h"
#include "core/log.h"
#include "host/books_check.h"
#include "host/host_dirs.h"
#include "host/host_layout.h"
#include "host/host_private.h"
#include "sys/sys.h"

int host_list_domains(const char *bpffs_dir,
		      int (*cb)(const char *domain, void *arg), void *arg)
{
	struct host *h = host_alloc(NULL, bpffs_dir, "-");
	struct sys_dir dir = {.fd = -1};
	unsigned char type;
	const char *name;
	int ret;

	if (!h)
		return -ENOMEM;
	ret = host_dirs_open_bpffs(NULL, bpffs_dir, false, &h->bpffs_fd);
	if (!ret)
		ret = host_dirs_open_layout(NULL, h->bpffs_fd, h->layout_name,
					    h->layout_path, false,
					    &h->layout_fd);
	if (!ret)
		ret = sys_dir_open(NULL, &dir, h->layout_fd, ".");
	while (!ret && (ret = sys_dir_next(NULL, &dir, &name, &type)) > 0)
		ret = type == DT_DIR && host_domain_name_ok(name)
			      ? cb(name, arg)
			      : 0;
	sys_dir_close(NULL, &dir);
	host_release(h, NULL);
	return ret == -ENOENT ? 0 : ret;
}

/* The domain's directory under the lock op (LOCK_SH to look, LOCK_EX
 * to change), nothing of it read yet. */
static int lock_domain(struct shpmu *log_to, const char *bpffs_dir,
		       const char *domain, int op, struct host **out)
{
	struct host *h;
	int err;

	if (!host_domain_name_ok(domain))
		return -EINVAL;
	h = host_alloc(log_to, bpffs_dir, domain);
	if (!h)
		return -ENOMEM;
	h->joining = false;
	err = host_dirs_open_bpffs(log_to, bpffs_dir, false, &h->bpffs_fd);
	if (!err)
		err = host_open_locked(log_to, h, false, op);
	if (err) {
		host_release(h, NULL);
		return err;
	}
	*out = h;
	return 0;
}

/* The books of a complete domain, mapped once every pin checks out
 * (pin_check.h), though only the books and refs are read: a domain with
 * any pin changed is reported as such. */
static int open_books(struct shpmu *log_to, struct host *h)
{
	const char *field;
	int err = pins_complete(h);

	if (err <= 0)
		return err; /* incomplete (0), or it cannot be told */
	err = pins_open_books(log_to, h);
	if (!err)
		err = pins_check_program(log_to, h);
	if (!err &&
	    books_check(h->books, books_capacity(h->books_len), &field)) {
		pr_err(log_to,
		       "host domain %s: its books do not check out (%s)",
		       h->path, field);
		err = -EPROTO;
	}
	return err;
}

/* Counts map_refs' entries of each user in v. */
static void count_refs(const struct host *h, struct host_view *v)
{
	struct host_ref_key key, *prev = NULL;
	uint32_t refs;

	while (!sys_bpf_map_next_key(h->pmu, h->refs_fd, prev, &key)) {
		prev = &key;
		if (sys_bpf_map_lookup(h->pmu, h->refs_fd, &key, &refs))
			continue;
		for (uint32_t i = 0; i < v->nusers; i++)
			if (v->users[i].id == key.user)
				v->users[i].refs += refs;
	}
}

static int describe(struct host *h, struct host_view *v)
{
	const struct books *b = h->books;
	uint32_t used = books_slots_used(b, books_capacity(h->books_len));

	v->complete = true;
	v->nr_cpus = b->nr_cpus;
	v->max_slots = b->max_slots;
	memcpy(v->events, b->events, sizeof(v->events));
	for (uint32_t e = 0; e < MAX_EVENTS; e++)
		if (b->events[e].state == EVENT_LIVE)
			for (int cpu = 0; cpu < MAX_CPUS; cpu++)
				v->perf_events +=
					books_event_on_cpu(&b->events[e], cpu);

	v->slots = calloc(used + 1, sizeof(*v->slots));
	v->users = calloc(MAX_USERS, sizeof(*v->users));
	if (!v->slots || !v->users)
		return -ENOMEM;
	for (uint32_t s = 0; s < used; s++)
		if (b->slots[s].id)
			v->slots[v->nslots++] = b->slots[s];
	for (uint32_t i = 0; i < MAX_USERS; i++) {
		struct host_view_user *u = &v->users[v->nusers];

		if (!b->users[i].id)
			continue;
		u->id = b->users[i].id;
		u->pid = b->users[i].pid;
		memcpy(u->comm, b->users[i].comm, sizeof(u->comm));
		u->start_time = b->users[i].start_time;
		u->alive = users_alive(h, i);
		v->nusers++;
	}
	count_refs(h, v);
	return 0;
}

int host_view_read(const char *bpffs_dir, const char *domain, host_log_fn log,
		   struct host_view *v)
{
	/* A context that is only its log, as pr_err takes. */
	struct shpmu_env env = {.sys = &shpmu_sys_kernel, .log = log};
	struct shpmu *log_to = (struct shpmu *)&env;
	struct host *h;
	int err;

	memset(v, 0, sizeof(*v));
	err = lock_domain(log_to, bpffs_dir, domain, LOCK_SH, &h);
	if (err)
		return err;
	err = open_books(log_to, h);
	if (!err && h->books)
		err = describe(h, v);
	host_release(h, NULL);
	if (err)
		host_view_free(v);
	return err;
}

void host_view_free(struct host_view *v)
{
	free(v->slots);
	free(v->users);
	memset(v, 0, sizeof(*v));
}

int host_remove(const char *bpffs_dir, const char *domain, host_log_fn log)
{
	struct shpmu_env env = {.sys = &shpmu_sys_kernel, .log = log};
	struct shpmu *log_to = (struct shpmu *)&env;
	struct host *h;
	int err;

	err = lock_domain(log_to, bpffs_dir, domain, LOCK_EX, &h);
	if (err)
		return err;
	/* The users that died go; a live one keeps the domain. Books that
	 * do not check out are not read: the users' own locks tell. */
	err = open_books(log_to, h);
	if (!err && h->books) {
		users_reap(NULL, h);
		err = users_count(h) ? -EBUSY : 0;
	} else if (!err || err == -EPROTO || err == -ENOENT) {
		/* Incomplete, or a pin refused or missing. */
		err = users_live_on_disk(h) ? -EBUSY : 0;
	}
	if (err) {
		host_release(h, NULL);
		return err;
	}
	host_remove_domain(h);
	host_release(h, NULL);
	return 0;
}

int host_repair(const char *bpffs_dir, const char *domain, host_log_fn log)
{
	/* The program's maps are read through the syscall layer. */
	struct shpmu_env env = {.sys = &shpmu_sys_kernel, .log = log};
	struct shpmu *log_to = (struct shpmu *)&env;
	struct counted c;
	const char *field;
	struct host *h;
	int err;

	memset(&c, 0, sizeof(c));
	err = lock_domain(log_to, bpffs_dir, domain, LOCK_EX, &h);
	if (err)
		return err;
	err = pins_complete(h);
	if (err <= 0) {
		if (!err)
			pr_err(log_to,
			       "host domain %s is incomplete (its maker died "
			       "early): shpmu-host remove takes it away",
			       h->path);
		host_release(h, NULL);
		return err ? err : -EPROTO;
	}
	/* Every pin checked, as a joiner checks them. */
	err = pins_open(log_to, h, &c);
	if (err) {
		host_release(h, NULL);
		return err;
	}
	if (books_check(h->books, h->max_slots, &field)) {
		pr_err(log_to,
		       "host domain %s: its books do not check out (%s): "
		       "nothing to repair them from; remove the domain "
		       "(shpmu-host remove) once its members are gone",
		       h->path, field);
		err = -EPROTO;
	} else {
		/* Marked first, as host_begin does: a repair cut short is
		 * taken up again by the next change. */
		h->books->dirty = UINT64_MAX;
		users_reap(log_to, h);
		host_fsck(log_to, h, &c);
		err = h->books->dirty ? -EIO : 0;
	}
	host_release(h, &c);
	return err;
}
