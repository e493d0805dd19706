// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fault-injection walks. A scenario (shared events on all CPUs, a
 * group, a cgroup target; enable, read, read_many, disable, reset, close,
 * cgroup lookups) runs once to count its calls through the syscall layer,
 * then once per (call N, fault): the Nth call fails with that errno or
 * reads short. After each: the step that met the fault returned a
 * negative errno (or, for EINTR and close, succeeded), nothing leaked, the
 * stats are what they were, every other handle still reads, shpmu_free
 * returns the fds to where they were, and a new context opens and reads.
 * LeakSanitizer (the ASan build) and valgrind check memory at exit.
 *
 * Three walks: the classic cgroup backend (its context made outside the
 * walk); the BPF backend in process scope; host scope, a context joining
 * a domain in a BPF filesystem of the test's own while another context
 * (the bystander) is a member of it. In the last two, making the context
 * (shpmu_new: the program's load, the join) is a step of the walk too; in
 * host scope the domain must afterwards hold what the bystander holds,
 * and nothing more. A fourth, slow walk (host_maker_walk) joins with no
 * other member: each join makes the domain, each free removes it.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <ftw.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpffs_mount.h"
#include "cgroup_helpers.h"
#include "fault_sys.h"
#include "helpers.h"
#include "host/host_inspect.h"
#include "host/host_lock.h"
#include "sys/sys.h"

static const int faults[] = {EMFILE, ENFILE, EACCES, ENOENT,
			     EBUSY,  ENOMEM, EINTR,  FAULT_SHORT_READ};
#define NFAULTS (int)(sizeof(faults) / sizeof(faults[0]))

/* ---- the scenario ---- */

#define MAX_HANDLES 8

struct run {
	struct shpmu *pmu;
	int h[MAX_HANDLES];
	int nh;
	const char *cgroup;
};

static int step_open(struct run *r, uint64_t config, bool disabled,
		     struct shpmu_target t)
{
	struct perf_event_attr a = sw_attr(config, disabled);
	int h = shpmu_open(r->pmu, &a, &t);

	if (h >= 0)
		r->h[r->nh++] = h;
	return h < 0 ? h : 0;
}

static int step(struct run *r, int i)
{
	struct shpmu_target self = self_target();
	struct shpmu_target all = {.kind = SHPMU_TARGET_CPU,
				   .cpu = SHPMU_ALL_CPUS};
	struct shpmu_target cg = {.kind = SHPMU_TARGET_CGROUP,
				  .cpu = SHPMU_ALL_CPUS,
				  .cgroup_path = r->cgroup};
	struct perf_event_attr group[2] = {
		sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES, false),
		sw_attr(PERF_COUNT_SW_PAGE_FAULTS, false)};
	struct shpmu_count c[MAX_HANDLES];
	char path[4096];
	uint64_t id;
	int h;

	switch (i) {
	case 0:
		return step_open(r, PERF_COUNT_SW_TASK_CLOCK, false, self);
	case 1:
		return step_open(r, PERF_COUNT_SW_TASK_CLOCK, false, self);
	case 2:
		return step_open(r, PERF_COUNT_SW_CONTEXT_SWITCHES, false, all);
	case 3:
		return step_open(r, PERF_COUNT_SW_CONTEXT_SWITCHES, true, all);
	case 4:
		h = shpmu_open_group(r->pmu, group, 2, &all);
		if (h >= 0)
			r->h[r->nh++] = h;
		return h < 0 ? h : 0;
	case 5:
		return step_open(r, PERF_COUNT_SW_TASK_CLOCK, false, cg);
	case 6:
		return shpmu_enable(r->pmu, r->h[3]);
	case 7:
		return shpmu_read(r->pmu, r->h[0], c);
	case 8:
		return shpmu_read_many(r->pmu, r->h, (size_t)r->nh, c);
	case 9:
		return shpmu_read_group(r->pmu, r->h[4], c, 2);
	case 10:
		return shpmu_disable(r->pmu, r->h[0]);
	case 11:
		return shpmu_reset(r->pmu, r->h[2]);
	case 12:
		return shpmu_read_cpu(r->pmu, r->h[2], 0, c);
	case 13:
		h = shpmu_cgroup_id(r->pmu, r->cgroup, &id);
		return h ? h
			 : shpmu_cgroup_path(r->pmu, id, path, sizeof(path));
	case 14:
		return shpmu_disable(r->pmu, r->h[3]); /* the last user */
	case 15:
		h = shpmu_close(r->pmu, r->h[1]);
		if (!h)
			r->h[1] = r->h[--r->nh];
		return h;
	}
	return 1; /* past the end */
}

