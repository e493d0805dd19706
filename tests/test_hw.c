// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Real hardware events: cycles and instructions on tasks, CPUs and
 * cgroups, with the classic and the BPF backend, shared, grouped and
 * multiplexed, each handle judged against private raw perf fds over the
 * same window (tests/README.md). Where there is no hardware PMU, or the
 * PMU model stands in for one, every test skips with one line saying why.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup_helpers.h"
#include "helpers.h"
#include "twin.h"

/*
 * The events under test: the one place that names them. HW_TYPE
 * PERF_TYPE_SOFTWARE turns cycles into cpu-clock and instructions into
 * task-clock (the same config numbers): the suite's logic can be run on
 * a machine without a PMU that way (multiplexing aside, which software
 * events never do).
 */
#define HW_TYPE PERF_TYPE_HARDWARE
struct hw_event {
	const char *name;
	uint64_t config;
};
static const struct hw_event hw_events[] = {
	{"cycles", PERF_COUNT_HW_CPU_CYCLES},
	{"instructions", PERF_COUNT_HW_INSTRUCTIONS},
};
#define NEVENTS ((int)(sizeof(hw_events) / sizeof(hw_events[0])))
/* Distinct events for making the PMU multiplex: every generic config of
 * HW_TYPE, plain, user only, kernel only, user and hypervisor only. */
#define FILLER_CONFIGS	PERF_COUNT_HW_MAX
#define FILLER_VARIANTS 4
#define FILLERS_MAX	32

/*
 * Tolerances.
 *
 * HW_GIVE_PCT: where a raw event's window holds the handle's in time and
 * both count on the same CPU's PMU without multiplexing (which every test
 * checks), containment is exact on bare metal: one counter cannot count
 * an event the other missed. A hypervisor's virtual PMU starts and stops
 * a guest's counters one at a time at VM exits, so that counters started
 * together may be a few hundred events apart at each exit: a hundredth
 * of a per cent of windows of 10^8 events leaves room for a few hundred
 * exits.
 */
#define HW_GIVE_PCT 0.01
/*
 * HW_EDGE_PCT: one raw fd enabled just before the handle's window opens
 * and disabled (or read) just after it closes counts what the handle
 * counts plus the handle's own edge calls (shpmu_open, _enable,
 * _disable, _read) on a task event, which counts nothing while the
 * thread is preempted. Those calls take microseconds; a first open
 * (perf_event_open) took up to 150 us on this project's VM. The windows
 * are 400 ms of CPU: 0.5% (2 ms) is ten times those edges, and a fifth
 * of what a handle that lost or gained one 10 ms step of its window
 * would be off.
 *
 * A BPF handle's edges also bring every CPU up to date, one interrupt
 * per CPU, and its first open makes an event on each CPU: about 110 us
 * an edge on this 2-CPU VM (ASan: 200 us), and a multiple of that with
 * more CPUs. Its edges are held to HW_BPF_PCT (4 ms) instead.
 */
#define HW_EDGE_PCT 0.5
/*
 * HW_CHILD_PCT: a child's own task event (a raw fd on its pid) against
 * its CPU's or cgroup's count over a window that holds its work: the
 * task event is a part of both, but perf switches cgroup events at a
 * task switch just before it switches task events (and back after), so
 * the child's event counts the few hundred cycles between the two at
 * each of its switches that the cgroup's misses: a few hundred switches
 * in a 200 ms burn on a busy machine, 10^5 of 10^8 events.
 */
#define HW_CHILD_PCT 0.5
/* HW_BPF_PCT: the BPF backend reads each CPU's event at the sched_switch
 * tracepoint, not where perf switches task and cgroup events: the same
 * runs, measured at other instants at each switch (see CG_BPF_TWIN_PCT,
 * whose reasoning holds for any event counted while a task runs). */
#define HW_BPF_PCT CG_BPF_TWIN_PCT
/*
 * HW_MUX_PCT: a multiplexed event's scaled count against a pinned raw
 * event, which never leaves its counter, over the same window. Scaling
 * assumes that the event's rate in the slices it ran (one rotation
 * interval, 1 to 4 ms, each) is its rate in those it did not: a steady
 * loop keeps the rate steady up to what interrupts it (ticks, the
 * rotation itself, a host's steal of tens of ms), of which a 400 ms
 * window averages over a hundred slices. 3% is several such bursts
 * landing only in the slices the event ran; the test also makes the
 * event run at most 3/4 of the time, so that an unscaled count is at
 * least 25% short and fails.
 */
#define HW_MUX_PCT 3.0
#define MUX_RATIO  0.75

/* Windows of work: long against the edges (see above). */
#define TASK_BURN_NS  400000000ull
#define CHILD_BURN_NS 200000000ull
#define MUX_PROBE_NS  40000000ull
#define MUX_BURN_NS   400000000ull

static struct shpmu *ctx, *fill;
static bool cgroups_made;
/* Host scope's BPF filesystem, mounted in the test's own namespace. */
static char bpffs[64];

