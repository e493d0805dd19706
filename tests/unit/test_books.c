// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* host/books.c and host/books_check.c: the books laid out in memory of
 * our own (no bpffs, no program, no root): their operations, and the
 * corrupt books the check refuses before the library walks them. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host/books.h"
#include "host/books_check.h"
#include "host/host_layout.h"

#define SLOTS 8

static struct books *new_books(uint32_t max_slots)
{
	struct books *b = malloc(books_size(max_slots));

	cr_assert(b);
	memset(b, 0xa5, books_size(max_slots)); /* init must clear it */
	books_init(b, 4, max_slots);
	return b;
}

static struct event_key key_of(uint64_t config)
{
	struct event_key k;

	memset(&k, 0, sizeof(k));
	k.type = PERF_TYPE_SOFTWARE;
	k.config = config;
	return k;
}

/* 0, or -EPROTO with the field named. */
static int check(const struct books *b, const char **field)
{
	*field = NULL;
	return books_check(b, SLOTS, field);
}

Test(books, fresh_books_are_empty_and_pass_the_check)
{
	struct books *b = new_books(SLOTS);
	const char *field;

	cr_expect_eq(b->magic, BOOKS_MAGIC);
	cr_expect_eq(b->layout, host_layout());
	cr_expect_eq(b->nr_cpus, 4);
	cr_expect_eq(b->max_slots, SLOTS);
	cr_expect_eq(b->slots_used, 0);
	cr_expect_eq(b->next_user_id, 1);
	cr_expect(fifo_empty(&b->free));
	for (uint32_t s = 0; s < SLOTS; s++)
		cr_expect_eq(b->slots[s].id, 0);
	cr_expect_eq(books_capacity(books_size(SLOTS)), SLOTS);
	cr_expect_eq(books_capacity(books_size(SLOTS) - 1), SLOTS - 1);
	cr_expect_eq(books_capacity(sizeof(struct books) - 1), 0);
	cr_expect_eq(check(b, &field), 0, "%s", field ? field : "");
	free(b);
}

Test(books, only_live_events_are_found)
{
	struct books *b = new_books(SLOTS);
	struct event_key k1 = key_of(1), k2 = key_of(2);

	cr_expect_eq(books_find_event(b, &k1), MAX_EVENTS);
	cr_expect_eq(books_free_event(b), 0);
	b->events[0].key = k1;
	b->events[0].state = EVENT_MAKING;
	cr_expect_eq(books_find_event(b, &k1), MAX_EVENTS,
		     "one being made is not counting yet");
	cr_expect_eq(books_free_event(b), 1, "nor is it free");
	b->events[0].state = EVENT_LIVE;
	cr_expect_eq(books_find_event(b, &k1), 0);
	cr_expect_eq(books_find_event(b, &k2), MAX_EVENTS);
	for (uint32_t e = 1; e < MAX_EVENTS; e++) {
		b->events[e].key = key_of(100 + e);
		b->events[e].state = EVENT_LIVE;
	}
	cr_expect_eq(books_free_event(b), MAX_EVENTS, "all taken");
	cr_expect_eq(books_find_event(b, &b->events[MAX_EVENTS - 1].key),
		     MAX_EVENTS - 1);
	free(b);
}

Test(books, an_event_knows_its_cpus)
{
	struct books_event e = {0};

	e.cpus[1] = 1ull << 3; /* CPU 67 */
	cr_expect(books_event_on_cpu(&e, 67));
	cr_expect_not(books_event_on_cpu(&e, 3));
	cr_expect_not(books_event_on_cpu(&e, -1));
	cr_expect_not(books_event_on_cpu(&e, MAX_CPUS));
}

Test(books, slots_fresh_first_then_the_longest_freed)
{
	struct books *b = new_books(SLOTS);
	bool fresh;
	uint32_t s;

	for (uint32_t i = 0; i < SLOTS; i++) {
		s = books_take_slot(b, SLOTS, &fresh);
		cr_expect_eq(s, i);
		cr_expect(fresh);
		b->slots[s].id = 1000 + i;
		b->slots[s].refs = 1;
	}
	cr_expect_eq(books_slots_used(b, SLOTS), SLOTS);
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), FIFO_NONE, "full");
	cr_expect_eq(books_find_slot(b, SLOTS, 1005), 5);
	cr_expect_eq(books_find_slot(b, SLOTS, 999), FIFO_NONE);
	/* Freed 5, then 2: taken again in that order. */
	books_give_slot(b, SLOTS, 5, false);
	books_give_slot(b, SLOTS, 2, false);
	cr_expect_eq(b->slots[5].id, 0);
	cr_expect_eq(b->slots[5].refs, 0);
	cr_expect_eq(books_find_slot(b, SLOTS, 1005), FIFO_NONE);
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), 5);
	cr_expect_not(fresh);
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), 2);
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), FIFO_NONE);
	free(b);
}

