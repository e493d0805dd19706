// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A process of a host-scope test (test_host.c starts several with
 * fork+exec): it joins a domain and does what the test tells it, one
 * command a line on stdin, one answer a line on stdout:
 *
 *   open C EVENT TARGET [off]   a handle in context C: "ok H"
 *   enable|disable|reset|close C H
 *   read|cached C H             "ok VALUE ENABLED RUNNING"
 *   readmany C H...             "ok VALUE..."
 *   readbound C H...            each by shpmu_read_bound: "ok VALUE BOUND..."
 *   bracket EVENT TARGET        private outer, host, private inner
 *                               handles: "ok HOST OUTER INNER"
 *   readbracket HOST OUTER INNER  reads inner, host (with its bound),
 *                               outer in that order: "ok INNER HOST
 *                               OUTER BOUND" (values)
 *   stats C                     "ok HANDLES KERNEL_EVENTS KERNEL_FDS"
 *   perffds                     perf_event fds this process holds
 *   unseen                      the host context's switches_unseen and
 *                               unattributed_ns: "ok SWITCHES NS"
 *   churn N SEED EVENT,... TARGET,...  N random opens and closes
 *   quit                        frees both contexts and exits 0
 *
 * C is h (the host context) or p (a private one: classic events, no
 * sharing, the oracle). TARGET is cpu:N, cpu:all or cg:PATH. Errors
 * answer "err ERRNO".
 *
 * Options: host_helper BPFFS_DIR [--domain D] [--layout N]
 * [--kill-at STEPS] [--drop-caps] [--uid UID]. With --kill-at the
 * process kills itself that many steps into changes of the domain.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <shpmu/shpmu.h>

#include "host/host_layout.h"
#include "host/host_lock.h"
#include "host/host_step.h"

static struct shpmu *host_ctx, *private_ctx;

static void log_stderr(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level <= SHPMU_LOG_INFO)
		fprintf(stderr, "host_helper[%d]: %s\n", getpid(), msg);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static int parse_target(const char *s, struct shpmu_target *t)
{
	memset(t, 0, sizeof(*t));
	if (!strncmp(s, "cpu:", 4)) {
		t->kind = SHPMU_TARGET_CPU;
		t->cpu = strcmp(s + 4, "all") ? atoi(s + 4) : SHPMU_ALL_CPUS;
		t->flags = t->cpu >= 0 ? SHPMU_TARGET_BIND_CPU : 0;
		return 0;
	}
	if (!strncmp(s, "cg:", 3)) {
		t->kind = SHPMU_TARGET_CGROUP;
		t->cpu = SHPMU_ALL_CPUS;
		t->cgroup_path = s + 3;
		return 0;
	}
	return -EINVAL;
}

static int open_in(struct shpmu *ctx, const char *event, const char *target,
		   bool off)
{
	struct perf_event_attr attr;
	struct shpmu_target t;
	int err = parse_target(target, &t);

	if (!err)
		err = shpmu_event_attr(ctx, event, &attr);
	if (err)
		return err;
	attr.disabled = off;
	return shpmu_open(ctx, &attr, &t);
}

static struct shpmu *ctx_of(const char *c)
{
	return c && c[0] == 'p' ? private_ctx : host_ctx;
}

static int count_perf_fds(void)
{
	char link[64], path[300];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;
	ssize_t len;

	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		n += !strcmp(link, "anon_inode:[perf_event]");
	}
	closedir(dir);
	return n;
}

/* Up to 4 handles open at once, opened and closed at random. */
static void churn(int rounds, unsigned int seed, char *events, char *targets)
{
	char *ev[16], *tg[64], *save;
	int nev = 0, ntg = 0, open[4] = {-1, -1, -1, -1};

	for (char *s = strtok_r(events, ",", &save); s && nev < 16;
	     s = strtok_r(NULL, ",", &save))
		ev[nev++] = s;
	for (char *s = strtok_r(targets, ",", &save); s && ntg < 64;
	     s = strtok_r(NULL, ",", &save))
		tg[ntg++] = s;
	if (!nev || !ntg) {
		say("err %d", EINVAL);
		return;
	}
	srand(seed);
	for (int r = 0; r < rounds; r++) {
		int i = rand() % 4;

		if (open[i] >= 0) {
			shpmu_close(host_ctx, open[i]);
			open[i] = -1;
		} else {
			open[i] = open_in(host_ctx, ev[rand() % nev],
					  tg[rand() % ntg], false);
		}
	}
	say("ok");
}