static void teardown(void)
{
	shpmu_free(ctx);
	shpmu_free(fill);
	ctx = fill = NULL;
	if (cgroups_made)
		cg_teardown();
	cgroups_made = false;
	if (bpffs[0]) {
		umount2(bpffs, MNT_DETACH);
		rmdir(bpffs);
	}
	bpffs[0] = '\0';
}

TestSuite(hw, .fini = teardown);

static struct perf_event_attr hw_attr(const struct hw_event *e, bool disabled)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = HW_TYPE;
	a.config = e->config;
	a.disabled = disabled;
	return a;
}

static const char *errno_name(int err)
{
	switch (err) {
	case ENOENT:
		return "ENOENT";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case ENODEV:
		return "ENODEV";
	case EACCES:
		return "EACCES";
	case EPERM:
		return "EPERM";
	default:
		return strerror(err);
	}
}

/* Skips the test, with one line saying why, where real hardware events
 * cannot be counted: probed with a raw event of the first event on the
 * calling thread. */
static void need_hw(void)
{
	const struct hw_event *e = &hw_events[0];
	struct perf_event_attr a = hw_attr(e, true);
	const char *model = getenv("SHPMU_PMU_MODEL");
	char paranoid[32] = "unknown";
	int fd, err;
	FILE *f;

	if (model)
		cr_skip_test("the PMU model is on (SHPMU_PMU_MODEL=%s): the hw "
			     "suite wants real counters",
			     model);
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return;
	}
	err = errno;
	if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
		cr_skip_test("no hardware PMU: perf_event_open(%s) gave %s",
			     e->name, errno_name(err));
	if (err == EACCES || err == EPERM) {
		f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
		if (f) {
			if (fscanf(f, "%31s", paranoid) != 1)
				strcpy(paranoid, "unreadable");
			fclose(f);
		}
		cr_skip_test("perf_event_open(%s) gave %s: "
			     "kernel.perf_event_paranoid is %s (counting the "
			     "kernel and CPUs needs <= 0, or CAP_PERFMON)",
			     e->name, errno_name(err), paranoid);
	}
	cr_assert_fail("perf_event_open(%s) on this thread: %s", e->name,
		       strerror(err));
}

/* A context of this backend, logging to record_log (a BPF one skips where
 * the build has no BPF backend). */
static struct shpmu *context(enum shpmu_cgroup_backend b)
{
#ifndef HAVE_BPF
	if (b == SHPMU_CGROUP_BACKEND_BPF)
		cr_skip_test("libshpmu was built without the BPF backend (no "
			     "clang, bpftool, libbpf or kernel BTF, or "
			     "-Dbpf=disabled)");
#endif
	return cg_context(b);
}

/* A host-scope context (the domain's BPF program counts its CPU targets)
 * on a BPF filesystem of the test's own, which nobody else sees. */
static struct shpmu *host_context(void)
{
	char dir[sizeof(bpffs) + 8];
	struct shpmu *p;

#ifndef HAVE_BPF
	cr_skip_test("libshpmu was built without the BPF backend (no clang, "
		     "bpftool, libbpf or kernel BTF, or -Dbpf=disabled)");
#endif
	private_mount_namespace();
	snprintf(bpffs, sizeof(bpffs), "/tmp/shpmu-hw-bpffs-XXXXXX");
	cr_assert(mkdtemp(bpffs), "mkdtemp: %s", strerror(errno));
	cr_assert_eq(mount("bpf", bpffs, "bpf", 0, "mode=0755"), 0,
		     "mount -t bpf: %s", strerror(errno));
	snprintf(dir, sizeof(dir), "%s/shpmu", bpffs);
	SHPMU_OPTS(opts, .scope = SHPMU_SCOPE_HOST, .bpffs_dir = dir,
		   .log = record_log);
	p = shpmu_new(&opts);
	cr_assert(p, "host scope: %s (%s)", strerror(errno), last_log);
	return p;
}

/* How far a handle's edges may count (HW_EDGE_PCT, HW_BPF_PCT). */
static double edge_pct(enum shpmu_cgroup_backend b)
{
	return b == SHPMU_CGROUP_BACKEND_BPF ? HW_BPF_PCT : HW_EDGE_PCT;
}

static const char *backend_name(enum shpmu_cgroup_backend b)
{
	return b == SHPMU_CGROUP_BACKEND_BPF ? "BPF" : "classic";
}

/* The handle is counted by the backend the test is about: BPF-counted
 * handles read from shared memory, classic ones say -EOPNOTSUPP. */
static void expect_backend(struct shpmu *p, int h, enum shpmu_cgroup_backend b)
{
	struct shpmu_count c;
	int err = shpmu_read_cached(p, h, &c);

	if (b == SHPMU_CGROUP_BACKEND_BPF)
		cr_assert_eq(err, 0, "the handle is not counted by BPF: %s",
			     strerror(-err));
	else
		cr_assert_eq(err, -EOPNOTSUPP,
			     "the handle is not a classic one: %d", err);
}

/* The premise of every comparison but the multiplexing one: the raw event
 * ran all the time it was enabled (no other user of counters pushed the
 * test's events into multiplexing). */
