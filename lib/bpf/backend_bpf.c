// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The BPF backend: one perf event per CPU per distinct attr counts every
 * cgroup, CPU, task and process target; the counter program credits each
 * CPU's deltas to the counted cgroups and task targets of the task that
 * ran (counted.c keeps what it counts). A kernel event is then (event
 * index, slot): its sources are the slot's per-CPU totals of that event,
 * for a CPU target the event's raw reading on each CPU, and for a task or
 * process one total (TASK_REF | its task target). They always count; a
 * read brings its CPUs up to now first (every CPU for a task, which may
 * run on any), a cached read takes them as they are.
 *
 * In process scope the program and the books are the context's own; in
 * host scope they are a domain's (host.h), and every change of the books
 * happens under the domain's lock. Opens and closes run under the
 * context's create lock.
 */
#include "bpf/backend_bpf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/counted.h"
#include "core/backend.h"
#include "core/env.h"
#include "core/kevent.h"
#include "core/log.h"
#include "core/process.h"
#include "host/books.h"
#include "host/host.h"
#include "host/host_step.h"

bool shpmu__bpf_no_ipi_hook;

struct bpf_backend {
	struct backend base;
	struct counted counted;
	struct host *host; /* host scope; NULL in process scope */
};

/* Where a kernel event is counted, in its priv word. */
static uint32_t event_of(const struct kevent *ev)
{
	return (uint32_t)(ev->priv.word >> 32);
}

static uint32_t slot_of(const struct kevent *ev)
{
	return (uint32_t)ev->priv.word;
}

static struct bpf_backend *bpf_of(const struct kevent *ev)
{
	return (struct bpf_backend *)ev->backend;
}

static int begin(struct shpmu *pmu, struct bpf_backend *b)
{
	return b->host ? host_begin(pmu, b->host, &b->counted) : 0;
}

static void end(struct bpf_backend *b)
{
	if (b->host)
		host_end(b->host, &b->counted);
}

/* The task or process ev counts, as the program names it. */
struct task_ident {
	uint32_t kind; /* enum task_link_kind */
	uint32_t id;
	uint64_t start_ticks;
	bool inherit;
};

static int task_ident(const struct kevent *ev, struct task_ident *out)
{
	const struct target_key *t = &ev->key.target;

	out->kind = t->kind == SHPMU_TARGET_TASK ? LINK_TID : LINK_TGID;
	out->id = (uint32_t)t->pid;
	out->inherit = ev->key.events[0].bits & KEY_INHERIT;
	return process_stat(t->pid, NULL, &out->start_ticks);
}

/* One per-CPU event serves a task target with any inherit bits: the
 * program does the inheriting. */
static struct event_key cpu_event_key(const struct kevent *ev)
{
	struct event_key key = ev->key.events[0];

	key.bits &= ~(uint32_t)(KEY_INHERIT | KEY_INHERIT_THREAD |
				KEY_INHERIT_STAT);
	return key;
}

/* The slot (or task ref) counting ev's target, one more ref on it. */
static int get_target(struct shpmu *pmu, struct counted *c,
		      const struct kevent *ev, uint32_t e, uint32_t *s)
{
	const struct target_key *t = &ev->key.target;
	struct task_ident id;
	int err;

	*s = NO_SLOT;
	if (t->kind == SHPMU_TARGET_CGROUP)
		return counted_get_slot(pmu, c, t->cgroup_id, s);
	if (!target_is_task(t))
		return 0;
	err = task_ident(ev, &id);
	if (err) {
		pr_err(pmu, "BPF backend: no such %s: %d",
		       id.kind == LINK_TID ? "task" : "process", t->pid);
		return err;
	}
	err = counted_get_task(pmu, c, id.kind, id.id, id.start_ticks,
			       id.inherit, e, s);
	*s |= TASK_REF;
	return err;
}

