// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A domain's pins are input from anyone who can write its directory.
 * Each test here joins a domain in a BPF filesystem of its own, then
 * changes one pin the way a hostile member could (a symlink, a swap, an
 * object of another shape or owner), and checks that a new joiner and the
 * operator's view refuse the domain with EPROTO and a message naming the
 * pin, that the member already in keeps counting, and that the domain is
 * still removed whole once that member leaves.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include <shpmu/shpmu.h>

#include "helpers.h"
#include "host_inspect.h"
#include "host_layout.h"
#include "host_procs.h"

TestSuite(host_hostile, .init = host_fs_setup, .fini = host_fs_teardown,
	  .timeout = 120);

static char logged[8192];

/* Keeps the error messages a context logs. */
static void keep_log(int level, const char *msg, void *arg)
{
	size_t used = strlen(logged);

	(void)arg;
	if (level <= SHPMU_LOG_ERROR)
		snprintf(logged + used, sizeof(logged) - used, "%s\n", msg);
}

static struct shpmu *join(void)
{
	SHPMU_OPTS(o, .scope = SHPMU_SCOPE_HOST, .domain = "default",
		   .bpffs_dir = host_bpffs(), .log = keep_log);

	return shpmu_new(&o);
}

/* The domain's directory, and the path of its pin name. */
static const char *domain_dir(void)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/layout-%u/default", host_bpffs(),
		 host_layout());
	return path;
}

static const char *pin_path(const char *name)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", domain_dir(), name);
	return path;
}

/* A member, a process of its own, that counts task-clock on CPU 0: its
 * handle into *h. */
static void member(struct helper *m, int *h)
{
	cr_assert(helper_start(m, NULL, NULL), "a member cannot join");
	*h = atoi(helper_ok(m, "open h task-clock cpu:0"));
}

/* After an attack on pin name: a new joiner and the operator's view are
 * refused with EPROTO, naming it; the member in still reads, and keeps
 * the domain from removal while it lives; once it is killed, the domain
 * is removed whole. */
static void expect_refused(struct helper *m, int h, const char *name)
{
	struct host_view v;
	uint64_t before, after;
	char out[4096];
	int err;

	before = strtoull(helper_ok(m, "read h %d", h), NULL, 10);
	logged[0] = '\0';
	cr_expect_null(join(), "a joiner took a domain whose %s was changed",
		       name);
	cr_expect_eq(errno, EPROTO, "joiner: %s, not EPROTO", strerror(errno));
	cr_expect(strstr(logged, name), "the joiner's message names %s: %s",
		  name, logged);
	err = host_view_read(host_bpffs(), "default", NULL, &v);
	cr_expect_eq(err, -EPROTO, "host_view_read: %s, not EPROTO",
		     strerror(-err));
	if (!err)
		host_view_free(&v);
	cr_expect_neq(host_tool(out, sizeof(out), "show default"), 0);
	cr_expect(strstr(out, name), "shpmu-host show names %s: %s", name, out);
	/* The member holds its objects: what changed at the path is not
	 * what it reads. */
	after = strtoull(helper_ok(m, "read h %d", h), NULL, 10);
	cr_expect_geq(after, before);
	err = host_remove(host_bpffs(), "default", NULL);
	cr_expect_eq(err, -EBUSY, "shpmu-host remove with a live member: %s",
		     strerror(-err));
	helper_kill(m);
	err = host_remove(host_bpffs(), "default", NULL);
	cr_expect_eq(err, 0, "shpmu-host remove once it died: %s",
		     strerror(-err));
	cr_expect_str_empty(host_residue(), "left: %s", host_residue());
}

Test(host_hostile, a_symlink_in_place_of_a_pin_is_refused)
{
	struct helper m;
	int h;

	member(&m, &h);
	/* A symlink to the books, whose value is far larger than a ref's:
	 * copied into a ref on the stack, it overflowed it. */
	cr_assert_eq(unlink(pin_path("map_refs")), 0);
	cr_assert_eq(symlink("map_books", pin_path("map_refs")), 0);
	expect_refused(&m, h, "map_refs");
}

Test(host_hostile, two_swapped_pins_are_refused)
{
	struct helper m;
	int h;

	member(&m, &h);

	int dir = open(domain_dir(), O_RDONLY | O_DIRECTORY);

	cr_assert_geq(dir, 0);
	cr_assert_eq(renameat2(dir, "map_slots", dir, "map_task_links",
			       RENAME_EXCHANGE),
		     0, "renameat2: %s", strerror(errno));
	close(dir);
	expect_refused(&m, h, "map_slots");
}

Test(host_hostile, a_map_of_another_shape_is_refused)
{
	struct helper m;
	int h, fd;

	member(&m, &h);
	/* The same type, a larger value. */
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "hostile", 8, 64, 16, NULL);
	cr_assert_geq(fd, 0);
	cr_assert_eq(unlink(pin_path("map_task_totals")), 0);
	cr_assert_eq(bpf_obj_pin(fd, pin_path("map_task_totals")), 0);
	close(fd);
	expect_refused(&m, h, "map_task_totals");
}

Test(host_hostile, a_program_of_its_name_but_not_its_maps_is_refused)
{
	const struct bpf_insn ret0[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0},
		{.code = BPF_JMP | BPF_EXIT}};
	struct helper m;
	int h, fd;

	member(&m, &h);
	/* A flush test-runs this program: it must be the domain's. */
	fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "on_switch", "GPL",
			   ret0, 2, NULL);
	cr_assert_geq(fd, 0, "bpf_prog_load: %s", strerror(-fd));
	cr_assert_eq(unlink(pin_path("prog")), 0);
	cr_assert_eq(bpf_obj_pin(fd, pin_path("prog")), 0);
	close(fd);
	expect_refused(&m, h, "prog");
}

Test(host_hostile, a_pin_of_another_owner_is_refused)
{
	struct helper m;
	int h;

	member(&m, &h);

	cr_assert_eq(chown(pin_path("map_views"), 65534, 65534), 0);
	expect_refused(&m, h, "map_views");
}