static void expect_ran_throughout(const uint64_t v[3], const char *what)
{
	cr_assert_eq(v[1], v[2],
		     "%s was multiplexed (ran %llu of %llu ns): something "
		     "else holds this PMU's counters (perf, a profiler, the "
		     "NMI watchdog on a PMU with few counters)",
		     what, (unsigned long long)v[2], (unsigned long long)v[1]);
}

static void expect_twins_ran(const struct twin *t, const char *what)
{
	expect_ran_throughout(t->i, what);
	expect_ran_throughout(t->o, what);
}

/* x within [lo, hi], give or take pct% of each; a BPF-counted x may fall
 * short by its bound (cg_read_bound(); 0 for classic handles). */
static void expect_between(uint64_t x, uint64_t bound, uint64_t lo, uint64_t hi,
			   double pct, const char *what)
{
	cg_expect_between_bound(x, bound, lo, hi, pct, what);
}

static void expect_handle_ran(const struct shpmu_count *c, const char *what)
{
	cr_expect_eq(c->time_enabled, c->time_running,
		     "%s: the handle ran %llu of %llu ns enabled", what,
		     (unsigned long long)c->time_running,
		     (unsigned long long)c->time_enabled);
}

/* ---- the calling task ---- */

/*
 * A handle on this thread, enabled and disabled between twins (twin.h):
 * out's window holds the handle's, which holds in's. Classic: in <= h <=
 * out (HW_GIVE_PCT). BPF: the same, HW_BPF_PCT. Either way out - in, what
 * the handle's own edge calls counted, is small against the window
 * (edge_pct()), so that the bracket is tight.
 */
static void task_window(enum shpmu_cgroup_backend b)
{
	struct shpmu_target self = self_target();
	char what[96];

	need_hw();
	ctx = context(b);
	for (int i = 0; i < NEVENTS; i++) {
		const struct hw_event *e = &hw_events[i];
		struct perf_event_attr a = hw_attr(e, true);
		struct shpmu_count c;
		struct twin tw;
		uint64_t bound;
		int h;

		h = shpmu_open(ctx, &a, &self);
		cr_assert_geq(h, 0, "%s: %s (%s)", e->name, strerror(-h),
			      last_log);
		expect_backend(ctx, h, b);
		tw = twin_open_attr(&a, 0, -1);
		cr_assert_eq(shpmu_reset(ctx, h), 0);
		twin_before_open(&tw);
		cr_assert_eq(shpmu_enable(ctx, h), 0);
		twin_after_open(&tw);
		burn_cpu_ns(TASK_BURN_NS);
		twin_before_close(&tw, true);
		cr_assert_eq(shpmu_disable(ctx, h), 0);
		twin_after_close(&tw, true);
		c = cg_read_bound(ctx, h, &bound);
		snprintf(what, sizeof(what), "%s on this thread, %s", e->name,
			 backend_name(b));
		expect_twins_ran(&tw, what);
		expect_handle_ran(&c, what);
		expect_between(c.value, bound, tw.i[0], tw.o[0],
			       b == SHPMU_CGROUP_BACKEND_BPF ? HW_BPF_PCT
							     : HW_GIVE_PCT,
			       what);
		expect_within_pct(tw.o[0], tw.i[0], edge_pct(b),
				  "the twins around the handle's edges");
		/* A window of work, not of edges: tens of millions at least
		 * (400 ms of a loop, at any clock rate above 25 MHz). */
		cr_expect_gt(tw.i[0], 10000000, "%s: %llu in 400 ms", what,
			     (unsigned long long)tw.i[0]);
		twin_close(&tw);
		cr_assert_eq(shpmu_close(ctx, h), 0);
	}
}

Test(hw, task_classic)
{
	task_window(SHPMU_CGROUP_BACKEND_PERF);
}

Test(hw, task_bpf)
{
	task_window(SHPMU_CGROUP_BACKEND_BPF);
}

/* ---- CPUs ---- */

/* A child parked (cg_spawn) whose every run is on cpu: it inherits the
 * affinity this thread has at its fork, which is then given back. */
static struct cg_child spawn_on_cpu(const char *cgroup, int cpu, uint64_t ns)
{
	cpu_set_t was;
	struct cg_child c;

	cr_assert_eq(sched_getaffinity(0, sizeof(was), &was), 0);
	pin_to_cpu(cpu);
	c = cg_spawn(cgroup, ns, 0);
	cr_assert_eq(sched_setaffinity(0, sizeof(was), &was), 0);
	return c;
}

/* A raw event of a on task pid, disabled. */
static int raw_on_task(const struct perf_event_attr *a, pid_t pid)
{
	struct perf_event_attr r = *a;

	r.disabled = 1;
	return raw_open_attr(&r, pid, -1, 0);
}

/*
 * A handle on one CPU (cpu) or on all (SHPMU_ALL_CPUS) while a child
 * pinned to a CPU burns, between twins on each CPU it spans: each CPU's
 * share (shpmu_read_cpu) and the total lie between the twins' exactly
 * (HW_GIVE_PCT; HW_BPF_PCT where host scope's BPF program counts it),
 * and the total holds the child's own count (a raw event on the child,
 * HW_CHILD_PCT). Other tasks run on these CPUs too: the twins count them
 * just as the handle does.
 */