enum walk_kind { WALK_CLASSIC, WALK_BPF, WALK_HOST, WALK_HOST_MAKER };

static const char *const walk_names[] = {"classic", "bpf-process", "host",
					 "host-maker"};
static enum walk_kind walk;

static void quiet(int level, const char *msg, void *arg)
{
	(void)level;
	(void)msg;
	(void)arg;
}

/* A context of the walk's kind (NULL with errno when it cannot be made). */
static struct shpmu *new_context(void)
{
	SHPMU_OPTS(classic, .cgroup_backend = SHPMU_CGROUP_BACKEND_PERF,
		   .log = quiet);
	SHPMU_OPTS(bpf, .cgroup_backend = SHPMU_CGROUP_BACKEND_BPF,
		   .log = quiet);
	SHPMU_OPTS(host, .scope = SHPMU_SCOPE_HOST, .bpffs_dir = host_bpffs(),
		   .cgroup_backend = SHPMU_CGROUP_BACKEND_BPF, .log = quiet);

	return shpmu_new(walk == WALK_CLASSIC ? &classic
			 : walk == WALK_BPF   ? &bpf
					      : &host);
}

/* The classic walk makes its context outside the walk (as it always
 * has); the others walk shpmu_new too. */
static bool walks_new(void)
{
	return walk != WALK_CLASSIC;
}

/* Makes r->pmu with every call through fault_sys: 0, or -errno. */
static int make_context(struct run *r)
{
	if (!walks_new()) {
		r->pmu = new_context();
		cr_assert(r->pmu, "%s: shpmu_new: %s", walk_names[walk],
			  strerror(errno));
		shpmu__set_sys_ops(r->pmu, &fault_sys);
		return 0;
	}
	shpmu__sys_ops_at_new = &fault_sys;
	r->pmu = new_context();
	shpmu__sys_ops_at_new = NULL;
	return r->pmu ? 0 : -errno;
}

/* Calls the scenario makes, counted without faults. */
static int count_calls(const char *cgroup)
{
	struct run r = {.cgroup = cgroup};
	int calls;

	fault_reset();
	cr_assert_eq(make_context(&r), 0, "%s: shpmu_new failed unfaulted",
		     walk_names[walk]);
	for (int i = 0; step(&r, i) != 1; i++)
		;
	calls = fault.calls; /* shpmu_free's closes are walked separately */
	shpmu_free(r.pmu);
	return calls;
}

static void expect_others_read(struct run *r, const char *what)
{
	struct shpmu_count c[2];

	for (int k = 0; k < r->nh; k++)
		cr_expect_eq(shpmu_read_group(r->pmu, r->h[k], c, 2), 0,
			     "%s: handle %d no longer reads", what, r->h[k]);
}

/* ---- host scope: the bystander, and what the domain holds ---- */

static struct shpmu *bystander;
static int bystander_h[2];

static void bystander_join(const char *cgroup)
{
	struct shpmu_target cg = {.kind = SHPMU_TARGET_CGROUP,
				  .cpu = SHPMU_ALL_CPUS,
				  .cgroup_path = cgroup};
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct perf_event_attr b =
		sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES, false);

	bystander = new_context();
	cr_assert(bystander, "host: the bystander cannot join: %s",
		  strerror(errno));
	bystander_h[0] = shpmu_open(bystander, &a, &cg);
	bystander_h[1] = shpmu_open(bystander, &b, &cg);
	cr_assert_geq(bystander_h[0], 0);
	cr_assert_geq(bystander_h[1], 0);
}

static void expect_bystander_reads(const char *what)
{
	struct shpmu_count c;

	if (!bystander)
		return;
	for (int k = 0; k < 2; k++)
		cr_expect_eq(shpmu_read(bystander, bystander_h[k], &c), 0,
			     "%s: the bystander's handle %d no longer reads",
			     what, k);
}

