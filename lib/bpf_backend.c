// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "bpf_backend.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "log.h"

uint32_t shpmu__bpf_max_slots;
bool shpmu__bpf_no_ipi_hook;

/* (AUTO makes the backend on its first cgroup open: under the lock.) */
static struct bpf_backend *backend_of(const struct shpmu *pmu)
{
	struct shpmu *p = (struct shpmu *)pmu;
	struct bpf_backend *b;

	pthread_mutex_lock(&p->lock);
	b = p->bpf;
	pthread_mutex_unlock(&p->lock);
	return b;
}

uint64_t shpmu__bpf_unseen_switches(const struct shpmu *pmu)
{
	struct bpf_backend *b = backend_of(pmu);

	return b ? bpf_backend_unseen_switches(b) : 0;
}

uint64_t shpmu__bpf_stray_switches(const struct shpmu *pmu)
{
	struct bpf_backend *b = backend_of(pmu);

	return b ? bpf_backend_stray_switches(b) : 0;
}

uint64_t shpmu__bpf_moves_settled(const struct shpmu *pmu)
{
	struct bpf_backend *b = backend_of(pmu);

	return b ? bpf_backend_moves_settled(b) : 0;
}

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
		     const struct bpf_counter *c, const int *cpus, uint32_t n,
		     bool flush, uint64_t *vals, uint32_t stride)
{
	(void)pmu, (void)b, (void)c, (void)cpus, (void)n, (void)flush;
	(void)vals, (void)stride;
	return -EOPNOTSUPP;
}

int bpf_backend_flush(struct shpmu *pmu, struct bpf_backend *b)
{
	(void)pmu, (void)b;
	return -EOPNOTSUPP;
}

uint64_t bpf_backend_unseen_switches(const struct bpf_backend *b)
{
	(void)b;
	return 0;
}

uint64_t bpf_backend_stray_switches(const struct bpf_backend *b)
{
	(void)b;
	return 0;
}

uint64_t bpf_backend_moves_settled(const struct bpf_backend *b)
{
	(void)b;
	return 0;
}

#else

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bpf/cgroup_counter.h"
#include "cgroup_counter.skel.h"
#include "cpus.h"
#include "kevent.h"
#include "sys.h"

#define NO_SLOT UINT32_MAX
#define FILTER_MASK (COUNTED_FILTER_SIZE - 1)

struct shared_event {
	struct event_key key;
	uint32_t refs; /* counters on it; 0: the index is free */
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
#define MIN_SLOTS 1024u

struct slot {
	uint64_t id; /* 0: free */
	uint32_t refs;
	uint32_t next_free;
};

struct bpf_backend {
	struct cgroup_counter *skel;
	int prog_fd;
	int possible;	 /* CPUs the per-CPU maps have room for */
	/* Held across every flush, and to change online: two runs of the
	 * program on one CPU would both take the delta since the last. */
	pthread_mutex_t flush_lock;
	int *online, nonline; /* as last read: the CPUs a flush visits */
	struct shared_event events[MAX_EVENTS];
	struct slot *slots; /* max_slots */
	uint32_t max_slots, slots_used; /* size, high-water mark */
	/* Freed slots wait at the tail, so a slot serves another cgroup as
	 * late as possible; reusing one first waits out any program run
	 * that may still hold it (see get_slot). */
	uint32_t free_head, free_tail;
	bool told_unseen; /* logged that the tracepoint misses switches */
};

/* While a thread loads the program, libbpf's messages (the verifier's
 * reasons among them) go to that context's log at debug level; other
 * threads' go to the application's own printer. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread struct shpmu *loading;
static libbpf_print_fn_t app_printer;

__attribute__((format(printf, 2, 0))) static int
forward_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	if (!loading)
		return app_printer ? app_printer(level, fmt, ap) : 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	if (n && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	pr_debug(loading, "libbpf: %s", msg);
	return 0;
}

static int load(struct shpmu *pmu, struct bpf_backend *b)
{
	int err;

	pthread_mutex_lock(&load_lock);
	loading = pmu;
	app_printer = libbpf_set_print(forward_libbpf);
	b->skel = cgroup_counter__open();
	err = b->skel ? 0 : -errno;
	if (!err)
		err = bpf_map__set_max_entries(b->skel->maps.totals,
					       b->max_slots);
	if (!err)
		err = bpf_map__set_max_entries(b->skel->maps.cgroup_slots,
					       b->max_slots);
	/* attach() picks the move hooks this kernel has. */
	if (!err) {
		bpf_program__set_autoattach(b->skel->progs.on_ipi, false);
		bpf_program__set_autoattach(b->skel->progs.on_attach, false);
	}
	if (!err)
		err = cgroup_counter__load(b->skel);
	libbpf_set_print(app_printer);
	loading = NULL;
	pthread_mutex_unlock(&load_lock);
	if (err == -EPERM)
		pr_info(pmu, "cannot load the BPF cgroup counter: %s (it needs "
			     "CAP_BPF and CAP_PERFMON, or root)",
			strerror(-err));
	else if (err)
		pr_info(pmu, "cannot load the BPF cgroup counter: %s (the "
			     "kernel refused it: it needs BTF, raw tracepoints, "
			     "bpf_loop and bpf_rdonly_cast, from Linux 6.2; the "
			     "debug log has the verifier's reasons)",
			strerror(-err));
	return err;
}

