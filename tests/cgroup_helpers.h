/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Real cgroups for tests: made under the discovered root, removed after. */
#ifndef SHPMU_TEST_CGROUP_HELPERS_H
#define SHPMU_TEST_CGROUP_HELPERS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <shpmu/shpmu.h>

#include "helpers.h"

/* Makes "<root>/shpmu-test-<pid>-<n>" and remembers it. */
void cg_setup(struct shpmu *pmu);
/* Removes everything made below the test directory, deepest first. */
void cg_teardown(void);
/* The test directory (absolute) and its path relative to the root. */
const char *cg_base(void);
const char *cg_base_rel(void);
/* mkdir of base/rel; returns the absolute path (static buffer rotation). */
const char *cg_make(const char *rel);
const char *cg_abs(const char *rel);
uint64_t cg_ino(const char *abs);

/*
 * A child doing measured work in a cgroup. It burns CG_PRE_MOVE_NS of CPU
 * where it was forked (as a slow fork does on some machines), moves itself
 * into the cgroup at abs (NULL: it stays), and parks until cg_go(). Then it
 * burns cpu_ns of CPU, sleeps nsleeps times, reports its task-clock over
 * that work (a raw event on itself, see task_clock_ns()) and parks again
 * (blocked, not running) until cg_reap().
 *
 * cg_spawn() and cg_finish() return with the child parked (off its CPU,
 * see wait_until_blocked()). A count read after cg_spawn() returns and
 * again after cg_finish() covers what the report measured, the child's
 * wake-up at cg_go() and its parking after the report: more than the
 * report, which is why the report only bounds such a count from below
 * (cg_expect_covers()) and a twin (cg_twin_open()) judges it. Not the
 * child's start outside the cgroup, not the rest of its move's write(2)
 * after the kernel attached it (in the cgroup, but out of any clock the
 * child can read; hundreds of us in deep hierarchies), not its exit.
 */
#define CG_PRE_MOVE_NS 3000000ull
struct cg_child {
	pid_t pid;
	int go_fd;     /* cg_go() writes a byte; cg_reap() closes it */
	int report_fd; /* the child's report */
};
struct cg_child cg_spawn(const char *abs, uint64_t cpu_ns, int nsleeps);
void cg_go(struct cg_child *c);
/* Waits until the child's work is done and returns its task-clock over
 * that work, in ns; the child stays parked. */
uint64_t cg_finish(struct cg_child *c);
/* Lets a finished (or never started) child exit and reaps it. */
void cg_reap(struct cg_child *c);
/* In a forked child: closes every fd from 3 up but the three given (a
 * negative one: none). A parked child must not hold another child's
 * pipe, or that one never sees its end. */
void cg_keep_only(int a, int b, int c);
/* Moves this process to cgroup abs: in a forked child, which exits with
 * status 2 where it cannot (no Criterion assertion outside the test's
 * process). */
void cg_move_self(const char *abs);
/* Moves process pid to cgroup abs, asserting it moved. */
void cg_move(const char *abs, pid_t pid);

/* A context counting cgroups with this backend, logging to record_log. */
struct shpmu *cg_context(enum shpmu_cgroup_backend backend);
/* How often an AUTO context said, at SHPMU_LOG_WARN or above (what a log
 * callback that shows only what matters shows), that it counts cgroups
 * with classic perf events, and with the BPF backend. */
struct cg_told {
	int classic, bpf;
};
/* An AUTO context counting into told what it says of its backends, and
 * logging every message to record_log besides. */
struct shpmu *cg_auto_context(struct cg_told *told);
/* An enabled handle on a cgroup (on all CPUs) by path; asserts it opens. */
int cg_open(struct shpmu *p, uint64_t config, const char *path);
/* A handle's reading; asserts it reads. */
struct shpmu_count cg_read(struct shpmu *p, int h);
/*
 * The same with the handle's bound (shpmu_read_bound()): the BPF backend
 * credits nothing it cannot prove whose, so its value never exceeds the
 * truth and falls short of it by at most the bound, what went
 * unattributed on the handle's CPUs while it counted (some kernels run no
 * program at some switches: those that hide certain tasks from BPF, at a
 * switch away from one). 0 for a classic handle. A bound only grows
 * while the handle counts, and a read brings every CPU up to date: the
 * bound of what a handle counted between two reads is the difference of
 * their bounds.
 */
struct shpmu_count cg_read_bound(struct shpmu *p, int h, uint64_t *bound);

/* The perf_event controller is the host's: while a test mounts a v1
 * hierarchy with it (test_cgroup_v1.c), cgroup2's cgroups have no
 * perf_event state and perf_event_open on them fails with ENOENT, in
 * every process. Suites that count cgroups hold this lock shared (from
 * cg_setup to cg_teardown); the v1 test holds it exclusive, so two test
 * suites can run side by side. */
void cg_perf_event_lock(bool exclusive);
void cg_perf_event_unlock(void);

/* Raw cgroup perf events, one per online CPU, disabled. */
int cg_raw_open(const char *abs, uint64_t config, int *fds, int max);
uint64_t cg_raw_sum(const int *fds, int n);

/*
 * The twin a cgroup handle is judged against (tests/README.md): the
 * kernel's own count of the cgroup, a raw cgroup event (perf_event_open
 * with PERF_FLAG_PID_CGROUP on the cgroup's directory) on each online CPU,
 * of the handle's config. cg_twin_open() enables it: open it next to the
 * handle's open or enable and read it next to the handle's read, while
 * the cgroup's tasks are parked (cg_spawn() and cg_finish() return with
 * the child off its CPU), so that both cover the same window.
 */
