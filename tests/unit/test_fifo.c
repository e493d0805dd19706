// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* core/fifo.c: the FIFO free list. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "core/fifo.h"

static uint32_t links[8];

static uint32_t *link_of(void *owner, uint32_t i)
{
	return &((uint32_t *)owner)[i];
}

Test(fifo, the_free_list_hands_out_the_oldest_first)
{
	struct fifo f;

	fifo_init(&f);
	cr_expect(fifo_empty(&f));
	for (uint32_t i = 3; i < 6; i++)
		fifo_push(&f, i, link_of, links);
	cr_expect_eq(fifo_pop(&f, link_of, links), 3);
	fifo_push(&f, 1, link_of, links);
	cr_expect_eq(fifo_pop(&f, link_of, links), 4);
	cr_expect_eq(fifo_pop(&f, link_of, links), 5);
	cr_expect_eq(fifo_pop(&f, link_of, links), 1);
	cr_expect_eq(fifo_pop(&f, link_of, links), FIFO_NONE);
	cr_expect(fifo_empty(&f));
}