/* What the domain holds: its users, refs, events and slots. */
struct domain_state {
	uint32_t users, refs, perf_events, slots;
};

static struct domain_state domain_state(void)
{
	struct domain_state d = {0};
	struct host_view v;
	int err = host_view_read(host_bpffs(), "default", NULL, &v);

	cr_assert_eq(err, 0, "host_view_read: %s", strerror(-err));
	d.users = v.nusers;
	for (uint32_t i = 0; i < v.nusers; i++)
		d.refs += v.users[i].refs;
	d.perf_events = v.perf_events;
	d.slots = v.nslots;
	host_view_free(&v);
	return d;
}

static struct domain_state domain_before;
static int pins_left;

static int count_pin(const char *path, const struct stat *st, int flag,
		     struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	pins_left += flag == FTW_F && !S_ISDIR(st->st_mode);
	return 0;
}

static void expect_domain_as_before(const char *what)
{
	struct domain_state d;
	struct host_view v;
	int err;

	if (walk == WALK_HOST_MAKER) {
		/* Made and gone again: no pin left, no user. A join that
		 * failed before it held the domain's lock leaves the empty
		 * directories it made (removing them without the lock could
		 * pull them from under another maker), which the next join
		 * takes as they are. */
		pins_left = 0;
		nftw(host_bpffs(), count_pin, 16, FTW_PHYS);
		cr_expect_eq(pins_left, 0, "%s: %d pins left", what, pins_left);
		err = host_view_read(host_bpffs(), "default", NULL, &v);
		if (err != -ENOENT) {
			cr_expect_eq(err, 0, "%s: host_view_read: %s", what,
				     strerror(-err));
			cr_expect(!err && !v.complete && !v.nusers,
				  "%s: the domain is left", what);
		}
		if (!err)
			host_view_free(&v);
		return;
	}
	if (walk != WALK_HOST)
		return;
	d = domain_state();
	cr_expect_eq(d.users, domain_before.users, "%s: %u users, not %u", what,
		     d.users, domain_before.users);
	cr_expect_eq(d.refs, domain_before.refs, "%s: %u refs, not %u", what,
		     d.refs, domain_before.refs);
	cr_expect_eq(d.perf_events, domain_before.perf_events,
		     "%s: %u perf events, not %u", what, d.perf_events,
		     domain_before.perf_events);
	cr_expect_eq(d.slots, domain_before.slots, "%s: %u slots, not %u", what,
		     d.slots, domain_before.slots);
}

/* A new context, on the kernel's calls, opens and reads. */
static void expect_later_open(const char *cgroup, const char *what)
{
	struct run r = {.cgroup = cgroup};
	struct shpmu_count c;

	r.pmu = new_context();
	cr_expect(r.pmu, "%s: a later shpmu_new fails: %s", what,
		  strerror(errno));
	if (!r.pmu)
		return;
	cr_expect_eq(step(&r, 0), 0, "%s: a later open fails", what);
	cr_expect_eq(step(&r, 5), 0, "%s: a later cgroup open fails", what);
	for (int k = 0; k < r.nh; k++)
		cr_expect_eq(shpmu_read(r.pmu, r.h[k], &c), 0,
			     "%s: a later read fails", what);
	shpmu_free(r.pmu);
}

static int walked, absent;

/* Whether a step may succeed although its call failed: EINTR is retried,
 * a close or munmap has released its resource anyway, closing a handle
 * disables its event only as a courtesy, a lock's release is followed by
 * the close of its fd (which releases it too). And ENOENT from a call that
 * asks whether something is there (a path, a pin, a map entry: the fault
 * layer marks those) takes the path of its absence, which must end as well as
 * the real one: counted apart, the checks after it (fds, other handles, the
 * domain's state, a later open) made as for any other. */
static bool may_succeed(int err, int i)
{
	if (err == ENOENT && walk != WALK_CLASSIC && fault.fired_lookup) {
		absent++;
		return true;
	}
	return err == EINTR || fault.fired_kind == FAULT_CLOSE ||
	       fault.fired_kind == FAULT_MUNMAP ||
	       fault.fired_kind == FAULT_UNLOCK ||
	       (fault.fired_kind == FAULT_IOCTL && i == 15);
}

