// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "bpf/counted.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/explain.h"
#include "core/hw_pmus.h"
#include "core/log.h"
#include "host/books.h"
#include "host/host_step.h"
#include "sys/sys.h"

/* The bookkeeping: the books and this context's refs, in memory. Nothing
 * here calls the kernel; the functions further down do, around these. */

uint8_t counted_counter_kind(const struct event_key *key)
{
	if (event_key_is_plain_clock(key))
		return KIND_CLOCK;
	if (key->type != PERF_TYPE_SOFTWARE)
		return KIND_READ;
	/* The kernel counts switches in kernel mode only. */
	if (key->bits & KEY_EXCLUDE_KERNEL)
		return KIND_READ;
	if (key->config == PERF_COUNT_SW_CONTEXT_SWITCHES)
		return KIND_CONTEXT_SWITCHES;
	if (key->config == PERF_COUNT_SW_CGROUP_SWITCHES)
		return KIND_CGROUP_SWITCHES;
	return KIND_READ;
}

uint32_t counted_event_index(const struct books *b, const struct event_key *key,
			     bool *make)
{
	uint32_t e = books_find_event(b, key);

	*make = e == MAX_EVENTS;
	return *make ? books_free_event(b) : e;
}

void counted_event_making(struct books_event *be, const struct event_key *key)
{
	memset(be, 0, sizeof(*be));
	be->key = *key;
	be->state = EVENT_MAKING;
}

void counted_event_opened(struct books_event *be, int cpu)
{
	be->cpus[cpu / 64] |= 1ull << (cpu % 64);
}

bool counted_hold_event(struct books *b, uint32_t local[MAX_EVENTS], uint32_t e)
{
	b->events[e].refs++;
	return local[e]++ == 0;
}

unsigned int counted_release_event(struct books *b, uint32_t local[MAX_EVENTS],
				   uint32_t e)
{
	unsigned int left = 0;

	if (--local[e] == 0)
		left |= COUNTED_LOCAL_LAST;
	if (--b->events[e].refs == 0)
		left |= COUNTED_LAST;
	return left;
}

uint32_t counted_hold_slot(struct books *b, uint32_t max_slots, uint64_t id)
{
	uint32_t s = books_find_slot(b, max_slots, id);

	if (s != FIFO_NONE)
		b->slots[s].refs++;
	return s;
}

bool counted_slot_recycles(const struct books *b, uint32_t max_slots)
{
	return b->slots_used >= max_slots && !fifo_empty(&b->free);
}

uint32_t counted_claim_slot(struct books *b, uint32_t max_slots, uint64_t id,
			    bool *fresh)
{
	uint32_t s = books_take_slot(b, max_slots, fresh);

	if (s != FIFO_NONE) {
		b->slots[s].id = id;
		b->slots[s].refs = 0;
	}
	return s;
}

void counted_slot_counted(struct books *b, uint32_t max_slots, uint32_t s,
			  bool fresh, bool counted)
{
	if (counted)
		b->slots[s].refs = 1;
	else
		books_give_slot(b, max_slots, s, fresh);
}

bool counted_release_slot(struct books *b, uint32_t s)
{
	return --b->slots[s].refs == 0;
}

uint32_t counted_task_for(struct books *b, const struct books_task *task,
			  bool *fresh, bool *reused)
{
	uint32_t t = books_find_task(b, task->kind, task->id, task->start_ticks,
				     task->inherit);

	*reused = false;
	*fresh = t == NO_TARGET;
	return *fresh ? books_take_task(b, reused) : t;
}

void counted_enter_task(struct books *b, uint32_t t,
			const struct books_task *task)
{
	b->tasks[t] = *task;
	b->tasks_used++;
}

void counted_leave_task(struct books *b, uint32_t t)
{
	memset(&b->tasks[t], 0, sizeof(b->tasks[t]));
	b->tasks_used--;
}

enum counted_task_left counted_release_task(struct books *b, uint32_t t,
					    uint32_t e)
{
	struct books_task *bt = &b->tasks[t];

	if (--bt->refs[e])
		return TASK_HELD;
	return books_task_used(bt) ? TASK_EVENT_GONE : TASK_GONE;
}

