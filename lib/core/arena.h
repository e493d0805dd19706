/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Room that lives as long as one call: carved from blocks of the heap,
 * one malloc per block instead of one per object, and all of it given
 * back at once. A batched read's readings use it: a batch over 1000
 * cgroups makes thousands of them.
 */
#ifndef SHPMU_ARENA_H
#define SHPMU_ARENA_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct arena_block {
	struct arena_block *next;
	size_t used, cap; /* in uint64_t */
	uint64_t room[];  /* (8-byte aligned: what the callers need) */
};

struct arena {
	struct arena_block *blocks; /* the newest first */
};

/* The smallest block, in uint64_t: 64 KiB. */
#define ARENA_BLOCK_WORDS 8192

/* bytes of room aligned to 8, or NULL (-ENOMEM). */
static inline void *arena_alloc(struct arena *a, size_t bytes)
{
	size_t words = (bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t);
	struct arena_block *b = a->blocks;

	if (!b || b->cap - b->used < words) {
		size_t cap =
			words > ARENA_BLOCK_WORDS ? words : ARENA_BLOCK_WORDS;

		if (cap > (SIZE_MAX - sizeof(*b)) / sizeof(uint64_t))
			return NULL;
		b = malloc(sizeof(*b) + cap * sizeof(uint64_t));
		if (!b)
			return NULL;
		b->next = a->blocks;
		b->used = 0;
		b->cap = cap;
		a->blocks = b;
	}
	b->used += words;
	return b->room + b->used - words;
}

/* Gives back every block. */
static inline void arena_free(struct arena *a)
{
	while (a->blocks) {
		struct arena_block *next = a->blocks->next;

		free(a->blocks);
		a->blocks = next;
	}
}

#endif
