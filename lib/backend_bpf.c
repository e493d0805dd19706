// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The BPF backend: one perf event per CPU per distinct attr counts every
 * cgroup; the counter program (counter_prog.c) credits each CPU's deltas
 * to the counted cgroups of the task that ran. A cgroup's kernel event is
 * then (event index, cgroup slot): its sources are the slot's per-CPU
 * totals of that event, which always count; a read brings the CPUs up to
 * now first. Opens and closes run under the context lock.
 */
#include "backend_bpf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "backend.h"
#include "bpf/cgroup_counter.h"
#include "cgroup_counter.skel.h"
#include "counter_prog.h"
#include "env.h"
#include "fifo.h"
#include "kevent.h"
#include "log.h"
#include "sys.h"

uint32_t shpmu__bpf_max_slots;
bool shpmu__bpf_no_ipi_hook;

#define FILTER_MASK (COUNTED_FILTER_SIZE - 1)

/* The per-CPU events of one distinct attr, shared by every cgroup. */
struct shared_event {
	struct event_key key;
	uint32_t refs; /* kernel events on it; 0: the index is free */
	int *cpus;     /* the CPUs online when it was made */
	int *fds;      /* one per CPU in cpus */
	int nfds;
};

/* As in the program: a slot's totals on one CPU. */
struct slot_totals {
	struct bpf_perf_event_value events[MAX_EVENTS];
};

/* Per-CPU totals cost MAX_EVENTS * 24 bytes per slot per possible CPU:
 * big machines get fewer slots, within these bounds. */
#define TOTALS_BUDGET (64u << 20)
#define MIN_SLOTS     1024u

/* A counted cgroup. */
struct slot {
	uint64_t id; /* 0: free */
	uint32_t refs;
	uint32_t next_free;
};

struct bpf_backend {
	struct backend base;
	struct counter_prog prog;
	int possible; /* CPUs the per-CPU maps have room for */
	struct shared_event events[MAX_EVENTS];
	struct slot *slots;		/* max_slots */
	uint32_t max_slots, slots_used; /* size, high-water mark */
	/* Freed slots wait longest: reusing one first waits out any
	 * program run that may still hold it (see new_slot). */
	struct fifo free;
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

static void drop_event(struct shpmu *pmu, struct bpf_backend *b, uint32_t e,
		       struct backend_cost *cost)
{
	struct shared_event *se = &b->events[e];
	int map = bpf_map__fd(b->prog.skel->maps.events);
	bool forked = env_of(pmu)->forked;

