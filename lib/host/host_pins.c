// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The pinned objects of a host domain: made by the first process to join
 * it (which loads and attaches the program, then pins it, its links and
 * maps, and the books last), found by every later one, which loads
 * nothing.
 */
#include "host/host_private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf/counted.h"
#include "core/cpus.h"
#include "switch_counter.skel.h"
#include "core/log.h"
#include "host/host_layout.h"
#include "host/pin_check.h"
#include "sys/sys.h"

/* In counter_prog_adopt's order, then the books and refs. */
static const char *const map_names[] = {
	[PROG_FD] = "prog",
	[EVENTS_FD] = "map_events",
	[SLOTS_FD] = "map_slots",
	[BSS_FD] = "map_bss",
	[VIEWS_FD] = "map_views",
	[TOTALS_FD] = "map_totals",
	[LINKS_FD] = "map_task_links",
	[TASK_TOTALS_FD] = "map_task_totals",
};
static const char *const link_names[] = {"link_switch", "link_move",
					 "link_fork"};
#define N_LINKS (sizeof(link_names) / sizeof(link_names[0]))
/* The tick check's link (on_tick), where the kernel has its tracepoint:
 * pinned so that it stays attached when its maker leaves. No member reads
 * it (nor checks it). */
#define TICK_PIN  "link_tick"
#define BOOKS_PIN "map_books"
#define REFS_PIN  "map_refs"

static int pin(struct shpmu *pmu, const struct host *h, int fd,
	       const char *name)
{
	char path[64];
	int err;

	/* Through the directory we hold, not its path, which another
	 * process could have made lead elsewhere by now. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", h->dir_fd, name);
	err = sys_bpf_obj_pin(pmu, fd, path);
	if (!err)
		return 0;
	pr_err(pmu, "host scope: cannot pin %s/%s: %s%s", h->path, name,
	       strerror(-err),
	       err == -ENOENT ? " (pinned through /proc/self/fd: is /proc "
				"mounted?)"
			      : "");
	return err;
}

static int pin_program(struct shpmu *pmu, const struct host *h,
		       struct switch_counter *s)
{
	struct bpf_link *move =
		s->links.on_ipi ? s->links.on_ipi : s->links.on_attach;
	int fds[N_PROG_FDS], err = 0;

	counter_prog_skel_fds(s, fds);
	for (size_t i = 0; i < N_PROG_FDS && !err; i++)
		err = pin(pmu, h, fds[i], map_names[i]);
	if (!err)
		err = pin(pmu, h, bpf_link__fd(s->links.on_switch),
			  link_names[0]);
	if (!err)
		err = pin(pmu, h, bpf_link__fd(move), link_names[1]);
	if (!err)
		err = pin(pmu, h, bpf_link__fd(s->links.on_fork),
			  link_names[2]);
	if (!err && s->links.on_tick)
		err = pin(pmu, h, bpf_link__fd(s->links.on_tick), TICK_PIN);
	/* The pins hold the links now: closing ours (destroying the
	 * skeleton) detaches nothing. */
	return err;
}

/* The books: one entry of value_size bytes, mapped by every member. */
static struct map_shape books_shape(uint32_t value_size)
{
	return (struct map_shape){.type = BPF_MAP_TYPE_ARRAY,
				  .key_size = 4,
				  .value_size = value_size,
				  .max_entries = 1,
				  .flags = BPF_F_MMAPABLE};
}

/* The refs: each member's references to events and slots. */
static struct map_shape refs_shape(void)
{
	return (struct map_shape){.type = BPF_MAP_TYPE_HASH,
				  .key_size = sizeof(struct host_ref_key),
				  .value_size = sizeof(uint32_t),
				  .max_entries = HOST_MAX_REFS,
				  .flags = BPF_F_NO_PREALLOC};
}

static int make_map(struct shpmu *pmu, const char *name, struct map_shape shape)
{
	return sys_bpf_map_create(pmu, shape.type, name, shape.key_size,
				  shape.value_size, shape.max_entries,
				  shape.flags);
}

/* The books and refs maps, the books set up, pinned books last. */
static int pin_books(struct shpmu *pmu, const struct host *h, uint32_t nr_cpus,
		     uint32_t max_slots)
{
	uint64_t size = books_size(max_slots);
	int books = make_map(pmu, "shpmu_books", books_shape((uint32_t)size));
	int refs = make_map(pmu, "shpmu_refs", refs_shape()), err;
	void *map = NULL;
	struct books *b;

	if (books < 0 || refs < 0) {
		err = books < 0 ? books : refs;
		pr_err(pmu, "host scope: cannot make the books' maps: %s",
		       strerror(-err));
		goto out;
	}
	err = sys_mmap(pmu, size, PROT_READ | PROT_WRITE, MAP_SHARED, books, 0,
		       &map);
	if (err)
		goto out;
	b = map;
	books_init(b, nr_cpus, max_slots);
	err = pin(pmu, h, refs, REFS_PIN);
	if (!err)
		err = pin(pmu, h, books, BOOKS_PIN);
out:
	if (map)
		sys_munmap(pmu, map, size);
	if (books >= 0)
		sys_close(pmu, books);
	if (refs >= 0)
		sys_close(pmu, refs);
	return err;
}