static void put_target(struct shpmu *pmu, struct counted *c, uint32_t e,
		       uint32_t s)
{
	if (ref_is_task(s))
		counted_put_task(pmu, c, s & ~TASK_REF, e);
	else if (s != NO_SLOT)
		counted_put_slot(c, s);
}

/* Takes event e and, for a cgroup, its slot (a task target for a task),
 * and records the ref. */
static int take(struct shpmu *pmu, struct bpf_backend *b, struct kevent *ev,
		struct backend_cost *cost)
{
	struct counted *c = &b->counted;
	struct event_key key = cpu_event_key(ev);
	uint32_t e, s = NO_SLOT;
	int err;

	err = counted_get_event(pmu, c, &key, &e, cost);
	if (err)
		return err;
	err = get_target(pmu, c, ev, e, &s);
	if (err)
		s = NO_SLOT;
	if (!err && b->host) {
		host_step();
		err = host_ref(pmu, b->host, e, s, 1);
	}
	if (err) {
		put_target(pmu, c, e, s);
		counted_put_event(pmu, c, e, cost);
		/* Nothing was made: nothing costs. */
		cost->events = cost->fds = 0;
		return err;
	}
	ev->priv.word = (uint64_t)e << 32 | s;
	return 0;
}

/* A target of one counting attr: counted in its slot (a cgroup), its task
 * target (a task or process) or the raw readings (a CPU), on the shared
 * event of its attr (-ENOSPC past either's room). */
static int bpf_open(struct shpmu *pmu, struct kevent *ev, int cgroup_fd,
		    struct backend_cost *cost)
{
	struct bpf_backend *b = bpf_of(ev);
	int err;

	(void)cgroup_fd;
	if (!bpf_backend_counts(&ev->key))
		return -EOPNOTSUPP;
	/* One attr, and after its count the reading's bound. */
	ev->nvals = KVAL_COUNT + 2;
	err = begin(pmu, b);
	if (err)
		return err;
	err = take(pmu, b, ev, cost);
	end(b);
	return err;
}

static void bpf_close(struct shpmu *pmu, struct kevent *ev,
		      struct backend_cost *cost)
{
	struct bpf_backend *b = bpf_of(ev);
	uint32_t e = event_of(ev), s = slot_of(ev);

	/* A forked child's maps and books are its parent's; books that do
	 * not check out are not touched (the domain is to be removed). */
	if (env_of(pmu)->forked || begin(pmu, b)) {
		/* (Host scope: the domain's lock not had in time, or books
		 * that do not check out. The ref stays in the domain until
		 * this context leaves, whose repair drops it.) */
		if (b->host && !env_of(pmu)->forked)
			host_ref_forgotten(b->host, s);
		counted_forget_event(pmu, &b->counted, e, cost);
		return;
	}
	if (b->host) {
		host_ref(pmu, b->host, e, s, -1);
		host_step();
	}
	put_target(pmu, &b->counted, e, s);
	counted_put_event(pmu, &b->counted, e, cost);
	end(b);
}

/* One value as the core takes it, with how far below the truth it may be
 * (the reading's bound: see kevent_bound_index). */
static void put_value(const struct counter_value *v, uint64_t unattributed,
		      uint64_t *to)
{
	to[KVAL_ENABLED] = v->enabled;
	to[KVAL_RUNNING] = v->running;
	to[KVAL_COUNT] = v->counter;
	to[KVAL_COUNT + 1] = unattributed;
}

/* A task target's one total: it may have run on any CPU, so what went
 * unattributed on every CPU bounds it. */
static int read_task(const struct counter_prog *p, uint32_t e, uint32_t t,
		     uint64_t *vals)
{
	struct counter_value v, lost;
	uint64_t unattributed = 0;
	int err = counter_prog_task_total(p, t, e, &v);

	for (uint32_t cpu = 0; !err && cpu < p->nr_cpus; cpu++) {
		err = counter_prog_unattributed(p, (int)cpu, e, &lost);
		unattributed += lost.counter;
	}
	if (!err)
		put_value(&v, unattributed, vals);
	return err;
}

