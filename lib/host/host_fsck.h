/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The arithmetic of reclaiming what dead users left (host_fsck() in
 * host_fsck.c, declared in host_private.h, does the I/O around it): from
 * the entries of map_refs, what the live users hold; from that, what the
 * books and the program's maps must say. Nothing here calls the kernel,
 * so that it can be tested on books in any memory.
 */
#ifndef SHPMU_HOST_FSCK_H
#define SHPMU_HOST_FSCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/prog/switch_counter.h"
#include "host/books.h"
#include "host/host_private.h"

/* The refs the live users hold, as map_refs has them. */
struct recount {
	uint32_t events[MAX_EVENTS];
	uint32_t max_slots; /* as this process mapped the books */
	uint32_t *slots;    /* max_slots */
	uint16_t *tasks;    /* MAX_TASK_TARGETS x MAX_EVENTS */
};

/* Adds refs, the value of map_refs entry key, to r when its user is among
 * the n sorted ids of the books' users (books_user_ids) and says true;
 * false when its user is gone (the entry goes). Whatever of the entry
 * is out of range (event, slot or task entry) counts for nothing. */
bool fsck_count_ref(struct recount *r, const uint64_t *ids, size_t n,
		    const struct host_ref_key *key, uint32_t refs);

/* Each live event's refs as recounted; returns the events that must be
 * taken out (bit e): those made half-way and those with no refs. */
uint32_t fsck_events(struct books *b, const struct recount *r);

/* Task entry bt's refs as counted (MAX_EVENTS of them); returns the
 * events that have none there (bit e), whose totals go. With none at all
 * the entry goes (books_task_used). */
uint32_t fsck_task_refs(struct books_task *bt, const uint16_t *counted);
/* The entries in use, counted again. */
uint32_t fsck_tasks_used(const struct books *b);

/* Slots: refs as recounted, those with none freed, the free list made
 * again from them. */
void fsck_slots(struct books *b, const struct recount *r);
/* The program's filter of counted ids as the live slots want it
 * (COUNTED_FILTER_SIZE counts, zeroed by the caller). */
void fsck_filter(const struct books *b, uint32_t max_slots, uint16_t *want);
/* Whether the program's id -> slot entry (id, s) is a live slot's, the
 * first used slots being in use. */
bool fsck_slot_entry_stays(const struct books *b, uint32_t used, uint64_t id,
			   uint32_t s);

/* Takes the targets that are no live task entry out of link; false when
 * none is left (the link goes). */
bool fsck_link(const struct books *b, struct task_link *link);

#endif
