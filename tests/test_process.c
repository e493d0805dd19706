// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Process targets: every thread of a process, present and future, and
 * with inherit its children, counted by classic per-thread events and by
 * the BPF program (process and host scope), against what the threads and
 * children measured of themselves: each opens a raw task-clock event on
 * itself and reports it, so the oracle covers the same work.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "backend_choice.h"
#include "helpers.h"
#include "host_procs.h"

static void quiet(int level, const char *msg, void *arg)
{
	(void)level;
	(void)msg;
	(void)arg;
}

static struct shpmu *classic, *bpf;

static void setup(void)
{
	SHPMU_OPTS(c, .cgroup_backend = SHPMU_CGROUP_BACKEND_PERF,
		   .log = quiet);
	SHPMU_OPTS(b, .cgroup_backend = SHPMU_CGROUP_BACKEND_BPF, .log = quiet);

	classic = shpmu_new(&c);
	bpf = shpmu_new(&b);
	cr_assert(classic && bpf, "shpmu_new: %s", strerror(errno));
}

static void teardown(void)
{
	shpmu_free(classic);
	shpmu_free(bpf);
}

TestSuite(process, .init = setup, .fini = teardown, .timeout = 600);

/* What a worker reports: a thread's or child's own task-clock (and its
 * CLOCK_THREAD_CPUTIME_ID), or the main thread's own at the end. */
enum { REPORT_READY = 0, REPORT_TASK = 1, REPORT_MAIN = 2 };
struct report {
	uint64_t kind, task_clock, cputime;
};

static void send_report(int fd, uint64_t kind, uint64_t tc)
{
	struct timespec ts;
	struct report r = {kind, tc, 0};

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	r.cputime = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	/* One write under PIPE_BUF: reports never interleave. */
	if (write(fd, &r, sizeof(r)) != sizeof(r))
		_exit(3);
}

static struct report recv_report(int fd)
{
	struct report r;

	cr_assert_eq(read(fd, &r, sizeof(r)), (ssize_t)sizeof(r),
		     "a worker died before it reported");
	return r;
}

/* Pipes between the test and a worker: go (test -> worker: a byte, or
 * EOF), reports (worker -> test), hold (EOF lets the worker exit). */
struct worker {
	pid_t pid;
	int go[2], reports[2], hold[2];
};

static void worker_pipes(struct worker *w)
{
	cr_assert(!pipe2(w->go, O_CLOEXEC) && !pipe2(w->reports, O_CLOEXEC) &&
		  !pipe2(w->hold, O_CLOEXEC));
}

/* In the worker: keeps its ends. */
static void worker_side(struct worker *w)
{
	die_with_parent();
	close(w->go[1]);
	close(w->reports[0]);
	close(w->hold[1]);
}

static void test_side(struct worker *w)
{
	close(w->go[0]);
	close(w->reports[1]);
	close(w->hold[0]);
	cr_assert_eq(recv_report(w->reports[0]).kind, REPORT_READY);
}

static void worker_end(struct worker *w)
{
	int status;

	close(w->go[1]);
	close(w->hold[1]);
	cr_assert_eq(waitpid(w->pid, &status, 0), w->pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "worker status %#x", status);
	close(w->reports[0]);
}

static void wait_byte(int fd)
{
	char c;

	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
}

/* Starts a worker running body(w, burn_ns), and waits for it to say
 * it is ready. */
static void start_worker(struct worker *w,
			 void (*body)(struct worker *, uint64_t),
			 uint64_t burn_ns)
{
	worker_pipes(w);
	w->pid = fork();
	cr_assert_geq(w->pid, 0);
	if (w->pid == 0) {
		worker_side(w);
		body(w, burn_ns);
		_exit(0);
	}
	test_side(w);
}

/* ---- threads started after the handle opened ---- */

#define NTHREADS 100 /* half of them exit before the read */

struct thread_arg {
	int reports, hold;
	bool stay;
	uint64_t burn_ns;
};

static void *thread_main(void *p)
{
	const struct thread_arg *a = p;
	int fd = task_clock_open(false);

	burn_cpu_ns(a->burn_ns);
	send_report(a->reports, REPORT_TASK, task_clock_read(fd));
	close(fd);
	if (a->stay)
		wait_byte(a->hold);
	return NULL;
}

