// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The context-switch benchmark's workload: two processes pinned to CPU 0
 * that pass a byte back and forth through pipes, each round trip two
 * switches. The pinger measures the ns per round trip.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void move_self(const char *cgroup)
{
	char procs[600];
	FILE *f;

	if (!cgroup)
		return;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);
	f = fopen(procs, "w");
	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
		_exit(1);
}

void pair_start(struct pair *p, const char *ping_cgroup,
		const char *pong_cgroup)
{
	int ab[2], ba[2], go[2], res[2];
	char byte = 0;

	if (pipe(ab) || pipe(ba) || pipe(go) || pipe(res))
		die("pipe", errno);
	p->pong = fork();
	if (p->pong == 0) {
		move_self(pong_cgroup);
		pin_cpu0();
		for (int i = 0; i < ROUND_TRIPS; i++)
			if (read(ab[0], &byte, 1) != 1 ||
			    write(ba[1], &byte, 1) != 1)
				_exit(1);
		_exit(0);
	}
	p->ping = fork();
	if (p->ping == 0) {
		double t0, ns;

		move_self(ping_cgroup);
		pin_cpu0();
		if (read(go[0], &byte, 1) != 1)
			_exit(1);
		t0 = now_ns();
		for (int i = 0; i < ROUND_TRIPS; i++)
			if (write(ab[1], &byte, 1) != 1 ||
			    read(ba[0], &byte, 1) != 1)
				_exit(1);
		ns = (now_ns() - t0) / ROUND_TRIPS;
		if (write(res[1], &ns, sizeof(ns)) != sizeof(ns))
			_exit(1);
		_exit(0);
	}
	close(ab[0]);
	close(ab[1]);
	close(ba[0]);
	close(ba[1]);
	close(go[0]);
	close(res[1]);
	p->go = go[1];
	p->result = res[0];
}

double pair_run(struct pair *p)
{
	double per_rt = -1;

	if (write(p->go, "g", 1) != 1 ||
	    read(p->result, &per_rt, sizeof(per_rt)) != sizeof(per_rt))
		per_rt = -1;
	waitpid(p->ping, NULL, 0);
	waitpid(p->pong, NULL, 0);
	close(p->go);
	close(p->result);
	return per_rt;
}
