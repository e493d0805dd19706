// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/handles.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/small.h"

static pthread_mutex_t *stripe_of(struct handle_table *t, uint32_t index)
{
	return &t->stripes[index % HANDLE_STRIPES];
}

int handle_of(const struct handle *slot, uint32_t index)
{
	return (int)((slot->gen << HANDLE_INDEX_BITS) | index);
}

int handles_init(struct handle_table *t)
{
	int i, err;

	for (i = 0; i < HANDLE_STRIPES; i++) {
		err = pthread_mutex_init(&t->stripes[i], NULL);
		if (err)
			goto fail;
	}
	for (uint32_t c = 0; c < HANDLE_MAX_CHUNKS; c++)
		atomic_init(&t->chunks[c], NULL);
	t->nslots = 0;
	fifo_init(&t->free);
	return 0;
fail:
	while (i--)
		pthread_mutex_destroy(&t->stripes[i]);
	return -err;
}

void handles_fini(struct handle_table *t)
{
	for (uint32_t c = 0; c < HANDLE_MAX_CHUNKS; c++)
		free(atomic_load_explicit(&t->chunks[c], memory_order_relaxed));
	for (int i = 0; i < HANDLE_STRIPES; i++)
		pthread_mutex_destroy(&t->stripes[i]);
}

static uint32_t *next_free_of(void *table, uint32_t index)
{
	return &handles_slot(table, index)->next_free;
}

static void push_free(struct handle_table *t, uint32_t index)
{
	fifo_push(&t->free, index, next_free_of, t);
}

static int add_chunk(struct handle_table *t)
{
	uint32_t c = t->nslots >> HANDLE_CHUNK_BITS;
	struct handle *chunk;

	if (c >= HANDLE_MAX_CHUNKS)
		return -ENOSPC;
	chunk = calloc(HANDLE_CHUNK_SLOTS, sizeof(*chunk));
	if (!chunk)
		return -ENOMEM;
	atomic_store_explicit(&t->chunks[c], chunk, memory_order_release);
	for (uint32_t i = 0; i < HANDLE_CHUNK_SLOTS; i++)
		push_free(t, t->nslots + i);
	t->nslots += HANDLE_CHUNK_SLOTS;
	return 0;
}

int handles_alloc(struct handle_table *t)
{
	int err;

	if (fifo_empty(&t->free)) {
		err = add_chunk(t);
		if (err)
			return err;
	}
	return (int)fifo_pop(&t->free, next_free_of, t);
}

void handles_unalloc(struct handle_table *t, uint32_t index)
{
	push_free(t, index);
}

int handles_publish(struct handle_table *t, uint32_t index,
		    const struct handle *tmp)
{
	struct handle *slot = handles_slot(t, index);
	int h;

	pthread_mutex_lock(stripe_of(t, index));
	if (tmp->state == tmp->inline_state) {
		memcpy(slot->inline_state, tmp->inline_state,
		       sizeof(slot->inline_state));
		slot->state = slot->inline_state;
	} else {
		slot->state = tmp->state;
	}
	slot->enabled = tmp->enabled;
	slot->ev = tmp->ev;
	h = handle_of(slot, index);
	pthread_mutex_unlock(stripe_of(t, index));
	return h;
}

void handles_release(struct handle_table *t, int h)
{
	uint32_t index = handle_index(h);
	struct handle *slot = handles_slot(t, index);

	small_free(slot->state, slot->inline_state);
	slot->state = NULL;
	slot->ev = NULL;
	slot->enabled = false;
	/* A slot whose generations are spent is retired rather than let a
	 * stale handle match again. */
	if (slot->gen == HANDLE_GEN_MASK)
		return;
	slot->gen++;
	push_free(t, index);
}

struct handle *handle_lock(struct handle_table *t, int h)
{
	struct handle *slot;

	if (h < 0 || !handles_slot(t, handle_index(h)))
		return NULL;
	pthread_mutex_lock(stripe_of(t, handle_index(h)));
	slot = handle_find_locked(t, h);
	if (!slot)
		pthread_mutex_unlock(stripe_of(t, handle_index(h)));
	return slot;
}

void handles_lock_stripes(struct handle_table *t, uint64_t mask)
{
	for (unsigned int i = 0; i < HANDLE_STRIPES; i++)
		if (mask & (1ull << i))
			pthread_mutex_lock(&t->stripes[i]);
}

void handles_unlock_stripes(struct handle_table *t, uint64_t mask)
{
	for (unsigned int i = 0; i < HANDLE_STRIPES; i++)
		if (mask & (1ull << i))
			pthread_mutex_unlock(&t->stripes[i]);
}

void handle_unlock(struct handle_table *t, int h)
{
	pthread_mutex_unlock(stripe_of(t, handle_index(h)));
}
