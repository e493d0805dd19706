/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A FIFO free list threaded through an owner's elements by index: freed
 * elements join at the tail, so an element is handed out again as late as
 * possible (a handle's generation turns over slowly; a BPF slot a program
 * run may still hold waits longest). link(owner, i) gives element i's
 * next-index field.
 */
#ifndef SHPMU_FIFO_H
#define SHPMU_FIFO_H

#include <stdbool.h>
#include <stdint.h>

#define FIFO_NONE UINT32_MAX

struct fifo {
	uint32_t head, tail;
};

typedef uint32_t *(*fifo_link_fn)(void *owner, uint32_t i);

static inline void fifo_init(struct fifo *f)
{
	f->head = f->tail = FIFO_NONE;
}

static inline bool fifo_empty(const struct fifo *f)
{
	return f->head == FIFO_NONE;
}

static inline void fifo_push(struct fifo *f, uint32_t i, fifo_link_fn link,
			     void *owner)
{
	*link(owner, i) = FIFO_NONE;
	if (f->tail == FIFO_NONE)
		f->head = i;
	else
		*link(owner, f->tail) = i;
	f->tail = i;
}

/* The oldest element, or FIFO_NONE. */
static inline uint32_t fifo_pop(struct fifo *f, fifo_link_fn link, void *owner)
{
	uint32_t i = f->head;

	if (i == FIFO_NONE)
		return i;
	f->head = *link(owner, i);
	if (f->head == FIFO_NONE)
		f->tail = FIFO_NONE;
	return i;
}

#endif
