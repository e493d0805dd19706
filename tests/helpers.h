/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Shared by the tests: real work for counters to see, raw perf events to
 * compare against, and fd accounting. */
#ifndef SHPMU_TEST_HELPERS_H
#define SHPMU_TEST_HELPERS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>

#include <shpmu/shpmu.h>

/* A software counting attr, enabled unless disabled is set. */
struct perf_event_attr sw_attr(uint64_t config, bool disabled);

static inline struct shpmu_target self_target(void)
{
	return (struct shpmu_target){.kind = SHPMU_TARGET_TASK, .cpu = -1};
}

/* perf_event fds this process holds (Criterion holds other fds). */
int count_perf_fds(void);
/* The nth (from 0) perf_event fd in ascending order, or -1. */
int nth_perf_fd(int n);
/* All fds this process holds. */
int count_fds(void);
int online_cpus(void);

/* Raw perf_event_open of a software event, disabled, reading both times. */
int raw_open(uint64_t config, pid_t pid, int cpu);
void raw_enable(int fd);
void raw_disable(int fd);
/* The same for any attr (its read_format is set as above), with
 * perf_event_open flags (PERF_FLAG_PID_CGROUP for a cgroup fd in pid). */
int raw_open_attr(const struct perf_event_attr *attr, pid_t pid, int cpu,
		  unsigned long flags);
/* value, time_enabled, time_running */
void raw_read(int fd, uint64_t v[3]);

uint64_t thread_cpu_ns(void);
uint64_t wall_ns(void);

/*
 * The oracle for task-clock on the calling thread: a private raw
 * task-clock event on it, opened (enabled) at the first call. It measures
 * the same quantity as the handles under test, perf's clock while the
 * thread runs. CLOCK_THREAD_CPUTIME_ID does not: on a paravirtual guest it
 * leaves out the time the host stole, which task-clock includes, and
 * steal comes in bursts of tens of ms. Its fd is left out of
 * count_perf_fds() and nth_perf_fd().
 */
uint64_t task_clock_ns(void);
/* The same as a raw fd the caller owns (e.g. in a child process), and
 * its reading. */
int task_clock_open(bool disabled);
uint64_t task_clock_read(int fd);
/* Burns this thread's CPU for ns of its own CPU time. */
void burn_cpu_ns(uint64_t ns);
/* Makes about n voluntary context switches (short sleeps). */
void sleep_switches(int n);
/* Touches n fresh pages: n minor page faults. */
void touch_pages(int n);
void pin_to_cpu(int cpu);
/* Waits (polling /proc, with a deadline that fails the test) until the
 * task tid is off its CPU, blocked or sleeping, or gone: what a test
 * waits for before it reads a count that must hold the task's work. */
void wait_until_blocked(pid_t tid);
/* For a forked child that would otherwise run until killed: it dies with
 * the test process, however that ends (a timeout, a crash). */
void die_with_parent(void);
/* Moves the test into a mount namespace of its own, every mount private:
 * what it mounts there nobody else sees, and it all goes with the test. */
void private_mount_namespace(void);

/* Set when the suite runs under valgrind (meson test --setup valgrind):
 * valgrind's own work (translating code, its page faults) lands in the
 * measured windows, so timing tolerances widen tenfold and the exact
 * fault and switch comparisons are skipped there. */
extern bool under_valgrind;
#define VALGRIND_SKIP_EXACT()                                                  \
	do {                                                                   \
		if (under_valgrind)                                            \
			cr_skip_test("valgrind's own page faults and "         \
				     "switches land in the window");           \
	} while (0)

/* Asserts |a - b| <= pct% of b (ten times that under valgrind); the
 * deviation is logged at info level (--verbose) either way. */
#define expect_within_pct(a, b, pct, what)                                     \
	do {                                                                   \
		double tol_ = (pct) / 100.0 * (under_valgrind ? 10 : 1);       \
		double a_ = (double)(a), b_ = (double)(b);                     \
		cr_log_info("deviation %s: %+.3f%% (%llu vs %llu)", what,      \
			    b_ ? 100 * (a_ - b_) / b_ : 0,                     \
			    (unsigned long long)(a), (unsigned long long)(b)); \
		cr_expect(a_ >= b_ * (1 - tol_) && a_ <= b_ * (1 + tol_),      \
			  "%s: %llu is not within %.0f%% of %llu", what,       \
			  (unsigned long long)(a), tol_ * 100,                 \
			  (unsigned long long)(b));                            \
	} while (0)

/* The suite fixture most test files share: a default context in pmu,
 * made before each test and freed after. Needs criterion.h first. */
#define DEFAULT_CONTEXT_SUITE(suite)                                           \
	static struct shpmu *pmu;                                              \
	static void default_context_setup(void)                                \
	{                                                                      \
		pmu = shpmu_new(NULL);                                         \
		cr_assert(pmu, "shpmu_new: %s", strerror(errno));              \
	}                                                                      \
	static void default_context_teardown(void)                             \
	{                                                                      \
		shpmu_free(pmu);                                               \
	}                                                                      \
	TestSuite(suite, .init = default_context_setup,                        \
		  .fini = default_context_teardown)

/* The same, with record_log as the context's log (log_count zeroed), and
 * a check at teardown that no perf fd is left. */
#define LOGGED_CONTEXT_SUITE(suite)                                            \
	static struct shpmu *pmu;                                              \
	static void logged_context_setup(void)                                 \
	{                                                                      \
		SHPMU_OPTS(opts, .log = record_log);                           \
		pmu = shpmu_new(&opts);                                        \
		cr_assert(pmu, "shpmu_new: %s", strerror(errno));              \
		log_count = 0;                                                 \
	}                                                                      \
	static void logged_context_teardown(void)                              \
	{                                                                      \
		shpmu_free(pmu);                                               \
		cr_expect_eq(count_perf_fds(), 0);                             \
	}                                                                      \
	TestSuite(suite, .init = logged_context_setup,                         \
		  .fini = logged_context_teardown)

/* An event's attr by name, asserting it encodes. */
struct perf_event_attr named_attr(struct shpmu *p, const char *name);

/* A log callback that keeps the last message, for tests that check one. */
extern char last_log[512];
extern int log_count;
void record_log(int level, const char *msg, void *arg);
/* Whether one of the last LOG_KEPT messages holds both a and b (b may be
 * NULL): a check of a message that another may follow at once (the
 * notice of switches the kernel hid from the BPF program comes at any
 * settle). */
#define LOG_KEPT 8
bool logged(const char *a, const char *b);

#endif
