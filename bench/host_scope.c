// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Host scope against process scope: the kernel events 16 processes hold
 * for 8 attrs on every CPU, read_many of 1000 cgroups, a cached read
 * against a raw read(2), and the ping-pong with 16 processes counting
 * 1000 cgroups. It all runs in a child with a mount namespace and a BPF
 * filesystem of its own, so nothing it pins outlives it.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define NPROCS 16
#define NFIGS  6 /* bench_host's */

static char bpffs[PATH_MAX], domain_dir[PATH_MAX + 16];

static struct shpmu *context(enum shpmu_scope scope,
			     enum shpmu_cgroup_backend backend)
{
	SHPMU_OPTS(opts, .scope = scope, .cgroup_backend = backend,
		   .bpffs_dir = scope == SHPMU_SCOPE_HOST ? domain_dir : NULL);

	return shpmu_new(&opts);
}

/* The 8 attrs: 4 software configs, with and without the kernel's share. */
static struct perf_event_attr attr_n(int i)
{
	static const uint64_t configs[4] = {
		PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK,
		PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES};
	struct perf_event_attr a = bench_attr(configs[i % 4], false);

	a.exclude_kernel = i >= 4;
	return a;
}

enum job { EIGHT_ON_ALL_CPUS, TASK_CLOCK_ON_1002_CGROUPS };

/* NPROCS processes, each with its own context of scope doing job; they
 * wait on *go (its read end) until the caller closes its write end. */
static int start_procs(enum shpmu_scope scope, enum job job, pid_t *pids,
		       int *go)
{
	int ready[2], gate[2];
	char byte;

	if (pipe(ready) || pipe(gate))
		die("pipe", errno);
	for (int i = 0; i < NPROCS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct shpmu *p =
				context(scope, SHPMU_CGROUP_BACKEND_AUTO);
			struct shpmu_target cpus = {.kind = SHPMU_TARGET_CPU,
						    .cpu = SHPMU_ALL_CPUS};
			char name[16];
			int ok = p != NULL;

			close(ready[0]);
			close(gate[1]);
			for (int a = 0; ok && job == EIGHT_ON_ALL_CPUS && a < 8;
			     a++) {
				struct perf_event_attr attr = attr_n(a);

				ok = shpmu_open(p, &attr, &cpus) >= 0;
			}
			if (ok && job == TASK_CLOCK_ON_1002_CGROUPS)
				ok = open_cgroup(p, "ping",
						 PERF_COUNT_SW_TASK_CLOCK) >=
					     0 &&
				     open_cgroup(p, "pong",
						 PERF_COUNT_SW_TASK_CLOCK) >= 0;
			for (int c = 0;
			     ok && job == TASK_CLOCK_ON_1002_CGROUPS &&
			     c < SWITCH_EXTRA;
			     c++) {
				snprintf(name, sizeof(name), "c%04d", c);
				ok = open_cgroup(p, name,
						 PERF_COUNT_SW_TASK_CLOCK) >= 0;
			}
			byte = ok ? 1 : 0;
			if (write(ready[1], &byte, 1) != 1 ||
			    read(gate[0], &byte, 1) < 0)
				_exit(1);
			shpmu_free(p);
			_exit(0);
		}
	}
	close(ready[1]);
	close(gate[0]);
	*go = gate[1];
	for (int i = 0; i < NPROCS; i++)
		if (read(ready[0], &byte, 1) != 1 || !byte) {
			close(ready[0]);
			return -1;
		}
	close(ready[0]);
	return 0;
}

static void stop_procs(pid_t *pids, int go)
{
	close(go);
	for (int i = 0; i < NPROCS; i++)
		waitpid(pids[i], NULL, 0);
}

/* Perf events held for 16 processes x 8 attrs x every CPU: fds in the
 * processes, plus (host scope) what the domain's pinned map holds. */
static void events_16(enum shpmu_scope scope, struct figure *f)
{
	pid_t pids[NPROCS];
	double n = 0;
	int go;

	if (start_procs(scope, EIGHT_ON_ALL_CPUS, pids, &go)) {
		figure_skip(f, "a process could not open its events");
		stop_procs(pids, go);
		return;
	}
	for (int i = 0; i < NPROCS; i++)
		n += perf_fds_of(pids[i]);
	if (scope == SHPMU_SCOPE_HOST) {
		unsigned int pinned = 0, users = 0;
		char cmd[PATH_MAX * 2 + 64], line[512];
		FILE *p;

		/* The operator's tool reads the pinned books for us. */
		snprintf(cmd, sizeof(cmd), "'%s' --bpffs '%s' show default",
			 beside("shpmu-host"), domain_dir);
		p = popen(cmd, "r");
		if (p && fgets(line, sizeof(line), p))
			sscanf(line,
			       "domain default: %*s %*u attrs, %u perf "
			       "events, %*u cgroups, %u users",
			       &pinned, &users);
		if (p)
			pclose(p);
		n += pinned;
		snprintf(f->note, sizeof(f->note),
			 "%u held by the pinned map (shpmu-host), %u users, "
			 "no fd in any process",
			 pinned, users);
	}
	figure_set(f, &n, 1);
	stop_procs(pids, go);
}

