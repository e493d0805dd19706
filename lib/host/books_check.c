// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "host/books_check.h"

#include <errno.h>
#include <stdlib.h>

#include "host/host_layout.h"

/* One read of a field another process may be writing. */
#define ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static int wrong(const char **field, const char *name)
{
	*field = name;
	return -EPROTO;
}

/* The free list: every link in range, below slots_used, on a free slot,
 * and no loop (a list longer than the slots has one). */
static int check_free_list(const struct books *b, uint32_t used,
			   const char **field)
{
	uint32_t head = ONCE(b->free.head), tail = ONCE(b->free.tail);
	uint32_t i = head, n = 0;

	/* (A push or pop cut short leaves head and tail out of step: the
	 * repair rebuilds the list. Only a tail out of range is wrong.) */
	if (tail != FIFO_NONE && tail >= used)
		return wrong(field, "free.tail");
	while (i != FIFO_NONE) {
		if (i >= used || ++n > used)
			return wrong(field, "free (a link out of range, or a "
					    "loop)");
		if (ONCE(b->slots[i].id))
			return wrong(field, "free (a slot in use on it)");
		i = ONCE(b->slots[i].next_free);
	}
	return 0;
}

static int check_events(const struct books *b, const char **field)
{
	for (uint32_t e = 0; e < MAX_EVENTS; e++)
		if (ONCE(b->events[e].state) > EVENT_LIVE)
			return wrong(field, "events[].state");
	return 0;
}

static int check_tasks(const struct books *b, const char **field)
{
	uint32_t high = ONCE(b->tasks_high);

	if (high > MAX_TASK_TARGETS)
		return wrong(field, "tasks_high");
	if (ONCE(b->next_task) >= MAX_TASK_TARGETS)
		return wrong(field, "next_task");
	for (uint32_t t = 0; t < MAX_TASK_TARGETS; t++) {
		const struct books_task *bt = &b->tasks[t];
		uint8_t kind = ONCE(bt->kind);

		if (!ONCE(bt->id))
			continue;
		/* Entries at or past tasks_high have never served. */
		if (t >= high)
			return wrong(field, "tasks[] (in use past tasks_high)");
		if (kind != LINK_TID && kind != LINK_TGID)
			return wrong(field, "tasks[].kind");
		if (ONCE(bt->inherit) > TARGET_INHERIT)
			return wrong(field, "tasks[].inherit");
	}
	return 0;
}

/* No two users with one id: the refs of one would be taken for the
 * other's. */
static int check_users(const struct books *b, const char **field)
{
	uint64_t *ids = malloc(MAX_USERS * sizeof(*ids));
	size_t n;
	int err = 0;

	if (!ids)
		return -ENOMEM;
	n = books_user_ids(b, ids);
	for (size_t i = 1; i < n && !err; i++)
		if (ids[i] == ids[i - 1])
			err = wrong(field, "users[].id (two users, one id)");
	free(ids);
	return err;
}

int books_check(const struct books *b, uint32_t max_slots, const char **field)
{
	uint32_t used = ONCE(b->slots_used);
	int err;

	if (ONCE(b->magic) != BOOKS_MAGIC)
		return wrong(field, "magic");
	if (ONCE(b->layout) != host_layout())
		return wrong(field, "layout");
	if (ONCE(b->max_slots) != max_slots)
		return wrong(field, "max_slots");
	if (used > max_slots)
		return wrong(field, "slots_used");
	err = check_free_list(b, used, field);
	if (!err)
		err = check_events(b, field);
	if (!err)
		err = check_tasks(b, field);
	if (!err)
		err = check_users(b, field);
	return err;
}
