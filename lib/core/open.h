/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Opening and closing handles (open.c). */
#ifndef SHPMU_OPEN_H
#define SHPMU_OPEN_H

struct shpmu;

/* Closes every handle of a context: shpmu_free's first step. */
void close_all_handles(struct shpmu *pmu);

#endif
