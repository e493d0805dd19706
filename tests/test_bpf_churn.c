// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The BPF backend under the loads that make it miss switches or lose track
 * of who ran: tasks moved between counted cgroups while they sleep,
 * processes that come, burn and exit in counted cgroups, and counted
 * bursts beside a foreign switch-heavy load. Each counted cgroup is also
 * counted by classic cgroup events (its twin) over the same window, and
 * each BPF count must lie within its bound of the twin
 * (cg_expect_twin_bound()): never above it but by the tolerance, never
 * below it by more than the bound and the tolerance. Each load runs as it
 * comes on this kernel, and again with the program made to skip every
 * SKIP_EVERY-th switch run of a CPU (shpmu__bpf_skip_every), as a kernel
 * that hides many switches would, so that the bound is tested on any
 * kernel.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf/counter_prog.h"
#include "cgroup_helpers.h"
#include "helpers.h"

/*
 * Tolerances, besides the bound (issue 36's).
 *
 * The clocks: cg_bpf_clock_pct() (half a per cent, or three
 * microseconds a switch of the cgroup where that is more), the rule of
 * every suite that counts a cgroup's switches beside its clock. (Here,
 * beside the stress test under ASan, the twin of a cgroup of sleepers
 * came out 0.94 to 0.96 us a switch under the BPF count: +0.9% and +1.2%
 * over some 1400 and 1900 switches.)
 *
 * CHURN_SWITCH_SLACK: a switch at an edge of a run (a move, a read) may
 * land on the other side of it for one backend: one at each end of the
 * window. Valgrind's slow scheduling adds a few more, as in test_bpf.c.
 */
#define CHURN_SWITCH_SLACK (under_valgrind ? 5 : 2)
/* The program skips every SKIP_EVERY-th switch run of a CPU in the
 * *_hidden tests: hundreds of hidden switches a window, which leave a
 * tenth to a fifth of the counts unattributed here, and bounds below the
 * counts, so that the bound's side of the check is a check (with a
 * switch in four hidden, bounds came to two or three times the counts). */
#define SKIP_EVERY 16

#define NEV 2 /* events counted in each cgroup */
static const uint64_t configs[NEV] = {PERF_COUNT_SW_TASK_CLOCK,
				      PERF_COUNT_SW_CONTEXT_SWITCHES};
static const char *const event_names[NEV] = {"task-clock", "context-switches"};

static struct shpmu *bpf, *classic;

static void setup(void)
{
	bpf = NULL;
	shpmu__bpf_skip_tid = 0;
	shpmu__bpf_skip_every = 0;
	classic = cg_context(SHPMU_CGROUP_BACKEND_PERF);
	cg_setup(classic);
#ifndef HAVE_BPF
	cr_skip_test("libshpmu was built without the BPF backend (no clang, "
		     "bpftool, libbpf or kernel BTF, or -Dbpf=disabled)");
#endif
}

static void teardown(void)
{
	shpmu_free(bpf);
	shpmu_free(classic);
	shpmu__bpf_skip_every = 0;
	cg_teardown();
}

TestSuite(bpf_churn, .init = setup, .fini = teardown, .timeout = 120);

/* The BPF context, its program skipping every skip_every-th switch run of
 * a CPU (0: none; the knob is read when the program loads). */
static void bpf_context(uint32_t skip_every)
{
	shpmu__bpf_skip_every = skip_every;
	bpf = cg_context(SHPMU_CGROUP_BACKEND_BPF);
}

/* A counted cgroup: its BPF handles and their classic twins. */
struct counted {
	const char *name, *path;
	int hb[NEV], hc[NEV];
};

static void count(struct counted *c, const char *name, const char *path)
{
	c->name = name;
	c->path = path;
	for (int e = 0; e < NEV; e++) {
		c->hb[e] = cg_open(bpf, configs[e], path);
		c->hc[e] = cg_open(classic, configs[e], path);
	}
}