Test(books, a_fresh_slot_given_back_goes_back_where_it_came_from)
{
	struct books *b = new_books(SLOTS);
	bool fresh;
	uint32_t s;

	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), 0);
	s = books_take_slot(b, SLOTS, &fresh);
	cr_expect_eq(s, 1);
	books_give_slot(b, SLOTS, s, fresh);
	cr_expect_eq(b->slots_used, 1, "never served: not on the list");
	cr_expect(fifo_empty(&b->free));
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), 1);
	cr_expect(fresh);
	/* Slot 0 is not the last one handed out: onto the list instead. */
	books_give_slot(b, SLOTS, 0, true);
	cr_expect_eq(b->slots_used, 2);
	cr_expect_not(fifo_empty(&b->free));
	free(b);
}

Test(books, slot_walks_stop_at_the_size_this_process_mapped)
{
	struct books *b = new_books(SLOTS);

	b->slots_used = 1u << 30; /* another process wrote it */
	cr_expect_eq(books_slots_used(b, SLOTS), SLOTS);
	cr_expect_eq(books_find_slot(b, SLOTS, 77), FIFO_NONE);
	free(b);
}

Test(books, the_free_list_is_rebuilt_from_the_slots)
{
	struct books *b = new_books(SLOTS);
	bool fresh;

	for (uint32_t i = 0; i < 6; i++) {
		books_take_slot(b, SLOTS, &fresh);
		b->slots[i].id = 1 + i;
	}
	b->slots[4].id = 0;
	b->slots[1].id = 0;
	b->free.head = 3; /* a push cut short */
	books_rebuild_free(b, SLOTS);
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), 6, "fresh ones first");
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), 7);
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), 1);
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), 4);
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), FIFO_NONE);
	free(b);
}

Test(books, task_entries_are_taken_round_the_table)
{
	struct books *b = new_books(SLOTS);
	bool reused = true;
	uint32_t t0, t1, t2;

	t0 = books_take_task(b, &reused);
	cr_expect_eq(t0, 0);
	cr_expect_not(reused);
	b->tasks[t0] = (struct books_task){
		.start_ticks = 7, .id = 42, .kind = LINK_TID};
	t1 = books_take_task(b, &reused);
	cr_expect_eq(t1, 1);
	b->tasks[t1] = (struct books_task){
		.start_ticks = 7, .id = 42, .kind = LINK_TGID, .inherit = 1};
	b->tasks_used = 2;
	cr_expect_eq(b->tasks_high, 2);
	cr_expect_eq(books_find_task(b, LINK_TID, 42, 7, false), 0);
	cr_expect_eq(books_find_task(b, LINK_TGID, 42, 7, true), 1);
	cr_expect_eq(books_find_task(b, LINK_TGID, 42, 7, false), NO_TARGET);
	cr_expect_eq(books_find_task(b, LINK_TID, 42, 8, false), NO_TARGET,
		     "another task with that tid");
	/* Entry 0 freed: taken again only after the rest of the table. */
	memset(&b->tasks[t0], 0, sizeof(b->tasks[t0]));
	b->tasks_used = 1;
	t2 = books_take_task(b, &reused);
	cr_expect_eq(t2, 2);
	cr_expect_not(reused);
	b->next_task = MAX_TASK_TARGETS - 1;
	b->tasks[MAX_TASK_TARGETS - 1].id = 1;
	b->tasks_high = MAX_TASK_TARGETS;
	t2 = books_take_task(b, &reused);
	cr_expect_eq(t2, 0, "round the end of the table");
	cr_expect(reused, "it served before");
	free(b);
}

Test(books, a_full_task_table_has_no_entry)
{
	struct books *b = new_books(SLOTS);
	bool reused;

	for (uint32_t t = 0; t < MAX_TASK_TARGETS; t++)
		b->tasks[t].id = t + 1;
	cr_expect_eq(books_take_task(b, &reused), NO_TARGET);
	free(b);
}

Test(books, a_task_entry_is_used_while_any_event_refs_it)
{
	struct books_task t = {.id = 1};

	cr_expect_not(books_task_used(&t));
	t.refs[MAX_EVENTS - 1] = 1;
	cr_expect(books_task_used(&t));
	t.refs[MAX_EVENTS - 1] = 0;
	t.refs[0] = 3;
	cr_expect(books_task_used(&t));
}

Test(books, user_ids_come_sorted)
{
	struct books *b = new_books(SLOTS);
	static uint64_t ids[MAX_USERS];
	size_t n;

	b->users[900].id = 5;
	b->users[3].id = 9;
	b->users[7].id = 2;
	n = books_user_ids(b, ids);
	cr_assert_eq(n, 3);
	cr_expect_arr_eq(ids, ((uint64_t[]){2, 5, 9}), 3 * sizeof(uint64_t));
	cr_expect(books_ids_have(ids, n, 5));
	cr_expect_not(books_ids_have(ids, n, 4));
	cr_expect_not(books_ids_have(ids, 0, 5));
	free(b);
}

