// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"

/* Messages this thread made while it held a host domain's lock. */
struct held_msg {
	struct held_msg *next;
	void (*log)(int level, const char *msg, void *arg);
	void *arg;
	int level;
	char text[];
};

static __thread struct {
	unsigned int depth;
	struct held_msg *head, **tail;
} holding;

/* false: no memory to keep it. */
static bool keep(const struct shpmu_env *env, int level, const char *msg)
{
	size_t len = strlen(msg) + 1;
	struct held_msg *m = malloc(sizeof(*m) + len);

	if (!m)
		return false;
	m->next = NULL;
	m->log = env->log;
	m->arg = env->log_arg;
	m->level = level;
	memcpy(m->text, msg, len);
	if (!holding.tail)
		holding.tail = &holding.head;
	*holding.tail = m;
	holding.tail = &m->next;
	return true;
}

void shpmu_log(const struct shpmu *pmu, enum shpmu_log_level level,
	       const char *fmt, ...)
{
	const struct shpmu_env *env = pmu ? env_of(pmu) : NULL;
	char msg[512];
	va_list ap;

	if (!env || !env->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* (Out of memory, a message is passed on at once rather than lost.) */
	if (!holding.depth || !keep(env, (int)level, msg))
		env->log((int)level, msg, env->log_arg);
}

void log_hold(void)
{
	holding.depth++;
}

/* Takes the list first: a callback may log again. */
static struct held_msg *take_held(void)
{
	struct held_msg *m = holding.head;

	holding.head = NULL;
	holding.tail = &holding.head;
	return m;
}

void log_release(void)
{
	struct held_msg *m, *next;

	if (!holding.depth || --holding.depth)
		return;
	for (m = take_held(); m; m = next) {
		next = m->next;
		m->log(m->level, m->text, m->arg);
		free(m);
	}
}

void log_forget_held(void)
{
	struct held_msg *m, *next;

	for (m = take_held(); m; m = next) {
		next = m->next;
		free(m);
	}
	holding.depth = 0;
}