/*
 * Reads each cgroup both ways (its tasks parked, or gone and off their
 * CPUs: nothing of it runs between the two reads) and holds BPF within
 * its bound of the twin. Returns the sum of the bounds of the clocks, and
 * the classic task-clock of each cgroup in clock[].
 */
static uint64_t expect_within_bounds(struct counted *c, int n, uint64_t *clock)
{
	uint64_t bounds = 0;

	for (int i = 0; i < n; i++) {
		uint64_t value[NEV], bound[NEV], twin[NEV];
		char what[96];

		for (int e = 0; e < NEV; e++) {
			value[e] =
				cg_read_bound(bpf, c[i].hb[e], &bound[e]).value;
			twin[e] = cg_read(classic, c[i].hc[e]).value;
		}
		snprintf(what, sizeof(what), "%s %s", c[i].name,
			 event_names[0]);
		/* (configs[]: the clock, then the switches.) */
		cg_expect_twin_bound(value[0], bound[0], twin[0],
				     cg_bpf_clock_pct(twin[0], twin[1]), what);
		snprintf(what, sizeof(what), "%s %s", c[i].name,
			 event_names[1]);
		cg_expect_count_bound(value[1], bound[1], twin[1],
				      CHURN_SWITCH_SLACK, what);
		bounds += bound[0];
		clock[i] = twin[0];
	}
	return bounds;
}

/* Where the bounds came from: what the program did not see since before.
 * With switch runs skipped on purpose, something must have gone
 * unattributed. */
static void log_unseen(const struct shpmu_stats *before, uint64_t bounds,
		       uint32_t skip_every)
{
	struct shpmu_stats now;

	cr_assert_eq(shpmu_get_stats(bpf, &now), 0);
	cr_log_info("%llu switches unseen, %llu ns unattributed; the "
		    "task-clock bounds add up to %llu ns",
		    (unsigned long long)(now.switches_unseen -
					 before->switches_unseen),
		    (unsigned long long)(now.unattributed_ns -
					 before->unattributed_ns),
		    (unsigned long long)bounds);
	if (skip_every)
		cr_expect_gt(bounds, 0,
			     "every %u-th switch run skipped, yet no bound",
			     skip_every);
}

/* A byte on fd (or EOF: false). */
static bool get_byte(int fd)
{
	char c;
	ssize_t n;

	while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
		;
	return n == 1;
}

static void put_byte(int fd)
{
	cr_assert_eq(write(fd, "b", 1), 1);
}

/* ---- (a) tasks moved while they sleep ---- */

/*
 * Workers that burn a phase each time they are told, in slices with a
 * few sleeps between (switches of their own), and block on a pipe
 * between phases. While they block, the test moves them: from a (not
 * counted) to b, to c (both counted, under a counted p), and back to a,
 * ROUNDS times. Each wake-up after a move is in the new cgroup, which
 * the program learns only from the task, not from a switch it saw the
 * task make there.
 */
#define SLEEPERS    3
#define ROUNDS	    3
#define PHASE_NS    12000000ull
#define PHASE_BURNS 4

struct sleeper {
	pid_t pid;
	int go, done; /* the test's ends */
};

static struct sleeper sleeper_start(const char *where)
{
	int go[2], done[2];
	struct sleeper s;

