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
 * A count read after cg_spawn() returns and again after cg_finish()
 * covers exactly what the report measured. Nothing else: not the child's
 * start outside the cgroup, not the rest of its move's write(2) after the
 * kernel attached it (in the cgroup, but out of any clock the child can
 * read; hundreds of us in deep hierarchies), not its exit.
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

/* Some kernels hide a few tasks' context switches from tracing (this
 * sandbox hides its own supervisor's threads leaving a CPU). The BPF
 * backend counts what it finds on a CPU by surprise; where that is not a
 * task coming back, what ran around the hidden switch may have gone to
 * the wrong counted cgroup (a stray). A measured window with a stray
 * cannot be exact, so it is measured again, up to CG_CLEAN_TRIES times;
 * the last try is judged as it is. Usage:
 *	do { opened = cg_window_open(p); ... } while
 *		(cg_window_tainted(p, opened, attempt++));
 * Without a BPF backend no window is ever tainted. */
/* Valgrind slows the workers down: more of their windows hold a hidden
 * switch, so it gets more tries. */
#define CG_CLEAN_TRIES (under_valgrind ? 24 : 8)
uint64_t cg_window_open(const struct shpmu *p);
bool cg_window_tainted(const struct shpmu *p, uint64_t opened, int attempt);
/* The same from stray counts taken elsewhere (a host domain's, read
 * through a helper process). */
bool cg_strays_tainted(uint64_t opened, uint64_t now, int attempt);

/* A context counting cgroups with this backend, logging to record_log. */
struct shpmu *cg_context(enum shpmu_cgroup_backend backend);
/* An enabled handle on a cgroup (on all CPUs) by path; asserts it opens. */
int cg_open(struct shpmu *p, uint64_t config, const char *path);
/* A handle's reading; asserts it reads. */
struct shpmu_count cg_read(struct shpmu *p, int h);

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

/* Drops a capability (CAP_DAC_READ_SEARCH) from this process's
 * effective set. */
void drop_capability(int cap);
void drop_dac_read_search(void);

#endif
