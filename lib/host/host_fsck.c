// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reclaiming what dead users left. map_refs is the truth: every ref a
 * user holds is an entry there, written in one map update, so a process
 * that died mid-change left at most refs of its own (dropped here with
 * the rest of its refs) and events or slots with no refs (freed here).
 * Everything else in the books and the program's maps is recounted from
 * map_refs and the live slots and task targets.
 *
 * What to recount and what goes is computed first (host_fsck.h); the
 * functions after that make the maps and the program say the same.
 */
#include "host/host_fsck.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bpf/counted.h"
#include "core/log.h"
#include "host/host_private.h"
#include "sys/sys.h"

_Static_assert(MAX_EVENTS <= 32, "events as bits of a uint32_t");

bool fsck_count_ref(struct recount *r, const uint64_t *ids, size_t n,
		    const struct host_ref_key *key, uint32_t refs)
{
	uint32_t t = key->slot & ~TASK_REF;

	if (!books_ids_have(ids, n, key->user))
		return false;
	if (key->event < MAX_EVENTS)
		r->events[key->event] += refs;
	if (key->slot < r->max_slots)
		r->slots[key->slot] += refs;
	else if (ref_is_task(key->slot) && t < MAX_TASK_TARGETS &&
		 key->event < MAX_EVENTS)
		r->tasks[t * MAX_EVENTS + key->event] += (uint16_t)refs;
	return true;
}

uint32_t fsck_events(struct books *b, const struct recount *r)
{
	uint32_t drop = 0;

	for (uint32_t e = 0; e < MAX_EVENTS; e++) {
		struct books_event *be = &b->events[e];

		if (be->state == EVENT_FREE)
			continue;
		if (be->state == EVENT_MAKING || !r->events[e])
			drop |= 1u << e;
		else
			be->refs = r->events[e];
	}
	return drop;
}

uint32_t fsck_task_refs(struct books_task *bt, const uint16_t *counted)
{
	uint32_t none = 0;

	for (uint32_t e = 0; e < MAX_EVENTS; e++) {
		bt->refs[e] = counted[e];
		if (!bt->refs[e])
			none |= 1u << e;
	}
	return none;
}

uint32_t fsck_tasks_used(const struct books *b)
{
	uint32_t used = 0;

	for (uint32_t t = 0; t < MAX_TASK_TARGETS; t++)
		used += b->tasks[t].id != 0;
	return used;
}

void fsck_slots(struct books *b, const struct recount *r)
{
	uint32_t used = books_slots_used(b, r->max_slots);

	for (uint32_t s = 0; s < used; s++) {
		if (b->slots[s].id && !r->slots[s])
			b->slots[s].id = 0;
		b->slots[s].refs = r->slots[s];
	}
	books_rebuild_free(b, r->max_slots);
}

void fsck_filter(const struct books *b, uint32_t max_slots, uint16_t *want)
{
	uint32_t used = books_slots_used(b, max_slots);

	for (uint32_t s = 0; s < used; s++)
		if (b->slots[s].id)
			want[b->slots[s].id & (COUNTED_FILTER_SIZE - 1)]++;
}

bool fsck_slot_entry_stays(const struct books *b, uint32_t used, uint64_t id,
			   uint32_t s)
{
	return s < used && b->slots[s].id == id;
}

bool fsck_link(const struct books *b, struct task_link *link)
{
	for (int i = 0; i < 2; i++)
		if (link->target[i] >= MAX_TASK_TARGETS ||
		    !b->tasks[link->target[i]].id)
			link->target[i] = NO_TARGET;
	return link->target[0] != NO_TARGET || link->target[1] != NO_TARGET;
}

/* The I/O: map_refs, the program's maps and memory, kept in step with
 * what the above computed. */

/* Drops the refs of users not in the books; counts the rest. */
static int recount_refs(struct host *h, struct recount *r)
{
	uint64_t ids[MAX_USERS];
	size_t nids = books_user_ids(h->books, ids), ndoomed = 0, room = 0;
	struct host_ref_key key, *prev = NULL, *doomed = NULL;
	uint32_t refs;
	int err = 0;

	while (!sys_bpf_map_next_key(h->pmu, h->refs_fd, prev, &key)) {
		prev = &key;
		if (sys_bpf_map_lookup(h->pmu, h->refs_fd, &key, &refs))
			continue;
		if (fsck_count_ref(r, ids, nids, &key, refs))
			continue;
		if (ndoomed == room) {
			struct host_ref_key *more;

			room = room ? room * 2 : 64;
			more = realloc(doomed, room * sizeof(*doomed));
			if (!more) {
				err = -ENOMEM;
				break;
			}
			doomed = more;
		}
		doomed[ndoomed++] = key;
	}
	/* Deleted after the walk: a walk from a deleted key starts over. */
	for (size_t i = 0; i < ndoomed; i++)
		sys_bpf_map_delete(h->pmu, h->refs_fd, &doomed[i]);
	free(doomed);
	return err;
}

/* Events: one made half-way or with no refs left is taken out. */
static void fix_events(struct shpmu *pmu, struct counted *c,
		       const struct recount *r)
{
	uint32_t drop = fsck_events(c->books, r);

	for (uint32_t e = 0; e < MAX_EVENTS; e++)
		if (drop & 1u << e)
			counted_drop_event(pmu, c, e);
}

