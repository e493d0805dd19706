// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Busy tasks moved between counted cgroups, by another process or by
 * themselves, one or several at once, with nobody reading in between: the
 * BPF backend must credit each cgroup with what ran while the task was in
 * it, as classic cgroup events do (the kernel switches those on the task's
 * CPU when it moves). Both backends count the same cgroups over the same
 * run.
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend_bpf.h"
#include "backend_choice.h"
#include "cgroup_helpers.h"
#include "helpers.h"

#define NCG 3 /* counted cgroups A, B, C */
#define NEV 3 /* events counted in each */

static const uint64_t configs[NEV] = {PERF_COUNT_SW_TASK_CLOCK,
				      PERF_COUNT_SW_PAGE_FAULTS,
				      PERF_COUNT_SW_CONTEXT_SWITCHES};
static const char *const event_names[NEV] = {"task-clock", "page-faults",
					     "context-switches"};
static struct shpmu *bpf, *classic;
static const char *paths[NCG];
static int hb[NCG][NEV], hc[NCG][NEV];

/* The three counted cgroups of a try, counted both ways. */
static void count_cgroups(int attempt)
{
	static const char *const names[NCG] = {"A", "B", "C"};
	char rel[32];

	for (int i = 0; i < NCG; i++) {
		snprintf(rel, sizeof(rel), "%s%d", names[i], attempt);
		paths[i] = cg_make(rel);
		for (int e = 0; e < NEV; e++) {
			hb[i][e] = cg_open(bpf, configs[e], paths[i]);
			hc[i][e] = cg_open(classic, configs[e], paths[i]);
		}
	}
}

static void setup(void)
{
#ifndef HAVE_BPF
	cr_skip_test("libshpmu was built without the BPF backend");
#endif
	classic = cg_context(SHPMU_CGROUP_BACKEND_PERF);
	cg_setup(classic);
	bpf = cg_context(SHPMU_CGROUP_BACKEND_BPF);
}

static void teardown(void)
{
	shpmu_free(bpf);
	shpmu_free(classic);
	cg_teardown();
	shpmu__bpf_no_ipi_hook = false;
}

TestSuite(bpf_moves, .init = setup, .fini = teardown);

static void write_pid(const char *cgroup, pid_t pid)
{
	char procs[PATH_MAX + 16];
	FILE *f;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);
	f = fopen(procs, "w");
	cr_assert(f, "%s: %s", procs, strerror(errno));
	cr_assert_gt(fprintf(f, "%d\n", pid), 0);
	cr_assert_eq(fclose(f), 0, "move %d to %s: %s", pid, cgroup,
		     strerror(errno));
}

/* Busy work that never sleeps, with a fresh page fault now and then so
 * that a count other than a clock moves too. */
static void busy_step(void)
{
	static char *pages;
	static size_t next;
	const size_t npages = 4096, page = 4096;

	for (volatile int i = 0; i < 200000; i++)
		;
	if (!pages || next == npages) {
		if (pages)
			munmap(pages, npages * page);
		pages = mmap(NULL, npages * page, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (pages == MAP_FAILED)
			_exit(6);
		madvise(pages, npages * page, MADV_NOHUGEPAGE);
		next = 0;
	}
	pages[next++ * page] = 1;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* A child that spins until killed, on cpu (or anywhere: -1). */
static pid_t spawn_spinner(int cpu)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		die_with_parent();
		if (cpu >= 0)
			pin(cpu);
		for (;;)
			busy_step();
	}
	return pid;
}