int pins_create(struct shpmu *pmu, struct host *h, bool ipi_hook)
{
	struct switch_counter *skel = NULL;
	int cpus = counter_prog_cpus(pmu), err;
	uint32_t max_slots;

	if (cpus < 0)
		return cpus;
	max_slots = counted_max_slots((uint32_t)cpus);
	err = counter_prog_load_skel(pmu, (uint32_t)cpus, max_slots, ipi_hook,
				     &skel);
	if (err)
		return err;
	err = pin_program(pmu, h, skel);
	if (!err)
		err = pin_books(pmu, h, (uint32_t)cpus, max_slots);
	counter_prog_destroy_skel(skel);
	if (err)
		pins_remove(h);
	return err;
}

/* The owner every pin must have: the domain directory's. */
static int domain_owner(struct shpmu *pmu, const struct host *h, uid_t *uid)
{
	struct stat st;
	int err = sys_fstat(pmu, h->dir_fd, &st);

	if (err) {
		pr_err(pmu, "host scope: %s: %s", h->path, strerror(-err));
		return err;
	}
	*uid = st.st_uid;
	return 0;
}

/* Pin name's fd once it has shape want (pin_check.h), or -errno. */
static int get_map(struct shpmu *pmu, const struct host *h, uid_t owner,
		   const char *name, const struct map_shape *want)
{
	int fd = pin_get(pmu, h->dir_fd, h->path, name, owner), err;

	if (fd < 0)
		return fd;
	err = pin_check_map(pmu, h->path, name, fd, want);
	if (err) {
		sys_close(pmu, fd);
		return err;
	}
	return fd;
}

/* Maps the books (already checked to be a map of their shape) and checks
 * their header. */
static int map_books(struct shpmu *pmu, struct host *h, int fd)
{
	struct bpf_map_info info;
	uint32_t len = sizeof(info);
	void *map;
	int err;

	memset(&info, 0, sizeof(info));
	err = sys_bpf_obj_info(pmu, fd, &info, &len);
	if (err)
		return err;
	h->books_len = info.value_size;
	err = sys_mmap(pmu, h->books_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0, &map);
	if (err)
		return err;
	h->books = map;
	/* Each field read once: a second read could differ. */
	h->max_slots = books_capacity(h->books_len);
	err = cpus_possible_count(pmu);
	if (err < 0) {
		sys_munmap(pmu, h->books, h->books_len);
		h->books = NULL;
		return err;
	}
	h->nr_cpus = (uint32_t)err;
	if (h->books_len < sizeof(struct books) ||
	    h->books->magic != BOOKS_MAGIC ||
	    h->books->layout != host_layout() ||
	    books_size(h->max_slots) != h->books_len ||
	    h->books->max_slots != h->max_slots ||
	    h->books->nr_cpus != h->nr_cpus) {
		pr_err(pmu,
		       "host scope: %s holds state of another layout than "
		       "this build's (%u): remove the domain (shpmu-host "
		       "remove) once no process of the other build uses it",
		       h->path, host_layout());
		sys_munmap(pmu, h->books, h->books_len);
		h->books = NULL;
		return -EPROTO;
	}
	return 0;
}

/* The books' map: one mmapable entry, of a size the header inside says
 * (map_books checks it against the header). */
static int get_books(struct shpmu *pmu, const struct host *h, uid_t owner)
{
	int fd = pin_get(pmu, h->dir_fd, h->path, BOOKS_PIN, owner), err;
	struct map_shape want = books_shape(0);
	struct bpf_map_info info;
	uint32_t len = sizeof(info);

	if (fd < 0)
		return fd;
	memset(&info, 0, sizeof(info));
	/* Any value size here: the header, once mapped, says which. */
	err = sys_bpf_obj_info(pmu, fd, &info, &len);
	if (!err)
		want.value_size = info.value_size;
	if (!err || err == -EINVAL)
		err = pin_check_map(pmu, h->path, BOOKS_PIN, fd, &want);
	if (err) {
		sys_close(pmu, fd);
		return err;
	}
	return fd;
}

