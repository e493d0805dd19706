// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "books.h"

#include <string.h>

#include "host_layout.h"

void books_init(struct books *b, uint32_t nr_cpus, uint32_t max_slots)
{
	memset(b, 0, books_size(max_slots));
	b->magic = BOOKS_MAGIC;
	b->layout = host_layout();
	b->nr_cpus = nr_cpus;
	b->max_slots = max_slots;
	b->next_user_id = 1;
	fifo_init(&b->free);
}

uint32_t books_find_event(const struct books *b, const struct event_key *key)
{
	for (uint32_t e = 0; e < MAX_EVENTS; e++)
		if (b->events[e].state == EVENT_LIVE &&
		    !memcmp(&b->events[e].key, key, sizeof(*key)))
			return e;
	return MAX_EVENTS;
}

uint32_t books_free_event(const struct books *b)
{
	for (uint32_t e = 0; e < MAX_EVENTS; e++)
		if (b->events[e].state == EVENT_FREE)
			return e;
	return MAX_EVENTS;
}

uint32_t books_find_slot(const struct books *b, uint64_t id)
{
	for (uint32_t s = 0; s < b->slots_used; s++)
		if (b->slots[s].id == id)
			return s;
	return FIFO_NONE;
}

static uint32_t *next_free_of(void *books, uint32_t s)
{
	return &((struct books *)books)->slots[s].next_free;
}

uint32_t books_take_slot(struct books *b, bool *fresh)
{
	*fresh = b->slots_used < b->max_slots;
	if (*fresh)
		return b->slots_used++;
	return fifo_pop(&b->free, next_free_of, b);
}

void books_give_slot(struct books *b, uint32_t s, bool fresh)
{
	b->slots[s].id = 0;
	b->slots[s].refs = 0;
	if (fresh && s + 1 == b->slots_used)
		b->slots_used--;
	else
		fifo_push(&b->free, s, next_free_of, b);
}

void books_rebuild_free(struct books *b)
{
	fifo_init(&b->free);
	for (uint32_t s = 0; s < b->slots_used; s++)
		if (!b->slots[s].id)
			fifo_push(&b->free, s, next_free_of, b);
}
