// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "bpf_backend.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "log.h"

#ifndef HAVE_BPF

int bpf_backend_new(struct shpmu *pmu, struct bpf_backend **out)
{
	(void)out;
	pr_info(pmu, "the BPF cgroup backend was not built (no clang, "
		     "bpftool, libbpf or /sys/kernel/btf/vmlinux at build "
		     "time)");
	return -EOPNOTSUPP;
}

void bpf_backend_free(struct shpmu *pmu, struct bpf_backend *b)
{
	(void)pmu;
	(void)b;
}

int bpf_backend_attach(struct shpmu *pmu, struct bpf_backend *b,
		       const struct event_key *key, uint64_t cgroup_id,
		       struct bpf_counter *out)
{
	(void)pmu, (void)b, (void)key, (void)cgroup_id, (void)out;
	return -EOPNOTSUPP;
}

void bpf_backend_detach(struct shpmu *pmu, struct bpf_backend *b,
			const struct bpf_counter *c)
{
	(void)pmu, (void)b, (void)c;
}

int bpf_backend_read(struct shpmu *pmu, struct bpf_backend *b,
		     const struct bpf_counter *c, int cpu, uint64_t *vals)
{
	(void)pmu, (void)b, (void)c, (void)cpu, (void)vals;
	return -EOPNOTSUPP;
}

#else

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "cgroup_counter.skel.h"
#include "cpus.h"
#include "kevent.h"
#include "sys.h"

/* As in cgroup_counter.bpf.c. */
#define MAX_EVENTS 8
#define MAX_CPUS 1024
#define MAX_SLOTS 16384
#define NO_SLOT UINT32_MAX

struct shared_event {
	struct event_key key;
	uint32_t refs; /* counters on it; 0: the index is free */
	int *fds;      /* one per online CPU */
	int nfds;
};

struct slot {
	uint64_t id; /* 0: free */
	uint32_t refs;
	uint32_t next_free;
};

struct bpf_backend {
	struct cgroup_counter *skel;
	int prog_fd;
	int possible;	/* CPUs the per-CPU maps have room for */
	int *online, nonline;
	struct shared_event events[MAX_EVENTS];
	struct slot *slots; /* MAX_SLOTS */
	uint32_t slots_used; /* high-water mark */
	/* Freed slots wait at the tail, so an in-flight program run that
	 * looked one up just before it was freed is long done before the
	 * slot serves another cgroup. */
	uint32_t free_head, free_tail;
};

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