	cr_assert_eq(pipe2(go, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(done, O_CLOEXEC), 0);
	s.pid = fork();
	cr_assert_geq(s.pid, 0);
	if (s.pid == 0) {
		cg_keep_only(go[0], done[1], -1);
		die_with_parent();
		cg_move_self(where);
		if (write(done[1], "r", 1) != 1)
			_exit(3);
		while (get_byte(go[0])) {
			for (int k = 0; k < PHASE_BURNS; k++) {
				burn_cpu_ns(PHASE_NS / PHASE_BURNS);
				sleep_switches(2);
			}
			if (write(done[1], "d", 1) != 1)
				_exit(4);
		}
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	s.go = go[1];
	s.done = done[0];
	cr_assert(get_byte(s.done), "a sleeper did not start");
	return s;
}

static void moved_while_asleep(uint32_t skip_every)
{
	const char *a = cg_make("a");
	const char *where[3] = {NULL, NULL, a};
	struct sleeper s[SLEEPERS];
	struct counted c[3];
	struct shpmu_stats before;
	uint64_t clock[3], bounds;

	cg_make("p");
	where[0] = cg_make("p/b");
	where[1] = cg_make("p/c");
	bpf_context(skip_every);
	for (int k = 0; k < SLEEPERS; k++)
		s[k] = sleeper_start(a);
	for (int k = 0; k < SLEEPERS; k++)
		wait_until_blocked(s[k].pid);
	cr_assert_eq(shpmu_get_stats(bpf, &before), 0);
	count(&c[0], "b", where[0]);
	count(&c[1], "c", where[1]);
	count(&c[2], "p", cg_abs("p"));
	for (int r = 0; r < ROUNDS; r++)
		for (int phase = 0; phase < 3; phase++) {
			for (int k = 0; k < SLEEPERS; k++)
				put_byte(s[k].go);
			for (int k = 0; k < SLEEPERS; k++) {
				cr_assert(get_byte(s[k].done),
					  "a sleeper died");
				/* Asleep on go: moved while it sleeps. */
				wait_until_blocked(s[k].pid);
				cg_move(where[phase], s[k].pid);
			}
		}
	/* The last phase ran in a; all are back there, asleep. */
	bounds = expect_within_bounds(c, 3, clock);
	log_unseen(&before, bounds, skip_every);
	/* Each counted cgroup held every sleeper for ROUNDS phases: an order
	 * of magnitude, that the moves took (the burns' clock is the
	 * thread's CPU time: half of it, for what the switches take). */
	for (int i = 0; i < 2; i++)
		cr_expect_geq(clock[i], SLEEPERS * ROUNDS * PHASE_NS / 2,
			      "%s ran only %llu ns", c[i].name,
			      (unsigned long long)clock[i]);
	for (int k = 0; k < SLEEPERS; k++) {
		int status;

		close(s[k].go);
		close(s[k].done);
		cr_assert_eq(waitpid(s[k].pid, &status, 0), s[k].pid);
		cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			  "sleeper status %#x", status);
	}
}

Test(bpf_churn, tasks_moved_while_asleep)
{
	moved_while_asleep(0);
}

Test(bpf_churn, tasks_moved_while_asleep_hidden)
{
	moved_while_asleep(SKIP_EVERY);
}

/* ---- (b) short-lived processes ---- */

/*
 * CHILDREN processes, up to POOL at a time: each moves itself into one of
 * three counted cgroups (x, y, z under a counted p), burns 1 to 20 ms,
 * sleeps a little and exits there. A child is forked where this process
 * is (not counted): its fork is no cgroup's, its exit is its cgroup's.
 */
#define CHILDREN 60
#define POOL	 6

/* Runs the exiting child ahead of every ordinary task (SCHED_FIFO), so
 * that once this thread has run on every CPU after reaping it, it has
 * made its last switch (its exit goes on past the point where waitpid
 * returns). */
static void exit_ahead(void)
{
	struct sched_param sp = {.sched_priority = 1};

	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		_exit(5);
	_exit(0);
}

static pid_t short_lived(const char *where, uint64_t burn_ns)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		die_with_parent();
		cg_move_self(where);
		burn_cpu_ns(burn_ns);
		sleep_switches(3);
		exit_ahead();
	}
	return pid;
}

/* Runs this thread on every CPU it may use in turn, a moment on each: a
 * FIFO task that was on its way out there has left by then. */
