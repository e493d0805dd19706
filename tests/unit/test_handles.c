// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* core/handles.c: the handle table, its generations running out. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "core/handles.h"
#include "core/kevent.h"
#include "fake_event.h"

/* Opens and releases handles until slot 0 comes round again. */
static int open_and_release(struct handle_table *t, struct kevent *ev)
{
	struct handle tmp = {.ev = ev, .state = NULL};
	int index = handles_alloc(t), h;

	cr_assert_geq(index, 0);
	tmp.state = tmp.inline_state;
	h = handles_publish(t, (uint32_t)index, &tmp);
	cr_assert_eq(handle_lock(t, h), handles_slot(t, (uint32_t)index));
	handles_release(t, h);
	handle_unlock(t, h);
	return h;
}

Test(handles, a_slot_whose_generations_are_spent_is_retired)
{
	struct kevent *ev = fake_event(1);
	struct handle_table t;
	int first = -1, last = -1;

	cr_assert_eq(handles_init(&t), 0);
	/* Every slot of the first chunk goes through all its generations,
	 * one after the other (the free list is FIFO). */
	for (uint32_t round = 0; round <= HANDLE_GEN_MASK; round++)
		for (uint32_t i = 0; i < HANDLE_CHUNK_SLOTS; i++) {
			int h = open_and_release(&t, ev);

			if (handle_index(h) == 0) {
				if (first < 0)
					first = h;
				last = h;
			}
		}
	cr_expect_eq(handle_gen(last), HANDLE_GEN_MASK,
		     "slot 0 ran through every generation");
	cr_expect_null(handle_lock(&t, first), "its first handle is stale");
	cr_expect_null(handle_lock(&t, last), "and its last one too");
	/* Retired: the next handles come from a new chunk. */
	int h = open_and_release(&t, ev);

	cr_expect_geq(handle_index(h), HANDLE_CHUNK_SLOTS);
	cr_expect_geq(h, 0, "handles stay non-negative");
	handles_fini(&t);
	free(ev);
}