	for (int i = 0; i < se->nfds; i++) {
		uint32_t key = e * MAX_CPUS + (uint32_t)se->cpus[i];

		/* A forked child's maps are its parent's: hands off. */
		if (!forked)
			bpf_map_delete_elem(map, &key);
		sys_close(pmu, se->fds[i]);
	}
	/* A switch that read the event just before may still write its
	 * reading back; the index must not serve another attr before that
	 * is done. */
	if (!forked)
		counter_prog_flush(pmu, &b->prog);
	cost->events++;
	cost->fds += se->nfds;
	free(se->fds);
	free(se->cpus);
	memset(se, 0, sizeof(*se));
}

/* How the program must count key at a switch: see take_delta() there. */
static uint8_t counter_kind(const struct event_key *key)
{
	/* The kernel counts switches in kernel mode only. */
	if (key->type != PERF_TYPE_SOFTWARE || (key->bits & KEY_EXCLUDE_KERNEL))
		return KIND_READ;
	if (key->config == PERF_COUNT_SW_CONTEXT_SWITCHES)
		return KIND_CONTEXT_SWITCHES;
	if (key->config == PERF_COUNT_SW_CGROUP_SWITCHES)
		return KIND_CGROUP_SWITCHES;
	return KIND_READ;
}

/* Opens key on every online CPU, and makes its readings the baseline the
 * program's first deltas start from. */
static int make_event(struct shpmu *pmu, struct bpf_backend *b, uint32_t e,
		      const struct event_key *key, struct backend_cost *cost)
{
	struct shared_event *se = &b->events[e];
	struct bpf_perf_event_value *base = NULL;
	unsigned char attr[SHPMU_ATTR_SIZE_KNOWN];
	int map = bpf_map__fd(b->prog.skel->maps.events), err, i;

	/* CPUs may have come and gone since the backend started. */
	err = counter_prog_refresh_online(pmu, &b->prog);
	if (err)
		return err;
	se->cpus = malloc((size_t)b->prog.nonline * sizeof(*se->cpus));
	se->fds = calloc((size_t)b->prog.nonline, sizeof(*se->fds));
	base = calloc((size_t)b->possible, sizeof(*base));
	if (!se->cpus || !se->fds || !base) {
		err = -ENOMEM;
		goto fail;
	}
	memcpy(se->cpus, b->prog.online,
	       (size_t)b->prog.nonline * sizeof(*se->cpus));
	key_to_attr(key,
		    PERF_FORMAT_TOTAL_TIME_ENABLED |
			    PERF_FORMAT_TOTAL_TIME_RUNNING,
		    attr);
	((struct perf_event_attr *)attr)->disabled = 0;
	for (i = 0; i < b->prog.nonline; i++) {
		uint64_t v[3];
		int cpu = se->cpus[i];
		int fd =
			sys_perf_event_open(pmu, (struct perf_event_attr *)attr,
					    -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			err = fd;
			pr_err(pmu,
			       "BPF backend: perf_event_open on cpu %d: "
			       "%s",
			       cpu, strerror(-err));
			goto fail;
		}
		se->fds[se->nfds++] = fd;
		if (cpu >= b->possible ||
		    sys_read(pmu, fd, v, sizeof(v)) != sizeof(v)) {
			pr_err(pmu,
			       "BPF backend: cannot read the new event on "
			       "cpu %d",
			       cpu);
			err = -EIO;
			goto fail;
		}
		base[cpu] = (struct bpf_perf_event_value){v[0], v[1], v[2]};
	}
	b->prog.skel->bss->event_kind[e] = counter_kind(key);
	if (bpf_map_update_elem(bpf_map__fd(b->prog.skel->maps.previous), &e,
				base, BPF_ANY)) {
		err = -errno;
		goto fail;
	}
	for (i = 0; i < se->nfds; i++) {
		uint32_t index = e * MAX_CPUS + (uint32_t)se->cpus[i];

		if (bpf_map_update_elem(map, &index, &se->fds[i], BPF_ANY)) {
			err = -errno;
			goto fail;
		}
	}
	free(base);
	se->key = *key;
	if (b->prog.skel->bss->num_events <= e)
		b->prog.skel->bss->num_events = e + 1;
	cost->events++;
	cost->fds += se->nfds;
	return 0;
fail:
	for (i = 0; i < se->nfds; i++) {
		uint32_t index = e * MAX_CPUS + (uint32_t)se->cpus[i];

		bpf_map_delete_elem(map, &index);
		sys_close(pmu, se->fds[i]);
	}
	free(se->fds);
	free(se->cpus);
	free(base);
	memset(se, 0, sizeof(*se));
	return err;
}

/* The index of key's shared event, made now if it is new. */
static int get_event(struct shpmu *pmu, struct bpf_backend *b,
		     const struct event_key *key, uint32_t *index,
		     struct backend_cost *cost)
{
	uint32_t free_index = MAX_EVENTS;
	int err;

