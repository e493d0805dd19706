// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

#include "context.h"

void shpmu_log(const struct shpmu *pmu, enum shpmu_log_level level,
	       const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!pmu || !pmu->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pmu->log((int)level, msg, pmu->log_arg);
}