/* One run with the Nth call failing. */
static void run_with_fault(const char *cgroup, int n, int err, int base_fds)
{
	struct run r = {.cgroup = cgroup};
	int fds = count_fds(), ret;
	char what[128];

	fault_reset();
	fault_fail(FAULT_ANY, n, err);
	ret = make_context(&r);
	if (fault.fired && (ret || !may_succeed(err, -1))) {
		snprintf(what, sizeof(what),
			 "%s: call %d (kind %d) failing with %d in shpmu_new",
			 walk_names[walk], n, fault.fired_kind, err);
		walked++;
		cr_expect_lt(ret, 0, "%s: the step succeeded", what);
		cr_expect_neq(err, EINTR, "%s: EINTR reported", what);
		if (!ret) {
			shpmu_free(r.pmu);
			r.pmu = NULL;
		}
		cr_expect_eq(count_fds(), fds, "%s: fds leaked", what);
		expect_bystander_reads(what);
		expect_domain_as_before(what);
		expect_later_open(cgroup, what);
		return;
	}
	if (fault.fired)
		walked++; /* met and retried */
	cr_assert_eq(ret, 0, "%s: shpmu_new failed with no fault",
		     walk_names[walk]);
	for (int i = 0; !fault.fired; i++) {
		struct shpmu_stats before, after;

		fds = count_fds();
		shpmu_get_stats(r.pmu, &before);
		ret = step(&r, i);
		if (ret == 1)
			break;
		if (!fault.fired) {
			cr_assert_eq(ret, 0, "step %d failed with no fault", i);
			continue;
		}
		snprintf(what, sizeof(what),
			 "%s: call %d (kind %d) failing with %d in step %d",
			 walk_names[walk], n, fault.fired_kind, err, i);
		walked++;
		shpmu_get_stats(r.pmu, &after);
		if (ret == 0) {
			cr_expect(may_succeed(err, i), "%s: the step succeeded",
				  what);
		} else {
			cr_expect_lt(ret, 0, "%s", what);
			cr_expect_eq(errno, -ret, "%s: errno", what);
			cr_expect_neq(err, EINTR, "%s: EINTR reported", what);
			/* (What the BPF program counts of the kernel's
			 * switches moves on by itself.) */
			after.switches_unseen = before.switches_unseen;
			after.unattributed_ns = before.unattributed_ns;
			cr_expect_eq(memcmp(&before, &after, sizeof(before)), 0,
				     "%s: stats changed", what);
			cr_expect_eq(count_fds(), fds, "%s: fds leaked", what);
		}
		expect_others_read(&r, what);
		expect_bystander_reads(what);
	}
	shpmu_free(r.pmu);
	snprintf(what, sizeof(what), "%s: call %d, fault %d", walk_names[walk],
		 n, err);
	cr_expect_eq(count_fds(), base_fds, "%s: fds after free", what);
	expect_domain_as_before(what);
	if (walks_new())
		expect_later_open(cgroup, what);
}

static int total_calls, total_walked;