/* The kernel's part, around the bookkeeping above. */

/* Opens key on cpu, counting from now, and puts it in as event e. The fd
 * is kept in *fd where the context keeps its events' fds, else closed:
 * the map holds the event. */
static int open_on_cpu(struct shpmu *pmu, struct counted *c, uint32_t e,
		       const void *attr, int cpu, int *kept)
{
	_Alignas(struct perf_event_attr) unsigned char
		on_cpu[SHPMU_ATTR_SIZE_KNOWN];
	struct counter_value base;
	uint64_t v[3];
	int fd, err;

	/* On a hybrid machine a generic event names its CPU's PMU. */
	memcpy(on_cpu, attr, sizeof(on_cpu));
	hw_attr_for(hw_pmus_known(pmu), (struct perf_event_attr *)on_cpu, cpu,
		    -1);
	fd = sys_perf_event_open(pmu, (struct perf_event_attr *)on_cpu, -1, cpu,
				 -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0) {
		char why[384];
		const struct perf_event_attr *a =
			(const struct perf_event_attr *)on_cpu;

		explain_open_error(pmu, fd, a, -1, cpu, -1,
				   PERF_FLAG_FD_CLOEXEC, why, sizeof(why));
		pr_err(pmu,
		       "BPF backend: perf_event_open(type %u, config %#llx) "
		       "on cpu %d: %s: %s",
		       a->type, (unsigned long long)a->config, cpu,
		       strerror(-fd), why);
		return fd;
	}
	if (sys_read(pmu, fd, v, sizeof(v)) != sizeof(v)) {
		pr_err(pmu, "BPF backend: cannot read the new event on cpu %d",
		       cpu);
		sys_close(pmu, fd);
		return -EIO;
	}
	base = (struct counter_value){v[0], v[1], v[2]};
	err = counter_prog_set_event(&c->prog, e, cpu, fd, &base);
	if (err || !c->keep_fds)
		sys_close(pmu, fd);
	else
		*kept = fd;
	return err;
}

/* Opens key on every online CPU as event e. The books say it is being
 * made first, so that what a maker that dies half-way put in is found. */
static int make_event(struct shpmu *pmu, struct counted *c, uint32_t e,
		      const struct event_key *key, struct backend_cost *cost)
{
	struct books_event *be = &c->books->events[e];
	unsigned char attr[SHPMU_ATTR_SIZE_KNOWN];
	int err, i;

	/* CPUs may have come and gone since the program started. */
	err = counter_prog_refresh_online(pmu, &c->prog);
	if (err)
		return err;
	if (c->keep_fds) {
		c->fds[e] = malloc(c->prog.nr_cpus * sizeof(int));
		if (!c->fds[e])
			return -ENOMEM;
		for (uint32_t cpu = 0; cpu < c->prog.nr_cpus; cpu++)
			c->fds[e][cpu] = -1;
	}
	counted_event_making(be, key);
	host_step();
	counter_prog_set_kind(&c->prog, e, counted_counter_kind(key));
	key_to_attr(key,
		    PERF_FORMAT_TOTAL_TIME_ENABLED |
			    PERF_FORMAT_TOTAL_TIME_RUNNING,
		    attr);
	((struct perf_event_attr *)attr)->disabled = 0;
	for (i = 0; i < c->prog.nonline; i++) {
		int cpu = c->prog.online[i];

		if ((uint32_t)cpu >= c->prog.nr_cpus) {
			err = -EINVAL;
			break;
		}
		err = open_on_cpu(pmu, c, e, attr, cpu,
				  c->keep_fds ? &c->fds[e][cpu] : NULL);
		if (err)
			break;
		counted_event_opened(be, cpu);
		cost->fds += c->keep_fds;
		host_step();
	}
	if (err) {
		counted_drop_event(pmu, c, e);
		cost->fds = 0;
		return err;
	}
	counter_prog_use_event(&c->prog, e);
	be->state = EVENT_LIVE;
	return 0;
}

int counted_get_event(struct shpmu *pmu, struct counted *c,
		      const struct event_key *key, uint32_t *out,
		      struct backend_cost *cost)
{
	bool make;
	uint32_t e = counted_event_index(c->books, key, &make);
	int err;