static void threads_worker(struct worker *w, uint64_t burn_ns)
{
	static pthread_t threads[NTHREADS];
	static struct thread_arg args[NTHREADS];
	int own = task_clock_open(false);
	uint64_t start = task_clock_read(own);

	send_report(w->reports[1], REPORT_READY, 0);
	wait_byte(w->go[0]);
	for (int i = 0; i < NTHREADS; i++) {
		args[i] = (struct thread_arg){w->reports[1], w->hold[0],
					      i % 2 == 0, burn_ns};
		if (pthread_create(&threads[i], NULL, thread_main, &args[i]))
			_exit(4);
	}
	for (int i = 1; i < NTHREADS; i += 2)
		pthread_join(threads[i], NULL);
	send_report(w->reports[1], REPORT_MAIN, task_clock_read(own) - start);
	wait_byte(w->hold[0]);
	_exit(0);
}

struct totals {
	uint64_t task_clock; /* every report's */
	uint64_t cputime;    /* the tasks' */
	uint64_t main;	     /* the main thread's task-clock */
	int tasks;
};

/* Reads reports until want tasks and the main thread have reported. */
static struct totals collect(int fd, int want)
{
	struct totals t = {0};
	bool main_done = false;

	while (t.tasks < want || !main_done) {
		struct report r = recv_report(fd);

		t.task_clock += r.task_clock;
		if (r.kind == REPORT_TASK) {
			t.cputime += r.cputime;
			t.tasks++;
		} else {
			t.main = r.task_clock;
			main_done = true;
		}
	}
	return t;
}

static int open_process(struct shpmu *pmu, pid_t pid, bool inherit)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target t = {
		.kind = SHPMU_TARGET_PROCESS, .pid = pid, .cpu = -1};
	int h;

	a.inherit = inherit;
	h = shpmu_open(pmu, &a, &t);
	cr_assert_geq(h, 0, "process target: %s", strerror(-h));
	return h;
}

static uint64_t value_of(struct shpmu *pmu, int h)
{
	struct shpmu_count c;

	cr_assert_eq(shpmu_read(pmu, h, &c), 0);
	return c.value;
}

/* Counts one threads worker with a and b at once. */
static void count_threads(struct shpmu *a, struct shpmu *b, const char *name)
{
	uint64_t burn = 25000000, va, vb;
	struct worker w;
	struct totals t;
	int ha, hb;

	start_worker(&w, threads_worker, burn);
	ha = open_process(a, w.pid, false);
	hb = open_process(b, w.pid, false);
	cr_assert_eq(write(w.go[1], "g", 1), 1);
	t = collect(w.reports[0], NTHREADS);
	va = value_of(a, ha);
	vb = value_of(b, hb);
	worker_end(&w);
	cr_log_info("%s: %d threads, own task-clock %llu ns, "
		    "CLOCK_THREAD_CPUTIME_ID %llu ns",
		    name, t.tasks, (unsigned long long)t.task_clock,
		    (unsigned long long)t.cputime);
	expect_within_pct(va, t.task_clock, 2, "classic vs the threads");
	expect_within_pct(vb, t.task_clock, 2, name);
	expect_within_pct(vb, va, 1, "BPF vs classic");
	/* The threads' own CPU clocks, which leave out stolen time (and
	 * the main thread's own task-clock for its part). */
	expect_within_pct(vb, t.cputime + t.main, 5,
			  "BPF vs CLOCK_THREAD_CPUTIME_ID");
	/* Once the process is gone, both keep their final values. */
	va = value_of(a, ha);
	vb = value_of(b, hb);
	usleep(20000);
	cr_expect_eq(value_of(a, ha), va);
	cr_expect_eq(value_of(b, hb), vb);
	shpmu_close(a, ha);
	shpmu_close(b, hb);
}

Test(process, counts_threads_started_after_open_and_those_gone)
{
	count_threads(classic, bpf, "BPF vs the threads");
}

