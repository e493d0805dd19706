/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the layers below the public calls need of a context: its syscall
 * table, its log callback, and whether it lives in a forked child. It is
 * the context's first member, so those layers take the opaque struct
 * shpmu * and never see the rest of it.
 */
#ifndef SHPMU_ENV_H
#define SHPMU_ENV_H

#include <stdbool.h>

struct shpmu;
struct shpmu_sys_ops;

struct shpmu_env {
	const struct shpmu_sys_ops *sys;
	void (*log)(int level, const char *msg, void *arg);
	void *log_arg;
	/* Set by shpmu_free in a forked child: its fds are copies of the
	 * parent's, which must switch nothing off under the parent. */
	bool forked;
	/* Host scope: how long to wait for a domain's lock (0: the
	 * default, host_lock.h). */
	unsigned int lock_timeout_ms;
};

static inline struct shpmu_env *env_of(const struct shpmu *pmu)
{
	return (struct shpmu_env *)pmu;
}

#endif
