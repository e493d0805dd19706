// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* host/host_fsck.c: the arithmetic of reclaiming what dead members left
 * (what map_refs says the live ones hold, and what goes), on books in
 * malloc'd memory and map_refs entries made up here: no bpffs, no
 * program, no root. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/counted.h"
#include "host/books.h"
#include "host/books_check.h"
#include "host/host_fsck.h"

#define SLOTS 8
#define ALL   ((1u << MAX_EVENTS) - 1) /* every event, as bits */

static struct books *new_books(void)
{
	struct books *b = malloc(books_size(SLOTS));

	cr_assert(b);
	books_init(b, 4, SLOTS);
	return b;
}

static struct recount *new_recount(void)
{
	struct recount *r = calloc(1, sizeof(*r));

	cr_assert(r);
	r->max_slots = SLOTS;
	r->slots = calloc(SLOTS, sizeof(*r->slots));
	r->tasks = calloc((size_t)MAX_TASK_TARGETS * MAX_EVENTS,
			  sizeof(*r->tasks));
	cr_assert(r->slots && r->tasks);
	return r;
}

static void free_recount(struct recount *r)
{
	free(r->slots);
	free(r->tasks);
	free(r);
}

static uint16_t task_refs(const struct recount *r, uint32_t t, uint32_t e)
{
	return r->tasks[t * MAX_EVENTS + e];
}

Test(host_fsck, a_dead_users_refs_go_the_live_ones_are_counted)
{
	struct recount *r = new_recount();
	const uint64_t ids[] = {1, 3}; /* sorted, as books_user_ids */

	cr_expect(
		fsck_count_ref(r, ids, 2, &(struct host_ref_key){1, 0, 0}, 2));
	cr_expect(fsck_count_ref(r, ids, 2,
				 &(struct host_ref_key){3, 0, NO_SLOT}, 1),
		  "a CPU target: the event alone");
	cr_expect_not(
		fsck_count_ref(r, ids, 2, &(struct host_ref_key){2, 1, 1}, 4),
		"user 2 is gone");
	cr_expect(fsck_count_ref(
		r, ids, 2, &(struct host_ref_key){3, 1, TASK_REF | 5}, 1));
	cr_expect(fsck_count_ref(
		r, ids, 2, &(struct host_ref_key){1, 1, TASK_REF | 5}, 2));
	cr_expect_eq(r->events[0], 3);
	cr_expect_eq(r->events[1], 3, "not user 2's 4");
	cr_expect_eq(r->slots[0], 2);
	cr_expect_eq(r->slots[1], 0);
	cr_expect_eq(task_refs(r, 5, 1), 3);
	free_recount(r);
}

Test(host_fsck, what_is_out_of_range_in_an_entry_counts_for_nothing)
{
	struct recount *r = new_recount();
	const uint64_t ids[] = {7};
	struct recount zero = {0};

	/* Entries only a hostile writer makes: kept (their user lives),
	 * never written out of bounds. */
	cr_expect(fsck_count_ref(
		r, ids, 1, &(struct host_ref_key){7, MAX_EVENTS, SLOTS}, 1));
	cr_expect(fsck_count_ref(
		r, ids, 1, &(struct host_ref_key){7, MAX_EVENTS, TASK_REF | 1},
		1));
	cr_expect(fsck_count_ref(
		r, ids, 1,
		&(struct host_ref_key){7, 0, TASK_REF | MAX_TASK_TARGETS}, 1));
	cr_expect(!memcmp(r->events + 1, zero.events + 1,
			  sizeof(zero.events) - sizeof(zero.events[0])));
	cr_expect_eq(r->events[0], 1, "its event is in range");
	for (uint32_t s = 0; s < SLOTS; s++)
		cr_expect_eq(r->slots[s], 0);
	cr_expect_eq(task_refs(r, 1, 0), 0);
	free_recount(r);
}

Test(host_fsck, events_made_half_way_or_with_no_refs_go)
{
	struct books *b = new_books();
	struct recount *r = new_recount();

	b->events[0].state = EVENT_LIVE;
	b->events[0].refs = 9; /* what a dead user's refs made of it */
	r->events[0] = 3;
	b->events[1].state = EVENT_LIVE;
	b->events[1].refs = 2;
	b->events[2].state = EVENT_MAKING;
	r->events[2] = 5;
	r->events[3] = 1; /* a free event: left alone */
	cr_expect_eq(fsck_events(b, r), 1u << 1 | 1u << 2);
	cr_expect_eq(b->events[0].refs, 3);
	cr_expect_eq(b->events[3].state, EVENT_FREE);
	cr_expect_eq(b->events[3].refs, 0);
	free_recount(r);
	free(b);
}

