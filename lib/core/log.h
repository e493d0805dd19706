/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Logging through the caller's callback (opts.log). */
#ifndef SHPMU_LOG_H
#define SHPMU_LOG_H

#include <shpmu/shpmu.h>

/* Formats and passes one message to pmu's callback; nothing without one
 * (or without a context). */
void shpmu_log(const struct shpmu *pmu, enum shpmu_log_level level,
	       const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* While a host domain's lock is held: this thread's messages wait until
 * the last log_release(), so that no caller's callback runs under it. */
void log_hold(void);
void log_release(void);
/* In a forked child, whose copies of the locks are gone: drops what
 * waited. */
void log_forget_held(void);

/* What a noun takes after a count of n: "event%s" with plural(n, "s"),
 * "switch%s" with plural(n, "es"). */
static inline const char *plural(uint64_t n, const char *suffix)
{
	return n == 1 ? "" : suffix;
}

#define pr_err(pmu, ...)   shpmu_log(pmu, SHPMU_LOG_ERROR, __VA_ARGS__)
#define pr_warn(pmu, ...)  shpmu_log(pmu, SHPMU_LOG_WARN, __VA_ARGS__)
#define pr_info(pmu, ...)  shpmu_log(pmu, SHPMU_LOG_INFO, __VA_ARGS__)
#define pr_debug(pmu, ...) shpmu_log(pmu, SHPMU_LOG_DEBUG, __VA_ARGS__)

#endif