/* Moves of a running task are settled where perf's cgroup controller
 * runs a function on the task's CPU (csd_function_entry, Linux 6.4); on
 * older kernels only the moves a task makes itself are (cgroup_attach_task
 * runs in the writer's context), and the rest at the task's next switch. */
static int attach_move_hook(struct shpmu *pmu, struct bpf_backend *b)
{
	struct cgroup_counter *s = b->skel;

	if (!shpmu__bpf_no_ipi_hook) {
		s->links.on_ipi = bpf_program__attach(s->progs.on_ipi);
		if (s->links.on_ipi)
			return 0;
	}
	s->links.on_attach = bpf_program__attach(s->progs.on_attach);
	if (!s->links.on_attach)
		return -errno;
	pr_info(pmu, "no csd_function_entry tracepoint here (Linux 6.4 "
		     "has it): a running task moved to another cgroup by "
		     "another process is counted in its new cgroup until it "
		     "next leaves its CPU");
	return 0;
}

static int attach(struct shpmu *pmu, struct bpf_backend *b)
{
	struct cgroup_counter *s = b->skel;
	int err = 0;

	s->links.on_switch = bpf_program__attach(s->progs.on_switch);
	if (!s->links.on_switch)
		err = -errno;
	if (!err)
		err = attach_move_hook(pmu, b);
	if (err)
		pr_info(pmu, "cannot attach the BPF cgroup counter to its "
			     "raw tracepoints: %s",
			strerror(-err));
	return err ? -EOPNOTSUPP : 0;
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
	err = -pthread_mutex_init(&b->flush_lock, NULL);
	if (err) {
		free(b);
		return err;
	}
	b->possible = libbpf_num_possible_cpus();
	if (b->possible <= 0 || b->possible > MAX_CPUS) {
		pr_info(pmu, "the BPF cgroup backend handles up to %d CPUs, "
			     "this machine may have %d",
			MAX_CPUS, b->possible);
		err = -EOPNOTSUPP;
		goto fail;
	}
	b->max_slots = TOTALS_BUDGET / ((uint32_t)b->possible *
					 sizeof(struct slot_totals));
	if (b->max_slots > MAX_SLOTS)
		b->max_slots = MAX_SLOTS;
	if (b->max_slots < MIN_SLOTS)
		b->max_slots = MIN_SLOTS;
	if (shpmu__bpf_max_slots)
		b->max_slots = shpmu__bpf_max_slots;
	b->slots = calloc(b->max_slots, sizeof(*b->slots));
	b->nonline = cpus_online(pmu, &b->online);
	if (!b->slots || b->nonline < 0) {
		err = b->nonline < 0 ? b->nonline : -ENOMEM;
		goto fail;
	}
	if (load(pmu, b)) {
		err = -EOPNOTSUPP;
		goto fail;
	}
	err = attach(pmu, b);
	if (err)
		goto fail;
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
		uint32_t key = e * MAX_CPUS + (uint32_t)ev->cpus[i];

		/* A forked child's maps are its parent's: hands off. */
		if (!pmu->forked)
			bpf_map_delete_elem(map, &key);
		sys_close(pmu, ev->fds[i]);
	}
	/* A switch that read the event just before may still write its
	 * reading back; the index must not serve another attr before that
	 * is done. */
	if (!pmu->forked)
		bpf_backend_flush(pmu, b);
	pmu->stats.kernel_events--;
	pmu->stats.kernel_fds -= (uint64_t)ev->nfds;
	free(ev->fds);
	free(ev->cpus);
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
	pthread_mutex_destroy(&b->flush_lock);
	free(b->online);
	free(b->slots);
	free(b);
}