	if (e == MAX_EVENTS) {
		pr_err(pmu,
		       "the BPF backend counts at most %d distinct events at "
		       "once",
		       MAX_EVENTS);
		return -ENOSPC;
	}
	if (make) {
		err = make_event(pmu, c, e, key, cost);
		if (err)
			return err;
	}
	host_step();
	if (counted_hold_event(c->books, c->local, e))
		cost->events++;
	*out = e;
	return 0;
}

/* Closes the fds this context keeps of event e. */
static void close_kept(struct shpmu *pmu, struct counted *c, uint32_t e,
		       struct backend_cost *cost)
{
	if (!c->fds[e])
		return;
	for (uint32_t cpu = 0; cpu < c->prog.nr_cpus; cpu++)
		if (c->fds[e][cpu] >= 0) {
			sys_close(pmu, c->fds[e][cpu]);
			if (cost)
				cost->fds++;
		}
	free(c->fds[e]);
	c->fds[e] = NULL;
}

void counted_drop_event(struct shpmu *pmu, struct counted *c, uint32_t e)
{
	struct books_event *be = &c->books->events[e];

	counter_prog_clear_event(&c->prog, e);
	host_step();
	/* A switch that read the event just before may still write its
	 * reading back; the index must not serve another attr before that
	 * is done. */
	counter_prog_flush(pmu, &c->prog);
	close_kept(pmu, c, e, NULL);
	memset(be, 0, sizeof(*be));
}

void counted_put_event(struct shpmu *pmu, struct counted *c, uint32_t e,
		       struct backend_cost *cost)
{
	unsigned int left = counted_release_event(c->books, c->local, e);

	if (left & COUNTED_LOCAL_LAST)
		cost->events++;
	if (!(left & COUNTED_LAST))
		return;
	close_kept(pmu, c, e, cost);
	counted_drop_event(pmu, c, e);
}

void counted_release(struct shpmu *pmu, struct counted *c)
{
	for (uint32_t e = 0; e < MAX_EVENTS; e++)
		close_kept(pmu, c, e, NULL);
}

void counted_forget_event(struct shpmu *pmu, struct counted *c, uint32_t e,
			  struct backend_cost *cost)
{
	if (--c->local[e])
		return;
	cost->events++;
	close_kept(pmu, c, e, cost);
}

int counted_get_slot(struct shpmu *pmu, struct counted *c, uint64_t id,
		     uint32_t *out)
{
	struct books *b = c->books;
	uint32_t s = counted_hold_slot(b, c->prog.max_slots, id);
	bool fresh;
	int err;

	if (s != FIFO_NONE) {
		*out = s;
		return 0;
	}
	if (counted_slot_recycles(b, c->prog.max_slots)) {
		/* A switch that looked the slot up before it was freed may
		 * still be adding to it on some CPU: a flush everywhere
		 * waits that out. */
		err = counter_prog_flush(pmu, &c->prog);
		if (err)
			return err;
	}
	/* In the books before the map: what a process that dies after
	 * this left in the map, the books know of. */
	s = counted_claim_slot(b, c->prog.max_slots, id, &fresh);
	if (s == FIFO_NONE) {
		pr_err(pmu,
		       "the BPF backend counts at most %u cgroups on this "
		       "machine",
		       b->max_slots);
		return -ENOSPC;
	}
	host_step();
	err = counter_prog_count_cgroup(&c->prog, id, s);
	counted_slot_counted(b, c->prog.max_slots, s, fresh, !err);
	if (err)
		return err;
	*out = s;
	return 0;
}

void counted_free_slot(struct counted *c, uint32_t s)
{
	counter_prog_uncount_cgroup(&c->prog, c->books->slots[s].id);
	host_step();
	books_give_slot(c->books, c->prog.max_slots, s, false);
}

void counted_put_slot(struct counted *c, uint32_t s)
{
	if (counted_release_slot(c->books, s))
		counted_free_slot(c, s);
}

/* The entry's links and totals, made in that order (the program looks
 * the totals up through a link). */
