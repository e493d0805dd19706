/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Room for a reading of every CPU of an event: on the stack for most
 * machines, on the heap past that. */
#ifndef SHPMU_SCRATCH_H
#define SHPMU_SCRATCH_H

#include <stdint.h>

#include "core/small.h"

/* 64 CPUs' (enabled, running, count), 1.5 KiB. */
#define SCRATCH_INLINE (64 * 3)

struct scratch {
	uint64_t *p;
	uint64_t inline_vals[SCRATCH_INLINE];
};

/* n values, or NULL (-ENOMEM) when they do not fit in memory. */
static inline uint64_t *scratch_get(struct scratch *s, size_t n)
{
	s->p = n <= SIZE_MAX / sizeof(uint64_t)
		       ? small_alloc(s->inline_vals, sizeof(s->inline_vals),
				     n * sizeof(uint64_t))
		       : NULL;
	return s->p;
}

static inline void scratch_put(struct scratch *s)
{
	small_free(s->p, s->inline_vals);
}

#endif