Test(host_fsck, task_entries_keep_the_refs_recounted)
{
	struct books_task bt = {.id = 4, .kind = LINK_TID};
	uint16_t counted[MAX_EVENTS] = {0};

	bt.refs[1] = 2;
	bt.refs[3] = 1;
	counted[1] = 1;
	cr_expect_eq(fsck_task_refs(&bt, counted), ALL & ~(1u << 1),
		     "every event's total but 1's goes");
	cr_expect_eq(bt.refs[1], 1);
	cr_expect_eq(bt.refs[3], 0);
	cr_expect(books_task_used(&bt));
	counted[1] = 0;
	cr_expect_eq(fsck_task_refs(&bt, counted), ALL);
	cr_expect_not(books_task_used(&bt), "the entry goes");
}

Test(host_fsck, the_task_entries_in_use_are_counted_again)
{
	struct books *b = new_books();

	b->tasks[0].id = 1;
	b->tasks[9].id = 2;
	b->tasks[MAX_TASK_TARGETS - 1].id = 3;
	b->tasks_used = 4; /* a maker died between the entry and the count */
	cr_expect_eq(fsck_tasks_used(b), 3);
	free(b);
}

Test(host_fsck, slots_with_no_refs_are_freed_and_listed_again)
{
	struct books *b = new_books();
	struct recount *r = new_recount();
	uint16_t *want = calloc(COUNTED_FILTER_SIZE, sizeof(*want));
	const char *field = NULL;
	bool fresh;

	cr_assert(want);
	for (uint32_t s = 0; s < 5; s++) {
		books_take_slot(b, SLOTS, &fresh);
		b->slots[s].id = 10 + s;
		b->slots[s].refs = 1;
	}
	b->slots[4].id = COUNTED_FILTER_SIZE + 10; /* shares 10's bits */
	b->slots[2].id = 0; /* freed, and the push of it cut short */
	b->free.tail = 2;
	r->slots[0] = 2;
	r->slots[3] = 1;
	r->slots[4] = 1;
	fsck_slots(b, r);
	cr_expect_eq(b->slots[0].refs, 2);
	cr_expect_eq(b->slots[1].id, 0, "no live user holds it");
	cr_expect_eq(b->slots[1].refs, 0);
	cr_expect_eq(b->slots[3].id, 13);
	cr_expect_eq(books_check(b, SLOTS, &field), 0, "%s",
		     field ? field : "");
	fsck_filter(b, SLOTS, want);
	cr_expect_eq(want[10], 2, "two ids with these low bits");
	cr_expect_eq(want[13], 1);
	cr_expect_eq(want[11], 0, "freed");
	cr_expect_eq(want[12], 0);
	/* Listed in order; the fresh ones still come first. */
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), 5);
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), 6);
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), 7);
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), 1);
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), 2);
	cr_expect_eq(books_take_slot(b, SLOTS, &fresh), FIFO_NONE);
	free(want);
	free_recount(r);
	free(b);
}

Test(host_fsck, slot_map_entries_of_no_live_slot_go)
{
	struct books *b = new_books();

	b->slots_used = 3;
	b->slots[0].id = 10;
	b->slots[2].id = 12;
	cr_expect(fsck_slot_entry_stays(b, 3, 10, 0));
	cr_expect(fsck_slot_entry_stays(b, 3, 12, 2));
	cr_expect_not(fsck_slot_entry_stays(b, 3, 11, 1), "a freed slot");
	cr_expect_not(fsck_slot_entry_stays(b, 3, 10, 2), "another's slot");
	cr_expect_not(fsck_slot_entry_stays(b, 2, 12, 2), "past the used");
	cr_expect_not(fsck_slot_entry_stays(b, 3, 10, UINT32_MAX));
	free(b);
}

Test(host_fsck, links_to_no_live_task_entry_go)
{
	struct books *b = new_books();
	struct task_link l;

	b->tasks[2].id = 5;
	l = (struct task_link){.target = {2, 9}};
	cr_expect(fsck_link(b, &l));
	cr_expect_eq(l.target[0], 2);
	cr_expect_eq(l.target[1], NO_TARGET, "entry 9 is free");
	l = (struct task_link){.target = {MAX_TASK_TARGETS + 3, 2}};
	cr_expect(fsck_link(b, &l));
	cr_expect_eq(l.target[0], NO_TARGET);
	cr_expect_eq(l.target[1], 2);
	l = (struct task_link){.target = {9, NO_TARGET}};
	cr_expect_not(fsck_link(b, &l), "nothing left: the link goes");
	free(b);
}

/* A ref in map_refs: its key and value. */
struct ref {
	struct host_ref_key key;
	uint32_t refs;
};

/* host_fsck()'s steps, each with the part of the books its I/O changes
 * (counted_drop_event clears the event, counted_free_task the entry);
 * returns how many entries of map_refs go. */