static int count_task(struct shpmu *pmu, struct counted *c, uint32_t t,
		      uint32_t e, const struct books_task *fresh)
{
	/* What this process wrote, not what the shared books say now:
	 * another process may have rewritten the entry meanwhile. */
	const struct books_task *bt = fresh;
	int err = counter_prog_add_task_total(&c->prog, t, e);

	if (err || !fresh)
		return err;
	host_step();
	err = counter_prog_link_task(&c->prog, bt->kind, bt->id,
				     bt->start_ticks, bt->inherit, t);
	if (err == -EBUSY) {
		pr_info(pmu,
			"the BPF backend counts %s %u through the inherit "
			"target of its parent already, and cannot count it "
			"on its own too",
			bt->kind == LINK_TID ? "task" : "process", bt->id);
		err = -ENOSPC;
	}
	if (err)
		counter_prog_del_task_total(&c->prog, t, e);
	return err;
}

/* Frees entry t, unlinked as as says: what this process wrote there,
 * where it knows that better than the shared books. */
static void free_task_as(struct counted *c, uint32_t t,
			 const struct books_task *as)
{
	counter_prog_unlink_target(&c->prog, as->kind, as->id, t, as->inherit);
	host_step();
	for (uint32_t e = 0; e < MAX_EVENTS; e++)
		counter_prog_del_task_total(&c->prog, t, e);
	counted_leave_task(c->books, t);
}

int counted_get_task(struct shpmu *pmu, struct counted *c, uint32_t kind,
		     uint32_t id, uint64_t start_ticks, bool inherit,
		     uint32_t e, uint32_t *out)
{
	struct books *b = c->books;
	const struct books_task mine = {.start_ticks = start_ticks,
					.id = id,
					.kind = (uint8_t)kind,
					.inherit = inherit};
	bool fresh, reused;
	uint32_t t = counted_task_for(b, &mine, &fresh, &reused);
	int err;

	if (fresh) {
		if (t == NO_TARGET) {
			pr_err(pmu,
			       "the BPF backend counts at most %d tasks and "
			       "processes at once",
			       MAX_TASK_TARGETS);
			return -ENOSPC;
		}
		/* A CPU may still hold the entry's index from its last
		 * use, as what its running task accrues to: a flush
		 * everywhere settles that first. */
		if (reused) {
			err = counter_prog_flush(pmu, &c->prog);
			if (err)
				return err;
		}
		counted_enter_task(b, t, &mine);
		host_step();
	}
	if (!b->tasks[t].refs[e]) {
		err = count_task(pmu, c, t, e, fresh ? &mine : NULL);
		if (err) {
			if (fresh)
				free_task_as(c, t, &mine);
			return err;
		}
	}
	b->tasks[t].refs[e]++;
	*out = t;
	return 0;
}

void counted_free_task(struct shpmu *pmu, struct counted *c, uint32_t t)
{
	struct books_task as = c->books->tasks[t];

	(void)pmu;
	free_task_as(c, t, &as);
}

void counted_put_task(struct shpmu *pmu, struct counted *c, uint32_t t,
		      uint32_t e)
{
	switch (counted_release_task(c->books, t, e)) {
	case TASK_HELD:
		break;
	case TASK_EVENT_GONE:
		counter_prog_del_task_total(&c->prog, t, e);
		break;
	case TASK_GONE:
		counted_free_task(pmu, c, t);
		break;
	}
}

/* Per-CPU totals cost MAX_EVENTS * 24 bytes per slot per possible CPU:
 * big machines get fewer slots, within these bounds. */
#define TOTALS_BUDGET (64u << 20)
#define MIN_SLOTS     1024u

uint32_t shpmu__bpf_max_slots;

uint32_t counted_max_slots(uint32_t nr_cpus)
{
	uint32_t n = TOTALS_BUDGET /
		     (nr_cpus * (uint32_t)sizeof(struct slot_totals));

	if (shpmu__bpf_max_slots)
		return shpmu__bpf_max_slots;
	if (n > MAX_SLOTS)
		n = MAX_SLOTS;
	return n < MIN_SLOTS ? MIN_SLOTS : n;
}