Test(process, counts_threads_in_host_scope)
{
	struct shpmu *host;

	host_fs_setup();
	{
		SHPMU_OPTS(o, .scope = SHPMU_SCOPE_HOST,
			   .bpffs_dir = host_bpffs(), .log = quiet);
		host = shpmu_new(&o);
	}
	cr_assert(host, "host scope: %s", strerror(errno));
	count_threads(classic, host, "host scope vs the threads");
	shpmu_free(host);
	host_fs_teardown();
}

/* ---- children, with and without inherit ---- */

#define NCHILDREN 20

static void children_worker(struct worker *w, uint64_t burn_ns)
{
	int own = task_clock_open(false);
	uint64_t start = task_clock_read(own);

	send_report(w->reports[1], REPORT_READY, 0);
	wait_byte(w->go[0]);
	for (int i = 0; i < NCHILDREN; i++) {
		pid_t pid = fork();

		if (pid < 0)
			_exit(4);
		if (pid == 0) {
			int fd = task_clock_open(false);

			burn_cpu_ns(burn_ns);
			send_report(w->reports[1], REPORT_TASK,
				    task_clock_read(fd));
			_exit(0);
		}
	}
	burn_cpu_ns(burn_ns);
	while (wait(NULL) > 0)
		;
	send_report(w->reports[1], REPORT_MAIN, task_clock_read(own) - start);
	_exit(0);
}

Test(process, inherit_counts_children_forked_from_now_on)
{
	uint64_t burn = 20000000, self, all, exit_ns;
	struct shpmu *pmus[2] = {classic, bpf};
	uint64_t with[2], without[2];
	int h_with[2], h_without[2];
	struct worker w;
	struct totals t;

	start_worker(&w, children_worker, burn);
	for (int i = 0; i < 2; i++) {
		h_with[i] = open_process(pmus[i], w.pid, true);
		h_without[i] = open_process(pmus[i], w.pid, false);
	}
	cr_assert_eq(write(w.go[1], "g", 1), 1);
	t = collect(w.reports[0], NCHILDREN);
	worker_end(&w);
	for (int i = 0; i < 2; i++) {
		with[i] = value_of(pmus[i], h_with[i]);
		without[i] = value_of(pmus[i], h_without[i]);
	}
	all = t.task_clock;
	self = t.main;
	/* BPF counts a process's exit up to its last switch (the address
	 * space torn down: 0.4 ms a process here, 2.5 ms under ASan),
	 * classic events stop at perf_event_exit_task(). The worker's own
	 * exit, as BPF sees it past classic, bounds each child's. */
	exit_ns = without[1] > without[0] ? without[1] - without[0] : 0;
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "BPF" : "classic";
		uint64_t exits = i ? (NCHILDREN + 1) * exit_ns * 3 / 2 : 0;

		cr_log_info("%s: with inherit %llu, without %llu, worker and "
			    "children %llu, exits %llu",
			    name, (unsigned long long)with[i],
			    (unsigned long long)without[i],
			    (unsigned long long)all, (unsigned long long)exits);
		/* Fork and exit of the children are theirs, and outside
		 * their own clocks. */
		cr_expect_geq(with[i], all * 98 / 100,
			      "%s with inherit missed children", name);
		/* Under valgrind a fork and an exit cost more than the
		 * work: only the lower bound holds there. */
		cr_expect(under_valgrind || with[i] <= all * 105 / 100 + exits,
			  "%s with inherit: %llu over %llu", name,
			  (unsigned long long)with[i], (unsigned long long)all);
		expect_within_pct(without[i], self, 5, "no inherit vs self");
	}
	for (int i = 0; i < 2; i++) {
		shpmu_close(pmus[i], h_with[i]);
		shpmu_close(pmus[i], h_without[i]);
	}
}

/* ---- many processes on one event per CPU per attr ---- */

static const uint64_t four_attrs[] = {
	PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CPU_CLOCK,
	PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES};

/* A child that burns burn_ns once go closes and reports its own clock.
 * The clock opens before the wait, so that it holds what the handles
 * count of the child: its wake-up too, not only the burn (under ASan,
 * with a second suite beside it, the rest came to 2% of 4 ms). */