#define CG_TWIN_CPUS 64
/* A clock's twin also counts the cgroup's context switches (switch_fds),
 * from which a BPF clock's tolerance follows (cg_twin_bpf_pct()). */
struct cg_twin {
	int n, nswitch;
	int fds[CG_TWIN_CPUS];
	int switch_fds[CG_TWIN_CPUS];
};
struct cg_twin cg_twin_open(const char *abs, uint64_t config);
void cg_twin_disable(struct cg_twin *t);
uint64_t cg_twin_read(const struct cg_twin *t);
/* The cgroup's context switches since the twin opened (0 for a twin of
 * an event other than a clock). */
uint64_t cg_twin_switches(const struct cg_twin *t);
void cg_twin_close(struct cg_twin *t);

/*
 * How far a cgroup's task-clock may be from its twin's, in per cent.
 *
 * Classic handles are the very events the twin is made of, in the same
 * CPU contexts, switched in and out at the same context switches: on this
 * kernel (which times task-clock by the context's clock) they come out
 * equal to the ns. A hundredth of a per cent leaves room for a kernel that
 * reads the clock once per event at each switch (ns apart, some hundred
 * switches in a window).
 *
 * The BPF backend reads a per-CPU clock from the sched_switch tracepoint,
 * which runs before perf switches cgroup events out and in, and settles
 * some switches later (lib/bpf/prog/): the same runs, measured at
 * other instants at each end. Over windows of 100 ms and more it came
 * within about half a per cent of its twin here, the machine's other work
 * adding switches; 1%, the tolerance of BPF against classic from the
 * start, leaves twice that. What it could not attribute (switches the
 * kernel hid from it) is no part of this: the handle's bound covers it
 * (cg_expect_twin_bound()).
 */
#define CG_CLASSIC_TWIN_PCT 0.01
#define CG_BPF_TWIN_PCT	    1.0
/*
 * The tolerance of a BPF cgroup clock against classic where the test also
 * counts the cgroup's switches (its classic context-switches): half a per
 * cent, or CG_BPF_SWITCH_NS for each of those switches where that is more.
 *
 * The two backends cut each switch at other points of the kernel's switch
 * path: the program at the sched_switch tracepoint, classic cgroup events
 * inside perf's own cgroup switch, after the program, where perf walks
 * every cgroup event on the CPU out and back in. Beside another agent's
 * hundreds of cgroup events that walk is long: a busy task alone in its
 * cgroup ran 14 to 17 us a switch less by its own task-clock than its
 * cgroup's classic clock (5174 switches in 300 ms: 86 ms). Which backend
 * gets more of each walk depends on the events on either side of the
 * switch: BPF came out from -1.4 to +1.1 us a switch from classic (+3.5 ms
 * over 3270 switches, -0.25 ms over 189), with no switch hidden (bound
 * 0). Three microseconds a switch leaves twice that. A quiet cgroup
 * switches tens of times in 100 ms, so it is held to the half per cent.
 */
#define CG_BPF_CLOCK_PCT 0.5
#define CG_BPF_SWITCH_NS 3000.0
double cg_bpf_clock_pct(uint64_t twin_clock, uint64_t twin_switches);
/* The same, from a twin (cg_twin_read() and cg_twin_switches()). */
double cg_twin_bpf_pct(const struct cg_twin *t, uint64_t twin_clock);
/* Asserts |counted - twin| <= pct% of twin (ten times that under
 * valgrind, as expect_within_pct()), logging the deviation. */
void cg_expect_twin(uint64_t counted, uint64_t twin, double pct,
		    const char *what);
/*
 * The same for a count with a bound (cg_read_bound()): counted <= twin +
 * tol and counted + bound + tol >= twin, tol being pct% of twin (ten
 * times that under valgrind). The count may fall short of the truth by
 * its bound, never exceed it; tol is what the two measurements differ by
 * besides (their instants). With bound 0, cg_expect_twin(). Logs the
 * deviation and the bound as a share of the count.
 */
void cg_expect_twin_bound(uint64_t counted, uint64_t bound, uint64_t twin,
			  double pct, const char *what);
/* The same for counts (switches, faults), with an absolute slack:
 * counted <= twin + slack and counted + bound + slack >= twin. */
void cg_expect_count_bound(uint64_t counted, uint64_t bound, uint64_t twin,
			   uint64_t slack, const char *what);
/*
 * A child's own clock over its work (cg_finish()) is a strict part of
 * what its cgroup ran in a window around that work: the window also holds
 * its wake-up and its parking. Only a one-sided bound (tests/README.md),
 * judged against the kernel's cgroup count (a classic handle or a twin):
 * counted must hold at least own.
 */
void cg_expect_covers(uint64_t counted, uint64_t own, const char *what);
/* Asserts lo - pct% <= x <= hi + pct% (ten times pct under valgrind, as
 * expect_within_pct()): x measured between two readings lo and hi of a
 * twin, which bracket it in time. */
void cg_expect_between(uint64_t x, uint64_t lo, uint64_t hi, double pct,
		       const char *what);
/* The same for a count with a bound: x <= hi + pct% and x + bound >= lo -
 * pct%. */
void cg_expect_between_bound(uint64_t x, uint64_t bound, uint64_t lo,
			     uint64_t hi, double pct, const char *what);

/* Polls cond(arg) (about every ms) until it holds; fails the test after
 * 30 s (a machine running other suites beside may starve the work for a
 * while, never that long). */
void cg_wait_for(bool (*cond)(void *arg), void *arg, const char *what);

/* Drops a capability (CAP_DAC_READ_SEARCH) from this process's
 * effective set. */
void drop_capability(int cap);
void drop_dac_read_search(void);

#endif
