/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * For host-scope tests: processes of host_helper.c, started with
 * fork+exec, that join a domain in the test's BPF filesystem
 * (bpffs_mount.h) and answer commands.
 */
#ifndef SHPMU_TEST_HOST_PROCS_H
#define SHPMU_TEST_HOST_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "bpffs_mount.h"

/* The directory of domain under host_bpffs(), this build's layout. */
const char *host_domain_dir(const char *domain);

/* A log callback (opts.log) keeping every message up to info, one a
 * line, in host_logged, for tests that look for a reason; clear it
 * before the call whose messages matter. */
void host_keep_log(int level, const char *msg, void *arg);
extern char host_logged[16384];

/* Runs shpmu-host (SHPMU_HOST_TOOL) with args on host_bpffs(): its exit
 * status, and what it printed (stdout and stderr) in out. */
int host_tool(char *out, size_t len, const char *args);

struct helper {
	pid_t pid;
	FILE *to, *from;
	int status; /* its wait status, once reaped by helper_start */
	char reply[1 << 16];
};

/* Starts a helper with these extra arguments (NULL-terminated), and waits
 * for its first line: "ready PID" (returns true) or "err ERRNO" (false,
 * *err set, the helper reaped, its wait status in status); a helper that
 * died before a word gives *err -1. */
bool helper_start(struct helper *h, int *err, ...);
/* Sends one command and returns the reply line; asserts one came. */
const char *helper_ask(struct helper *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The same, asserting the reply starts with "ok"; returns what follows. */
const char *helper_ok(struct helper *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "quit", and asserts the helper exits 0. */
void helper_quit(struct helper *h);
/* SIGKILL, and reaps it. */
void helper_kill(struct helper *h);
/* Reaps a helper that is to die on its own; returns its wait status. */
int helper_wait(struct helper *h);

#endif