static void reply_count(int err, const struct shpmu_count *c)
{
	if (err)
		say("err %d", -err);
	else
		say("ok %llu %llu %llu", (unsigned long long)c->value,
		    (unsigned long long)c->time_enabled,
		    (unsigned long long)c->time_running);
}

static void read_bracket(int h, int outer, int inner)
{
	struct shpmu_count i, m, o;
	uint64_t bound;
	int err = shpmu_read(private_ctx, inner, &i);

	if (!err)
		err = shpmu_read_bound(host_ctx, h, &m, &bound);
	if (!err)
		err = shpmu_read(private_ctx, outer, &o);
	if (err)
		say("err %d", -err);
	else
		say("ok %llu %llu %llu %llu", (unsigned long long)i.value,
		    (unsigned long long)m.value, (unsigned long long)o.value,
		    (unsigned long long)bound);
}

static void bracket(const char *event, const char *target)
{
	int outer = open_in(private_ctx, event, target, false), h, inner;

	h = open_in(host_ctx, event, target, false);
	inner = open_in(private_ctx, event, target, false);
	if (outer < 0 || h < 0 || inner < 0)
		say("err %d", outer < 0 ? -outer : h < 0 ? -h : -inner);
	else
		say("ok %d %d %d", h, outer, inner);
}

static void read_many(struct shpmu *ctx, char **args, int n)
{
	struct shpmu_count *out = calloc((size_t)n + 1, sizeof(*out));
	int *hs = calloc((size_t)n + 1, sizeof(*hs)), err;
	char *line = malloc((size_t)n * 24 + 8);
	size_t used;

	for (int i = 0; hs && i < n; i++)
		hs[i] = atoi(args[i]);
	err = out && hs && line ? shpmu_read_many(ctx, hs, (size_t)n, out)
				: -ENOMEM;
	if (err) {
		say("err %d", -err);
	} else {
		used = (size_t)sprintf(line, "ok");
		for (int i = 0; i < n; i++)
			used += (size_t)sprintf(
				line + used, " %llu",
				(unsigned long long)out[i].value);
		say("%s", line);
	}
	free(out);
	free(hs);
	free(line);
}

/* Each handle's value and bound (shpmu_read_bound()): the bound is how
 * far the value may fall short of the truth, which only this process can
 * read, its domain's. One read a handle, in order. */
static void read_bounds(struct shpmu *ctx, char **args, int n)
{
	char *line = malloc((size_t)n * 48 + 8);
	struct shpmu_count c;
	uint64_t bound;
	size_t used;
	int err = line ? 0 : -ENOMEM;

	if (line)
		used = (size_t)sprintf(line, "ok");
	for (int i = 0; i < n && !err; i++) {
		err = shpmu_read_bound(ctx, atoi(args[i]), &c, &bound);
		if (!err)
			used += (size_t)sprintf(line + used, " %llu %llu",
						(unsigned long long)c.value,
						(unsigned long long)bound);
	}
	if (err)
		say("err %d", -err);
	else
		say("%s", line);
	free(line);
}

typedef int control_fn(struct shpmu *pmu, int h);

/* The call a handle command ("enable C H" and the like) names, or NULL. */
static control_fn *control_named(const char *word)
{
	static const struct {
		const char *word;
		control_fn *fn;
	} controls[] = {{"enable", shpmu_enable},
			{"disable", shpmu_disable},
			{"reset", shpmu_reset},
			{"close", shpmu_close}};

	for (size_t i = 0; i < sizeof(controls) / sizeof(controls[0]); i++)
		if (!strcmp(word, controls[i].word))
			return controls[i].fn;
	return NULL;
}

#define MAX_ARGS 8192

