/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The plumbing of the public calls, and only theirs (lifecycle.c, open.c,
 * control.c, read.c, read_many.c, names.c, cgroup_api.c, explain_api.c):
 * the errno convention, the guard every call enters by, and the checks
 * most calls begin with.
 */
#ifndef SHPMU_API_H
#define SHPMU_API_H

#include <errno.h>

#include <shpmu/shpmu.h>

#include "core/context.h"
#include "core/task.h"

/* Every public int-returning exit goes through this: errno mirrors the
 * negative return, as libbpf does. */
static inline int shpmu_err(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

/* For public pointer-returning exits. */
static inline void *shpmu_err_ptr(int err)
{
	errno = -err;
	return NULL;
}

/*
 * Every public call that takes a lock starts with api_enter() and ends
 * with api_leave(). It refuses, rather than deadlocks on a lock the
 * thread already holds, a call made from inside the library: a signal
 * handler interrupting a call (-EDEADLK: shpmu_read is not async-signal-
 * safe), or a log callback calling back. It refuses calls from a forked
 * child (-EPERM): its fds share the parent's kernel events.
 */
extern __thread int api_depth; /* calls under way on this thread */
int api_refuse(struct shpmu *pmu, const char *fn);

/* Inline: every read pays for it. */
static inline int api_enter(struct shpmu *pmu, const char *fn)
{
	if (__builtin_expect(api_depth > 0 ||
				     pmu->fork_generation !=
					     task_fork_generation_now(),
			     0))
		return api_refuse(pmu, fn);
	api_depth++;
	return 0;
}

static inline void api_leave(void)
{
	api_depth--;
}

/* The body of a public call: the impl call between api_enter() and
 * api_leave(). A NULL pmu is -EINVAL, with nowhere to log it. */
#define API_CALL(pmu, call)                                                    \
	do {                                                                   \
		int ret_;                                                      \
                                                                               \
		if (!(pmu))                                                    \
			return shpmu_err(-EINVAL);                             \
		ret_ = api_enter((pmu), __func__);                             \
		if (ret_)                                                      \
			return shpmu_err(ret_);                                \
		ret_ = (call);                                                 \
		api_leave();                                                   \
		return ret_;                                                   \
	} while (0)

/* -EINVAL, logged as "fn: name is NULL", for a NULL what; else 0. */
int api_check(struct shpmu *pmu, const void *what, const char *fn,
	      const char *name);

/* Handle h locked for fn, or NULL after logging that it is not open
 * (-EBADF). */
struct handle *api_handle(struct shpmu *pmu, int h, const char *fn);

#endif