static void visit_every_cpu(void)
{
	cpu_set_t all;

	cr_assert_eq(sched_getaffinity(0, sizeof(all), &all), 0);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &all)) {
			pin_to_cpu(cpu);
			burn_cpu_ns(100000);
		}
	cr_assert_eq(sched_setaffinity(0, sizeof(all), &all), 0);
}

static void reap_one(void)
{
	int status;
	pid_t pid = wait(&status);

	cr_assert_gt(pid, 0, "wait: %s", strerror(errno));
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child %d: status %#x", pid, status);
}

static void short_lived_processes(uint32_t skip_every)
{
	const char *where[3];
	struct counted c[4];
	struct shpmu_stats before;
	uint64_t clock[4], bounds, burnt = 0;
	int live = 0;

	cg_make("p");
	where[0] = cg_make("p/x");
	where[1] = cg_make("p/y");
	where[2] = cg_make("p/z");
	bpf_context(skip_every);
	cr_assert_eq(shpmu_get_stats(bpf, &before), 0);
	count(&c[0], "x", where[0]);
	count(&c[1], "y", where[1]);
	count(&c[2], "z", where[2]);
	count(&c[3], "p", cg_abs("p"));
	for (int i = 0; i < CHILDREN; i++) {
		/* 1 to 20 ms, spread evenly over the children. */
		uint64_t ms = 1 + (uint64_t)(i * 7) % 20;

		if (live == POOL) {
			reap_one();
			live--;
		}
		short_lived(where[i % 3], ms * 1000000);
		burnt += ms * 1000000;
		live++;
	}
	while (live--)
		reap_one();
	visit_every_cpu();
	bounds = expect_within_bounds(c, 4, clock);
	log_unseen(&before, bounds, skip_every);
	cr_log_info("%d processes burnt %llu ns by their clocks; p counted "
		    "%llu ns",
		    CHILDREN, (unsigned long long)burnt,
		    (unsigned long long)clock[3]);
	/* An order of magnitude: the children's work was in p (their
	 * task-clock may fall short of the thread CPU time they burnt by
	 * what the switches take: half of it). */
	cr_expect_geq(clock[3], burnt / 2, "p counted only %llu ns",
		      (unsigned long long)clock[3]);
}

Test(bpf_churn, short_lived_processes)
{
	short_lived_processes(0);
}

Test(bpf_churn, short_lived_processes_hidden)
{
	short_lived_processes(SKIP_EVERY);
}

/* ---- (c) bursts beside a foreign switch-heavy load ---- */

/*
 * A pipe ping-pong pair in a cgroup nobody counts (f), a switch on each
 * side of every byte, running throughout; BURSTERS workers in two counted
 * cgroups (x, y under a counted p) burn BURSTS bursts each with a sleep
 * between. Every burst is cut into by the pair's switches on its CPU.
 */
#define BURSTERS 4
#define BURSTS	 20
#define BURST_NS 3000000ull

/* One side of the ping-pong: sends first (or answers), forever. */
static void ping_pong(const char *where, int in, int out, int ready, bool first)
{
	char byte = 'p';

	cg_keep_only(in, out, ready);
	die_with_parent();
	cg_move_self(where);
	if (first && write(out, &byte, 1) != 1)
		_exit(3);
	for (long n = 0;; n++) {
		if (read(in, &byte, 1) != 1 || write(out, &byte, 1) != 1)
			_exit(4);
		/* Going: say so once, after a few hundred round trips. */
		if (n == 500 && ready >= 0 && write(ready, "r", 1) != 1)
			_exit(5);
	}
}

