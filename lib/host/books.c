// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "host/books.h"

#include <stdlib.h>
#include <string.h>

#include "host/host_layout.h"

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

uint32_t books_slots_used(const struct books *b, uint32_t max_slots)
{
	uint32_t used = __atomic_load_n(&b->slots_used, __ATOMIC_RELAXED);

	return used < max_slots ? used : max_slots;
}

uint32_t books_find_slot(const struct books *b, uint32_t max_slots, uint64_t id)
{
	uint32_t used = books_slots_used(b, max_slots);

	for (uint32_t s = 0; s < used; s++)
		if (b->slots[s].id == id)
			return s;
	return FIFO_NONE;
}

uint32_t books_find_task(const struct books *b, uint32_t kind, uint32_t id,
			 uint64_t start_ticks, bool inherit)
{
	/* Entries at or past tasks_high have never served. */
	uint32_t high = b->tasks_high;

	if (high > MAX_TASK_TARGETS)
		high = MAX_TASK_TARGETS;
	for (uint32_t t = 0; t < high && b->tasks_used; t++)
		if (b->tasks[t].id == id && b->tasks[t].kind == kind &&
		    b->tasks[t].start_ticks == start_ticks &&
		    b->tasks[t].inherit == inherit)
			return t;
	return NO_TARGET;
}

uint32_t books_take_task(struct books *b, bool *reused)
{
	for (uint32_t i = 0; i < MAX_TASK_TARGETS; i++) {
		uint32_t t = (b->next_task + i) % MAX_TASK_TARGETS;

		if (!b->tasks[t].id) {
			b->next_task = (t + 1) % MAX_TASK_TARGETS;
			*reused = t < b->tasks_high;
			if (t >= b->tasks_high)
				b->tasks_high = t + 1;
			return t;
		}
	}
	return NO_TARGET;
}

bool books_task_used(const struct books_task *t)
{
	for (uint32_t e = 0; e < MAX_EVENTS; e++)
		if (t->refs[e])
			return true;
	return false;
}

/* A free-list link, or a spare word for one out of range (only a
 * hostile writer makes one: the next check of the books refuses them). */
struct slot_links {
	struct books *b;
	uint32_t max_slots;
	uint32_t spare;
};

static uint32_t *next_free_of(void *owner, uint32_t s)
{
	struct slot_links *l = owner;

	return s < l->max_slots ? &l->b->slots[s].next_free : &l->spare;
}

uint32_t books_take_slot(struct books *b, uint32_t max_slots, bool *fresh)
{
	struct slot_links l = {.b = b, .max_slots = max_slots};
	uint32_t used = b->slots_used, s;

	*fresh = used < max_slots;
	if (*fresh) {
		b->slots_used = used + 1;
		return used;
	}
	s = fifo_pop(&b->free, next_free_of, &l);
	return s < max_slots ? s : FIFO_NONE;
}

void books_give_slot(struct books *b, uint32_t max_slots, uint32_t s,
		     bool fresh)
{
	struct slot_links l = {.b = b, .max_slots = max_slots};

	b->slots[s].id = 0;
	b->slots[s].refs = 0;
	if (fresh && s + 1 == b->slots_used)
		b->slots_used--;
	else
		fifo_push(&b->free, s, next_free_of, &l);
}

void books_rebuild_free(struct books *b, uint32_t max_slots)
{
	struct slot_links l = {.b = b, .max_slots = max_slots};
	uint32_t used = books_slots_used(b, max_slots);

	fifo_init(&b->free);
	for (uint32_t s = 0; s < used; s++)
		if (!b->slots[s].id)
			fifo_push(&b->free, s, next_free_of, &l);
}

static int compare_ids(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

size_t books_user_ids(const struct books *b, uint64_t ids[MAX_USERS])
{
	size_t n = 0;

	for (uint32_t i = 0; i < MAX_USERS; i++) {
		uint64_t id =
			__atomic_load_n(&b->users[i].id, __ATOMIC_RELAXED);

		if (id)
			ids[n++] = id;
	}
	qsort(ids, n, sizeof(*ids), compare_ids);
	return n;
}

bool books_ids_have(const uint64_t *ids, size_t n, uint64_t id)
{
	return bsearch(&id, ids, n, sizeof(*ids), compare_ids) != NULL;
}
