/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the BPF program counts, kept in step in the books and in the
 * program's maps: shared per-CPU events (one per distinct attr) and
 * cgroup slots, each refcounted by the kernel events that use it. The
 * caller serializes changes (the context's create lock; in host
 * scope also the domain's lock). Each step leaves the books able to
 * say what a process that died half-way left behind (host_fsck.c).
 */
#ifndef SHPMU_COUNTED_H
#define SHPMU_COUNTED_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/counter_prog.h"

struct shpmu;
struct books;
struct event_key;
struct backend_cost;

struct counted {
	struct counter_prog prog;
	struct books *books;
	/* Process scope: the context holds its events' fds (the stats
	 * count them); host scope: the pinned map alone holds them. */
	bool keep_fds;
	int *fds[MAX_EVENTS]; /* keep_fds: by CPU, -1 for none */
	/* This context's kernel events on each event index. */
	uint32_t local[MAX_EVENTS];
};

/* How many cgroups the program has room for on nr_cpus CPUs: fewer on
 * big machines, whose per-CPU totals cost more. */
uint32_t counted_max_slots(uint32_t nr_cpus);

/* The index of key's shared event, made now on every online CPU if it is
 * new; one more ref on it. -ENOSPC past MAX_EVENTS attrs. */
int counted_get_event(struct shpmu *pmu, struct counted *c,
		      const struct event_key *key, uint32_t *e,
		      struct backend_cost *cost);
/* One ref fewer; the last takes the event out. */
void counted_put_event(struct shpmu *pmu, struct counted *c, uint32_t e,
		       struct backend_cost *cost);

/* The slot counting cgroup id, counted from now if it is new; one more
 * ref on it. -ENOSPC when every slot is taken. */
int counted_get_slot(struct shpmu *pmu, struct counted *c, uint64_t id,
		     uint32_t *s);
void counted_put_slot(struct counted *c, uint32_t s);

/* Where a kernel event's ref is kept for a task target t (the books'
 * tasks[t]): apart from cgroup slots, in the same number. */
#define TASK_REF 0x80000000u
#define NO_SLOT	 UINT32_MAX
static inline bool ref_is_task(uint32_t s)
{
	return s != NO_SLOT && (s & TASK_REF);
}

/* The task target counting (kind, id) for the task that started at
 * start_ticks (with its children when inherit) for event e, counted from
 * now if it is new; one more ref on it. -ENOSPC when every target is
 * taken, or when the task is already counted through inheritance. */
int counted_get_task(struct shpmu *pmu, struct counted *c, uint32_t kind,
		     uint32_t id, uint64_t start_ticks, bool inherit,
		     uint32_t e, uint32_t *t);
void counted_put_task(struct shpmu *pmu, struct counted *c, uint32_t t,
		      uint32_t e);
/* Stops counting task target t and frees it whatever its refs. */
void counted_free_task(struct shpmu *pmu, struct counted *c, uint32_t t);

/* Takes event e out whatever its refs (fsck, and the last put). */
void counted_drop_event(struct shpmu *pmu, struct counted *c, uint32_t e);
/* Stops counting slot s's cgroup and frees it whatever its refs. */
void counted_free_slot(struct counted *c, uint32_t s);

/* In a forked child, whose maps and books are its parent's: lets go of
 * this context's part of event e (its fds) and changes nothing shared. */
void counted_forget_event(struct shpmu *pmu, struct counted *c, uint32_t e,
			  struct backend_cost *cost);

/* Closes whatever fds the context still keeps (at its end). */
void counted_release(struct shpmu *pmu, struct counted *c);

/*
 * The bookkeeping the calls above do around the kernel's part: the books
 * (memory, shared in host scope) and this context's refs, computed
 * without a syscall, so that it can be tested on books in any memory.
 */
struct books_event;
struct books_task;

/* How the program must count key at a switch (enum counter_kind): see
 * take_delta() in prog/deltas.bpf.h. */
uint8_t counted_counter_kind(const struct event_key *key);

/* Where key is counted: its live event's index, else a free index to
 * make it at (*make), else MAX_EVENTS (every index taken). */
uint32_t counted_event_index(const struct books *b, const struct event_key *key,
			     bool *make);
/* Event be, made anew for key: being made, on no CPU yet. */
void counted_event_making(struct books_event *be, const struct event_key *key);
/* Event be has its perf event on cpu (< MAX_CPUS). */
void counted_event_opened(struct books_event *be, int cpu);
/* One more ref on event e, in the books and in local (this context's
 * refs): true when it is this context's first. */
bool counted_hold_event(struct books *b, uint32_t local[MAX_EVENTS],
			uint32_t e);
/* One ref fewer on event e: what that leaves, as flags. */
#define COUNTED_LOCAL_LAST 1u /* this context has no ref left */
#define COUNTED_LAST	   2u /* no context has: the event goes */
unsigned int counted_release_event(struct books *b, uint32_t local[MAX_EVENTS],
				   uint32_t e);

/* The slot counting cgroup id with one more ref on it, or FIFO_NONE. */
uint32_t counted_hold_slot(struct books *b, uint32_t max_slots, uint64_t id);
/* Whether the next slot claimed is one freed before: a switch may still
 * add to it, so the caller flushes every CPU before claiming it. */
bool counted_slot_recycles(const struct books *b, uint32_t max_slots);
/* Takes a slot for id, no refs on it yet (*fresh: it never served), or
 * FIFO_NONE when every slot is taken. */
uint32_t counted_claim_slot(struct books *b, uint32_t max_slots, uint64_t id,
			    bool *fresh);
/* After the map was told of claimed slot s: its first ref when it
 * counts, else it goes back where it came from. */
void counted_slot_counted(struct books *b, uint32_t max_slots, uint32_t s,
			  bool fresh, bool counted);
/* One ref fewer on slot s: true when it was the last (the caller stops
 * counting it and frees it). */
bool counted_release_slot(struct books *b, uint32_t s);

/* The entry counting task (its kind, id, start and inherit), else a
 * free one taken for it (*fresh; *reused: it served before, so the
 * caller flushes every CPU first), else NO_TARGET. */
uint32_t counted_task_for(struct books *b, const struct books_task *task,
			  bool *fresh, bool *reused);
/* Entry t, taken, holds task now; or is free again. */
void counted_enter_task(struct books *b, uint32_t t,
			const struct books_task *task);
void counted_leave_task(struct books *b, uint32_t t);
/* One ref fewer of event e on entry t: what that leaves. */
enum counted_task_left {
	TASK_HELD,	 /* e still has refs there */
	TASK_EVENT_GONE, /* e has none (its total goes), others have */
	TASK_GONE,	 /* no event has: the entry goes */
};
enum counted_task_left counted_release_task(struct books *b, uint32_t t,
					    uint32_t e);

#endif
