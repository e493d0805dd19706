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
#include <linux/capability.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include <shpmu/shpmu.h>

#include "cgroup_helpers.h"
#include "helpers.h"
#include "host/books.h"
#include "host/host_inspect.h"
#include "host/host_layout.h"
#include "host_procs.h"

TestSuite(host_hostile, .init = host_fs_setup, .fini = host_fs_teardown,
	  .timeout = 120);

static struct shpmu *join(void)
{
	SHPMU_OPTS(o, .scope = SHPMU_SCOPE_HOST, .domain = "default",
		   .bpffs_dir = host_bpffs(), .log = host_keep_log);

	return shpmu_new(&o);
}

static const char *pin_path(const char *name)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", host_domain_dir("default"), name);
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
	host_logged[0] = '\0';
	cr_expect_null(join(), "a joiner took a domain whose %s was changed",
		       name);
	cr_expect_eq(errno, EPROTO, "joiner: %s, not EPROTO", strerror(errno));
	cr_expect(strstr(host_logged, name),
		  "the joiner's message names %s: %s", name, host_logged);
	err = host_view_read(host_bpffs(), "default", NULL, &v);
	cr_expect_eq(err, -EPROTO, "host_view_read: %s, not EPROTO",
		     strerror(-err));
	if (!err)
		host_view_free(&v);
	cr_expect_neq(host_tool(out, sizeof(out), "show default"), 0);
	cr_expect(strstr(out, name), "shpmu-host show names %s: %s", name, out);
	cr_expect_neq(host_tool(out, sizeof(out), "fsck default"), 0);
	cr_expect(strstr(out, name), "shpmu-host fsck names %s: %s", name, out);
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

	int dir = open(host_domain_dir("default"), O_RDONLY | O_DIRECTORY);

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

/*
 * The books: a process of the domain's uid with every capability dropped
 * maps them read-write (the kernel asks for none to open a pin) and
 * writes what it likes, lock or no lock.
 */

/* One word written into the books at a byte offset. */
struct poke {
	size_t offset;
	uint32_t value;
};

/* Writes pokes into the books from a child with no capabilities. */
static void corrupt_books(const struct poke *pokes, size_t n)
{
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct __user_cap_header_struct hdr = {
			.version = _LINUX_CAPABILITY_VERSION_3};
		struct __user_cap_data_struct none[2] = {{0}};
		int fd;
		uint8_t *b;

		if (syscall(SYS_capset, &hdr, none))
			_exit(10);
		fd = bpf_obj_get(pin_path("map_books"));
		if (fd < 0)
			_exit(11);
		b = mmap(NULL, books_size(0), PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, 0);
		if (b == MAP_FAILED)
			_exit(12);
		for (size_t i = 0; i < n; i++)
			memcpy(b + pokes[i].offset, &pokes[i].value,
			       sizeof(pokes[i].value));
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the capless writer failed: status %#x", status);
}

/* After the books were written: the member, a joiner and shpmu-host
 * each finish; where field is given, each refuses with EPROTO and the
 * joiner's message names that field (random words, field NULL, may also
 * leave the books sound). Nothing crashes (the ASan build runs this
 * too); once the member is killed the domain is removed whole. */
static void expect_survived(struct helper *m, const char *rel, const char *what,
			    const char *field)
{
	struct shpmu *joiner;
	struct host_view v;
	const char *reply;
	char out[4096];
	int err;

	/* A change of the books (an attr not counted yet): checked
	 * first. */
	reply = helper_ask(m, "open h page-faults cg:%s", rel);
	cr_expect(!strncmp(reply, "err 71", 6) /* EPROTO */ ||
			  (!field && !strncmp(reply, "ok", 2)),
		  "%s: the member's open: %s", what, reply);
	host_logged[0] = '\0';
	errno = 0;
	joiner = join();
	if (field) {
		cr_expect(!joiner && errno == EPROTO, "%s: joiner: %s", what,
			  joiner ? "joined" : strerror(errno));
		cr_expect(strstr(host_logged, field),
			  "%s: the message names %s: %s", what, field,
			  host_logged);
	} else {
		cr_expect(joiner || errno == EPROTO, "%s: joiner: %s", what,
			  strerror(errno));
	}
	shpmu_free(joiner);
	err = host_view_read(host_bpffs(), "default", NULL, &v);
	cr_expect(err == -EPROTO || (!field && !err), "%s: show: %s", what,
		  strerror(-err));
	if (!err)
		host_view_free(&v);
	/* (Through sh, a crash is an exit status of 128 and more.) */
	cr_expect_lt(host_tool(out, sizeof(out), "show default"), 128,
		     "%s: shpmu-host show: %s", what, out);
	err = host_tool(out, sizeof(out), "fsck default");
	cr_expect_lt(err, 128, "%s: shpmu-host fsck: %s", what, out);
	if (field)
		cr_expect(err && strstr(out, field),
			  "%s: shpmu-host fsck names %s: %s", what, field, out);
	helper_kill(m);
	err = host_remove(host_bpffs(), "default", NULL);
	cr_expect_eq(err, 0, "%s: remove once the member died: %s", what,
		     strerror(-err));
	cr_expect_str_empty(host_residue(), "%s: left: %s", what,
			    host_residue());
}