	for (uint32_t e = 0; e < MAX_EVENTS; e++) {
		if (b->events[e].refs &&
		    !memcmp(&b->events[e].key, key, sizeof(*key))) {
			*index = e;
			return 0;
		}
		if (!b->events[e].refs && free_index == MAX_EVENTS)
			free_index = e;
	}
	if (free_index == MAX_EVENTS) {
		pr_err(pmu,
		       "the BPF cgroup backend counts at most %d distinct "
		       "events at once",
		       MAX_EVENTS);
		return -ENOSPC;
	}
	err = make_event(pmu, b, free_index, key, cost);
	if (!err)
		*index = free_index;
	return err;
}

static uint32_t *next_free_of(void *backend, uint32_t s)
{
	return &((struct bpf_backend *)backend)->slots[s].next_free;
}

static uint32_t find_slot(const struct bpf_backend *b, uint64_t id)
{
	for (uint32_t s = 0; s < b->slots_used; s++)
		if (b->slots[s].id == id)
			return s;
	return FIFO_NONE;
}

/* A slot for a cgroup not counted yet: a fresh one while any are left,
 * then the longest freed. */
static int new_slot(struct shpmu *pmu, struct bpf_backend *b, uint32_t *out,
		    bool *fresh)
{
	int err;

	*fresh = b->slots_used < b->max_slots;
	if (*fresh) {
		*out = b->slots_used++;
		return 0;
	}
	if (fifo_empty(&b->free)) {
		pr_err(pmu,
		       "the BPF cgroup backend counts at most %u cgroups "
		       "on this machine",
		       b->max_slots);
		return -ENOSPC;
	}
	/* A switch that looked the slot up before it was freed may still be
	 * adding to it on some CPU: a flush everywhere waits that out. */
	err = counter_prog_flush(pmu, &b->prog);
	if (err)
		return err;
	*out = fifo_pop(&b->free, next_free_of, b);
	return 0;
}

static int get_slot(struct shpmu *pmu, struct bpf_backend *b, uint64_t id,
		    uint32_t *out)
{
	struct cgroup_counter *skel = b->prog.skel;
	uint32_t s = find_slot(b, id);
	bool fresh;
	int err;

	if (s == FIFO_NONE) {
		err = new_slot(pmu, b, &s, &fresh);
		if (err)
			return err;
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.cgroup_slots),
					&id, &s, BPF_ANY)) {
			err = -errno;
			/* Give the slot back where it came from. */
			if (fresh)
				b->slots_used--;
			else
				fifo_push(&b->free, s, next_free_of, b);
			return err;
		}
		b->slots[s].id = id;
		b->slots[s].refs = 0;
		/* After the map entry: the program finds it once it looks. */
		__atomic_fetch_add(&skel->bss->counted_ids[id & FILTER_MASK], 1,
				   __ATOMIC_RELEASE);
		__atomic_fetch_add(&skel->bss->generation, 1, __ATOMIC_RELEASE);
	}
	b->slots[s].refs++;
	*out = s;
	return 0;
}

static void put_slot(struct bpf_backend *b, uint32_t s)
{
	struct cgroup_counter *skel = b->prog.skel;
	uint64_t id = b->slots[s].id;

	if (--b->slots[s].refs)
		return;
	__atomic_fetch_sub(&skel->bss->counted_ids[id & FILTER_MASK], 1,
			   __ATOMIC_RELEASE);
	bpf_map_delete_elem(bpf_map__fd(skel->maps.cgroup_slots), &id);
	__atomic_fetch_add(&skel->bss->generation, 1, __ATOMIC_RELEASE);
	b->slots[s].id = 0;
	fifo_push(&b->free, s, next_free_of, b);
}

/* A cgroup target of one counting attr: counted in its slot, on the shared
 * event of its attr (-ENOSPC past either's room). */
static int bpf_open(struct shpmu *pmu, struct kevent *ev, int cgroup_fd,
		    struct backend_cost *cost)
{
	struct bpf_backend *b = bpf_of(ev);
	uint32_t e = 0, s = 0;
	int err;

	(void)cgroup_fd;
	if (ev->key.target.kind != SHPMU_TARGET_CGROUP || ev->key.nevents != 1)
		return -EOPNOTSUPP;
	err = get_event(pmu, b, &ev->key.events[0], &e, cost);
	if (err)
		return err;
	b->events[e].refs++;
	err = get_slot(pmu, b, ev->key.target.cgroup_id, &s);
	if (err) {
		if (--b->events[e].refs == 0)
			drop_event(pmu, b, e, cost);
		/* Nothing was made: nothing costs. */
		cost->events = cost->fds = 0;
		return err;
	}
	ev->priv.word = (uint64_t)e << 32 | s;
	return 0;
}

static void bpf_close(struct shpmu *pmu, struct kevent *ev,
		      struct backend_cost *cost)
{
	struct bpf_backend *b = bpf_of(ev);
	uint32_t e = event_of(ev);

	/* A forked child's maps are its parent's. */
	if (!env_of(pmu)->forked)
		put_slot(b, slot_of(ev));
	if (--b->events[e].refs == 0)
		drop_event(pmu, b, e, cost);
}