static void cpu_window(int cpu, enum shpmu_cgroup_backend b)
{
	double pct = b == SHPMU_CGROUP_BACKEND_BPF ? HW_BPF_PCT : HW_GIVE_PCT;
	int ncpus = online_cpus(), first = cpu == SHPMU_ALL_CPUS ? 0 : cpu;
	int n = cpu == SHPMU_ALL_CPUS ? ncpus : 1;
	/* The child burns on the last CPU the handle spans. */
	int busy = first + n - 1;
	struct shpmu_target t = {.kind = SHPMU_TARGET_CPU,
				 .cpu = cpu,
				 .flags = SHPMU_TARGET_BIND_CPU};
	char what[96];

	need_hw();
	if (cpu != SHPMU_ALL_CPUS && cpu >= ncpus)
		cr_skip_test("needs CPU %d, this machine has %d CPUs", cpu,
			     ncpus);
	/* Process scope counts CPUs with classic events whatever its
	 * cgroup backend; host scope's BPF program counts them. */
	ctx = b == SHPMU_CGROUP_BACKEND_BPF
		      ? host_context()
		      : context(SHPMU_CGROUP_BACKEND_PERF);
	for (int i = 0; i < NEVENTS; i++) {
		const struct hw_event *e = &hw_events[i];
		struct perf_event_attr a = hw_attr(e, false);
		struct twin *tw = calloc((size_t)n, sizeof(*tw));
		struct shpmu_count c, *per = calloc((size_t)n, sizeof(*per));
		uint64_t lo = 0, hi = 0, own[3], bound;
		struct cg_child child;
		int h, mine;

		cr_assert(tw && per);
		for (int k = 0; k < n; k++)
			tw[k] = twin_open_attr(&a, -1, first + k);
		child = spawn_on_cpu(NULL, busy, CHILD_BURN_NS);
		mine = raw_on_task(&a, child.pid);
		for (int k = 0; k < n; k++)
			twin_before_open(&tw[k]);
		h = shpmu_open(ctx, &a, &t);
		for (int k = 0; k < n; k++)
			twin_after_open(&tw[k]);
		cr_assert_geq(h, 0, "%s: %s (%s)", e->name, strerror(-h),
			      last_log);
		expect_backend(ctx, h, b);
		raw_enable(mine);
		cg_go(&child);
		cg_finish(&child);
		raw_disable(mine);
		raw_read(mine, own);
		for (int k = 0; k < n; k++)
			twin_before_close(&tw[k], false);
		c = cg_read_bound(ctx, h, &bound);
		for (int k = 0; k < n; k++)
			cr_assert_eq(shpmu_read_cpu(ctx, h, first + k, &per[k]),
				     0);
		for (int k = 0; k < n; k++)
			twin_after_close(&tw[k], false);
		cg_reap(&child);

		snprintf(what, sizeof(what), "the child's own %s", e->name);
		expect_ran_throughout(own, what);
		for (int k = 0; k < n; k++) {
			snprintf(what, sizeof(what), "%s on CPU %d", e->name,
				 first + k);
			expect_twins_ran(&tw[k], what);
			expect_handle_ran(&per[k], what);
			expect_between(per[k].value, 0, tw[k].i[0], tw[k].o[0],
				       pct, what);
			lo += tw[k].i[0];
			hi += tw[k].o[0];
		}
		snprintf(what, sizeof(what), "%s on %s, %s", e->name,
			 cpu == SHPMU_ALL_CPUS ? "all CPUs" : "one CPU",
			 b == SHPMU_CGROUP_BACKEND_BPF ? "host scope's BPF"
						       : "classic");
		/* A CPU's counts are all its own, whoever ran: nothing
		 * is left unattributed. */
		cr_expect_eq(bound, 0, "%s: bound %llu", what,
			     (unsigned long long)bound);
		expect_between(c.value, 0, lo, hi, pct, what);
		cr_log_info("%s: the child's own %llu of %llu", what,
			    (unsigned long long)own[0],
			    (unsigned long long)c.value);
		cr_expect_geq((double)c.value,
			      (double)own[0] * (1 - HW_CHILD_PCT / 100),
			      "%s: %llu, less than the child alone counted "
			      "(%llu)",
			      what, (unsigned long long)c.value,
			      (unsigned long long)own[0]);
		cr_expect_gt(own[0], 10000000, "the child's %s in 200 ms",
			     e->name);
		close(mine);
		for (int k = 0; k < n; k++)
			twin_close(&tw[k]);
		free(tw);
		free(per);
		cr_assert_eq(shpmu_close(ctx, h), 0);
	}
}

Test(hw, one_cpu_classic)
{
	cpu_window(online_cpus() > 1 ? 1 : 0, SHPMU_CGROUP_BACKEND_PERF);
}

Test(hw, all_cpus_classic)
{
	cpu_window(SHPMU_ALL_CPUS, SHPMU_CGROUP_BACKEND_PERF);
}

Test(hw, one_cpu_host_bpf)
{
	cpu_window(online_cpus() > 1 ? 1 : 0, SHPMU_CGROUP_BACKEND_BPF);
}