static void one_of_many(struct worker *w, uint64_t burn_ns)
{
	int fd = task_clock_open(false);

	wait_byte(w->go[0]);
	burn_cpu_ns(burn_ns);
	send_report(w->reports[1], REPORT_TASK, task_clock_read(fd));
	wait_byte(w->hold[0]);
	_exit(0);
}

Test(process, a_thousand_processes_share_one_event_per_cpu_per_attr)
{
	int n = under_valgrind ? 100 : 1000, nh = 4 * n, cpus = online_cpus();
	uint64_t burn = 4000000, bytes0, bytes1, sum = 0, counted = 0;
	struct shpmu_count *out = calloc((size_t)nh, sizeof(*out));
	int *hs = calloc((size_t)nh, sizeof(*hs));
	pid_t *pids = calloc((size_t)n, sizeof(*pids));
	struct shpmu_stats st;
	struct worker w;
	double per;

	cr_assert(out && hs && pids);
	worker_pipes(&w);
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		cr_assert_geq(pids[i], 0);
		if (pids[i] == 0) {
			worker_side(&w);
			one_of_many(&w, burn);
		}
	}
	close(w.go[0]);
	close(w.reports[1]);
	close(w.hold[0]);
	bytes0 = shpmu__bpf_task_map_bytes(bpf);
	for (int i = 0; i < n; i++)
		for (int a = 0; a < 4; a++) {
			struct perf_event_attr at =
				sw_attr(four_attrs[a], false);
			struct shpmu_target t = {.kind = SHPMU_TARGET_PROCESS,
						 .pid = pids[i],
						 .cpu = -1};

			hs[a * n + i] = shpmu_open(bpf, &at, &t);
			cr_assert_geq(hs[a * n + i], 0, "open %d: %s", i,
				      strerror(-hs[a * n + i]));
		}
	bytes1 = shpmu__bpf_task_map_bytes(bpf);
	cr_assert_eq(shpmu_get_stats(bpf, &st), 0);
	cr_expect_eq(st.kernel_fds, (uint64_t)(4 * cpus),
		     "%llu fds for %d processes x 4 attrs",
		     (unsigned long long)st.kernel_fds, n);
	cr_expect_eq(count_perf_fds(), 4 * cpus);
	per = (double)(bytes1 - bytes0) / nh;
	cr_log_info("%d processes x 4 attrs: %llu perf fds, task maps %llu -> "
		    "%llu bytes: %.0f per target and attr",
		    n, (unsigned long long)st.kernel_fds,
		    (unsigned long long)bytes0, (unsigned long long)bytes1,
		    per);
	cr_expect_leq(per, 256.0, "%.0f bytes per target and attr", per);
	/* Every child burns now; each reports its own clock. */
	close(w.go[1]);
	for (int i = 0; i < n; i++)
		sum += recv_report(w.reports[0]).task_clock;
	cr_assert_eq(shpmu_read_many(bpf, hs, (size_t)nh, out), 0);
	for (int i = 0; i < n; i++)
		counted += out[i].value;
	/* Under valgrind each wake-up and report outweighs the work. */
	if (!under_valgrind)
		expect_within_pct(counted, sum, 2,
				  "1000 processes' task-clock");
	close(w.hold[1]);
	for (int i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
	close(w.reports[0]);
	for (int i = 0; i < nh; i++)
		shpmu_close(bpf, hs[i]);
	/* Nothing of a target is left once nothing counts it. */
	cr_expect_eq(shpmu__bpf_task_map_bytes(bpf), bytes0);
	free(out);
	free(hs);
	free(pids);
}

/* ---- identity ---- */