static void walk_all(const char *cgroup)
{
	static const char *const kind_names[FAULT_ANY] = {"perf_event_open",
							  "read",
							  "file read",
							  "ioctl",
							  "close",
							  "openat",
							  "handle",
							  "fs",
							  "lock",
							  "unlock",
							  "mmap",
							  "munmap",
							  "proc",
							  "bpf",
							  "bpf load"};
	enum fault_kind kinds[FAULT_MAX_CALLS + 1];
	bool lookups[FAULT_MAX_CALLS + 1];
	int base_fds, total, want = 0, calls_of[FAULT_ANY];

	/* Once to warm what the library keeps per thread (this thread's
	 * identity), so that every later run makes the same calls. */
	count_calls(cgroup);
	base_fds = count_fds();
	if (walk == WALK_HOST)
		domain_before = domain_state();
	total = count_calls(cgroup);
	cr_assert_gt(total, 40, "the scenario makes %d calls", total);
	cr_assert_leq(total, FAULT_MAX_CALLS);
	memcpy(kinds, fault.kinds, sizeof(kinds));
	memcpy(lookups, fault.lookups, sizeof(lookups));
	memcpy(calls_of, fault.calls_of, sizeof(calls_of));
	walked = absent = 0;
	for (int n = 1; n <= total; n++)
		for (int f = 0; f < NFAULTS; f++) {
			/* ENOENT is an answer of lookups only: a read, an
			 * ioctl or a lock never gives it. */
			if (faults[f] == ENOENT && !lookups[n])
				continue;
			/* A short read is a fault of reads only. */
			if (faults[f] == FAULT_SHORT_READ &&
			    kinds[n] != FAULT_READ)
				continue;
			/* libbpf's load cannot be tried twice: an EINTR
			 * inside it is libbpf's to retry, not ours. */
			if (faults[f] == EINTR && kinds[n] == FAULT_BPF_LOAD)
				continue;
			want++;
			run_with_fault(cgroup, n, faults[f], base_fds);
		}
	printf("fault walk (%s): %d calls, %d injected faults (%d ENOENT taken "
	       "for absence)\n",
	       walk_names[walk], total, walked, absent);
	printf("  calls:");
	for (int k = 0; k < FAULT_ANY; k++)
		if (calls_of[k])
			printf(" %s %d", kind_names[k], calls_of[k]);
	printf("\n");
	fflush(stdout);
	cr_expect_eq(walked, want);
	total_calls += total;
	total_walked += walked;
}

/* The cgroup every walk's scenario counts, made for it. */
static const char *walk_cgroup(void)
{
	struct shpmu *setup = shpmu_new(NULL);

	cr_assert(setup);
	cg_setup(setup);
	shpmu_free(setup);
	return cg_make("faults");
}

/* The classic backend's walk: the one valgrind runs too (test faults). */
Test(faults, classic_walk, .timeout = 1800)
{
	const char *cgroup = walk_cgroup();

	walk = WALK_CLASSIC;
	walk_all(cgroup);
	cg_teardown();
}

#ifdef HAVE_BPF
/* The BPF backend in process scope, then host scope joining a domain
 * another context is a member of: a program load a context, about 90 s
 * (test faults-bpf). */
Test(faults, bpf_and_host_walks, .timeout = 1800)
{
	const char *cgroup = walk_cgroup();

	walk = WALK_BPF;
	walk_all(cgroup);
	host_fs_setup();
	walk = WALK_HOST;
	bystander_join(cgroup);
	walk_all(cgroup);
	shpmu_free(bystander);
	bystander = NULL;
	printf("fault walks: %d calls, %d injected faults in both\n",
	       total_calls, total_walked);
	cg_teardown();
}

/* Host scope again, with no other member: each join makes the domain
 * (loads and attaches the program, pins it, makes the books), each free
 * removes it. About five minutes (test faults-maker, the slow suite). */
Test(faults, host_maker_walk, .timeout = 1800)
{
	const char *cgroup = walk_cgroup();

	host_fs_setup();
	walk = WALK_HOST_MAKER;
	walk_all(cgroup);
	cg_teardown();
}
#endif

/* FAULT_ONE=walk:n:errno runs that one fault (FAULT_TRACE=1 prints where
 * the call came from); n 0, that whole walk. */
Test(faults, one)
{
	const char *one = getenv("FAULT_ONE");
	int w, n, err;

	if (!one || sscanf(one, "%d:%d:%d", &w, &n, &err) != 3)
		return;
	const char *cgroup = walk_cgroup();

	walk = (enum walk_kind)w;
	if (walk >= WALK_HOST)
		host_fs_setup();
	if (walk == WALK_HOST)
		bystander_join(cgroup);
	if (!n) {
		walk_all(cgroup);
		if (bystander)
			shpmu_free(bystander);
		bystander = NULL;
		cg_teardown();
		return;
	}
	count_calls(cgroup);
	if (walk == WALK_HOST)
		domain_before = domain_state();
	count_calls(cgroup);
	for (int i = 1; i <= fault.calls && i <= FAULT_MAX_CALLS; i++)
		fprintf(stderr, "%d:%d ", i, fault.kinds[i]);
	fprintf(stderr, "\n");
	run_with_fault(cgroup, n, err, count_fds());
	if (bystander)
		shpmu_free(bystander);
	bystander = NULL;
	cg_teardown();
}
