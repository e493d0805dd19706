// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

#include "env.h"

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
	env->log((int)level, msg, env->log_arg);
}