int bpf_backend_new(struct shpmu *pmu, struct bpf_backend **out)
{
	struct bpf_backend *b;
	int err;

	if (!pmu->cgroups.root || !pmu->cgroups.v2) {
		pr_info(pmu, "the BPF cgroup backend needs cgroup2: BPF sees "
			     "cgroup2 ids only");
		return -EOPNOTSUPP;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->free_head = b->free_tail = NO_SLOT;
	b->possible = libbpf_num_possible_cpus();
	b->slots = calloc(MAX_SLOTS, sizeof(*b->slots));
	b->nonline = cpus_online(pmu, &b->online);
	if (b->possible <= 0 || b->possible > MAX_CPUS) {
		pr_info(pmu, "the BPF cgroup backend handles up to %d CPUs, "
			     "this machine may have %d",
			MAX_CPUS, b->possible);
		err = -EOPNOTSUPP;
		goto fail;
	}
	if (!b->slots || b->nonline < 0) {
		err = b->nonline < 0 ? b->nonline : -ENOMEM;
		goto fail;
	}
	/* Quiet while loading, then the application's own printer again. */
	libbpf_print_fn_t printer = libbpf_set_print(libbpf_quiet);
	b->skel = cgroup_counter__open_and_load();
	libbpf_set_print(printer);
	if (!b->skel) {
		err = -errno;
		pr_info(pmu, "cannot load the BPF cgroup counter: %s (needs "
			     "CAP_BPF and CAP_PERFMON, or root)",
			strerror(errno));
		err = -EOPNOTSUPP;
		goto fail;
	}
	err = cgroup_counter__attach(b->skel);
	if (err) {
		pr_info(pmu, "cannot attach to raw_tp/sched_switch: %s",
			strerror(-err));
		err = -EOPNOTSUPP;
		goto fail;
	}
	b->prog_fd = bpf_program__fd(b->skel->progs.on_switch);
	*out = b;
	return 0;
fail:
	bpf_backend_free(pmu, b);
	return err;
}

static void drop_event(struct shpmu *pmu, struct bpf_backend *b, uint32_t e)
{
	struct shared_event *ev = &b->events[e];
	int map = bpf_map__fd(b->skel->maps.events);

	for (int i = 0; i < ev->nfds; i++) {
		uint32_t key = e * MAX_CPUS + (uint32_t)b->online[i];

		/* A forked child's maps are its parent's: hands off. */
		if (!pmu->forked)
			bpf_map_delete_elem(map, &key);
		sys_close(pmu, ev->fds[i]);
	}
	pmu->stats.kernel_events--;
	pmu->stats.kernel_fds -= (uint64_t)ev->nfds;
	free(ev->fds);
	memset(ev, 0, sizeof(*ev));
}

void bpf_backend_free(struct shpmu *pmu, struct bpf_backend *b)
{
	if (!b)
		return;
	for (uint32_t e = 0; e < MAX_EVENTS; e++)
		if (b->events[e].refs)
			drop_event(pmu, b, e);
	cgroup_counter__destroy(b->skel);
	free(b->online);
	free(b->slots);
	free(b);
}

/* Opens attr on every online CPU and makes its readings the baseline the
 * program's first deltas start from. */
static int make_event(struct shpmu *pmu, struct bpf_backend *b, uint32_t e,
		      const struct event_key *key)
{
	struct shared_event *ev = &b->events[e];
	struct bpf_perf_event_value *base;
	unsigned char attr[SHPMU_ATTR_SIZE_KNOWN];
	int map = bpf_map__fd(b->skel->maps.events), err = 0, i;

	ev->fds = calloc((size_t)b->nonline, sizeof(*ev->fds));
	base = calloc((size_t)b->possible, sizeof(*base));
	if (!ev->fds || !base) {
		err = -ENOMEM;
		goto out;
	}
	key_to_attr(key,
		    PERF_FORMAT_TOTAL_TIME_ENABLED |
			    PERF_FORMAT_TOTAL_TIME_RUNNING,
		    attr);
	((struct perf_event_attr *)attr)->disabled = 0;
	for (i = 0; i < b->nonline; i++) {
		uint64_t v[3];
		int cpu = b->online[i];
		int fd = sys_perf_event_open(pmu,
					     (struct perf_event_attr *)attr,
					     -1, cpu, -1,
					     PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			err = fd;
			pr_err(pmu, "BPF backend: perf_event_open on cpu %d: "
				    "%s",
			       cpu, strerror(-err));
			break;
		}
		ev->fds[ev->nfds++] = fd;
		if (sys_read(pmu, fd, v, sizeof(v)) != sizeof(v)) {
			err = -EIO;
			break;
		}
		base[cpu] = (struct bpf_perf_event_value){ v[0], v[1], v[2] };
	}
	if (!err && bpf_map_update_elem(bpf_map__fd(b->skel->maps.previous),
					&e, base, BPF_ANY))
		err = -errno;
	for (i = 0; !err && i < ev->nfds; i++) {
		uint32_t slot = e * MAX_CPUS + (uint32_t)b->online[i];

		if (bpf_map_update_elem(map, &slot, &ev->fds[i], BPF_ANY))
			err = -errno;
	}
	if (err) {
		for (i = 0; i < ev->nfds; i++) {
			uint32_t slot = e * MAX_CPUS + (uint32_t)b->online[i];

			bpf_map_delete_elem(map, &slot);
			sys_close(pmu, ev->fds[i]);
		}
		free(ev->fds);
		ev->fds = NULL;
		ev->nfds = 0;
		goto out;
	}
	ev->key = *key;
	if (b->skel->bss->num_events <= e)
		b->skel->bss->num_events = e + 1;
	pmu->stats.kernel_events++;
	pmu->stats.kernel_fds += (uint64_t)ev->nfds;
out:
	free(base);
	return err;
}

static int get_event(struct shpmu *pmu, struct bpf_backend *b,
		     const struct event_key *key, uint32_t *index)
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
		pr_err(pmu, "the BPF cgroup backend counts at most %d distinct "
			    "events at once",
		       MAX_EVENTS);
		return -ENOSPC;
	}
	err = make_event(pmu, b, free_index, key);
	if (!err)
		*index = free_index;
	return err;
}