/* Runs the program on cpu with no outgoing task: the delta since the CPU's
 * last switch goes to what runs there now. On another CPU it runs in an
 * interrupt, so it also waits out any switch the program is handling
 * there. A CPU gone offline has nothing running to flush: its totals stand
 * as they are. The caller holds flush_lock: on its own CPU the program
 * runs with interrupts on, and another flush must not land inside it. */
static int flush_cpu_locked(struct shpmu *pmu, struct bpf_backend *b, int cpu)
{
	uint64_t no_switch[4] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, run, .flags = BPF_F_TEST_RUN_ON_CPU,
		    .cpu = (uint32_t)cpu, .ctx_in = no_switch,
		    .ctx_size_in = sizeof(no_switch));
	int err;

	if (!bpf_prog_test_run_opts(b->prog_fd, &run) || errno == ENXIO)
		return 0;
	err = -errno;
	pr_err(pmu, "BPF backend: flushing cpu %d: %s", cpu, strerror(-err));
	return err;
}

static int flush_cpus(struct shpmu *pmu, struct bpf_backend *b,
		      const int *cpus, int n)
{
	int err = 0;

	pthread_mutex_lock(&b->flush_lock);
	for (int i = 0; i < n && !err; i++)
		err = flush_cpu_locked(pmu, b, cpus[i]);
	pthread_mutex_unlock(&b->flush_lock);
	return err;
}

int bpf_backend_flush(struct shpmu *pmu, struct bpf_backend *b)
{
	int err = 0;

	pthread_mutex_lock(&b->flush_lock);
	for (int i = 0; i < b->nonline && !err; i++)
		err = flush_cpu_locked(pmu, b, b->online[i]);
	pthread_mutex_unlock(&b->flush_lock);
	return err;
}

/* How the program must count key at a switch: see switch_count() there. */
static uint8_t counter_kind(const struct event_key *key)
{
	/* The kernel counts switches in kernel mode only. */
	if (key->type != PERF_TYPE_SOFTWARE ||
	    (key->bits & KEY_EXCLUDE_KERNEL))
		return KIND_READ;
	if (key->config == PERF_COUNT_SW_CONTEXT_SWITCHES)
		return KIND_CONTEXT_SWITCHES;
	if (key->config == PERF_COUNT_SW_CGROUP_SWITCHES)
		return KIND_CGROUP_SWITCHES;
	return KIND_READ;
}

/* Opens attr on every online CPU and makes its readings the baseline the
 * program's first deltas start from. */
