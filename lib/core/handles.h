/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The handle table. A handle is (generation << HANDLE_INDEX_BITS) | index,
 * always a non-negative int; a slot's generation moves on when it is freed,
 * so a stale handle no longer matches; a slot whose generations are spent is
 * retired, never reused. Slots live in fixed chunks that are
 * never moved or freed before the context is, so a reader can find its slot
 * without the context lock. A slot's fields are guarded by one of a set of
 * stripe locks, so that reads of different handles rarely contend.
 */
#ifndef SHPMU_HANDLES_H
#define SHPMU_HANDLES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/fifo.h"

#define HANDLE_INDEX_BITS  20
#define HANDLE_GEN_MASK	   0x7ffu /* 11 bits: the handle stays positive */
#define HANDLE_CHUNK_BITS  10
#define HANDLE_CHUNK_SLOTS (1u << HANDLE_CHUNK_BITS)
#define HANDLE_MAX_CHUNKS  (1u << (HANDLE_INDEX_BITS - HANDLE_CHUNK_BITS))
/* Enough that reads of different handles rarely meet on one; few enough
 * that a batch holding all of them (and the BPF flush lock) stays within
 * what ThreadSanitizer can track (64 locks held). */
#define HANDLE_STRIPES	   32
#define HANDLE_ALL_STRIPES ((1ull << HANDLE_STRIPES) - 1)

struct kevent;

/* Room in the slot itself for a one-fd, one-event handle's state (base
 * and acc of enabled, running, count): most handles need no malloc, and a
 * batched read finds the state on the slot's own cache line. */
#define HANDLE_INLINE_VALUES 6

struct handle {
	struct kevent *ev; /* NULL while the slot is free */
	/* dup_count state: base then acc, nfds * nvals values each; points
	 * at inline_state when that is big enough */
	uint64_t *state;
	uint32_t gen;
	uint32_t next_free; /* free-list link while free */
	bool enabled;
	uint64_t inline_state[HANDLE_INLINE_VALUES];
};

struct handle_table {
	struct handle *_Atomic chunks[HANDLE_MAX_CHUNKS];
	/* The free list and nslots are under the context lock. Freed slots
	 * go to the tail so that a slot's generation turns over slowly. */
	uint32_t nslots;
	struct fifo free;
	pthread_mutex_t stripes[HANDLE_STRIPES];
};

int handles_init(struct handle_table *t);
/* Frees the chunks; live slots' state must be gone already. */
void handles_fini(struct handle_table *t);

/* Takes a free slot (context lock held). Returns its index or -ENOSPC or
 * -ENOMEM. The slot stays invisible until handles_publish(). */
int handles_alloc(struct handle_table *t);
/* Gives back a slot taken by handles_alloc() but never published. */
void handles_unalloc(struct handle_table *t, uint32_t index);
/* Makes an allocated slot findable with what was prepared in tmp (its
 * state moves in); returns its handle. */
int handles_publish(struct handle_table *t, uint32_t index,
		    const struct handle *tmp);
/* Frees a locked, live slot (context lock held too); the stripe stays
 * locked for the caller to release. */
void handles_release(struct handle_table *t, int h);

/* Finds a live handle and locks its stripe, or returns NULL: -EBADF. */
struct handle *handle_lock(struct handle_table *t, int h);
void handle_unlock(struct handle_table *t, int h);

/* Locking a set of stripes (bit i = stripe i), in ascending order. */
void handles_lock_stripes(struct handle_table *t, uint64_t mask);
void handles_unlock_stripes(struct handle_table *t, uint64_t mask);
int handle_of(const struct handle *slot, uint32_t index);

/* The lookups below are inline: batched reads make one per handle. */

static inline uint32_t handle_index(int h)
{
	return (uint32_t)h & ((1u << HANDLE_INDEX_BITS) - 1);
}

static inline uint32_t handle_gen(int h)
{
	return (uint32_t)h >> HANDLE_INDEX_BITS;
}

static inline unsigned int handle_stripe(int h)
{
	return handle_index(h) % HANDLE_STRIPES;
}

/* The slot at index, or NULL (its chunk was never made). */
static inline struct handle *handles_slot(struct handle_table *t,
					  uint32_t index)
{
	struct handle *chunk;

	if (index >= (1u << HANDLE_INDEX_BITS))
		return NULL;
	/* Pairs with the release store that publishes a new chunk. */
	chunk = atomic_load_explicit(&t->chunks[index >> HANDLE_CHUNK_BITS],
				     memory_order_acquire);
	return chunk ? &chunk[index & (HANDLE_CHUNK_SLOTS - 1)] : NULL;
}

/* A live handle whose stripe the caller holds, or NULL: -EBADF. */
static inline struct handle *handle_find_locked(struct handle_table *t, int h)
{
	struct handle *slot;

	if (h < 0)
		return NULL;
	slot = handles_slot(t, handle_index(h));
	if (!slot || !slot->ev || slot->gen != handle_gen(h))
		return NULL;
	return slot;
}

#endif