/* Per-CPU totals on the stack up to this many possible CPUs (3 KiB). */
#define STACK_CPUS 16

static int bpf_read(struct shpmu *pmu, const struct kevent *ev, uint32_t first,
		    uint32_t n, bool fresh, uint64_t *vals)
{
	struct slot_totals stack[STACK_CPUS], *per_cpu = stack;
	struct bpf_backend *b = bpf_of(ev);
	uint32_t slot = slot_of(ev), e = event_of(ev);
	int err = 0;

	if (fresh)
		err = counter_prog_flush_cpus(pmu, &b->prog, ev->cpus + first,
					      n);
	if (err)
		return err;
	counter_prog_tell_unseen(pmu, &b->prog);
	if (b->possible > STACK_CPUS) {
		per_cpu = calloc((size_t)b->possible, sizeof(*per_cpu));
		if (!per_cpu)
			return -ENOMEM;
	} else {
		/* (valgrind cannot see the kernel fill it) */
		memset(stack, 0, sizeof(stack));
	}
	if (bpf_map_lookup_elem(bpf_map__fd(b->prog.skel->maps.totals), &slot,
				per_cpu)) {
		err = -errno;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		int cpu = ev->cpus[first + i];
		const struct bpf_perf_event_value *v;
		uint64_t *to = vals + (size_t)i * ev->nvals;

		if (cpu < 0 || cpu >= b->possible) {
			err = -EINVAL;
			goto out;
		}
		v = &per_cpu[cpu].events[e];
		to[KVAL_ENABLED] = v->enabled;
		to[KVAL_RUNNING] = v->running;
		to[KVAL_COUNT] = v->counter;
	}
out:
	if (per_cpu != stack)
		free(per_cpu);
	return err;
}

static int bpf_flush(struct shpmu *pmu, struct backend *backend)
{
	return counter_prog_flush(pmu, &((struct bpf_backend *)backend)->prog);
}

static const struct backend_ops bpf_ops = {
	.open = bpf_open,
	.close = bpf_close,
	.read = bpf_read,
	.flush = bpf_flush,
};

int bpf_backend_new(struct shpmu *pmu, struct backend **out)
{
	struct bpf_backend *b;
	int err;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->base.ops = &bpf_ops;
	fifo_init(&b->free);
	b->possible = libbpf_num_possible_cpus();
	if (b->possible <= 0 || b->possible > MAX_CPUS) {
		pr_info(pmu,
			"the BPF cgroup backend handles up to %d CPUs, "
			"this machine may have %d",
			MAX_CPUS, b->possible);
		free(b);
		return -EOPNOTSUPP;
	}
	b->max_slots = TOTALS_BUDGET /
		       ((uint32_t)b->possible * sizeof(struct slot_totals));
	if (b->max_slots > MAX_SLOTS)
		b->max_slots = MAX_SLOTS;
	if (b->max_slots < MIN_SLOTS)
		b->max_slots = MIN_SLOTS;
	if (shpmu__bpf_max_slots)
		b->max_slots = shpmu__bpf_max_slots;
	b->slots = calloc(b->max_slots, sizeof(*b->slots));
	if (!b->slots) {
		free(b);
		return -ENOMEM;
	}
	err = counter_prog_load(pmu, b->max_slots, !shpmu__bpf_no_ipi_hook,
				&b->prog);
	if (err) {
		free(b->slots);
		free(b);
		return err;
	}
	*out = &b->base;
	return 0;
}

void bpf_backend_free(struct shpmu *pmu, struct backend *backend)
{
	struct bpf_backend *b = (struct bpf_backend *)backend;
	struct backend_cost ignored = {0};

	if (!b)
		return;
	for (uint32_t e = 0; e < MAX_EVENTS; e++)
		if (b->events[e].refs)
			drop_event(pmu, b, e, &ignored);
	counter_prog_unload(&b->prog);
	free(b->slots);
	free(b);
}

void bpf_backend_counters(const struct backend *backend,
			  struct bpf_backend_counters *out)
{
	const struct counter_prog *p =
		&((const struct bpf_backend *)backend)->prog;

	out->unseen = counter_prog_unseen(p);
	out->strays = counter_prog_strays(p);
	out->moves = counter_prog_moves(p);
}
