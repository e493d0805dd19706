// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The BPF backend: one perf event per CPU per distinct attr counts every
 * cgroup and CPU target; the counter program credits each CPU's deltas to
 * the counted cgroups of the task that ran (counted.c keeps what it
 * counts). A kernel event is then (event index, slot): its sources are
 * the slot's per-CPU totals of that event, or for a CPU target the
 * event's raw reading on each CPU. They always count; a read brings its
 * CPUs up to now first, a cached read takes them as they are.
 *
 * In process scope the program and the books are the context's own; in
 * host scope they are a domain's (host.h), and every change of the books
 * happens under the domain's lock. Opens and closes run under the context
 * lock.
 */
#include "backend_bpf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "books.h"
#include "counted.h"
#include "env.h"
#include "host.h"
#include "host_step.h"
#include "kevent.h"
#include "log.h"

bool shpmu__bpf_no_ipi_hook;

#define NO_SLOT UINT32_MAX

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

static void begin(struct shpmu *pmu, struct bpf_backend *b)
{
	if (b->host)
		host_begin(pmu, b->host, &b->counted);
}

static void end(struct bpf_backend *b)
{
	if (b->host)
		host_end(b->host, &b->counted);
}

/* Takes event e and, for a cgroup, its slot, and records the ref. */
static int take(struct shpmu *pmu, struct bpf_backend *b, struct kevent *ev,
		struct backend_cost *cost)
{
	struct counted *c = &b->counted;
	const struct target_key *t = &ev->key.target;
	uint32_t e, s = NO_SLOT;
	int err;

	err = counted_get_event(pmu, c, &ev->key.events[0], &e, cost);
	if (err)
		return err;
	if (t->kind == SHPMU_TARGET_CGROUP)
		err = counted_get_slot(pmu, c, t->cgroup_id, &s);
	if (!err && b->host) {
		host_step();
		err = host_ref(b->host, e, s, 1);
	}
	if (err) {
		if (s != NO_SLOT)
			counted_put_slot(c, s);
		counted_put_event(pmu, c, e, cost);
		/* Nothing was made: nothing costs. */
		cost->events = cost->fds = 0;
		return err;
	}
	ev->priv.word = (uint64_t)e << 32 | s;
	return 0;
}

/* A cgroup or CPU target of one counting attr: counted in its slot (or
 * the raw readings), on the shared event of its attr (-ENOSPC past
 * either's room). */
static int bpf_open(struct shpmu *pmu, struct kevent *ev, int cgroup_fd,
		    struct backend_cost *cost)
{
	struct bpf_backend *b = bpf_of(ev);
	uint32_t kind = ev->key.target.kind;
	int err;

	(void)cgroup_fd;
	if ((kind != SHPMU_TARGET_CGROUP && kind != SHPMU_TARGET_CPU) ||
	    ev->key.nevents != 1)
		return -EOPNOTSUPP;
	begin(pmu, b);
	err = take(pmu, b, ev, cost);
	end(b);
	return err;
}

static void bpf_close(struct shpmu *pmu, struct kevent *ev,
		      struct backend_cost *cost)
{
	struct bpf_backend *b = bpf_of(ev);
	uint32_t e = event_of(ev), s = slot_of(ev);

	/* A forked child's maps and books are its parent's. */
	if (env_of(pmu)->forked) {
		counted_forget_event(pmu, &b->counted, e, cost);
		return;
	}
	begin(pmu, b);
	if (b->host) {
		host_ref(b->host, e, s, -1);
		host_step();
	}
	if (s != NO_SLOT)
		counted_put_slot(&b->counted, s);
	counted_put_event(pmu, &b->counted, e, cost);
	end(b);
}

static int bpf_read(struct shpmu *pmu, const struct kevent *ev, uint32_t first,
		    uint32_t n, bool fresh, uint64_t *vals)
{
	struct bpf_backend *b = bpf_of(ev);
	struct counter_prog *p = &b->counted.prog;
	uint32_t slot = slot_of(ev), e = event_of(ev);
	int err = 0;

	if (fresh)
		err = counter_prog_flush_cpus(pmu, p, ev->cpus + first, n);
	if (err)
		return err;
	counter_prog_tell_unseen(pmu, p);
	for (uint32_t i = 0; i < n; i++) {
		int cpu = ev->cpus[first + i];
		struct counter_value v = {0};
		uint64_t *to = vals + (size_t)i * ev->nvals;

		/* A CPU the event was not made on (it came online later)
		 * counts nothing. */
		if (books_event_on_cpu(&b->counted.books->events[e], cpu))
			err = counter_prog_value(p, cpu, e, slot, &v);
		else if (cpu < 0 || (uint32_t)cpu >= p->nr_cpus)
			err = -EINVAL;
		if (err)
			return err;
		to[KVAL_ENABLED] = v.enabled;
		to[KVAL_RUNNING] = v.running;
		to[KVAL_COUNT] = v.counter;
	}
	return 0;
}

static int bpf_flush(struct shpmu *pmu, struct backend *backend)
{
	return counter_prog_flush(
		pmu, &((struct bpf_backend *)backend)->counted.prog);
}

static const struct backend_ops bpf_ops = {
	.open = bpf_open,
	.close = bpf_close,
	.read = bpf_read,
	.flush = bpf_flush,
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
	out->strays = counter_prog_strays(p);
	out->moves = counter_prog_moves(p);
}

bool bpf_backend_is_host(const struct backend *backend)
{
	return backend && ((const struct bpf_backend *)backend)->host;
}