/* A child that burns burn_ns once it reads a byte, then exits. */
static pid_t burner(int *go, uint64_t burn_ns)
{
	int p[2];
	pid_t pid;

	cr_assert(!pipe2(p, O_CLOEXEC));
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		die_with_parent();
		close(p[1]);
		wait_byte(p[0]);
		burn_cpu_ns(burn_ns);
		_exit(0);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

static void run_burner(pid_t pid, int go)
{
	cr_assert_eq(write(go, "g", 1), 1);
	close(go);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
}

/* A child with pid's number: made by setting the last pid given out. */
static pid_t burner_with_pid(pid_t pid, int *go, uint64_t burn_ns)
{
	/* Another suite beside this one may be forking hundreds: each miss
	 * waits a little for that to pass. */
	for (int tries = 0; tries < 2000; tries++) {
		FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "we");
		pid_t got;

		cr_assert(f, "ns_last_pid: %s", strerror(errno));
		fprintf(f, "%d", (int)pid - 1);
		fclose(f);
		got = burner(go, burn_ns);
		if (got == pid)
			return got;
		cr_log_info("wanted pid %d, got %d", (int)pid, (int)got);
		kill(got, SIGKILL);
		waitpid(got, NULL, 0);
		close(*go);
		usleep(2000);
	}
	cr_assert_fail("could not get pid %d again", (int)pid);
	return -1;
}

Test(process, a_reused_pid_is_another_process)
{
	struct shpmu *pmus[2] = {classic, bpf};
	uint64_t burn = 30000000;

	/* The pidfs identity that tells processes apart comes from
	 * pidfd_open, which valgrind does not pass through. */
	if (under_valgrind)
		cr_skip_test("valgrind does not pass pidfd_open through");
	for (int i = 0; i < 2; i++) {
		struct shpmu_stats before, after;
		uint64_t old_value;
		int go, h_old, h_new;
		pid_t pid = burner(&go, burn);

		h_old = open_process(pmus[i], pid, false);
		run_burner(pid, go);
		old_value = value_of(pmus[i], h_old);
		cr_expect_geq(old_value, burn * 9 / 10);
		cr_assert_eq(burner_with_pid(pid, &go, burn), pid);
		cr_assert_eq(shpmu_get_stats(pmus[i], &before), 0);
		h_new = open_process(pmus[i], pid, false);
		cr_assert_eq(shpmu_get_stats(pmus[i], &after), 0);
		cr_expect_eq(after.shared_opens, before.shared_opens,
			     "a new process shared the old one's event");
		run_burner(pid, go);
		cr_expect_eq(value_of(pmus[i], h_old), old_value,
			     "the old process's count grew with the new one");
		/* (its exit included: a few ms under ASan) */
		expect_within_pct(value_of(pmus[i], h_new), burn, 20,
				  "the new process");
		shpmu_close(pmus[i], h_old);
		shpmu_close(pmus[i], h_new);
	}
}

struct parked {
	pid_t tid;
	int wake;
};

static void *park(void *p)
{
	struct parked *t = p;

	__atomic_store_n(&t->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	wait_byte(t->wake);
	return NULL;
}

Test(process, a_thread_is_not_a_process)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	struct shpmu_target t = {.kind = SHPMU_TARGET_PROCESS, .cpu = -1};
	struct shpmu_stats before, after;
	struct parked parked = {0};
	pthread_t thread;
	int wake[2], h;

	cr_assert(!pipe2(wake, O_CLOEXEC));
	parked.wake = wake[0];
	cr_assert(!pthread_create(&thread, NULL, park, &parked));
	while (!__atomic_load_n(&parked.tid, __ATOMIC_ACQUIRE))
		usleep(100);
	cr_assert_eq(shpmu_get_stats(classic, &before), 0);
	t.pid = parked.tid;
	cr_expect_eq(shpmu_open(classic, &a, &t), -EINVAL);
	cr_expect_eq(shpmu_open(bpf, &a, &t), -EINVAL);
	cr_assert_eq(shpmu_get_stats(classic, &after), 0);
	cr_expect_eq(after.handles, before.handles);
	cr_expect_eq(after.kernel_fds, before.kernel_fds);
	/* pid 0 is this process; both of its threads are counted. */
	t.pid = 0;
	h = shpmu_open(classic, &a, &t);
	cr_assert_geq(h, 0, "pid 0: %s", strerror(-h));
	cr_assert_eq(shpmu_get_stats(classic, &after), 0);
	cr_expect_geq(after.kernel_fds, before.kernel_fds + 2);
	shpmu_close(classic, h);
	close(wake[1]);
	pthread_join(thread, NULL);
	close(wake[0]);
}
