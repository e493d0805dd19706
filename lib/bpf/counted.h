/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the BPF program counts, kept in step in the books and in the
 * program's maps: shared per-CPU events (one per distinct attr) and
 * cgroup slots, each refcounted by the kernel events that use it. The
 * caller serializes changes (the context lock; in host scope also the
 * domain's lock). Each step leaves the books able to say what a process
 * that died half-way left behind (host_fsck.c).
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

#endif