static int make_event(struct shpmu *pmu, struct bpf_backend *b, uint32_t e,
		      const struct event_key *key)
{
	struct shared_event *ev = &b->events[e];
	struct bpf_perf_event_value *base = NULL;
	unsigned char attr[SHPMU_ATTR_SIZE_KNOWN];
	int map = bpf_map__fd(b->skel->maps.events), err = 0, n, i;
	int *online;

	/* CPUs may have come and gone since the backend started. */
	n = cpus_online(pmu, &online);
	if (n < 0)
		return n;
	pthread_mutex_lock(&b->flush_lock);
	free(b->online);
	b->online = online;
	b->nonline = n;
	pthread_mutex_unlock(&b->flush_lock);
	ev->cpus = malloc((size_t)n * sizeof(*ev->cpus));
	ev->fds = calloc((size_t)n, sizeof(*ev->fds));
	base = calloc((size_t)b->possible, sizeof(*base));
	if (!ev->cpus || !ev->fds || !base) {
		err = -ENOMEM;
		goto fail;
	}
	memcpy(ev->cpus, online, (size_t)n * sizeof(*ev->cpus));
	key_to_attr(key,
		    PERF_FORMAT_TOTAL_TIME_ENABLED |
			    PERF_FORMAT_TOTAL_TIME_RUNNING,
		    attr);
	((struct perf_event_attr *)attr)->disabled = 0;
	for (i = 0; i < n; i++) {
		uint64_t v[3];
		int cpu = ev->cpus[i];
		int fd = sys_perf_event_open(pmu,
					     (struct perf_event_attr *)attr,
					     -1, cpu, -1,
					     PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			err = fd;
			pr_err(pmu, "BPF backend: perf_event_open on cpu %d: "
				    "%s",
			       cpu, strerror(-err));
			goto fail;
		}
		ev->fds[ev->nfds++] = fd;
		if (cpu >= b->possible ||
		    sys_read(pmu, fd, v, sizeof(v)) != sizeof(v)) {
			pr_err(pmu, "BPF backend: cannot read the new event on "
				    "cpu %d",
			       cpu);
			err = -EIO;
			goto fail;
		}
		base[cpu] = (struct bpf_perf_event_value){ v[0], v[1], v[2] };
	}
	b->skel->bss->event_kind[e] = counter_kind(key);
	if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.previous), &e, base,
				BPF_ANY)) {
		err = -errno;
		goto fail;
	}
	for (i = 0; i < ev->nfds; i++) {
		uint32_t index = e * MAX_CPUS + (uint32_t)ev->cpus[i];

		if (bpf_map_update_elem(map, &index, &ev->fds[i], BPF_ANY)) {
			err = -errno;
			goto fail;
		}
	}
	free(base);
	ev->key = *key;
	if (b->skel->bss->num_events <= e)
		b->skel->bss->num_events = e + 1;
	pmu->stats.kernel_events++;
	pmu->stats.kernel_fds += (uint64_t)ev->nfds;
	return 0;
fail:
	for (i = 0; i < ev->nfds; i++) {
		uint32_t index = e * MAX_CPUS + (uint32_t)ev->cpus[i];

		bpf_map_delete_elem(map, &index);
		sys_close(pmu, ev->fds[i]);
	}
	free(ev->fds);
	free(ev->cpus);
	free(base);
	memset(ev, 0, sizeof(*ev));
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

static void free_list_push(struct bpf_backend *b, uint32_t s)
{
	b->slots[s].next_free = NO_SLOT;
	if (b->free_tail == NO_SLOT)
		b->free_head = s;
	else
		b->slots[b->free_tail].next_free = s;
	b->free_tail = s;
}

/* A slot for a cgroup not counted yet: a fresh one while any are left,
 * then the longest freed. */
static int new_slot(struct shpmu *pmu, struct bpf_backend *b, uint32_t *out,
		    bool *fresh)
{
	uint32_t s = b->free_head;
	int err;

	*fresh = b->slots_used < b->max_slots;
	if (*fresh) {
		*out = b->slots_used++;
		return 0;
	}
	if (s == NO_SLOT) {
		pr_err(pmu, "the BPF cgroup backend counts at most %u cgroups "
			    "on this machine",
		       b->max_slots);
		return -ENOSPC;
	}
	/* A switch that looked the slot up before it was freed may still be
	 * adding to it on some CPU: a flush everywhere waits that out. */
	err = bpf_backend_flush(pmu, b);
	if (err)
		return err;
	b->free_head = b->slots[s].next_free;
	if (b->free_head == NO_SLOT)
		b->free_tail = NO_SLOT;
	*out = s;
	return 0;
}

