/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The classic backend: perf fds for any target and groups. */
#ifndef SHPMU_BACKEND_PERF_H
#define SHPMU_BACKEND_PERF_H

#include "core/backend.h"

/* One backend serves every context. */
extern struct backend backend_perf;

#endif