static void command(char *line)
{
	static char *arg[MAX_ARGS];
	control_fn *control;
	struct shpmu_count cnt;
	struct shpmu_stats st;
	char *save;
	int n = 0;

	for (char *s = strtok_r(line, " \n", &save); s && n < MAX_ARGS - 1;
	     s = strtok_r(NULL, " \n", &save))
		arg[n++] = s;
	arg[n] = NULL;
	if (!n)
		return;
	if (!strcmp(arg[0], "open") && n >= 4) {
		int h = open_in(ctx_of(arg[1]), arg[2], arg[3],
				n > 4 && !strcmp(arg[4], "off"));

		h < 0 ? say("err %d", -h) : say("ok %d", h);
	} else if ((control = control_named(arg[0])) && n == 3) {
		say("%s", control(ctx_of(arg[1]), atoi(arg[2])) ? "err" : "ok");
	} else if (!strcmp(arg[0], "read") && n == 3) {
		reply_count(shpmu_read(ctx_of(arg[1]), atoi(arg[2]), &cnt),
			    &cnt);
	} else if (!strcmp(arg[0], "cached") && n == 3) {
		reply_count(
			shpmu_read_cached(ctx_of(arg[1]), atoi(arg[2]), &cnt),
			&cnt);
	} else if (!strcmp(arg[0], "readmany") && n >= 3) {
		read_many(ctx_of(arg[1]), arg + 2, n - 2);
	} else if (!strcmp(arg[0], "readbound") && n >= 3) {
		read_bounds(ctx_of(arg[1]), arg + 2, n - 2);
	} else if (!strcmp(arg[0], "bracket") && n == 3) {
		bracket(arg[1], arg[2]);
	} else if (!strcmp(arg[0], "readbracket") && n == 4) {
		read_bracket(atoi(arg[1]), atoi(arg[2]), atoi(arg[3]));
	} else if (!strcmp(arg[0], "stats") && n == 2) {
		shpmu_get_stats(ctx_of(arg[1]), &st);
		say("ok %llu %llu %llu", (unsigned long long)st.handles,
		    (unsigned long long)st.kernel_events,
		    (unsigned long long)st.kernel_fds);
	} else if (!strcmp(arg[0], "perffds")) {
		say("ok %d", count_perf_fds());
	} else if (!strcmp(arg[0], "unseen")) {
		shpmu_get_stats(host_ctx, &st);
		say("ok %llu %llu", (unsigned long long)st.switches_unseen,
		    (unsigned long long)st.unattributed_ns);
	} else if (!strcmp(arg[0], "churn") && n == 5) {
		churn(atoi(arg[1]), (unsigned int)atoi(arg[2]), arg[3], arg[4]);
	} else if (!strcmp(arg[0], "quit")) {
		shpmu_free(host_ctx);
		shpmu_free(private_ctx);
		say("ok");
		exit(0);
	} else {
		say("err %d", EINVAL);
	}
}

static int drop_caps(void)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2] = {{0}};

	/* Every set empty. */
	return (int)syscall(SYS_capset, &hdr, data);
}

/* Becomes uid, keeping CAP_BPF and CAP_PERFMON (all a domain needs but
 * the permission to enter another uid's directory). */
static int become(uid_t uid)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2] = {{0}};
	uint32_t keep = 1u << (38 - 32) | 1u << (39 - 32);

	if (prctl(PR_SET_KEEPCAPS, 1) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -1;
	data[1].effective = data[1].permitted = keep;
	return (int)syscall(SYS_capset, &hdr, data);
}

int main(int argc, char **argv)
{
	const char *domain = NULL;
	uint32_t kill_at = 0;
	static char line[1 << 17];

	/* A test that fails half-way leaves no helper behind. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getenv("SHPMU_TEST_VALGRIND"))
		shpmu__host_lock_timeout_ms = 300000; /* as host_procs.c */
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--domain") && i + 1 < argc)
			domain = argv[++i];
		else if (!strcmp(argv[i], "--layout") && i + 1 < argc)
			shpmu__host_layout = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--kill-at") && i + 1 < argc)
			kill_at = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--drop-caps") && drop_caps())
			return 2;
		else if (!strcmp(argv[i], "--uid") && i + 1 < argc &&
			 become((uid_t)atoi(argv[++i])))
			return 2;
	}
	SHPMU_OPTS(host_opts, .scope = SHPMU_SCOPE_HOST, .bpffs_dir = argv[1],
		   .domain = domain, .log = log_stderr);
	SHPMU_OPTS(private_opts, .flags = SHPMU_F_NO_SHARING,
		   .cgroup_backend = SHPMU_CGROUP_BACKEND_PERF,
		   .log = log_stderr);
	if (argc < 2)
		return 2;
	private_ctx = shpmu_new(&private_opts);
	shpmu__host_kill_at = kill_at;
	host_ctx = shpmu_new(&host_opts);
	if (!host_ctx || !private_ctx) {
		say("err %d", errno);
		return 1;
	}
	say("ready %d", getpid());
	while (fgets(line, sizeof(line), stdin))
		command(line);
	shpmu_free(host_ctx);
	shpmu_free(private_ctx);
	return 0;
}