/* Books in use: slots 0..4 taken, 1 and 3 freed (list 3, 1), an event
 * live, a task target and two users. */
static struct books *used_books(void)
{
	struct books *b = new_books(SLOTS);
	const char *field;
	bool fresh, reused;

	for (uint32_t i = 0; i < 5; i++) {
		books_take_slot(b, SLOTS, &fresh);
		b->slots[i].id = 100 + i;
		b->slots[i].refs = 1;
	}
	books_give_slot(b, SLOTS, 3, false);
	books_give_slot(b, SLOTS, 1, false);
	b->events[2].key = key_of(3);
	b->events[2].state = EVENT_LIVE;
	b->events[2].refs = 1;
	books_take_task(b, &reused);
	b->tasks[0] = (struct books_task){
		.id = 7, .kind = LINK_TGID, .inherit = TARGET_INHERIT};
	b->tasks_used = 1;
	b->users[0].id = 1;
	b->users[1].id = 2;
	cr_assert_eq(check(b, &field), 0, "%s", field ? field : "");
	return b;
}

/* Each corruption on its own is refused, naming what it found. */
static void expect_refused(void (*corrupt)(struct books *), const char *name)
{
	struct books *b = used_books();
	const char *field = NULL;

	corrupt(b);
	cr_expect_eq(check(b, &field), -EPROTO, "%s passed", name);
	cr_expect(field && !strncmp(field, name, strlen(name)),
		  "%s: the check named %s", name, field ? field : "nothing");
	free(b);
}

static void bad_magic(struct books *b)
{
	b->magic ^= 1;
}
static void bad_layout(struct books *b)
{
	b->layout = host_layout() + 1;
}
static void bad_max_slots(struct books *b)
{
	b->max_slots = SLOTS + 1;
}
static void bad_slots_used(struct books *b)
{
	b->slots_used = SLOTS + 1;
}
static void bad_tail(struct books *b)
{
	b->free.tail = 5; /* = slots_used */
}
static void free_loop(struct books *b)
{
	b->slots[1].next_free = 3; /* 3 -> 1 -> 3 */
}
static void free_out_of_range(struct books *b)
{
	b->slots[1].next_free = SLOTS + 3;
}
static void free_slot_in_use(struct books *b)
{
	b->slots[1].id = 55;
}
static void bad_event_state(struct books *b)
{
	b->events[5].state = EVENT_LIVE + 1;
}
static void bad_tasks_high(struct books *b)
{
	b->tasks_high = MAX_TASK_TARGETS + 1;
}
static void bad_next_task(struct books *b)
{
	b->next_task = MAX_TASK_TARGETS;
}
static void task_past_high(struct books *b)
{
	b->tasks[1].id = 8;
	b->tasks[1].kind = LINK_TID;
}
static void bad_task_kind(struct books *b)
{
	b->tasks[0].kind = 3;
}
static void bad_task_inherit(struct books *b)
{
	b->tasks[0].inherit = TARGET_INHERIT + 1;
}
static void users_share_an_id(struct books *b)
{
	b->users[700].id = 2;
}

Test(books, the_check_refuses_what_would_mislead_the_walks)
{
	expect_refused(bad_magic, "magic");
	expect_refused(bad_layout, "layout");
	expect_refused(bad_max_slots, "max_slots");
	expect_refused(bad_slots_used, "slots_used");
	expect_refused(bad_tail, "free.tail");
	expect_refused(free_loop, "free (a link out of range, or a loop)");
	expect_refused(free_out_of_range, "free (a link out of range");
	expect_refused(free_slot_in_use, "free (a slot in use on it)");
	expect_refused(bad_event_state, "events[].state");
	expect_refused(bad_tasks_high, "tasks_high");
	expect_refused(bad_next_task, "next_task");
	expect_refused(task_past_high, "tasks[] (in use past tasks_high)");
	expect_refused(bad_task_kind, "tasks[].kind");
	expect_refused(bad_task_inherit, "tasks[].inherit");
	expect_refused(users_share_an_id, "users[].id");
}

Test(books, the_check_leaves_what_a_death_half_way_left_to_the_repair)
{
	struct books *b = used_books();
	const char *field;

	/* A pop cut short: head moved on, tail still on the old head. */
	b->free.head = FIFO_NONE;
	cr_expect_eq(check(b, &field), 0, "%s", field ? field : "");
	/* An event a maker died making, a slot with no refs. */
	b->events[6].state = EVENT_MAKING;
	b->slots[4].refs = 0;
	b->dirty = 3;
	cr_expect_eq(check(b, &field), 0, "%s", field ? field : "");
	free(b);
}