Test(hw, all_cpus_host_bpf)
{
	cpu_window(SHPMU_ALL_CPUS, SHPMU_CGROUP_BACKEND_BPF);
}

/* ---- cgroups ---- */

/* Raw cgroup events of a on every online CPU, enabled: the cgroup's twin
 * (cgroup_helpers.h) for any attr, on any number of CPUs. */
struct cgroup_raw {
	int n, *fds;
};

static struct cgroup_raw cgroup_raw_open(const char *abs,
					 const struct perf_event_attr *a)
{
	struct perf_event_attr r = *a;
	struct cgroup_raw t = {0, calloc((size_t)online_cpus(), sizeof(int))};
	int dir = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	cr_assert(t.fds);
	cr_assert_geq(dir, 0, "open %s: %s", abs, strerror(errno));
	r.disabled = 1;
	for (int cpu = 0; cpu < online_cpus(); cpu++)
		t.fds[t.n++] =
			raw_open_attr(&r, dir, cpu, PERF_FLAG_PID_CGROUP);
	close(dir);
	for (int k = 0; k < t.n; k++)
		raw_enable(t.fds[k]);
	return t;
}

/* The cgroup's raw events' sum; each must have run throughout. */
static uint64_t cgroup_raw_read(const struct cgroup_raw *t, const char *what)
{
	uint64_t sum = 0, v[3];

	for (int k = 0; k < t->n; k++) {
		raw_read(t->fds[k], v);
		expect_ran_throughout(v, what);
		sum += v[0];
	}
	return sum;
}

static void cgroup_raw_close(struct cgroup_raw *t)
{
	for (int k = 0; k < t->n; k++)
		close(t->fds[k]);
	free(t->fds);
	t->n = 0;
	t->fds = NULL;
}

/*
 * A handle on a cgroup, on all CPUs, while a child burns in it: between
 * the child's own count (a raw event on its pid, HW_CHILD_PCT) and the
 * cgroup's raw events on every CPU, opened before the handle and read
 * after it (exact for classic, HW_BPF_PCT for BPF).
 */
static void cgroup_window(enum shpmu_cgroup_backend b)
{
	char what[96];

	need_hw();
	ctx = context(b);
	cg_setup(ctx);
	cgroups_made = true;
	for (int i = 0; i < NEVENTS; i++) {
		const struct hw_event *e = &hw_events[i];
		struct perf_event_attr a = hw_attr(e, false);
		struct shpmu_count c;
		uint64_t own[3], twin, bound;
		const char *path = cg_make(e->name);
		struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
					 .cpu = SHPMU_ALL_CPUS,
					 .cgroup_path = path};
		struct cg_child child;
		struct cgroup_raw out;
		int h, mine;

		child = cg_spawn(path, CHILD_BURN_NS, 10);
		mine = raw_on_task(&a, child.pid);
		out = cgroup_raw_open(path, &a);
		h = shpmu_open(ctx, &a, &t);
		cr_assert_geq(h, 0, "%s: %s (%s)", e->name, strerror(-h),
			      last_log);
		expect_backend(ctx, h, b);
		raw_enable(mine);
		cg_go(&child);
		cg_finish(&child);
		raw_disable(mine);
		raw_read(mine, own);
		c = cg_read_bound(ctx, h, &bound);
		snprintf(what, sizeof(what), "the cgroup's raw %s", e->name);
		twin = cgroup_raw_read(&out, what);
		cg_reap(&child);
		close(mine);
		cgroup_raw_close(&out);
		cr_assert_eq(shpmu_close(ctx, h), 0);

		snprintf(what, sizeof(what), "%s on a cgroup, %s", e->name,
			 backend_name(b));
		expect_ran_throughout(own, "the child's own event");
		expect_handle_ran(&c, what);
		if (b == SHPMU_CGROUP_BACKEND_BPF) {
			expect_between(c.value, bound, own[0], twin, HW_BPF_PCT,
				       what);
		} else {
			cr_log_info("%s: %llu, between the child's own %llu "
				    "and the cgroup's raw events' %llu",
				    what, (unsigned long long)c.value,
				    (unsigned long long)own[0],
				    (unsigned long long)twin);
			cr_expect_leq((double)c.value,
				      (double)twin * (1 + HW_GIVE_PCT / 100),
				      "%s: %llu, more than the cgroup's raw "
				      "events around it (%llu)",
				      what, (unsigned long long)c.value,
				      (unsigned long long)twin);
			cr_expect_geq((double)c.value,
				      (double)own[0] * (1 - HW_CHILD_PCT / 100),
				      "%s: %llu, less than its child alone "
				      "counted (%llu)",
				      what, (unsigned long long)c.value,
				      (unsigned long long)own[0]);
		}
		cr_expect_gt(own[0], 10000000, "the child's %s in 200 ms",
			     e->name);
	}
}

Test(hw, cgroup_classic)
{
	cgroup_window(SHPMU_CGROUP_BACKEND_PERF);
}

Test(hw, cgroup_bpf)
{
	cgroup_window(SHPMU_CGROUP_BACKEND_BPF);
}

/* ---- sharing ---- */

