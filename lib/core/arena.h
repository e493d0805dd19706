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
	uint64_t room[];  /* aligned as a uint64_t, as the callers need */
};

struct arena {
	struct arena_block *blocks; /* the one being carved first */
};

/* The smallest block, in uint64_t: 64 KiB. */
#define ARENA_BLOCK_WORDS 8192

/* A block of cap words, or NULL. */
static inline struct arena_block *arena_block_new(size_t cap)
{
	struct arena_block *b;

	if (cap > (SIZE_MAX - sizeof(*b)) / sizeof(uint64_t))
		return NULL;
	b = malloc(sizeof(*b) + cap * sizeof(uint64_t));
	if (b) {
		b->used = 0;
		b->cap = cap;
	}
	return b;
}

/* bytes of room aligned as a uint64_t, or NULL (-ENOMEM). A request
 * bigger than a block gets one of its own, behind the block being
 * carved, which goes on serving the small ones. */
static inline void *arena_alloc(struct arena *a, size_t bytes)
{
	size_t words = bytes / sizeof(uint64_t) + !!(bytes % sizeof(uint64_t));
	struct arena_block *b = a->blocks;

	if (words > ARENA_BLOCK_WORDS) {
		b = arena_block_new(words);
		if (!b)
			return NULL;
		b->used = words;
		b->next = a->blocks ? a->blocks->next : NULL;
		if (a->blocks)
			a->blocks->next = b;
		else
			a->blocks = b;
		return b->room;
	}
	if (!b || b->cap - b->used < words) {
		b = arena_block_new(ARENA_BLOCK_WORDS);
		if (!b)
			return NULL;
		b->next = a->blocks;
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