static void kill_spinner(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

/* Both backends' counts of every counted cgroup, read once the work is
 * over (its tasks are parked or outside every counted cgroup). */
static void read_all(struct shpmu_count b[NCG][NEV],
		     struct shpmu_count c[NCG][NEV])
{
	for (int i = 0; i < NCG; i++)
		for (int e = 0; e < NEV; e++) {
			b[i][e] = cg_read(bpf, hb[i][e]);
			c[i][e] = cg_read(classic, hc[i][e]);
		}
}

/*
 * BPF against classic, per cgroup and event. task-clock within 1%. The
 * counts within 2 + 0.5%: both backends split them at the same instant of
 * a move (the IPI that switches classic cgroup events runs our hook just
 * before), but page faults and switches that straddle the end of the run
 * (the last move, a read) may land on either side once. min_clock: what
 * each cgroup must have run for the test to mean anything, whatever else
 * the machine runs meanwhile.
 */
static void expect_agree(struct shpmu_count b[NCG][NEV],
			 struct shpmu_count c[NCG][NEV], uint64_t min_clock)
{
	for (int i = 0; i < NCG; i++) {
		char what[64];

		snprintf(what, sizeof(what), "cgroup %d task-clock", i);
		expect_within_pct(b[i][0].value, c[i][0].value, 1, what);
		cr_expect_geq(c[i][0].value, min_clock,
			      "cgroup %d ran only %llu ns", i,
			      (unsigned long long)c[i][0].value);
		for (int e = 1; e < NEV; e++) {
			uint64_t x = b[i][e].value, y = c[i][e].value;
			uint64_t d = x > y ? x - y : y - x;

			cr_log_info("deviation cgroup %d %s: BPF %llu, classic "
				    "%llu",
				    i, event_names[e], (unsigned long long)x,
				    (unsigned long long)y);
			cr_expect_leq(d, 2 + y / 200,
				      "cgroup %d %s: BPF %llu, classic %llu", i,
				      event_names[e], (unsigned long long)x,
				      (unsigned long long)y);
		}
	}
}

/* A busy task on CPU 1, moved by this process on CPU 0 from A to B to C
 * and out, 120 ms in each: it never leaves its CPU, so only the move
 * itself can tell the BPF program where its time belongs. */
Test(bpf_moves, a_busy_task_moved_by_another_process)
{
	struct shpmu_count b[NCG][NEV], c[NCG][NEV];
	uint64_t opened, moves;
	int attempt = 0;

	if (online_cpus() < 2)
		cr_skip_test("needs two CPUs: the mover and the busy task");
	pin(0);
	do {
		count_cgroups(attempt);
		opened = cg_window_open(bpf);
		moves = shpmu__bpf_moves_settled(bpf);
		pid_t pid = spawn_spinner(1);

		for (int i = 0; i < NCG; i++) {
			write_pid(paths[i], pid);
			sleep_ms(120);
		}
		write_pid(cg_base(), pid);
		read_all(b, c);
		kill_spinner(pid);
	} while (cg_window_tainted(bpf, opened, attempt++));
	expect_agree(b, c, 20000000);
	/* (Moves that found the task off its CPU needed no settling.) */
	cr_log_info("%llu of %d moves settled on the task's CPU",
		    (unsigned long long)(shpmu__bpf_moves_settled(bpf) - moves),
		    NCG + 1);
}

/* A busy task that moves itself: A, B, C, after 100 ms of its own
 * task-clock each, reporting how long it ran in each. */
static void self_mover(int report_fd)
{
	uint64_t in[NCG];
	int clock = task_clock_open(false);

	die_with_parent();
	if (clock < 0)
		_exit(5);
	for (int i = 0; i < NCG; i++) {
		char procs[PATH_MAX + 16];
		FILE *f;

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", paths[i]);
		f = fopen(procs, "w");
		if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
			_exit(2);
		uint64_t start = task_clock_read(clock);

		while (task_clock_read(clock) - start < 100000000)
			busy_step();
		in[i] = task_clock_read(clock) - start;
	}
	if (write(report_fd, in, sizeof(in)) != sizeof(in))
		_exit(4);
	pause(); /* parked in C until killed */
	_exit(0);
}

/* Runs self_mover() in a new try's cgroups until a window has no hidden
 * switch: both backends' counts and the task's own clock in each. */
static void run_self_mover(struct shpmu_count b[NCG][NEV],
			   struct shpmu_count c[NCG][NEV], uint64_t in[NCG])
{
	uint64_t opened;
	int attempt = 0;

	do {
		int report[2];

		count_cgroups(attempt);
		cr_assert_eq(pipe(report), 0);
		opened = cg_window_open(bpf);
		pid_t pid = fork();

		cr_assert_geq(pid, 0);
		if (pid == 0)
			self_mover(report[1]);
		cr_assert_eq(read(report[0], in, NCG * sizeof(in[0])),
			     (ssize_t)(NCG * sizeof(in[0])));
		read_all(b, c);
		kill_spinner(pid);
		close(report[0]);
		close(report[1]);
	} while (cg_window_tainted(bpf, opened, attempt++));
}

Test(bpf_moves, a_busy_task_moving_itself)
{
	struct shpmu_count b[NCG][NEV], c[NCG][NEV];
	uint64_t in[NCG];

	run_self_mover(b, c, in);
	expect_agree(b, c, 90000000);
	/* Each cgroup saw the task's own clock while it was there, and
	 * nothing of its time before or after (the moves' own syscalls
	 * aside: under 1%). */
	for (int i = 0; i < NCG; i++) {
		char what[64];

		snprintf(what, sizeof(what),
			 "cgroup %d against the task's "
			 "own clock",
			 i);
		expect_within_pct(b[i][0].value, in[i], 1, what);
	}
}

/* Two busy tasks hop over the three cgroups every 40 ms for 0.6 s, moved
 * by this process, on whatever CPUs they are on, while a third moves
 * itself. (Short windows: this sandbox's kernel hides about one switch a
 * second from tracing, and a window with one is measured again.) */
Test(bpf_moves, several_busy_tasks_hopping_at_once)
{
	struct shpmu_count b[NCG][NEV], c[NCG][NEV];
	uint64_t opened;
	int attempt = 0;

	do {
		int report[2];
		pid_t hop[2];

		count_cgroups(attempt);
		cr_assert_eq(pipe(report), 0);
		opened = cg_window_open(bpf);
		hop[0] = spawn_spinner(-1);
		hop[1] = spawn_spinner(-1);
		pid_t self = fork();

		cr_assert_geq(self, 0);
		if (self == 0)
			self_mover(report[1]);
		for (int round = 0; round < 15; round++) {
			write_pid(paths[round % NCG], hop[0]);
			write_pid(paths[(round + 1) % NCG], hop[1]);
			sleep_ms(40);
		}
		write_pid(cg_base(), hop[0]);
		write_pid(cg_base(), hop[1]);
		uint64_t in[NCG];

		cr_assert_eq(read(report[0], in, sizeof(in)),
			     (ssize_t)sizeof(in));
		read_all(b, c);
		kill_spinner(hop[0]);
		kill_spinner(hop[1]);
		kill_spinner(self);
		close(report[0]);
		close(report[1]);
	} while (cg_window_tainted(bpf, opened, attempt++));
	expect_agree(b, c, 20000000);
}

/* Where the kernel has no csd tracepoints, the program settles the moves
 * a task makes itself (from cgroup_attach_task, in the writer's context),
 * and says what it cannot do. */
Test(bpf_moves, without_the_ipi_hook_self_moves_stay_exact)
{
	struct shpmu_count b[NCG][NEV], c[NCG][NEV];
	uint64_t in[NCG];

	shpmu_free(bpf);
	shpmu__bpf_no_ipi_hook = true;
	log_count = 0;
	bpf = cg_context(SHPMU_CGROUP_BACKEND_BPF);
	cr_expect(strstr(last_log, "csd_function_entry"), "log: %s", last_log);
	run_self_mover(b, c, in);
	expect_agree(b, c, 90000000);
}