/*
 * Two handles on this thread's event, with overlapping windows: one
 * kernel event, and each handle within HW_EDGE_PCT (HW_BPF_PCT for BPF)
 * of a raw fd enabled just before its window opened and read or
 * disabled just after it closed. The windows differ by 200 ms of work at
 * each end, so a handle that counted the other's window would fail.
 */
static void sharing(enum shpmu_cgroup_backend b)
{
	struct shpmu_target self = self_target();
	char what[96];

	need_hw();
	ctx = context(b);
	for (int i = 0; i < NEVENTS; i++) {
		const struct hw_event *e = &hw_events[i];
		struct perf_event_attr a = hw_attr(e, false);
		struct shpmu_stats before, st;
		struct shpmu_count c1, c2;
		uint64_t r1[3], r2[3], bound1, bound2;
		int h1, h2, raw1, raw2;

		raw1 = raw_on_task(&a, 0);
		raw2 = raw_on_task(&a, 0);
		cr_assert_eq(shpmu_get_stats(ctx, &before), 0);
		raw_enable(raw1);
		h1 = shpmu_open(ctx, &a, &self);
		cr_assert_geq(h1, 0, "%s: %s (%s)", e->name, strerror(-h1),
			      last_log);
		burn_cpu_ns(TASK_BURN_NS / 2);
		raw_enable(raw2);
		h2 = shpmu_open(ctx, &a, &self);
		cr_assert_geq(h2, 0, "%s: %s (%s)", e->name, strerror(-h2),
			      last_log);
		cr_assert_eq(shpmu_get_stats(ctx, &st), 0);
		burn_cpu_ns(TASK_BURN_NS / 2);
		cr_assert_eq(shpmu_disable(ctx, h1), 0);
		raw_disable(raw1);
		burn_cpu_ns(TASK_BURN_NS / 2);
		c2 = cg_read_bound(ctx, h2, &bound2);
		raw_disable(raw2);
		c1 = cg_read_bound(ctx, h1, &bound1);
		raw_read(raw1, r1);
		raw_read(raw2, r2);
		expect_backend(ctx, h1, b);
		cr_assert_eq(shpmu_close(ctx, h1), 0);
		cr_assert_eq(shpmu_close(ctx, h2), 0);

		snprintf(what, sizeof(what), "%s shared, %s", e->name,
			 backend_name(b));
		cr_expect_eq(st.handles - before.handles, 2, "%s", what);
		cr_expect_eq(st.kernel_events - before.kernel_events, 1,
			     "%s: two handles on one attr cost %llu kernel "
			     "events",
			     what,
			     (unsigned long long)(st.kernel_events -
						  before.kernel_events));
		cr_expect_eq(st.shared_opens - before.shared_opens, 1, "%s",
			     what);
		/* Classic: one fd on this thread (BPF's are per CPU). */
		if (b == SHPMU_CGROUP_BACKEND_PERF)
			cr_expect_eq(st.kernel_fds - before.kernel_fds, 1, "%s",
				     what);
		expect_ran_throughout(r1, "the first raw fd");
		expect_ran_throughout(r2, "the second raw fd");
		expect_handle_ran(&c1, "the first handle");
		expect_handle_ran(&c2, "the second handle");
		double pct = edge_pct(b);
		cg_expect_twin_bound(c1.value, bound1, r1[0], pct,
				     "the first handle");
		cg_expect_twin_bound(c2.value, bound2, r2[0], pct,
				     "the second handle");
		expect_within_pct(c1.time_enabled, r1[1], pct,
				  "the first handle's time_enabled");
		expect_within_pct(c2.time_enabled, r2[1], pct,
				  "the second handle's time_enabled");
		close(raw1);
		close(raw2);
	}
}

Test(hw, sharing_classic)
{
	sharing(SHPMU_CGROUP_BACKEND_PERF);
}

Test(hw, sharing_bpf)
{
	sharing(SHPMU_CGROUP_BACKEND_BPF);
}

/* ---- multiplexing ---- */

/* The cpu PMU's counters by sysfs (general and fixed), 0 where it does not
 * say. */
static int sysfs_counters(void)
{
	static const char *const files[] = {
		"/sys/bus/event_source/devices/cpu/caps/num_counters",
		"/sys/bus/event_source/devices/cpu/caps/num_fixed_counters",
	};
	int total = 0;

	for (int k = 0; k < 2; k++) {
		FILE *f = fopen(files[k], "re");
		int n = 0;

		if (!f)
			continue;
		if (fscanf(f, "%i", &n) == 1 && n > 0)
			total += n;
		fclose(f);
	}
	return total;
}

/* Filler candidate k: a distinct attr of HW_TYPE (never e's), or false
 * once past the last. */
static bool filler_attr(const struct hw_event *e, int k,
			struct perf_event_attr *a)
{
	int config = k % FILLER_CONFIGS, variant = k / FILLER_CONFIGS;

	if (variant >= FILLER_VARIANTS)
		return false;
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = HW_TYPE;
	a->config = (uint64_t)config;
	a->exclude_kernel = variant == 1 || variant == 3;
	a->exclude_user = variant == 2;
	a->exclude_hv = variant == 3;
	return !(variant == 0 && a->config == e->config);
}