static int get_slot(struct shpmu *pmu, struct bpf_backend *b, uint64_t id,
		    uint32_t *out)
{
	uint32_t s = find_slot(b, id);
	bool fresh;
	int err;

	if (s == NO_SLOT) {
		err = new_slot(pmu, b, &s, &fresh);
		if (err)
			return err;
		if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.cgroup_slots),
					&id, &s, BPF_ANY)) {
			err = -errno;
			/* Give the slot back where it came from. */
			if (fresh)
				b->slots_used--;
			else
				free_list_push(b, s);
			return err;
		}
		b->slots[s].id = id;
		b->slots[s].refs = 0;
		/* After the map entry: the program finds it once it looks. */
		__atomic_fetch_add(&b->skel->bss->counted_ids[id & FILTER_MASK],
				   1, __ATOMIC_RELEASE);
		__atomic_fetch_add(&b->skel->bss->generation, 1,
				   __ATOMIC_RELEASE);
	}
	b->slots[s].refs++;
	*out = s;
	return 0;
}

static void put_slot(struct bpf_backend *b, uint32_t s)
{
	uint64_t id = b->slots[s].id;

	if (--b->slots[s].refs)
		return;
	__atomic_fetch_sub(&b->skel->bss->counted_ids[id & FILTER_MASK], 1,
			   __ATOMIC_RELEASE);
	bpf_map_delete_elem(bpf_map__fd(b->skel->maps.cgroup_slots), &id);
	__atomic_fetch_add(&b->skel->bss->generation, 1, __ATOMIC_RELEASE);
	b->slots[s].id = 0;
	free_list_push(b, s);
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

uint64_t bpf_backend_unseen_switches(const struct bpf_backend *b)
{
	return __atomic_load_n(&b->skel->bss->unseen_switches,
			       __ATOMIC_RELAXED);
}

uint64_t bpf_backend_stray_switches(const struct bpf_backend *b)
{
	return __atomic_load_n(&b->skel->bss->unseen_strays,
			       __ATOMIC_RELAXED);
}

uint64_t bpf_backend_moves_settled(const struct bpf_backend *b)
{
	return __atomic_load_n(&b->skel->bss->moves_settled,
			       __ATOMIC_RELAXED);
}

/* Once per backend: counts near such switches go to the wrong task. */
static void tell_unseen(struct shpmu *pmu, struct bpf_backend *b)
{
	uint64_t n = bpf_backend_unseen_switches(b);

	if (!n || __atomic_exchange_n(&b->told_unseen, true, __ATOMIC_RELAXED))
		return;
	pr_info(pmu, "the sched_switch tracepoint has missed %llu context "
		     "switches on this machine (a kernel that hides some "
		     "tasks from tracing?): %llu were a task coming back, "
		     "counted as if it never left; what ran around %llu "
		     "others may have gone to the wrong counted cgroup",
		(unsigned long long)n,
		(unsigned long long)__atomic_load_n(
			&b->skel->bss->unseen_returns, __ATOMIC_RELAXED),
		(unsigned long long)bpf_backend_stray_switches(b));
}

/* Per-CPU totals on the stack up to this many possible CPUs (3 KiB). */
#define STACK_CPUS 16

int bpf_backend_read(struct shpmu *pmu, struct bpf_backend *b,
		     const struct bpf_counter *c, const int *cpus, uint32_t n,
		     bool flush, uint64_t *vals, uint32_t stride)
{
	struct slot_totals stack[STACK_CPUS], *per_cpu = stack;
	int err = 0;

	if (flush)
		err = flush_cpus(pmu, b, cpus, (int)n);
	if (err)
		return err;
	tell_unseen(pmu, b);
	if (b->possible > STACK_CPUS) {
		per_cpu = calloc((size_t)b->possible, sizeof(*per_cpu));
		if (!per_cpu)
			return -ENOMEM;
	} else {
		/* (valgrind cannot see the kernel fill it) */
		memset(stack, 0, sizeof(stack));
	}
	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.totals), &c->slot,
				per_cpu)) {
		err = -errno;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct bpf_perf_event_value *v;
		uint64_t *to = vals + (size_t)i * stride;

		if (cpus[i] < 0 || cpus[i] >= b->possible) {
			err = -EINVAL;
			goto out;
		}
		v = &per_cpu[cpus[i]].events[c->event];
		to[KVAL_ENABLED] = v->enabled;
		to[KVAL_RUNNING] = v->running;
		to[KVAL_COUNT] = v->counter;
	}
out:
	if (per_cpu != stack)
		free(per_cpu);
	return err;
}

#endif