/* The program's filter of counted ids, written where it differs from
 * what the live slots say (the program reads it all the while). */
static int fix_filter(struct counted *c)
{
	uint16_t *want = calloc(COUNTED_FILTER_SIZE, sizeof(*want));

	if (!want)
		return -ENOMEM;
	fsck_filter(c->books, c->prog.max_slots, want);
	for (uint32_t i = 0; i < COUNTED_FILTER_SIZE; i++) {
		uint16_t *have = &counter_prog_filter(&c->prog)[i];
		uint16_t now = __atomic_load_n(have, __ATOMIC_RELAXED);

		if (now != want[i])
			__atomic_store_n(have, want[i], __ATOMIC_RELEASE);
	}
	free(want);
	return 0;
}

/* The program's id -> slot map, made to match the live slots. */
static void fix_slot_map(struct counted *c)
{
	const struct books *b = c->books;
	uint32_t used = books_slots_used(b, c->prog.max_slots), s;
	int fd = c->prog.slots_fd;
	uint64_t id, last, *prev = NULL;

	while (!sys_bpf_map_next_key(c->prog.pmu, fd, prev, &id)) {
		if (!sys_bpf_map_lookup(c->prog.pmu, fd, &id, &s) &&
		    !fsck_slot_entry_stays(b, used, id, s)) {
			/* The walk goes on after the key before it. */
			sys_bpf_map_delete(c->prog.pmu, fd, &id);
			continue;
		}
		last = id;
		prev = &last;
	}
	for (s = 0; s < used; s++)
		if (b->slots[s].id)
			sys_bpf_map_update(c->prog.pmu, fd, &b->slots[s].id, &s,
					   BPF_ANY);
}

static int fix_slots(struct counted *c, const struct recount *r)
{
	int err;

	fsck_slots(c->books, r);
	err = fix_filter(c);
	if (err)
		return err;
	fix_slot_map(c);
	counter_prog_changed(&c->prog);
	return 0;
}

/* Task targets: refs as recounted; an event with none loses its total, a
 * target with none is freed. */
static void fix_tasks(struct shpmu *pmu, struct counted *c,
		      const struct recount *r)
{
	for (uint32_t t = 0; t < MAX_TASK_TARGETS; t++) {
		struct books_task *bt = &c->books->tasks[t];
		uint32_t none;

		if (!bt->id)
			continue;
		none = fsck_task_refs(bt, &r->tasks[t * MAX_EVENTS]);
		for (uint32_t e = 0; e < MAX_EVENTS; e++)
			if (none & 1u << e)
				counter_prog_del_task_total(&c->prog, t, e);
		if (!books_task_used(bt))
			counted_free_task(pmu, c, t);
	}
	/* Counted again: a process killed between an entry and its count
	 * left the count one off. */
	c->books->tasks_used = fsck_tasks_used(c->books);
}

/* Links to no live task target go (a maker died between the link and
 * the books); the program's filter of linked ids is recounted from the
 * links left. */
static int fix_links(struct counted *c)
{
	uint32_t *want = calloc(TASK_FILTER_SIZE, sizeof(*want));
	uint64_t key, next;
	struct task_link link;
	bool more;

	if (!want)
		return -ENOMEM;
	more = !sys_bpf_map_next_key(c->prog.pmu, c->prog.links_fd, NULL,
				     &next);
	while (more) {
		key = next;
		more = !sys_bpf_map_next_key(c->prog.pmu, c->prog.links_fd,
					     &key, &next);
		if (sys_bpf_map_lookup(c->prog.pmu, c->prog.links_fd, &key,
				       &link))
			continue;
		if (!fsck_link(c->books, &link)) {
			sys_bpf_map_delete(c->prog.pmu, c->prog.links_fd, &key);
			continue;
		}
		sys_bpf_map_update(c->prog.pmu, c->prog.links_fd, &key, &link,
				   BPF_EXIST);
		want[task_filter_index((uint32_t)(key >> 32), (uint32_t)key)]++;
	}
	for (uint32_t i = 0; i < TASK_FILTER_SIZE; i++)
		__atomic_store_n(&counter_prog_task_filter(&c->prog)[i],
				 want[i], __ATOMIC_RELEASE);
	free(want);
	return 0;
}

void host_fsck(struct shpmu *pmu, struct host *h, struct counted *c)
{
	struct recount r = {0};
	int err;

	r.max_slots = c->prog.max_slots;
	r.slots = calloc(r.max_slots, sizeof(*r.slots));
	r.tasks =
		calloc((size_t)MAX_TASK_TARGETS * MAX_EVENTS, sizeof(*r.tasks));
	if (!r.slots || !r.tasks) {
		err = -ENOMEM;
		goto fail;
	}
	err = recount_refs(h, &r);
	if (err)
		goto fail;
	fix_events(pmu, c, &r);
	fix_tasks(pmu, c, &r);
	err = fix_slots(c, &r);
	if (!err)
		err = fix_links(c);
	if (err)
		goto fail;
	h->books->dirty = 0;
	free(r.slots);
	free(r.tasks);
	return;
fail:
	/* The books stay marked: the next change tries again. */
	h->books->dirty = UINT64_MAX; /* DIRTY_REPAIR */
	pr_err(pmu, "host domain %s: cannot reclaim what dead users left: %s",
	       h->path, strerror(-err));
	free(r.slots);
	free(r.tasks);
}