/* Opens the next filler that this machine has on t (in the fillers' own
 * classic context); false when none is left. */
static bool add_filler(const struct hw_event *e, const struct shpmu_target *t,
		       int *next)
{
	struct perf_event_attr a;

	for (; *next < FILLER_CONFIGS * FILLER_VARIANTS; (*next)++) {
		int h;

		if (!filler_attr(e, *next, &a))
			continue;
		h = shpmu_open(fill, &a, t);
		if (h == -ENOENT || h == -EOPNOTSUPP || h == -EINVAL)
			continue; /* not an event of this PMU */
		cr_assert_geq(h, 0, "filler %d: %s (%s)", *next, strerror(-h),
			      last_log);
		(*next)++;
		return true;
	}
	return false;
}

/* The share of a short burn that handle h ran. */
static double probe_ratio(int h)
{
	struct shpmu_count c;

	cr_assert_eq(shpmu_reset(ctx, h), 0);
	burn_cpu_ns(MUX_PROBE_NS);
	cr_assert_eq(shpmu_read(ctx, h, &c), 0);
	return c.time_enabled ? (double)c.time_running / c.time_enabled : 1;
}

/*
 * A handle on this thread among more distinct hardware events than the
 * PMU has counters (in a second, classic context: both compete for this
 * CPU's counters). It is judged against a pinned raw event, which keeps
 * its counter throughout, over the same window of a steady loop: its
 * time_running is short of its time_enabled, and its scaled count is the
 * raw count within HW_MUX_PCT. This thread stays on one CPU, whose PMU
 * rotates the events (on a hybrid machine, one PMU).
 *
 * The fillers go where the handle's kernel event is: the kernel gives a
 * CPU's flexible events counters before the running task's, and rotates
 * each context's own. A classic handle is a task event, among task
 * events on this thread; the BPF backend's is CPU 0's event (BPF
 * credits the thread from it), among events on CPU 0. Task fillers would
 * never push a CPU's event off.
 */
static void multiplexing(enum shpmu_cgroup_backend b)
{
	struct shpmu_target self = self_target();
	struct shpmu_target on0 = {.kind = SHPMU_TARGET_CPU,
				   .cpu = 0,
				   .flags = SHPMU_TARGET_BIND_CPU};
	const struct shpmu_target *where =
		b == SHPMU_CGROUP_BACKEND_BPF ? &on0 : &self;
	char what[96];

	need_hw();
	pin_to_cpu(0);
	ctx = context(b);
	fill = context(SHPMU_CGROUP_BACKEND_PERF);
	for (int i = 0; i < NEVENTS; i++) {
		const struct hw_event *e = &hw_events[i];
		struct perf_event_attr a = hw_attr(e, false), pinned;
		int want = sysfs_counters(), nfill = 0, next = 0, h, raw;
		struct shpmu_count c;
		uint64_t v[3], bound, scaled_bound;
		double ratio;

		h = shpmu_open(ctx, &a, &self);
		cr_assert_geq(h, 0, "%s: %s (%s)", e->name, strerror(-h),
			      last_log);
		expect_backend(ctx, h, b);
		/* As many fillers as sysfs says there are counters, then one
		 * more at a time until the handle runs at most MUX_RATIO of
		 * the time. */
		for (;;) {
			while (nfill < want && nfill < FILLERS_MAX &&
			       add_filler(e, where, &next))
				nfill++;
			ratio = probe_ratio(h);
			if (ratio <= MUX_RATIO)
				break;
			cr_assert(nfill < FILLERS_MAX && nfill == want,
				  "%s: with %d distinct events besides it, it "
				  "ran %.1f%% of the time: no multiplexing to "
				  "test (a PMU with more counters, or events "
				  "that do not take one)",
				  e->name, nfill, 100 * ratio);
			want = nfill + 1;
		}
		cr_log_info("%s: %d fillers (sysfs: %d counters), ran %.1f%% "
			    "of a probe",
			    e->name, nfill, sysfs_counters(), 100 * ratio);
		pinned = a;
		pinned.pinned = 1;
		pinned.disabled = 1;
		raw = raw_open_attr(&pinned, 0, -1, 0);
		raw_enable(raw);
		cr_assert_eq(shpmu_reset(ctx, h), 0);
		burn_cpu_ns(MUX_BURN_NS);
		c = cg_read_bound(ctx, h, &bound);
		raw_disable(raw);
		/* A pinned event that lost its counter reads 0 bytes:
		 * raw_read() fails the test then. */
		raw_read(raw, v);
		/* The bound is in counted units: scaled as the count is. */
		scaled_bound = c.time_running ? (uint64_t)((double)bound *
							   c.time_enabled /
							   c.time_running)
					      : bound;

		snprintf(what, sizeof(what), "%s multiplexed, %s", e->name,
			 backend_name(b));
		expect_ran_throughout(v, "the pinned raw event");
		cr_log_info("%s: ran %llu of %llu ns (%.1f%%), %llu counted, "
			    "scaled %llu, pinned raw %llu",
			    what, (unsigned long long)c.time_running,
			    (unsigned long long)c.time_enabled,
			    c.time_enabled
				    ? 100.0 * c.time_running / c.time_enabled
				    : 0,
			    (unsigned long long)c.value,
			    (unsigned long long)shpmu_scale(&c),
			    (unsigned long long)v[0]);
		cr_expect_lt(c.time_running, c.time_enabled,
			     "%s: not multiplexed", what);
		cr_expect_leq((double)c.time_running,
			      (double)c.time_enabled * (MUX_RATIO + 0.05),
			      "%s: ran %llu of %llu ns: too little "
			      "multiplexing to tell a scaled count",
			      what, (unsigned long long)c.time_running,
			      (unsigned long long)c.time_enabled);
		cr_expect_gt(c.time_running, 0, "%s: never ran", what);
		expect_within_pct(c.time_enabled, v[1], edge_pct(b),
				  "time_enabled against the pinned event's");
		cg_expect_twin_bound(shpmu_scale(&c), scaled_bound, v[0],
				     HW_MUX_PCT, what);
		close(raw);
		cr_assert_eq(shpmu_close(ctx, h), 0);
		shpmu_free(fill);
		fill = context(SHPMU_CGROUP_BACKEND_PERF);
	}
}