int pins_open_books(struct shpmu *pmu, struct host *h)
{
	struct map_shape refs = refs_shape();
	int books, err;
	uid_t owner = (uid_t)-1;

	err = domain_owner(pmu, h, &owner);
	if (err)
		return err;
	books = get_books(pmu, h, owner);
	if (books < 0)
		return books;
	h->refs_fd = get_map(pmu, h, owner, REFS_PIN, &refs);
	err = h->refs_fd < 0 ? h->refs_fd : map_books(pmu, h, books);
	sys_close(pmu, books);
	if (err && h->refs_fd >= 0) {
		sys_close(pmu, h->refs_fd);
		h->refs_fd = -1;
	}
	return err;
}

/* The links' pins: raw tracepoint links, link_switch running the
 * domain's program (the others run its companions, unpinned). */
static int check_links(struct shpmu *pmu, const struct host *h, uid_t owner,
		       int prog_fd)
{
	int err = 0;

	for (size_t i = 0; i < N_LINKS && !err; i++) {
		int fd = pin_get(pmu, h->dir_fd, h->path, link_names[i], owner);

		if (fd < 0)
			return fd;
		err = pin_check_link(pmu, h->path, link_names[i], fd,
				     BPF_LINK_TYPE_RAW_TRACEPOINT,
				     i == 0 ? prog_fd : -1);
		sys_close(pmu, fd);
	}
	return err;
}

/* The program's pins, each checked against what this build pins, into
 * fds (in counter_prog_adopt's order). */
static int get_program(struct shpmu *pmu, const struct host *h,
		       int fds[N_PROG_FDS])
{
	struct map_shape shapes[N_PROG_FDS];
	uint32_t prog_type;
	size_t n;
	uid_t owner = (uid_t)-1;
	int err = domain_owner(pmu, h, &owner);

	if (!err)
		err = counter_prog_shapes(h->nr_cpus, h->max_slots, shapes,
					  &prog_type);
	if (err)
		return err;
	for (n = 1; n < N_PROG_FDS; n++) {
		fds[n] = get_map(pmu, h, owner, map_names[n], &shapes[n]);
		if (fds[n] < 0) {
			err = fds[n];
			goto fail;
		}
	}
	fds[PROG_FD] =
		pin_get(pmu, h->dir_fd, h->path, map_names[PROG_FD], owner);
	err = fds[PROG_FD] < 0
		      ? fds[PROG_FD]
		      : pin_check_prog(pmu, h->path, map_names[PROG_FD],
				       fds[PROG_FD], prog_type, "on_switch",
				       fds + 1, N_PROG_FDS - 1);
	if (!err)
		err = check_links(pmu, h, owner, fds[PROG_FD]);
	if (!err)
		return 0;
	if (fds[PROG_FD] >= 0)
		sys_close(pmu, fds[PROG_FD]);
fail:
	while (--n > 0)
		sys_close(pmu, fds[n]);
	return err;
}

int pins_check_program(struct shpmu *pmu, const struct host *h)
{
	int fds[N_PROG_FDS], err = get_program(pmu, h, fds);

	for (size_t n = 0; !err && n < N_PROG_FDS; n++)
		sys_close(pmu, fds[n]);
	return err;
}

int pins_open(struct shpmu *pmu, struct host *h, struct counted *c)
{
	int fds[N_PROG_FDS], err;

	err = pins_open_books(pmu, h);
	if (err)
		return err;
	err = get_program(pmu, h, fds);
	if (!err)
		err = counter_prog_adopt(pmu, fds, h->nr_cpus, h->max_slots,
					 &c->prog);
	/* adopt owns (or closed) the fds */
	if (!err) {
		c->books = h->books;
		return 0;
	}
	sys_close(pmu, h->refs_fd);
	h->refs_fd = -1;
	sys_munmap(pmu, h->books, h->books_len);
	h->books = NULL;
	return err;
}

int pins_complete(const struct host *h)
{
	struct stat st;
	int err = sys_fstatat(h->pmu, h->dir_fd, BOOKS_PIN, &st,
			      AT_SYMLINK_NOFOLLOW);

	/* Only a books pin that is not there makes a domain incomplete (to
	 * be made again): anything else at that name, pin_get names. */
	if (err == -ENOENT)
		return 0;
	return err ? err : 1;
}

/* Every pin is tried; the first failure but ENOENT is kept. */
static void unpin(const struct host *h, const char *name, int *first)
{
	int err = sys_unlinkat(h->pmu, h->dir_fd, name, 0);

	if (err && err != -ENOENT && !*first)
		*first = err;
}

int pins_remove(struct host *h)
{
	int err = 0;

	/* The books first: from then on the domain is not complete. */
	unpin(h, BOOKS_PIN, &err);
	unpin(h, REFS_PIN, &err);
	for (size_t i = 0; i < N_LINKS; i++)
		unpin(h, link_names[i], &err);
	unpin(h, TICK_PIN, &err);
	for (size_t i = 0; i < N_PROG_FDS; i++)
		unpin(h, map_names[i], &err);
	return err;
}
