/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * In host scope the books are memory any process of the domain's uid can
 * write, lock or no lock. Before the library uses them it checks what
 * would make its own code go out of bounds or loop: the sizes and counts
 * that bound its walks, the free list, the states and kinds it switches
 * on, and that no two users share an id. What a process that died half
 * way through a change leaves is not refused: the repair after a death
 * (host_fsck.c) recounts it.
 */
#ifndef SHPMU_BOOKS_CHECK_H
#define SHPMU_BOOKS_CHECK_H

#include <stdint.h>

#include "host/books.h"

/* 0 when b, mapped with room for max_slots slots (the size this process
 * checked when it mapped them), can be used; else -EPROTO, with *field
 * naming the first field found wrong. Reads each field once and takes a
 * bounded time whatever b holds. */
int books_check(const struct books *b, uint32_t max_slots, const char **field);

#endif