static double time_read_many(struct shpmu *p, const int *hs, int n)
{
	static struct shpmu_count out[SWITCH_EXTRA];
	double t0 = now_ns();

	for (int r = 0; r < 20; r++)
		if (shpmu_read_many(p, hs, (size_t)n, out))
			die("shpmu_read_many", errno);
	return (now_ns() - t0) / 20;
}

static void open_1000(struct shpmu *p, int *hs)
{
	char name[16];

	for (int c = 0; c < SWITCH_EXTRA; c++) {
		snprintf(name, sizeof(name), "c%04d", c);
		hs[c] = open_cgroup(p, name, PERF_COUNT_SW_TASK_CLOCK);
		if (hs[c] < 0)
			die("open_cgroup", -hs[c]);
	}
}

static void read_many_ratio(struct figure *f)
{
	static int host_hs[SWITCH_EXTRA], local_hs[SWITCH_EXTRA];
	struct shpmu *host =
		context(SHPMU_SCOPE_HOST, SHPMU_CGROUP_BACKEND_AUTO);
	struct shpmu *local =
		context(SHPMU_SCOPE_PROCESS, SHPMU_CGROUP_BACKEND_BPF);
	double samples[REPS], h = 0, l = 0;

	if (!host || !local)
		die("shpmu_new", errno);
	open_1000(host, host_hs);
	open_1000(local, local_hs);
	time_read_many(host, host_hs, SWITCH_EXTRA); /* warm-up */
	time_read_many(local, local_hs, SWITCH_EXTRA);
	for (int r = 0; r < REPS; r++) {
		h = time_read_many(host, host_hs, SWITCH_EXTRA);
		l = time_read_many(local, local_hs, SWITCH_EXTRA);
		samples[r] = h / l;
	}
	figure_set(f, samples, REPS);
	snprintf(f->note, sizeof(f->note),
		 "1000 cgroups: host %.0f us, process-scope BPF %.0f us",
		 h / 1e3, l / 1e3);
	shpmu_free(local);
	shpmu_free(host);
}

static void cached_ratio(struct figure *f)
{
	struct shpmu *host =
		context(SHPMU_SCOPE_HOST, SHPMU_CGROUP_BACKEND_AUTO);
	int h, fd = raw_open(PERF_COUNT_SW_TASK_CLOCK, 0, -1, -1);
	double samples[REPS], cached = 0, raw = 0;
	enum { N = 100000 };
	struct shpmu_count c;
	uint64_t v[3]; /* value and both times (bench_attr's format) */

	if (!host || fd < 0)
		die("cached read setup", errno);
	h = open_cgroup(host, "ping", PERF_COUNT_SW_TASK_CLOCK);
	if (h < 0)
		die("open_cgroup", -h);
	for (int r = 0; r < REPS; r++) {
		double t0 = now_ns();

		for (int i = 0; i < N; i++)
			if (shpmu_read_cached(host, h, &c))
				die("shpmu_read_cached", errno);
		cached = (now_ns() - t0) / N;
		t0 = now_ns();
		for (int i = 0; i < N; i++)
			if (read(fd, v, sizeof(v)) < 8)
				die("read", errno);
		raw = (now_ns() - t0) / N;
		samples[r] = cached / raw;
	}
	figure_set(f, samples, REPS);
	snprintf(f->note, sizeof(f->note),
		 "cached %.0f ns, raw read(2) %.0f ns", cached, raw);
	close(fd);
	shpmu_free(host);
}

/* ns per open and close of a handle on a counted cgroup in p. */
static double time_open_close(struct shpmu *p)
{
	enum { N = 200 };
	double t0 = now_ns();

	for (int i = 0; i < N; i++) {
		int h = open_cgroup(p, "ping", PERF_COUNT_SW_TASK_CLOCK);

		if (h < 0 || shpmu_close(p, h))
			die("open and close", h < 0 ? -h : errno);
	}
	return (now_ns() - t0) / N;
}

