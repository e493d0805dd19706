// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Six agents in one host domain, the scenario that showed the old BPF
 * program's errors, against the real kernel (no test knobs): some kernels
 * (this machine's) run no BPF program at a switch whose outgoing task is a
 * thread of PID 1, so the counts of the cgroups may fall short of the
 * truth, by at most the bound shpmu_read_bound() gives, and never exceed
 * it.
 *
 * The agents are processes forked from the test, each with a context of
 * its own in one domain on a BPF filesystem the test mounts in a mount
 * namespace of its own. Each counts task-clock and context-switches on
 * three cgroups and cpu-clock on every CPU, and holds each handle to a
 * twin (tests/README.md): raw perf events it opens itself, in two sets as
 * twin.h has them, "out" just outside each edge of the handle's window and
 * "in" just inside, so that the edges may fall while the workers burn.
 * Three workers burn in the cgroups, one each, in phases; between phases
 * one of them is moved to the second cgroup, then the third. The agents
 * join late, reset, disable, enable, close and reopen, and one is killed
 * midway; the others count on through its death.
 *
 * The agents take commands and answer on pipes, as host_helper.c does
 * (host_procs.h's helper_ok() talks to them); they never call Criterion,
 * whose asserts belong to the test process: an agent answers "err" and
 * the test fails with that line.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup_helpers.h"
#include "helpers.h"
#include "host_procs.h"

#define DOMAIN	"agents"
#define NAGENTS 6
#define NCG	3
#define PHASES	4
/* Per phase and worker: 125 bursts of 4 ms of CPU, each followed by a
 * 300 us sleep (a switch out, as a real service's wait for work is):
 * 0.5 s of CPU, a phase of about 0.8 s on 2 CPUs, the run about 4 s. */
#define BURSTS	 125
#define BURST_NS 4000000ull
#define NAP_NS	 300000

static const char *const cg_names[NCG] = {"a", "b", "c"};
static char cg_paths[NCG][PATH_MAX + 16];

/*
 * What each agent counts: a handle for each of these, each with its twin.
 * cg is the cgroup (cg_names), or -1 for every CPU (SHPMU_TARGET_CPU,
 * SHPMU_ALL_CPUS), whose twin is a raw cpu-clock on each CPU.
 */
#define NSLOTS 7
static const struct slot_def {
	uint64_t config;
	int cg;
} slot_defs[NSLOTS] = {
	{PERF_COUNT_SW_TASK_CLOCK, 0}, {PERF_COUNT_SW_CONTEXT_SWITCHES, 0},
	{PERF_COUNT_SW_TASK_CLOCK, 1}, {PERF_COUNT_SW_CONTEXT_SWITCHES, 1},
	{PERF_COUNT_SW_TASK_CLOCK, 2}, {PERF_COUNT_SW_CONTEXT_SWITCHES, 2},
	{PERF_COUNT_SW_CPU_CLOCK, -1},
};

static const char *config_name(uint64_t config)
{
	switch (config) {
	case PERF_COUNT_SW_TASK_CLOCK:
		return "task-clock";
	case PERF_COUNT_SW_CONTEXT_SWITCHES:
		return "context-switches";
	default:
		return "cpu-clock";
	}
}

/* ------------------------------------------------------------------ */
/* The agent's side: no Criterion here (see the top of the file). */

struct agent_slot {
	int h;	  /* the handle, or -1 */
	int ncpu; /* fds in each twin set */
	int out[CG_TWIN_CPUS], in[CG_TWIN_CPUS];
};

static struct shpmu *agent_pmu;
static struct agent_slot agent_slots[NSLOTS];
static int agent_id;

static void agent_log(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level <= SHPMU_LOG_INFO)
		fprintf(stderr, "agent %d [%d]: %s\n", agent_id, getpid(), msg);
}

static void agent_say(const char *s)
{
	char line[4096];
	int len = snprintf(line, sizeof(line), "%s\n", s);

	/* One write a line, under PIPE_BUF: a line the test reads is never
	 * torn, even by an agent killed midway. */
	if (len < 0 || len >= (int)sizeof(line) ||
	    write(1, line, (size_t)len) != len)
		_exit(3);
}

/* One raw event of the twin, disabled: the cgroup's (cg_dir >= 0) or the
 * CPU's. */
static int agent_raw(uint64_t config, int cg_dir, int cpu)
{
	struct perf_event_attr a = sw_attr(config, true);
	unsigned long flags = PERF_FLAG_FD_CLOEXEC;

	a.read_format =
		PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (cg_dir >= 0)
		flags |= PERF_FLAG_PID_CGROUP;
	return (int)syscall(SYS_perf_event_open, &a, cg_dir, cpu, -1, flags);
}

static int twin_ioctl(const int *fds, int n, unsigned long req)
{
	for (int i = 0; i < n; i++)
		if (ioctl(fds[i], req, 0))
			return -errno;
	return 0;
}

/* A twin set's count, summed over its CPUs. Software events are never
 * multiplexed: a set that did not run all the time it was enabled would
 * be an estimate, not a measurement, and is refused. */
static int twin_sum(const int *fds, int n, uint64_t *sum)
{
	uint64_t v[3];

	*sum = 0;
	for (int i = 0; i < n; i++) {
		if (read(fds[i], v, sizeof(v)) != sizeof(v))
			return -EIO;
		if (v[1] != v[2])
			return -ERANGE;
		*sum += v[0];
	}
	return 0;
}

static void twin_close_all(struct agent_slot *sl)
{
	for (int i = 0; i < sl->ncpu; i++) {
		close(sl->out[i]);
		close(sl->in[i]);
	}
	sl->ncpu = 0;
}

static int twin_open_all(struct agent_slot *sl, const struct slot_def *d)
{
	int dir = -1, err = 0, ncpu = online_cpus();

	if (ncpu > CG_TWIN_CPUS)
		return -E2BIG;
	if (d->cg >= 0) {
		dir = open(cg_paths[d->cg], O_RDONLY | O_DIRECTORY);
		if (dir < 0)
			return -errno;
	}
	for (sl->ncpu = 0; sl->ncpu < ncpu; sl->ncpu++) {
		sl->out[sl->ncpu] = agent_raw(d->config, dir, sl->ncpu);
		sl->in[sl->ncpu] = agent_raw(d->config, dir, sl->ncpu);
		if (sl->out[sl->ncpu] < 0 || sl->in[sl->ncpu] < 0) {
			err = -errno;
			sl->ncpu++;
			twin_close_all(sl);
			break;
		}
	}
	if (dir >= 0)
		close(dir);
	return err;
}

/* Opens a slot's handle (counting from now unless off) between its twin
 * sets' enables. */
static int agent_open_slot(int s, bool off)
{
	const struct slot_def *d = &slot_defs[s];
	struct agent_slot *sl = &agent_slots[s];
	struct perf_event_attr a = sw_attr(d->config, off);
	struct shpmu_target t = {.kind = SHPMU_TARGET_CPU,
				 .cpu = SHPMU_ALL_CPUS};
	int err = twin_open_all(sl, d);

	if (err)
		return err;
	if (d->cg >= 0) {
		t.kind = SHPMU_TARGET_CGROUP;
		t.cgroup_path = cg_paths[d->cg];
	}
	if (!off &&
	    (err = twin_ioctl(sl->out, sl->ncpu, PERF_EVENT_IOC_ENABLE)))
		return err;
	sl->h = shpmu_open(agent_pmu, &a, &t);
	if (sl->h < 0)
		return sl->h;
	return off ? 0 : twin_ioctl(sl->in, sl->ncpu, PERF_EVENT_IOC_ENABLE);
}

/*
 * An edge of a handle's window and the twin's side of it. An edge that
 * opens the window (enable, reset) comes after the out set's and before
 * the in set's; one that closes it (disable) after the in set's and
 * before the out set's: out holds the handle's window, the handle's own
 * calls included, and in is held by it.
 */
static const struct edge {
	const char *word;
	unsigned long req;
	bool opens;
	int (*op)(struct shpmu *pmu, int h);
} edges[] = {
	{"enable", PERF_EVENT_IOC_ENABLE, true, shpmu_enable},
	{"reset", PERF_EVENT_IOC_RESET, true, shpmu_reset},
	{"disable", PERF_EVENT_IOC_DISABLE, false, shpmu_disable},
};

static int agent_edge(int s, const struct edge *e)
{
	struct agent_slot *sl = &agent_slots[s];
	const int *first = e->opens ? sl->out : sl->in;
	const int *then = e->opens ? sl->in : sl->out;
	int err = twin_ioctl(first, sl->ncpu, e->req);

	if (!err)
		err = e->op(agent_pmu, sl->h);
	if (!err)
		err = twin_ioctl(then, sl->ncpu, e->req);
	return err;
}

/* A read is an edge that closes the window for the reading it gives: in,
 * the handle, out. "COUNT BOUND IN OUT" for the slot. */
static int agent_read_slot(int s, char *buf, size_t len)
{
	struct agent_slot *sl = &agent_slots[s];
	struct shpmu_count c;
	uint64_t bound, in, out;
	int err = twin_sum(sl->in, sl->ncpu, &in);

	if (!err)
		err = shpmu_read_bound(agent_pmu, sl->h, &c, &bound);
	if (!err)
		err = twin_sum(sl->out, sl->ncpu, &out);
	if (!err)
		snprintf(buf, len, " %llu %llu %llu %llu",
			 (unsigned long long)c.value, (unsigned long long)bound,
			 (unsigned long long)in, (unsigned long long)out);
	return err;
}

static const struct edge *edge_named(const char *word)
{
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		if (!strcmp(word, edges[i].word))
			return &edges[i];
	return NULL;
}

/* One command, on every slot in turn; one answer line. */
static void agent_command(char *line)
{
	char reply[2048] = "ok", *word = strtok(line, " \n");
	char *arg = strtok(NULL, " \n");
	const struct edge *e;
	size_t used = strlen(reply);
	int err = 0;

	if (!word)
		return;
	if (!strcmp(word, "quit")) {
		shpmu_free(agent_pmu);
		agent_say("ok");
		_exit(0);
	}
	e = edge_named(word);
	if (!e && strcmp(word, "open") && strcmp(word, "read") &&
	    strcmp(word, "close")) {
		agent_say("err 22 (no such command)");
		return;
	}
	for (int s = 0; s < NSLOTS && !err; s++) {
		if (e) {
			err = agent_edge(s, e);
		} else if (!strcmp(word, "open")) {
			err = agent_open_slot(s, arg && !strcmp(arg, "off"));
		} else if (!strcmp(word, "read")) {
			err = agent_read_slot(s, reply + used,
					      sizeof(reply) - used);
			used += strlen(reply + used);
		} else {
			err = shpmu_close(agent_pmu, agent_slots[s].h);
			agent_slots[s].h = -1;
			twin_close_all(&agent_slots[s]);
		}
		if (err)
			snprintf(reply, sizeof(reply),
				 "err %d (%s, %s slot %d)", -err,
				 strerror(-err), word, s);
	}
	agent_say(reply);
}

static __attribute__((noreturn)) void agent_main(int id, int cmd, int ans)
{
	static char line[4096];
	FILE *in;

	die_with_parent();
	agent_id = id;
	/* Its pipes as stdin and stdout, stderr kept for the log; nothing
	 * else of the test's (other agents' and workers' pipes). */
	if (dup2(cmd, 0) < 0 || dup2(ans, 1) < 0)
		_exit(2);
	syscall(SYS_close_range, 3, ~0u, 0);
	in = fdopen(0, "r");
	if (!in)
		_exit(2);
	SHPMU_OPTS(opts, .scope = SHPMU_SCOPE_HOST, .bpffs_dir = host_bpffs(),
		   .domain = DOMAIN, .log = agent_log);
	agent_pmu = shpmu_new(&opts);
	if (!agent_pmu) {
		snprintf(line, sizeof(line), "err %d", errno);
		agent_say(line);
		_exit(1);
	}
	snprintf(line, sizeof(line), "ready %d", getpid());
	agent_say(line);
	while (fgets(line, sizeof(line), in))
		agent_command(line);
	shpmu_free(agent_pmu);
	_exit(0);
}

/* ------------------------------------------------------------------ */
/* Workers: burn in their cgroup a phase at a time, parked between. */

struct worker {
	pid_t pid;
	int go, done; /* the test's ends */
};

static __attribute__((noreturn)) void worker_main(const char *cg, int go,
						  int done)
{
	const struct timespec nap = {0, NAP_NS};
	char byte;

	die_with_parent();
	if (dup2(go, 0) < 0 || dup2(done, 1) < 0)
		_exit(2);
	syscall(SYS_close_range, 3, ~0u, 0);
	cg_move_self(cg);
	if (write(1, "r", 1) != 1)
		_exit(3);
	while (read(0, &byte, 1) == 1 && byte == 'g') {
		for (int i = 0; i < BURSTS; i++) {
			burn_cpu_ns(BURST_NS);
			nanosleep(&nap, NULL);
		}
		if (write(1, "d", 1) != 1)
			_exit(3);
	}
	_exit(0);
}

/* ------------------------------------------------------------------ */
/* The test's side. */

static struct shpmu *local; /* for the cgroup root */
static struct worker workers[NCG];
static struct helper agents[NAGENTS];

/* Every child still there when a test ends (a failed assert) is killed
 * and reaped, so that its cgroups and the domain can go. */
static void reap_children(void)
{
	for (int i = 0; i < NCG; i++)
		if (workers[i].pid > 0) {
			kill(workers[i].pid, SIGKILL);
			waitpid(workers[i].pid, NULL, 0);
		}
	for (int i = 0; i < NAGENTS; i++)
		if (agents[i].pid > 0 && agents[i].to)
			helper_kill(&agents[i]);
}

static void setup(void)
{
	host_fs_setup();
	local = shpmu_new(NULL);
	cr_assert(local);
	cg_setup(local);
	memset(workers, 0, sizeof(workers));
	memset(agents, 0, sizeof(agents));
}

static void teardown(void)
{
	reap_children();
	cg_teardown();
	shpmu_free(local);
	host_fs_teardown();
}

/* About 4 s plain (meson's 120 s bounds it); ten times that and more
 * under valgrind, where every agent's join loads the program slowly. */
TestSuite(agents, .init = setup, .fini = teardown, .timeout = 600);

/* Starts agent id, joined to the domain; its errno if it could not. */
static int agent_start(int id)
{
	struct helper *h = &agents[id];
	int cmd[2], ans[2];

	cr_assert_eq(pipe2(cmd, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(ans, O_CLOEXEC), 0);
	h->pid = fork();
	cr_assert_geq(h->pid, 0);
	if (h->pid == 0)
		agent_main(id, cmd[0], ans[1]);
	close(cmd[0]);
	close(ans[1]);
	h->to = fdopen(cmd[1], "w");
	h->from = fdopen(ans[0], "r");
	cr_assert(h->to && h->from);
	if (fgets(h->reply, sizeof(h->reply), h->from) &&
	    !strncmp(h->reply, "ready", 5))
		return 0;
	helper_wait(h);
	h->pid = 0;
	return strncmp(h->reply, "err ", 4) ? EIO : atoi(h->reply + 4);
}

static void agent_start_ok(int id)
{
	int err = agent_start(id);

	cr_assert_eq(err, 0, "agent %d did not join: %s", id, strerror(err));
}

static void worker_start(struct worker *w, int cg)
{
	int go[2], done[2];
	char byte;

	cr_assert_eq(pipe2(go, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(done, O_CLOEXEC), 0);
	w->pid = fork();
	cr_assert_geq(w->pid, 0);
	if (w->pid == 0)
		worker_main(cg_paths[cg], go[0], done[1]);
	close(go[0]);
	close(done[1]);
	w->go = go[1];
	w->done = done[0];
	cr_assert_eq(read(w->done, &byte, 1), 1, "worker %d did not start",
		     w->pid);
	/* Parked before any handle opens: its start and its move into
	 * the cgroup fall in no window. */
	wait_until_blocked(w->pid);
}

static void phase_go(void)
{
	for (int i = 0; i < NCG; i++)
		cr_assert_eq(write(workers[i].go, "g", 1), 1);
}

/* Until every worker has done its bursts and left its CPU. */
static void phase_end(void)
{
	char byte;

	for (int i = 0; i < NCG; i++) {
		cr_assert_eq(read(workers[i].done, &byte, 1), 1,
			     "worker %d died", workers[i].pid);
		wait_until_blocked(workers[i].pid);
	}
}

/* Moves a parked worker (blocked on its pipe) to cgroup cg. */
static void worker_move(struct worker *w, int cg)
{
	cg_move(cg_paths[cg], w->pid);
}

static void workers_stop(void)
{
	int status;

	for (int i = 0; i < NCG; i++) {
		close(workers[i].go);
		close(workers[i].done);
		cr_assert_eq(waitpid(workers[i].pid, &status, 0),
			     workers[i].pid);
		cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			  "worker %d ended with status %#x", workers[i].pid,
			  status);
		workers[i].pid = 0;
	}
}

/*
 * How far a handle may be from its twin.
 *
 * Clocks: the BPF program takes a CPU's clock at the sched_switch
 * tracepoint, the twin's cgroup events switch later in the same switch,
 * after the other classic cgroup events of the CPU (the six agents' twins,
 * dozens a CPU): each of the cgroup's runs is measured at other instants
 * at both ends, some us apart, either way. Over these windows (0.5 to
 * 1.5 s of a cgroup's CPU, hundreds of its switches, thousands on a
 * machine loaded by other suites) it came at most 0.1% above the out twin
 * here (the most switches) and 0.013% below the in twin with a bound of
 * 0: 0.5% leaves five times that either way.
 *
 * Switch counts: the program takes a CPU's switch count at the
 * tracepoint, before the kernel counts that switch itself, so a switch at
 * either edge of a window may land on the other side of it from where the
 * twin puts it: 2.
 */
#define CLOCK_PCT     0.5
#define SWITCHES_GIVE 2

/* The bound as a share of the count, per cent, by what the handle counts
 * (task-clock, context-switches, cpu-clock), for the summary. */
#define MAX_JUDGED 256
static double shares[3][MAX_JUDGED];
static int nshares[3], zero_counts;

static int kind_of(uint64_t config)
{
	return config == PERF_COUNT_SW_TASK_CLOCK	  ? 0
	       : config == PERF_COUNT_SW_CONTEXT_SWITCHES ? 1
							  : 2;
}

static void judge(const char *label, const struct slot_def *d,
		  const uint64_t v[4])
{
	uint64_t count = v[0], bound = v[1], in = v[2], out = v[3];
	double share = count ? 100.0 * (double)bound / (double)count : 0;
	double tol = CLOCK_PCT / 100 * (under_valgrind ? 10 : 1);
	int k = kind_of(d->config);

	cr_log_info("%s: count %llu, bound %llu (%.3f%% of the count), twin "
		    "%llu (in %llu)",
		    label, (unsigned long long)count, (unsigned long long)bound,
		    share, (unsigned long long)out, (unsigned long long)in);
	if (count && nshares[k] < MAX_JUDGED)
		shares[k][nshares[k]++] = share;
	zero_counts += !count;
	if (d->config == PERF_COUNT_SW_CONTEXT_SWITCHES) {
		cr_expect_leq(count, out + SWITCHES_GIVE,
			      "%s: counted %llu switches, its twin %llu", label,
			      (unsigned long long)count,
			      (unsigned long long)out);
		cr_expect_geq(count + bound + SWITCHES_GIVE, in,
			      "%s: counted %llu + bound %llu switches, its "
			      "twin %llu",
			      label, (unsigned long long)count,
			      (unsigned long long)bound,
			      (unsigned long long)in);
		return;
	}
	cr_expect_leq((double)count, (double)out * (1 + tol),
		      "%s: counted %llu ns, more than its twin's %llu ns and "
		      "%.2f%%",
		      label, (unsigned long long)count, (unsigned long long)out,
		      100 * tol);
	cr_expect_geq((double)(count + bound), (double)in * (1 - tol),
		      "%s: counted %llu ns + bound %llu ns, short of its "
		      "twin's %llu ns by more than %.2f%%",
		      label, (unsigned long long)count,
		      (unsigned long long)bound, (unsigned long long)in,
		      100 * tol);
	/* A CPU target's reading is the kernel's own per-CPU event. */
	if (d->cg < 0)
		cr_expect_eq(bound, 0, "%s: a CPU target's bound is %llu",
			     label, (unsigned long long)bound);
}

/* Reads every handle of an agent and judges each against its twin. */
static void agent_check(int id, const char *when)
{
	const char *r = helper_ok(&agents[id], "read");
	char label[160], *end;
	uint64_t v[4];

	for (int s = 0; s < NSLOTS; s++) {
		const struct slot_def *d = &slot_defs[s];

		for (int i = 0; i < 4; i++) {
			v[i] = strtoull(r, &end, 10);
			cr_assert_neq(end, r, "agent %d: short reply", id);
			r = end;
		}
		snprintf(label, sizeof(label), "agent %d %s, %s on %s", id,
			 when, config_name(d->config),
			 d->cg < 0 ? "every CPU" : cg_names[d->cg]);
		judge(label, d, v);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void log_shares(const char *what, double *v, int n)
{
	if (!n)
		return;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	cr_log_info("bound as a share of the count, %s: largest %.3f%%, "
		    "median %.3f%% (%d handles)",
		    what, v[n - 1],
		    n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, n);
}

static void log_summary(void)
{
	double all[3 * MAX_JUDGED];
	int n = 0;

	for (int k = 0; k < 3; k++)
		for (int i = 0; i < nshares[k]; i++)
			all[n++] = shares[k][i];
	log_shares("every handle", all, n);
	log_shares("cgroup task-clock", shares[0], nshares[0]);
	log_shares("cgroup context-switches", shares[1], nshares[1]);
	log_shares("cpu-clock on every CPU", shares[2], nshares[2]);
	cr_log_info("(%d readings of a count of 0 left out)", zero_counts);
}

/*
 * The schedule, phases P0 to P3 with every worker burning, "idle" between
 * them (every worker parked); edges in a phase fall while the workers run:
 *
 *   before P0  agents 0, 1, 2, 5 open (1 disabled)
 *   in P0      agent 3 joins and opens
 *   after P0   agent 1 enables; agent 4 joins and opens
 *   in P1      agent 2 resets
 *   after P1   agents 5 and 4 read; agent 4 closes; worker 0 moves a -> b
 *   in P2      agent 5 is killed; agent 4 opens again
 *   after P2   agent 1 disables; agent 2 resets; agent 3 reads;
 *              worker 0 moves b -> c
 *   in P3      agent 1 enables; agent 0 reads
 *   after P3   agents 0 to 4 read and quit
 */
Test(agents, six_agents_stay_within_their_bounds)
{
	int err;

	for (int i = 0; i < NCG; i++)
		snprintf(cg_paths[i], sizeof(cg_paths[i]), "%s",
			 cg_make(cg_names[i]));
	/* The first agent says whether host scope works here at all. */
	err = agent_start(0);
	if (err == EPERM || err == EOPNOTSUPP || err == ENOENT)
		cr_skip_test("host scope cannot work here: %s (the log says "
			     "why)",
			     strerror(err));
	cr_assert_eq(err, 0, "agent 0 did not join: %s", strerror(err));
	agent_start_ok(1);
	agent_start_ok(2);
	agent_start_ok(5);
	for (int i = 0; i < NCG; i++)
		worker_start(&workers[i], i);
	helper_ok(&agents[0], "open");
	helper_ok(&agents[1], "open off");
	helper_ok(&agents[2], "open");
	helper_ok(&agents[5], "open");

	phase_go();
	agent_start_ok(3);
	helper_ok(&agents[3], "open");
	phase_end();
	helper_ok(&agents[1], "enable");
	agent_start_ok(4);
	helper_ok(&agents[4], "open");

	phase_go();
	helper_ok(&agents[2], "reset");
	phase_end();
	agent_check(5, "before its death");
	agent_check(4, "before its close");
	helper_ok(&agents[4], "close");
	worker_move(&workers[0], 1);

	phase_go();
	helper_kill(&agents[5]);
	agents[5].pid = 0;
	helper_ok(&agents[4], "open");
	phase_end();
	helper_ok(&agents[1], "disable");
	helper_ok(&agents[2], "reset");
	agent_check(3, "after P2");
	worker_move(&workers[0], 2);

	phase_go();
	helper_ok(&agents[1], "enable");
	agent_check(0, "in P3");
	phase_end();
	for (int i = 0; i < 5; i++) {
		agent_check(i, "at the end");
		helper_quit(&agents[i]);
		agents[i].pid = 0;
	}
	workers_stop();
	log_summary();
}
