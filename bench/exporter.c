// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What a Prometheus scrape of shpmu-exporter costs with 1000 cgroups x 8
 * events, over HTTP as Prometheus sees it, and the perf fds the exporter
 * holds for them (--no-cpu: the cgroups' share alone). The exporter is
 * the one built beside this benchmark.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define NCGROUPS 1000
#define EVENTS                                                                 \
	"task-clock,cpu-clock,context-switches,cpu-migrations,page-faults,"    \
	"minor-faults,major-faults,alignment-faults"

static char base[PATH_MAX + 64], label[64];

static void remove_cgroups(int n)
{
	char path[sizeof(base) + 16];

	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/c%04d", base, i);
		rmdir(path);
	}
	rmdir(base);
}

static int make_cgroups(struct shpmu *pmu)
{
	char root[PATH_MAX], path[sizeof(base) + 16];

	if (shpmu_cgroup_root(pmu, root, sizeof(root)))
		return -ENOENT;
	snprintf(label, sizeof(label), "/shpmu-bench-exporter-%d", getpid());
	snprintf(base, sizeof(base), "%s%s", root, label);
	if (mkdir(base, 0755))
		return -errno;
	for (int i = 0; i < NCGROUPS; i++) {
		snprintf(path, sizeof(path), "%s/c%04d", base, i);
		if (mkdir(path, 0755)) {
			remove_cgroups(i);
			return -errno;
		}
	}
	return 0;
}

/* Starts the exporter; its port from its "listening" line, or -1. */
static pid_t start(const char *exe, int *port)
{
	char root_arg[128];
	int out[2];
	pid_t pid;
	FILE *f;
	char line[512];

	if (pipe(out))
		return -1;
	snprintf(root_arg, sizeof(root_arg), "--cgroup.root=%s", label);
	pid = fork();
	if (pid == 0) {
		dup2(out[1], 2);
		execl(exe, exe, "--web.listen-address=127.0.0.1:0", "--no-cpu",
		      "--cgroup.depth=1", "-e", EVENTS, root_arg, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	f = fdopen(out[0], "r");
	*port = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "shpmu-exporter: listening on %*s (port %d)",
			   port) == 1)
			break;
	/* (its later lines go nowhere: the read end closes) */
	if (f)
		fclose(f);
	return pid;
}

/* One GET /metrics over a fresh connection, read to the end: bytes. */
static long scrape(int port)
{
	static char buf[1 << 16];
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port)};
	const char req[] = "GET /metrics HTTP/1.1\r\nHost: bench\r\n"
			   "Connection: close\r\n\r\n";
	long total = 0;
	ssize_t n;
	int s = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) ||
	    write(s, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1) {
		if (s >= 0)
			close(s);
		return -1;
	}
	while ((n = read(s, buf, sizeof(buf))) > 0)
		total += n;
	close(s);
	return total;
}

void bench_exporter(const char *exe, struct figure *ms, struct figure *fds)
{
	double samples[REPS], fd_samples[REPS];
	struct shpmu *pmu = shpmu_new(NULL);
	long bytes = 0;
	int port, err;
	pid_t pid;

	if (!exe || access(exe, X_OK)) {
		figure_skip(ms, "no shpmu-exporter built beside the benchmark "
				"(libmicrohttpd-dev missing?)");
		figure_skip(fds, ms->note);
		shpmu_free(pmu);
		return;
	}
	err = pmu ? make_cgroups(pmu) : -errno;
	shpmu_free(pmu);
	if (err) {
		snprintf(ms->note, sizeof(ms->note), "cannot make cgroups: %s",
			 strerror(-err));
		figure_skip(ms, ms->note);
		figure_skip(fds, ms->note);
		return;
	}
	pid = start(exe, &port);
	/* The first scrape opens the 1000 cgroups' handles: not timed. */
	if (pid < 0 || port < 0 || scrape(port) < 0) {
		figure_skip(ms, "the exporter did not start");
		figure_skip(fds, ms->note);
	} else {
		for (int r = 0; r < REPS; r++) {
			double t0 = now_ns();

			bytes = scrape(port);
			samples[r] = (now_ns() - t0) / 1e6;
			fd_samples[r] = perf_fds_of(pid);
		}
		figure_set(ms, samples, REPS);
		figure_set(fds, fd_samples, REPS);
		snprintf(ms->note, sizeof(ms->note),
			 "%d cgroups x 8 events over HTTP, %ld bytes a page",
			 NCGROUPS, bytes);
		snprintf(fds->note, sizeof(fds->note),
			 "perf fds of the exporter for them (--no-cpu)");
	}
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	remove_cgroups(NCGROUPS);
}