Test(hw, multiplexing_classic)
{
	multiplexing(SHPMU_CGROUP_BACKEND_PERF);
}

Test(hw, multiplexing_bpf)
{
	multiplexing(SHPMU_CGROUP_BACKEND_BPF);
}

/* ---- groups ---- */

/* A raw group of attrs[0..n) on this thread, disabled; fds[0] leads. */
static void raw_group_open(const struct perf_event_attr *attrs, int n, int *fds)
{
	for (int k = 0; k < n; k++) {
		struct perf_event_attr a = attrs[k];

		a.disabled = k == 0;
		a.read_format = PERF_FORMAT_GROUP |
				PERF_FORMAT_TOTAL_TIME_ENABLED |
				PERF_FORMAT_TOTAL_TIME_RUNNING;
		fds[k] = (int)syscall(SYS_perf_event_open, &a, 0, -1,
				      k ? fds[0] : -1, PERF_FLAG_FD_CLOEXEC);
		cr_assert_geq(fds[k], 0, "raw group member %d: %s", k,
			      strerror(errno));
	}
}

/*
 * {first event, second event} as one group on this thread: one kernel
 * event (two fds), read as one unit (the members' times are the
 * group's), each member within HW_EDGE_PCT of a private raw group
 * enabled just before the group handle and disabled just after it.
 */
Test(hw, group)
{
	struct shpmu_target self = self_target();
	struct perf_event_attr attrs[NEVENTS];
	struct shpmu_count g[NEVENTS];
	struct shpmu_stats st;
	int fds[NEVENTS], gh;
	struct {
		uint64_t nr, enabled, running, v[NEVENTS];
	} raw;

	need_hw();
	ctx = context(SHPMU_CGROUP_BACKEND_PERF);
	for (int k = 0; k < NEVENTS; k++)
		attrs[k] = hw_attr(&hw_events[k], true);
	gh = shpmu_open_group(ctx, attrs, NEVENTS, &self);
	cr_assert_geq(gh, 0, "group: %s (%s)", strerror(-gh), last_log);
	cr_assert_eq(shpmu_get_stats(ctx, &st), 0);
	cr_expect_eq(st.kernel_events, 1);
	cr_expect_eq(st.kernel_fds, NEVENTS);
	raw_group_open(attrs, NEVENTS, fds);

	cr_assert_eq(ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP),
		     0);
	cr_assert_eq(shpmu_enable(ctx, gh), 0);
	burn_cpu_ns(TASK_BURN_NS);
	cr_assert_eq(shpmu_disable(ctx, gh), 0);
	cr_assert_eq(ioctl(fds[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP),
		     0);
	cr_assert_eq(read(fds[0], &raw, sizeof(raw)), (ssize_t)sizeof(raw));
	cr_assert_eq(shpmu_read_group(ctx, gh, g, NEVENTS), 0);

	cr_assert_eq(raw.nr, NEVENTS);
	cr_assert_eq(raw.enabled, raw.running,
		     "the raw group was multiplexed (ran %llu of %llu ns): "
		     "something else holds this PMU's counters",
		     (unsigned long long)raw.running,
		     (unsigned long long)raw.enabled);
	for (int k = 0; k < NEVENTS; k++) {
		char what[96];

		snprintf(what, sizeof(what), "group member %s",
			 hw_events[k].name);
		/* One unit: every member carries the group's times. */
		cr_expect_eq(g[k].time_enabled, g[0].time_enabled, "%s", what);
		cr_expect_eq(g[k].time_running, g[0].time_running, "%s", what);
		expect_handle_ran(&g[k], what);
		expect_within_pct(g[k].value, raw.v[k], HW_EDGE_PCT, what);
		cr_expect_gt(raw.v[k], 10000000, "%s in 400 ms", what);
	}
	expect_within_pct(g[0].time_enabled, raw.enabled, HW_EDGE_PCT,
			  "the group's time_enabled");
	for (int k = 0; k < NEVENTS; k++)
		close(fds[k]);
}
