// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "host_procs.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <shpmu/shpmu.h>

#include "helpers.h"
#include "host/host_layout.h"
#include "host/host_lock.h"

const char *host_domain_dir(const char *domain)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/layout-%u/%s", host_bpffs(),
		 host_layout(), domain);
	return path;
}

char host_logged[16384];

void host_keep_log(int level, const char *msg, void *arg)
{
	size_t used = strlen(host_logged);

	(void)arg;
	if (level <= SHPMU_LOG_INFO)
		snprintf(host_logged + used, sizeof(host_logged) - used, "%s\n",
			 msg);
}

bool helper_start(struct helper *h, int *err, ...)
{
	const char *path = getenv("SHPMU_HOST_HELPER");
	char *argv[32];
	int to[2], from[2], n = 0;
	va_list ap;

	cr_assert(path, "SHPMU_HOST_HELPER is not set (run through meson)");
	argv[n++] = (char *)path;
	argv[n++] = (char *)host_bpffs();
	va_start(ap, err);
	for (char *a; n < 31 && (a = va_arg(ap, char *));)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	cr_assert_eq(pipe2(to, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(from, O_CLOEXEC), 0);
	h->pid = fork();
	cr_assert_geq(h->pid, 0);
	if (h->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		execv(path, argv);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	h->to = fdopen(to[1], "w");
	h->from = fdopen(from[0], "r");
	cr_assert(h->to && h->from);
	h->reply[0] = '\0';
	if (fgets(h->reply, sizeof(h->reply), h->from) &&
	    !strncmp(h->reply, "ready", 5))
		return true;
	/* "err ERRNO", or nothing from one that died starting. */
	if (err)
		*err = strncmp(h->reply, "err ", 4) ? -1 : atoi(h->reply + 4);
	h->status = helper_wait(h);
	return false;
}

static const char *ask(struct helper *h, const char *fmt, va_list ap)
{
	vfprintf(h->to, fmt, ap);
	fputc('\n', h->to);
	fflush(h->to);
	cr_assert(fgets(h->reply, sizeof(h->reply), h->from),
		  "helper %d died without an answer", h->pid);
	h->reply[strcspn(h->reply, "\n")] = '\0';
	return h->reply;
}

const char *helper_ask(struct helper *h, const char *fmt, ...)
{
	const char *r;
	va_list ap;

	va_start(ap, fmt);
	r = ask(h, fmt, ap);
	va_end(ap);
	return r;
}

const char *helper_ok(struct helper *h, const char *fmt, ...)
{
	const char *r;
	va_list ap;

	va_start(ap, fmt);
	r = ask(h, fmt, ap);
	va_end(ap);
	cr_assert(!strncmp(r, "ok", 2), "helper %d: %s", h->pid, r);
	return r[2] == ' ' ? r + 3 : r + 2;
}

int helper_wait(struct helper *h)
{
	int status = 0;

	if (h->to)
		fclose(h->to);
	if (h->from)
		fclose(h->from);
	h->to = h->from = NULL;
	cr_assert_eq(waitpid(h->pid, &status, 0), h->pid);
	return status;
}

void helper_quit(struct helper *h)
{
	int status;

	helper_ok(h, "quit");
	status = helper_wait(h);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "helper %d ended with status %#x", h->pid, status);
}

void helper_kill(struct helper *h)
{
	kill(h->pid, SIGKILL);
	helper_wait(h);
}

int host_tool(char *out, size_t len, const char *args)
{
	char cmd[3 * PATH_MAX];
	size_t used = 0;
	FILE *p;
	int status;

	snprintf(cmd, sizeof(cmd), "'%s' --bpffs '%s' %s 2>&1",
		 getenv("SHPMU_HOST_TOOL"), host_bpffs(), args);
	p = popen(cmd, "r");
	cr_assert(p, "popen %s", cmd);
	while (used + 1 < len && fgets(out + used, (int)(len - used), p))
		used += strlen(out + used);
	out[used] = '\0';
	status = pclose(p);
	cr_assert(WIFEXITED(status), "%s: status %#x", cmd, status);
	return WEXITSTATUS(status);
}