static uint32_t find_slot(const struct bpf_backend *b, uint64_t id)
{
	for (uint32_t s = 0; s < b->slots_used; s++)
		if (b->slots[s].id == id)
			return s;
	return NO_SLOT;
}

static int get_slot(struct shpmu *pmu, struct bpf_backend *b, uint64_t id,
		    uint32_t *out)
{
	uint32_t s = find_slot(b, id);
	bool fresh = false;

	if (s == NO_SLOT) {
		if (b->slots_used < MAX_SLOTS) {
			s = b->slots_used++;
			fresh = true;
		} else if (b->free_head != NO_SLOT) {
			s = b->free_head;
			b->free_head = b->slots[s].next_free;
			if (b->free_head == NO_SLOT)
				b->free_tail = NO_SLOT;
		} else {
			pr_err(pmu, "the BPF cgroup backend counts at most %d "
				    "cgroups",
			       MAX_SLOTS);
			return -ENOSPC;
		}
		if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.cgroup_slots),
					&id, &s, BPF_ANY)) {
			int err = -errno;

			/* Give the slot back where it came from. */
			if (fresh) {
				b->slots_used--;
			} else {
				b->slots[s].next_free = b->free_head;
				b->free_head = s;
				if (b->free_tail == NO_SLOT)
					b->free_tail = s;
			}
			return err;
		}
		b->slots[s].id = id;
		b->slots[s].refs = 0;
	}
	b->slots[s].refs++;
	*out = s;
	return 0;
}

static void put_slot(struct bpf_backend *b, uint32_t s)
{
	if (--b->slots[s].refs)
		return;
	bpf_map_delete_elem(bpf_map__fd(b->skel->maps.cgroup_slots),
			    &b->slots[s].id);
	b->slots[s].id = 0;
	b->slots[s].next_free = NO_SLOT;
	if (b->free_tail == NO_SLOT)
		b->free_head = s;
	else
		b->slots[b->free_tail].next_free = s;
	b->free_tail = s;
}

int bpf_backend_attach(struct shpmu *pmu, struct bpf_backend *b,
		       const struct event_key *key, uint64_t cgroup_id,
		       struct bpf_counter *out)
{
	int err = get_event(pmu, b, key, &out->event);

	if (err)
		return err;
	b->events[out->event].refs++;
	err = get_slot(pmu, b, cgroup_id, &out->slot);
	if (err && --b->events[out->event].refs == 0)
		drop_event(pmu, b, out->event);
	return err;
}

void bpf_backend_detach(struct shpmu *pmu, struct bpf_backend *b,
			const struct bpf_counter *c)
{
	if (!pmu->forked)
		put_slot(b, c->slot);
	if (--b->events[c->event].refs == 0)
		drop_event(pmu, b, c->event);
}

int bpf_backend_read(struct shpmu *pmu, struct bpf_backend *b,
		     const struct bpf_counter *c, int cpu, uint64_t *vals)
{
	LIBBPF_OPTS(bpf_test_run_opts, run, .flags = BPF_F_TEST_RUN_ON_CPU,
		    .cpu = (uint32_t)cpu);
	struct bpf_perf_event_value per_cpu[MAX_CPUS];
	uint32_t key = c->slot * MAX_EVENTS + c->event;

	/* (valgrind cannot see the kernel fill it) */
	memset(per_cpu, 0, (size_t)b->possible * sizeof(per_cpu[0]));
	/* The delta since the CPU's last switch belongs to what runs there
	 * now: the program attributes it before the totals are read. */
	/* A CPU gone offline has nothing running to flush: its totals
	 * stand as they are. */
	if (bpf_prog_test_run_opts(b->prog_fd, &run) && errno != ENXIO) {
		pr_err(pmu, "BPF backend: flushing cpu %d: %s", cpu,
		       strerror(errno));
		return -errno;
	}
	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.totals), &key,
				per_cpu))
		return -errno;
	vals[KVAL_ENABLED] = per_cpu[cpu].enabled;
	vals[KVAL_RUNNING] = per_cpu[cpu].running;
	vals[KVAL_COUNT] = per_cpu[cpu].counter;
	return 0;
}

#endif