static void ping_pong_start(const char *where, pid_t pids[2])
{
	int ab[2], ba[2], ready[2];

	cr_assert_eq(pipe2(ab, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(ba, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
	for (int k = 0; k < 2; k++) {
		pids[k] = fork();
		cr_assert_geq(pids[k], 0);
		if (pids[k] == 0) {
			if (k == 0)
				ping_pong(where, ba[0], ab[1], ready[1], true);
			ping_pong(where, ab[0], ba[1], -1, false);
		}
	}
	close(ab[0]);
	close(ab[1]);
	close(ba[0]);
	close(ba[1]);
	close(ready[1]);
	cr_assert(get_byte(ready[0]), "the ping-pong did not start");
	close(ready[0]);
}

/* A burster: BURSTS bursts once it takes a byte from go (one each: the
 * bursters share go), a byte on done after; parked until hold reaches
 * EOF (not on go, whose bytes are the others'). */
static pid_t burster(const char *where, int go, int done, int hold)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		cg_keep_only(go, done, hold);
		die_with_parent();
		cg_move_self(where);
		if (write(done, "r", 1) != 1 || !get_byte(go))
			_exit(3);
		for (int k = 0; k < BURSTS; k++) {
			burn_cpu_ns(BURST_NS);
			sleep_switches(1);
		}
		if (write(done, "d", 1) != 1)
			_exit(4);
		while (get_byte(hold))
			;
		_exit(0);
	}
	return pid;
}

static void beside_a_ping_pong(uint32_t skip_every)
{
	const char *f = cg_make("f"), *where[2];
	struct counted c[3];
	struct shpmu_stats before;
	struct cg_twin foreign;
	uint64_t clock[3], bounds, foreign_switches;
	pid_t pair[2], w[BURSTERS];
	int go[2], done[2], hold[2];

	cg_make("p");
	where[0] = cg_make("p/x");
	where[1] = cg_make("p/y");
	bpf_context(skip_every);
	ping_pong_start(f, pair);
	cr_assert_eq(pipe2(go, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(done, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(hold, O_CLOEXEC), 0);
	for (int k = 0; k < BURSTERS; k++) {
		w[k] = burster(where[k % 2], go[0], done[1], hold[0]);
		cr_assert(get_byte(done[0]), "a burster did not start");
	}
	for (int k = 0; k < BURSTERS; k++)
		wait_until_blocked(w[k]);
	/* The pair's switches over the window, for the log (a raw cgroup
	 * event: no handle of either context counts f). */
	foreign = cg_twin_open(f, PERF_COUNT_SW_CONTEXT_SWITCHES);
	cr_assert_eq(shpmu_get_stats(bpf, &before), 0);
	count(&c[0], "x", where[0]);
	count(&c[1], "y", where[1]);
	count(&c[2], "p", cg_abs("p"));
	for (int k = 0; k < BURSTERS; k++)
		put_byte(go[1]);
	for (int k = 0; k < BURSTERS; k++)
		cr_assert(get_byte(done[0]), "a burster died");
	for (int k = 0; k < BURSTERS; k++)
		wait_until_blocked(w[k]);
	bounds = expect_within_bounds(c, 3, clock);
	foreign_switches = cg_twin_read(&foreign);
	log_unseen(&before, bounds, skip_every);
	cr_log_info("the foreign pair switched %llu times beside %llu ns "
		    "of bursts",
		    (unsigned long long)foreign_switches,
		    (unsigned long long)clock[2]);
	/* The load was there, switch-heavy: an order of magnitude (the
	 * pair makes two switches a round trip, thousands while the
	 * bursts run). */
	cr_expect_geq(foreign_switches, 1000,
		      "the ping-pong switched only %llu times",
		      (unsigned long long)foreign_switches);
	cg_twin_close(&foreign);
	close(hold[1]);
	for (int k = 0; k < BURSTERS; k++)
		cr_assert_eq(waitpid(w[k], NULL, 0), w[k]);
	for (int k = 0; k < 2; k++) {
		kill(pair[k], SIGKILL);
		waitpid(pair[k], NULL, 0);
	}
	close(hold[0]);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

Test(bpf_churn, bursts_beside_a_foreign_ping_pong)
{
	beside_a_ping_pong(0);
}

Test(bpf_churn, bursts_beside_a_foreign_ping_pong_hidden)
{
	beside_a_ping_pong(SKIP_EVERY);
}