static int bpf_read(struct shpmu *pmu, const struct kevent *ev, uint32_t first,
		    uint32_t n, bool fresh, uint64_t *vals)
{
	struct bpf_backend *b = bpf_of(ev);
	struct counter_prog *p = &b->counted.prog;
	uint32_t slot = slot_of(ev), e = event_of(ev);
	int err = 0;

	if (fresh && ref_is_task(slot))
		err = counter_prog_flush(pmu, p);
	else if (fresh)
		err = counter_prog_flush_cpus(pmu, p, ev->cpus + first, n);
	if (err)
		return err;
	if (ref_is_task(slot))
		return read_task(p, e, slot & ~TASK_REF, vals);
	for (uint32_t i = 0; i < n; i++) {
		int cpu = ev->cpus[first + i];
		struct counter_value v = {0};
		uint64_t unattributed = 0;

		/* A CPU the event was not made on (it came online later)
		 * counts nothing. */
		if (books_event_on_cpu(&b->counted.books->events[e], cpu))
			err = counter_prog_value(p, cpu, e, slot, &v,
						 &unattributed);
		else if (cpu < 0 || (uint32_t)cpu >= p->nr_cpus)
			err = -EINVAL;
		if (err)
			return err;
		put_value(&v, unattributed, vals + (size_t)i * ev->nvals);
	}
	return 0;
}

static int bpf_flush(struct shpmu *pmu, struct backend *backend)
{
	return counter_prog_flush(
		pmu, &((struct bpf_backend *)backend)->counted.prog);
}

/* The books' live events, under the domain's lock in host scope: every
 * member's. What other processes wrote there is only counted, never
 * followed: a key is data, the CPUs bounded by the books' own. */
static int bpf_shared_attrs(struct shpmu *pmu, struct backend *base,
			    void (*cb)(const struct event_key *key,
				       uint32_t refs, int cpu, void *arg),
			    void *arg)
{
	struct bpf_backend *b = (struct bpf_backend *)base;
	const struct books *books = b->counted.books;
	uint32_t ncpus;
	int err = begin(pmu, b);

	if (err)
		return err;
	ncpus = books->nr_cpus < MAX_CPUS ? books->nr_cpus : MAX_CPUS;
	for (uint32_t e = 0; e < MAX_EVENTS; e++) {
		const struct books_event *be = &books->events[e];
		struct event_key key = be->key;

		if (be->state != EVENT_LIVE)
			continue;
		for (uint32_t cpu = 0; cpu < ncpus; cpu++)
			if (be->cpus[cpu / 64] & (1ull << (cpu % 64)))
				cb(&key, be->refs, (int)cpu, arg);
	}
	end(b);
	return 0;
}

static int bpf_unattributed(struct shpmu *pmu, const struct kevent *ev, int cpu,
			    struct shpmu_count *out)
{
	struct counter_prog *p = &bpf_of(ev)->counted.prog;
	uint32_t e = event_of(ev);
	struct counter_value v;
	int err = 0;

	(void)pmu;
	if (cpu < -1 || cpu >= (int)p->nr_cpus)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	for (int c = cpu < 0 ? 0 : cpu; !err && c < (int)p->nr_cpus; c++) {
		err = counter_prog_unattributed(p, c, e, &v);
		out->value += v.counter;
		out->time_enabled += v.enabled;
		out->time_running += v.running;
		if (cpu >= 0)
			break;
	}
	return err;
}

static void bpf_unseen(const struct backend *backend, uint64_t *switches,
		       uint64_t *unattributed_ns)
{
	const struct counter_prog *p =
		&((const struct bpf_backend *)backend)->counted.prog;

	*switches = counter_prog_unseen(p);
	*unattributed_ns = 0;
	for (uint32_t cpu = 0; cpu < p->nr_cpus; cpu++) {
		uint64_t unseen, ns;

		counter_prog_cpu_unseen(p, (int)cpu, &unseen, &ns);
		*unattributed_ns += ns;
	}
}

