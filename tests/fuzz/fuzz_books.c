// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: books written by a hostile member. The input is a
 * list of pokes (a 32-bit offset and a 32-bit word each) into freshly
 * made books with room for 4 slots. Whatever they say, books_check
 * finishes; where it accepts them, the operations a change makes on them
 * stay within the mapping (ASan) and finish, even with the rest of the
 * pokes written between the check and the use.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host/books.h"
#include "host/books_check.h"
#include "host/host_layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SLOTS 4

/* What a change does: find, take and give back slots and task entries. */
static void use_books(struct books *b)
{
	bool fresh, reused;
	uint32_t s, t;

	(void)books_find_slot(b, SLOTS, 12345);
	(void)books_find_event(b, &b->events[0].key);
	(void)books_free_event(b);
	s = books_take_slot(b, SLOTS, &fresh);
	if (s != FIFO_NONE) {
		b->slots[s].id = 777;
		books_give_slot(b, SLOTS, s, fresh);
	}
	t = books_take_task(b, &reused);
	if (t != NO_TARGET)
		(void)books_task_used(&b->tasks[t]);
	(void)books_find_task(b, LINK_TID, 1, 2, false);
	books_rebuild_free(b, SLOTS);
	(void)books_slots_used(b, SLOTS);
}

/* Applies the pokes in data[0 .. size). */
static void poke(struct books *b, size_t len, const uint8_t *data, size_t size)
{
	for (size_t i = 0; i + 8 <= size; i += 8) {
		uint32_t offset, word;

		memcpy(&offset, data + i, sizeof(offset));
		memcpy(&word, data + i + 4, sizeof(word));
		offset = (uint32_t)((offset % (len - 3)) & ~3u);
		memcpy((uint8_t *)b + offset, &word, sizeof(word));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct books *b;
	const size_t len = books_size(SLOTS);
	size_t first = size / 16 * 8;
	const char *field;

	if (!b)
		b = malloc(len);
	if (!b)
		return 0;
	books_init(b, 1, SLOTS);
	/* The first half of the pokes before the check, the rest after it,
	 * as a writer that does not take the lock can. */
	poke(b, len, data, first);
	if (!books_check(b, SLOTS, &field)) {
		poke(b, len, data + first, size - first);
		use_books(b);
	}
	return 0;
}
