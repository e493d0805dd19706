/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Logging through the caller's callback, and the errno convention. */
#ifndef SHPMU_LOG_H
#define SHPMU_LOG_H

#include <errno.h>

#include <shpmu/shpmu.h>

void shpmu_log(const struct shpmu *pmu, enum shpmu_log_level level,
	       const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define pr_err(pmu, ...) shpmu_log(pmu, SHPMU_LOG_ERROR, __VA_ARGS__)
#define pr_warn(pmu, ...) shpmu_log(pmu, SHPMU_LOG_WARN, __VA_ARGS__)
#define pr_info(pmu, ...) shpmu_log(pmu, SHPMU_LOG_INFO, __VA_ARGS__)
#define pr_debug(pmu, ...) shpmu_log(pmu, SHPMU_LOG_DEBUG, __VA_ARGS__)

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


#endif