/* An open and a close in host scope, each a change of the domain under
 * its lock that looks at every member's liveness (16 others here), the
 * cgroup counted and let go each time, against the same in process
 * scope's BPF backend. */
static void open_close_16(struct figure *f)
{
	struct shpmu *host =
		context(SHPMU_SCOPE_HOST, SHPMU_CGROUP_BACKEND_AUTO);
	struct shpmu *local =
		context(SHPMU_SCOPE_PROCESS, SHPMU_CGROUP_BACKEND_BPF);
	double samples[REPS], h = 0, l = 0;
	pid_t pids[NPROCS];
	int go;

	if (!host || !local)
		die("shpmu_new", errno);
	if (start_procs(SHPMU_SCOPE_HOST, EIGHT_ON_ALL_CPUS, pids, &go)) {
		figure_skip(f, "a process could not open its events");
		stop_procs(pids, go);
		shpmu_free(local);
		shpmu_free(host);
		return;
	}
	for (int r = 0; r < REPS; r++) {
		h = time_open_close(host);
		l = time_open_close(local);
		samples[r] = h / l;
	}
	figure_set(f, samples, REPS);
	snprintf(f->note, sizeof(f->note),
		 "host %.1f us (17 members), process-scope BPF %.1f us",
		 h / 1e3, l / 1e3);
	stop_procs(pids, go);
	shpmu_free(local);
	shpmu_free(host);
}

static void switch_16(struct figure *f)
{
	double samples[REPS];
	pid_t pids[NPROCS];
	int go;

	for (int r = 0; r < REPS; r++) {
		double bare = ping_pong(), counted;

		if (start_procs(SHPMU_SCOPE_HOST, TASK_CLOCK_ON_1002_CGROUPS,
				pids, &go)) {
			stop_procs(pids, go);
			figure_skip(f, "a process could not open its cgroups");
			return;
		}
		counted = ping_pong();
		stop_procs(pids, go);
		samples[r] = counted / bare;
	}
	figure_set(f, samples, REPS);
	snprintf(f->note, sizeof(f->note),
		 "16 processes x 1002 cgroups, one program");
}

/* In the child: its own mounts, then every figure. */
static void run_all(struct figure *figs)
{
	struct shpmu *probe = shpmu_new(NULL), *host;

	if (unshare(CLONE_NEWNS) ||
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL))
		die("a private mount namespace", errno);
	snprintf(bpffs, sizeof(bpffs), "/tmp/shpmu-bench-bpffs-XXXXXX");
	if (!mkdtemp(bpffs) || mount("bpf", bpffs, "bpf", 0, NULL))
		die("mount -t bpf", errno);
	snprintf(domain_dir, sizeof(domain_dir), "%s/shpmu", bpffs);
	host = context(SHPMU_SCOPE_HOST, SHPMU_CGROUP_BACKEND_AUTO);
	if (!probe || !host || !switch_cgroups_make(probe)) {
		for (int i = 0; i < NFIGS; i++)
			figure_skip(&figs[i], host ? "needs cgroups"
						   : "host scope cannot work "
						     "here (root, BPF)");
	} else {
		shpmu_free(host); /* the others join and leave */
		host = NULL;
		events_16(SHPMU_SCOPE_HOST, &figs[0]);
		events_16(SHPMU_SCOPE_PROCESS, &figs[1]);
		read_many_ratio(&figs[2]);
		cached_ratio(&figs[3]);
		ping_pong(); /* warm-up */
		switch_16(&figs[4]);
		open_close_16(&figs[5]);
	}
	shpmu_free(host);
	shpmu_free(probe);
	switch_cgroups_remove();
	umount(bpffs);
	rmdir(bpffs);
}

void bench_host(struct figure *host_events, struct figure *local_events,
		struct figure *read_many, struct figure *cached,
		struct figure *switches, struct figure *open_close)
{
	struct figure *mine[NFIGS] = {host_events, local_events, read_many,
				      cached,	   switches,	 open_close};
	struct figure *shared =
		mmap(NULL, NFIGS * sizeof(*shared), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status = 0;
	pid_t pid;

	if (shared == MAP_FAILED)
		die("mmap", errno);
	for (int i = 0; i < NFIGS; i++)
		shared[i] = *mine[i];
	pid = fork();
	if (pid == 0) {
		run_all(shared);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status) {
		for (int i = 0; i < NFIGS; i++)
			figure_skip(mine[i], "the host-scope run failed");
	} else {
		for (int i = 0; i < NFIGS; i++)
			*mine[i] = shared[i];
	}
	munmap(shared, NFIGS * sizeof(*shared));
}
