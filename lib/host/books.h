/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The BPF backend's books: which attr each event index counts, which
 * cgroup each slot counts, and how many kernel events refer to each. In
 * process scope they are the context's own memory; in host scope they live
 * in a pinned mmapable map that every process of the domain changes under
 * the domain's lock (host.h), with the users who hold refs beside them.
 *
 * The books never point: indexes only, so that they mean the same in
 * every process that maps them.
 */
#ifndef SHPMU_BOOKS_H
#define SHPMU_BOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/prog/switch_counter.h"
#include "core/fifo.h"
#include "core/key.h"

#define BOOKS_MAGIC 0x73686d75626b7331ull /* "shmubks1" */
/* Contexts that can share one domain at once. */
#define MAX_USERS 1024

enum books_event_state {
	EVENT_FREE = 0,
	EVENT_MAKING = 1, /* being made: a maker that died leaves this */
	EVENT_LIVE = 2,
};

struct books_event {
	struct event_key key;
	uint32_t state; /* enum books_event_state */
	uint32_t refs;	/* kernel events on it, over every user */
	/* The CPUs it has a perf event on (those online when made). */
	uint64_t cpus[MAX_CPUS / 64];
};

struct books_slot {
	uint64_t id; /* the cgroup; 0: free */
	uint32_t refs;
	uint32_t next_free;
};

/* A counted task or process: the program's task target of that index. */
struct books_task {
	uint64_t start_ticks; /* the task's start (see struct task_link) */
	uint32_t id;	      /* tid or tgid; 0: a free entry */
	uint8_t kind;	      /* enum task_link_kind */
	uint8_t inherit;      /* TARGET_INHERIT: children forked count too */
	uint16_t pad;
	uint16_t refs[MAX_EVENTS]; /* kernel events on it, by event index */
};

/* A context that joined the domain (host scope). */
struct books_user {
	uint64_t id;	/* 0: a free entry */
	uint64_t token; /* its process's task_process_token() */
	int32_t pid;	/* as its process saw itself, for operators */
	uint32_t pad;
	uint64_t start_time; /* the process's, in clock ticks after boot */
	char comm[16];
};

struct books {
	uint64_t magic;
	uint32_t layout;    /* HOST_LAYOUT */
	uint32_t nr_cpus;   /* possible CPUs the maps have room for */
	uint32_t max_slots; /* size of slots[] */
	uint32_t slots_used;
	/* A user whose change of the books is under way: found set, the
	 * change was cut short (its process died) and fsck repairs it. */
	uint64_t dirty;
	uint64_t next_user_id;
	struct fifo free; /* freed slots, the longest freed first */
	uint32_t pad;
	struct books_event events[MAX_EVENTS];
	struct books_user users[MAX_USERS];
	/* Where the search for a free task entry starts: entries are taken
	 * round the table, so one freed is taken again last. */
	uint32_t next_task;
	uint32_t tasks_used; /* entries not free */
	uint32_t tasks_high; /* entries below this have served before */
	uint32_t pad2;
	struct books_task tasks[MAX_TASK_TARGETS];
	struct books_slot slots[]; /* max_slots */
};

/* The size of books with room for max_slots slots. */
static inline uint64_t books_size(uint32_t max_slots)
{
	return sizeof(struct books) +
	       (uint64_t)max_slots * sizeof(struct books_slot);
}

/* The slots a mapping of len bytes has room for. */
static inline uint32_t books_capacity(uint64_t len)
{
	return len < sizeof(struct books)
		       ? 0
		       : (uint32_t)((len - sizeof(struct books)) /
				    sizeof(struct books_slot));
}

void books_init(struct books *b, uint32_t nr_cpus, uint32_t max_slots);

/* The event index counting key, or MAX_EVENTS. */
uint32_t books_find_event(const struct books *b, const struct event_key *key);
/* A free event index, or MAX_EVENTS. */
uint32_t books_free_event(const struct books *b);

/*
 * The slot functions take max_slots from the caller, who knows the size
 * it mapped: in host scope another process can write b->max_slots and
 * b->slots_used at any time, and a slot index past the mapping must never
 * be touched whatever they say.
 */
/* The slot counting cgroup id, or FIFO_NONE. */
uint32_t books_find_slot(const struct books *b, uint32_t max_slots,
			 uint64_t id);
/* Takes a slot for a cgroup not counted yet: a fresh one while any are
 * left (*fresh), then the longest freed; FIFO_NONE when full. */
uint32_t books_take_slot(struct books *b, uint32_t max_slots, bool *fresh);
/* Gives slot s (< max_slots) back: to where it came from when it never
 * served (fresh), else to the tail of the free list. */
void books_give_slot(struct books *b, uint32_t max_slots, uint32_t s,
		     bool fresh);
/* How many slots have been handed out, within max_slots. */
uint32_t books_slots_used(const struct books *b, uint32_t max_slots);

/* The task entry for (kind, id, start, inherit), or NO_TARGET. */
uint32_t books_find_task(const struct books *b, uint32_t kind, uint32_t id,
			 uint64_t start_ticks, bool inherit);
/* A free task entry, or NO_TARGET when every one is taken; *reused says
 * whether it has served before. */
uint32_t books_take_task(struct books *b, bool *reused);
/* Whether task entry t has any ref. */
bool books_task_used(const struct books_task *t);

/* The ids of the users in the books, each read once, sorted into ids;
 * returns how many. */
size_t books_user_ids(const struct books *b, uint64_t ids[MAX_USERS]);
/* Whether id is among the n sorted ids. */
bool books_ids_have(const uint64_t *ids, size_t n, uint64_t id);

/* Threads every slot that counts nothing onto the free list (fsck). */
void books_rebuild_free(struct books *b, uint32_t max_slots);

static inline bool books_event_on_cpu(const struct books_event *e, int cpu)
{
	return cpu >= 0 && cpu < MAX_CPUS &&
	       (e->cpus[cpu / 64] >> (cpu % 64) & 1);
}

#endif
