/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one small-buffer pattern of the library: room the caller owns (on
 * its stack, or in the object itself) serves the common small size, and
 * the heap serves the rare larger one. A reading of every CPU, a handle's
 * window state and a sharing key use it. (A batched read's readings,
 * thousands of them at once, come from an arena instead: arena.h.)
 */
#ifndef SHPMU_SMALL_H
#define SHPMU_SMALL_H

#include <stdlib.h>
#include <string.h>

/* size bytes at inline_buf when they fit in its inline_size, else from
 * the heap; NULL (-ENOMEM) when they do not fit in memory. */
static inline void *small_alloc(void *inline_buf, size_t inline_size,
				size_t size)
{
	return size <= inline_size ? inline_buf : malloc(size);
}

/* The same, zeroed. */
static inline void *small_zalloc(void *inline_buf, size_t inline_size,
				 size_t size)
{
	if (size <= inline_size)
		return memset(inline_buf, 0, size);
	return calloc(1, size);
}

/* Gives back what small_alloc() or small_zalloc() returned. */
static inline void small_free(void *p, const void *inline_buf)
{
	if (p != inline_buf)
		free(p);
}

#endif