Test(host_hostile, fsck_reclaims_what_a_killed_member_left)
{
	struct helper m, alive;
	char out[8192];
	int h;

	member(&m, &h);
	cr_assert(helper_start(&alive, NULL, NULL));
	helper_ok(&alive, "open h task-clock cpu:0");
	helper_kill(&m);
	cr_expect_eq(host_tool(out, sizeof(out), "show default"), 0, "%s", out);
	cr_expect(strstr(out, "dead"), "the killed member: %s", out);
	cr_expect_eq(host_tool(out, sizeof(out), "fsck default"), 0, "%s", out);
	cr_expect(strstr(out, "checks out"), "%s", out);
	cr_expect_eq(host_tool(out, sizeof(out), "show default"), 0, "%s", out);
	cr_expect_null(strstr(out, "dead"), "still there: %s", out);
	cr_expect(strstr(out, "alive"), "%s", out);
	helper_ok(&alive, "read h 0");
	helper_quit(&alive);
	cr_expect_str_empty(host_residue(), "left: %s", host_residue());
}

/* A member counting a cgroup (so the books have a slot in use), then
 * pokes; field as expect_survived says. */
static void attack_books(const struct poke *pokes, size_t n, const char *what,
			 const char *field)
{
	struct shpmu *local = shpmu_new(NULL);
	char rel[256];
	struct helper m;

	cr_assert(local);
	cg_setup(local);
	cg_make("victim");
	snprintf(rel, sizeof(rel), "%s/victim", cg_base_rel());
	cr_assert(helper_start(&m, NULL, NULL), "a member cannot join");
	helper_ok(&m, "open h task-clock cg:%s", rel);
	corrupt_books(pokes, n);
	expect_survived(&m, rel, what, field);
	cg_teardown();
	shpmu_free(local);
}

#define AT(field) offsetof(struct books, field)
/* The word of task entry 0 that holds its kind and inherit bytes. */
#define TASK0_KIND (AT(tasks) + offsetof(struct books_task, kind))
#define TASK0_ID   (AT(tasks) + offsetof(struct books_task, id))

/* Each test writes one field wrong, and expects it named. */
Test(host_hostile, books_with_a_slot_count_past_their_size)
{
	const struct poke p[] = {{AT(slots_used), 0xffffffff}};

	attack_books(p, 1, "slots_used", "slots_used");
}

Test(host_hostile, books_with_a_free_list_head_out_of_range)
{
	const struct poke p[] = {{AT(free.head), 0x7fffffff}};

	attack_books(p, 1, "free.head", "free (a link out of range");
}

Test(host_hostile, books_with_a_free_list_tail_out_of_range)
{
	const struct poke p[] = {{AT(free.tail), 0x7fffffff}};

	attack_books(p, 1, "free.tail", "free.tail");
}

Test(host_hostile, books_with_a_free_list_loop)
{
	/* Slot 0 (free, its id zeroed) links to itself. */
	const struct poke p[] = {
		{AT(slots) + offsetof(struct books_slot, id), 0},
		{AT(slots) + offsetof(struct books_slot, id) + 4, 0},
		{AT(slots) + offsetof(struct books_slot, next_free), 0},
		{AT(free.head), 0},
		{AT(free.tail), 0}};

	attack_books(p, 5, "free-list loop", "or a loop");
}

Test(host_hostile, books_with_tasks_high_past_the_table)
{
	const struct poke p[] = {{AT(tasks_high), 0xffffffff}};

	attack_books(p, 1, "tasks_high", "tasks_high");
}

Test(host_hostile, books_with_next_task_past_the_table)
{
	const struct poke p[] = {{AT(next_task), 0xfffffff0}};

	attack_books(p, 1, "next_task", "next_task");
}

Test(host_hostile, books_with_an_event_state_out_of_range)
{
	const struct poke p[] = {
		{AT(events) + offsetof(struct books_event, state), 77}};

	attack_books(p, 1, "event state", "events[].state");
}

Test(host_hostile, books_with_a_task_kind_out_of_range)
{
	const struct poke p[] = {
		{AT(tasks_high), 1}, {TASK0_ID, 1234}, {TASK0_KIND, 9}};

	attack_books(p, 3, "task kind", "tasks[].kind");
}

Test(host_hostile, books_with_a_task_inherit_out_of_range)
{
	/* kind LINK_TID (1), inherit 7 */
	const struct poke p[] = {
		{AT(tasks_high), 1}, {TASK0_ID, 1234}, {TASK0_KIND, 0x0701}};

	attack_books(p, 3, "task inherit", "tasks[].inherit");
}

Test(host_hostile, books_with_a_task_in_use_past_tasks_high)
{
	const struct poke p[] = {{TASK0_ID, 1234}, {TASK0_KIND, 1}};

	attack_books(p, 2, "task past tasks_high", "past tasks_high");
}

Test(host_hostile, books_with_two_users_of_one_id)
{
	const struct poke p[] = {
		{AT(users[1]) + offsetof(struct books_user, id), 1},
		{AT(users[1]) + offsetof(struct books_user, id) + 4, 0}};

	attack_books(p, 2, "user ids", "users[].id");
}

/* Random words at random places of the header, the events, the users,
 * the tasks and the first slots, from fixed seeds. */
Test(host_hostile, books_with_random_words)
{
	const size_t span =
		sizeof(struct books) + 4 * sizeof(struct books_slot);

	for (unsigned int seed = 1; seed <= 6; seed++) {
		struct poke p[16];
		char what[32];

		srand(seed);
		for (size_t i = 0; i < 16; i++) {
			/* Half of them in the first 128 bytes: the header. */
			size_t room = i % 2 ? span : 128;

			p[i].offset = ((size_t)rand() % room) & ~(size_t)3;
			p[i].value = (uint32_t)rand() * 2654435761u;
		}
		snprintf(what, sizeof(what), "seed %u", seed);
		attack_books(p, 16, what, NULL);
	}
}