static size_t repair(struct books *b, const struct ref *refs, size_t n)
{
	static uint64_t ids[MAX_USERS];
	struct recount *r = new_recount();
	size_t nids = books_user_ids(b, ids), doomed = 0;
	uint32_t drop;

	for (size_t i = 0; i < n; i++)
		doomed += !fsck_count_ref(r, ids, nids, &refs[i].key,
					  refs[i].refs);
	drop = fsck_events(b, r);
	for (uint32_t e = 0; e < MAX_EVENTS; e++)
		if (drop & 1u << e)
			memset(&b->events[e], 0, sizeof(b->events[e]));
	for (uint32_t t = 0; t < MAX_TASK_TARGETS; t++) {
		if (!b->tasks[t].id)
			continue;
		fsck_task_refs(&b->tasks[t], &r->tasks[t * MAX_EVENTS]);
		if (!books_task_used(&b->tasks[t]))
			counted_leave_task(b, t);
	}
	b->tasks_used = fsck_tasks_used(b);
	fsck_slots(b, r);
	free_recount(r);
	return doomed;
}

Test(host_fsck, what_a_dead_member_left_is_reclaimed)
{
	struct books *b = new_books();
	enum { A = 1, B = 2 }; /* B died; its user entry was reaped */
	const struct ref refs[] = {
		{{A, 0, 0}, 1},	      {{A, 0, TASK_REF | 1}, 1},
		{{B, 0, 0}, 1},	      {{B, 0, 1}, 1},
		{{B, 1, NO_SLOT}, 1}, {{B, 0, TASK_REF | 0}, 1},
	};
	uint32_t la[MAX_EVENTS] = {0}, lb[MAX_EVENTS] = {0};
	const char *field = NULL;
	bool fresh, reused;
	uint32_t s;

	b->users[0].id = A;
	/* What the two made, as counted.c makes it. */
	counted_event_making(&b->events[0], &(struct event_key){.config = 1});
	b->events[0].state = EVENT_LIVE;
	counted_hold_event(b, la, 0);
	counted_hold_event(b, la, 0);
	for (int i = 0; i < 3; i++)
		counted_hold_event(b, lb, 0);
	counted_event_making(&b->events[1], &(struct event_key){.config = 2});
	b->events[1].state = EVENT_LIVE;
	counted_hold_event(b, lb, 1);
	/* B died making event 2 ... */
	counted_event_making(&b->events[2], &(struct event_key){.config = 3});
	for (uint64_t id = 100; id < 102; id++) {
		s = counted_claim_slot(b, SLOTS, id, &fresh);
		counted_slot_counted(b, SLOTS, s, fresh, true);
	}
	counted_hold_slot(b, SLOTS, 100);
	/* ... and slot 2, between the books and the map. */
	counted_claim_slot(b, SLOTS, 102, &fresh);
	for (uint32_t id = 55; id < 58; id++)
		counted_enter_task(
			b,
			counted_task_for(b,
					 &(struct books_task){.id = id,
							      .kind = LINK_TID},
					 &fresh, &reused),
			&(struct books_task){.id = id, .kind = LINK_TID});
	b->tasks[0].refs[0] = 1; /* B's */
	b->tasks[1].refs[0] = 1; /* A's; entry 2 never counted */

	cr_expect_eq(repair(b, refs, sizeof(refs) / sizeof(refs[0])), 4,
		     "B's four refs go");
	cr_expect_eq(b->events[0].state, EVENT_LIVE);
	cr_expect_eq(b->events[0].refs, 2, "A's two");
	cr_expect_eq(b->events[1].state, EVENT_FREE, "B's alone");
	cr_expect_eq(b->events[2].state, EVENT_FREE, "made half-way");
	cr_expect_eq(b->slots[0].id, 100);
	cr_expect_eq(b->slots[0].refs, 1);
	cr_expect_eq(b->slots[1].id, 0);
	cr_expect_eq(b->slots[2].id, 0);
	cr_expect_eq(b->tasks[0].id, 0);
	cr_expect_eq(b->tasks[1].id, 56);
	cr_expect_eq(b->tasks[1].refs[0], 1);
	cr_expect_eq(b->tasks[2].id, 0);
	cr_expect_eq(b->tasks_used, 1);
	cr_expect_eq(books_check(b, SLOTS, &field), 0, "%s",
		     field ? field : "");
	/* Once more, after a claim that never counted: it alone goes. */
	cr_expect_eq(counted_claim_slot(b, SLOTS, 200, &fresh), 3);
	cr_expect_eq(repair(b, refs, 2), 0, "A's alone: nothing goes");
	cr_expect_eq(b->events[0].refs, 2);
	cr_expect_eq(b->slots[3].id, 0, "claimed, never counted");
	free(b);
}