static const struct backend_ops bpf_ops = {
	.open = bpf_open,
	.close = bpf_close,
	.read = bpf_read,
	.flush = bpf_flush,
	.shared_attrs = bpf_shared_attrs,
	.unattributed = bpf_unattributed,
	.unseen = bpf_unseen,
};

static struct bpf_backend *backend_alloc(void)
{
	struct bpf_backend *b = calloc(1, sizeof(*b));

	if (b)
		b->base.ops = &bpf_ops;
	return b;
}

int bpf_backend_new(struct shpmu *pmu, struct backend **out)
{
	struct bpf_backend *b = backend_alloc();
	int cpus = counter_prog_cpus(pmu), err;
	uint32_t max_slots;

	if (!b)
		return -ENOMEM;
	if (cpus < 0) {
		free(b);
		return cpus;
	}
	max_slots = counted_max_slots((uint32_t)cpus);
	b->counted.keep_fds = true;
	b->counted.books = calloc(1, books_size(max_slots));
	if (!b->counted.books) {
		free(b);
		return -ENOMEM;
	}
	books_init(b->counted.books, (uint32_t)cpus, max_slots);
	err = counter_prog_load(pmu, max_slots, !shpmu__bpf_no_ipi_hook,
				&b->counted.prog);
	if (err) {
		free(b->counted.books);
		free(b);
		return err;
	}
	*out = &b->base;
	return 0;
}

int bpf_backend_join(struct shpmu *pmu, const char *bpffs_dir,
		     const char *domain, struct backend **out)
{
	struct bpf_backend *b = backend_alloc();
	int err;

	if (!b)
		return -ENOMEM;
	err = host_join(pmu, bpffs_dir, domain, !shpmu__bpf_no_ipi_hook,
			&b->counted, &b->host);
	if (err) {
		free(b);
		return err;
	}
	*out = &b->base;
	return 0;
}

void bpf_backend_free(struct shpmu *pmu, struct backend *backend)
{
	struct bpf_backend *b = (struct bpf_backend *)backend;

	if (!b)
		return;
	if (b->host) {
		host_leave(pmu, b->host, &b->counted);
	} else {
		/* Every kernel event is closed: nothing is counted. */
		counter_prog_unload(&b->counted.prog);
		free(b->counted.books);
	}
	counted_release(pmu, &b->counted);
	free(b);
}

void bpf_backend_counters(const struct backend *backend,
			  struct bpf_backend_counters *out)
{
	const struct counter_prog *p =
		&((const struct bpf_backend *)backend)->counted.prog;

	out->unseen = counter_prog_unseen(p);
	out->unattributed_settles = counter_prog_unattributed_settles(p);
	out->moves = counter_prog_moves(p);
	out->task_map_bytes = counter_prog_task_bytes(p);
	out->children_lost = counter_prog_children_lost(p);
	out->sees_tick = counter_prog_sees_tick(p);
}

bool bpf_backend_counts(const struct share_key *key)
{
	const struct target_key *t = &key->target;
	uint32_t exec_bits = KEY_ENABLE_ON_EXEC | KEY_REMOVE_ON_EXEC;

	if (key->nevents != 1)
		return false;
	/* A pinned event in error state must read as an error, and an
	 * exclusive one stay alone: only classic fds show either. */
	if (key->events[0].bits & (KEY_PINNED | KEY_EXCLUSIVE))
		return false;
	if (t->kind == SHPMU_TARGET_CGROUP || t->kind == SHPMU_TARGET_CPU)
		return true;
	/* The program counts a task wherever it runs, from the moment it
	 * is asked: not on one CPU, nor from an exec. */
	return target_is_task(t) && t->cpu == -1 &&
	       !(key->events[0].bits & exec_bits);
}

bool bpf_backend_is_host(const struct backend *backend)
{
	return backend && ((const struct bpf_backend *)backend)->host;
}
