// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "bpf/counter_prog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup_counter.skel.h"
#include "core/cpus.h"
#include "core/log.h"

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

/* The program opened, not loaded, its maps sized for nr_cpus and
 * max_slots. */
static int open_sized(uint32_t nr_cpus, uint32_t max_slots,
		      struct cgroup_counter **out)
{
	struct cgroup_counter *skel = cgroup_counter__open();
	int err = skel ? 0 : -errno;

	if (!err) {
		skel->rodata->nr_cpus = nr_cpus;
		skel->rodata->ns_per_tick =
			1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK);
		err = bpf_map__set_max_entries(skel->maps.totals,
					       max_slots * nr_cpus);
	}
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.cpu_views, nr_cpus);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.cgroup_slots,
					       max_slots);
	if (err)
		cgroup_counter__destroy(skel);
	else
		*out = skel;
	return err;
}

static void shape_of(const struct bpf_map *m, struct map_shape *out)
{
	out->type = bpf_map__type(m);
	out->key_size = bpf_map__key_size(m);
	out->value_size = bpf_map__value_size(m);
	out->max_entries = bpf_map__max_entries(m);
	out->flags = bpf_map__map_flags(m);
}

int counter_prog_shapes(uint32_t nr_cpus, uint32_t max_slots,
			struct map_shape shapes[N_PROG_FDS],
			uint32_t *prog_type)
{
	struct cgroup_counter *s;
	int err = open_sized(nr_cpus, max_slots, &s);

	if (err)
		return err;
	memset(shapes, 0, sizeof(shapes[0]) * N_PROG_FDS);
	*prog_type = bpf_program__type(s->progs.on_switch);
	shape_of(s->maps.events, &shapes[EVENTS_FD]);
	shape_of(s->maps.cgroup_slots, &shapes[SLOTS_FD]);
	shape_of(s->maps.bss, &shapes[BSS_FD]);
	shape_of(s->maps.cpu_views, &shapes[VIEWS_FD]);
	shape_of(s->maps.totals, &shapes[TOTALS_FD]);
	shape_of(s->maps.task_links, &shapes[LINKS_FD]);
	shape_of(s->maps.task_totals, &shapes[TASK_TOTALS_FD]);
	cgroup_counter__destroy(s);
	return 0;
}

static int load(struct shpmu *pmu, uint32_t nr_cpus, uint32_t max_slots,
		struct cgroup_counter **out)
{
	struct cgroup_counter *skel = NULL;
	int err;

	pthread_mutex_lock(&load_lock);
	loading = pmu;
	app_printer = libbpf_set_print(forward_libbpf);
	err = open_sized(nr_cpus, max_slots, &skel);
	/* attach() picks the move hooks this kernel has. */
	if (!err) {
		bpf_program__set_autoattach(skel->progs.on_ipi, false);
		bpf_program__set_autoattach(skel->progs.on_attach, false);
	}
	if (!err)
		err = cgroup_counter__load(skel);
	libbpf_set_print(app_printer);
	loading = NULL;
	pthread_mutex_unlock(&load_lock);
	if (err == -EPERM)
		pr_info(pmu,
			"cannot load the BPF cgroup counter: %s (it needs "
			"CAP_BPF and CAP_PERFMON, or root)",
			strerror(-err));
	else if (err)
		pr_info(pmu,
			"cannot load the BPF cgroup counter: %s (the "
			"kernel refused it: it needs BTF, raw tracepoints, "
			"bpf_loop and bpf_rdonly_cast, from Linux 6.2; the "
			"debug log has the verifier's reasons)",
			strerror(-err));
	if (err)
		cgroup_counter__destroy(skel);
	else
		*out = skel;
	return err;
}

/* Moves of a running task are settled where perf's cgroup controller
 * runs a function on the task's CPU (csd_function_entry, Linux 6.4); on
 * older kernels only the moves a task makes itself are (cgroup_attach_task
 * runs in the writer's context), and the rest at the task's next switch. */
static int attach_move_hook(struct shpmu *pmu, struct cgroup_counter *s,
			    bool ipi_hook)
{
	if (ipi_hook) {
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

static int attach(struct shpmu *pmu, struct cgroup_counter *s, bool ipi_hook)
{
	int err = 0;

	s->links.on_switch = bpf_program__attach(s->progs.on_switch);
	if (!s->links.on_switch)
		err = -errno;
	if (!err) {
		s->links.on_fork = bpf_program__attach(s->progs.on_fork);
		if (!s->links.on_fork)
			err = -errno;
	}
	if (!err)
		err = attach_move_hook(pmu, s, ipi_hook);
	if (err)
		pr_info(pmu,
			"cannot attach the BPF cgroup counter to its "
			"raw tracepoints: %s",
			strerror(-err));
	return err;
}

static void close_if_open(int fd)
{
	if (fd >= 0)
		close(fd);
}

int counter_prog_cpus(struct shpmu *pmu)
{
	int n = libbpf_num_possible_cpus();

	if (n > 0 && n <= MAX_CPUS)
		return n;
	pr_info(pmu,
		"the BPF backend handles up to %d CPUs, this machine may "
		"have %d",
		MAX_CPUS, n);
	return -EOPNOTSUPP;
}

int counter_prog_load_skel(struct shpmu *pmu, uint32_t nr_cpus,
			   uint32_t max_slots, bool ipi_hook,
			   struct cgroup_counter **skel)
{
	if (load(pmu, nr_cpus, max_slots, skel))
		return -EOPNOTSUPP;
	if (attach(pmu, *skel, ipi_hook)) {
		cgroup_counter__destroy(*skel);
		*skel = NULL;
		return -EOPNOTSUPP;
	}
	return 0;
}

/* The length of a mapping of map fd's memory. */
static int map_len(int fd, size_t *len)
{
	struct bpf_map_info info;
	uint32_t info_len = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		return -errno;
	*len = ((size_t)info.max_entries * ((info.value_size + 7) & ~7u) +
		(size_t)page - 1) &
	       ~((size_t)page - 1);
	return 0;
}

static void *map_memory(int fd, bool writable, size_t *len)
{
	void *mem;

	if (map_len(fd, len))
		return NULL;
	mem = mmap(NULL, *len, PROT_READ | (writable ? PROT_WRITE : 0),
		   MAP_SHARED, fd, 0);
	return mem == MAP_FAILED ? NULL : mem;
}

static void unmap_all(struct counter_prog *p)
{
	if (p->bss && p->bss_len)
		munmap(p->bss, p->bss_len);
	if (p->views)
		munmap(p->views, p->views_len);
	if (p->totals)
		munmap((void *)p->totals, p->totals_len);
}

/* Maps views and totals (and bss where asked) and checks their sizes. */
static int map_all(struct shpmu *pmu, struct counter_prog *p, int bss_fd,
		   int views_fd, int totals_fd)
{
	size_t need_views = (size_t)p->nr_cpus * sizeof(struct cpu_view);
	size_t need_totals =
		(size_t)p->max_slots * p->nr_cpus * sizeof(struct slot_totals);

	if (bss_fd >= 0) {
		p->bss = map_memory(bss_fd, true, &p->bss_len);
		if (!p->bss)
			goto fail;
	}
	p->views = map_memory(views_fd, true, &p->views_len);
	if (!p->views)
		goto fail;
	p->totals = map_memory(totals_fd, false, &p->totals_len);
	if (!p->totals)
		goto fail;
	if (p->views_len < need_views || p->totals_len < need_totals ||
	    (bss_fd >= 0 && p->bss_len < sizeof(*p->bss))) {
		pr_err(pmu, "BPF backend: the pinned maps are smaller than "
			    "their books say");
		errno = EPROTO;
		goto fail;
	}
	return 0;
fail:
	unmap_all(p);
	p->bss = NULL;
	p->views = NULL;
	p->totals = NULL;
	return -errno;
}

static int init_common(struct shpmu *pmu, struct counter_prog *p)
{
	int err = -pthread_mutex_init(&p->flush_lock, NULL);

	if (err)
		return err;
	p->nonline = cpus_online(pmu, &p->online);
	if (p->nonline < 0) {
		err = p->nonline;
		p->online = NULL;
		pthread_mutex_destroy(&p->flush_lock);
	}
	return err;
}

int counter_prog_load(struct shpmu *pmu, uint32_t max_slots, bool ipi_hook,
		      struct counter_prog *p)
{
	int cpus = counter_prog_cpus(pmu), err;

	memset(p, 0, sizeof(*p));
	p->prog_fd = p->events_fd = p->slots_fd = -1;
	p->links_fd = p->task_totals_fd = -1;
	if (cpus < 0)
		return cpus;
	err = init_common(pmu, p);
	if (err)
		return err;
	p->nr_cpus = (uint32_t)cpus;
	p->max_slots = max_slots;
	err = counter_prog_load_skel(pmu, p->nr_cpus, max_slots, ipi_hook,
				     &p->skel);
	if (err)
		goto fail;
	p->prog_fd = bpf_program__fd(p->skel->progs.on_switch);
	p->events_fd = bpf_map__fd(p->skel->maps.events);
	p->slots_fd = bpf_map__fd(p->skel->maps.cgroup_slots);
	p->links_fd = bpf_map__fd(p->skel->maps.task_links);
	p->task_totals_fd = bpf_map__fd(p->skel->maps.task_totals);
	p->bss = p->skel->bss;
	err = map_all(pmu, p, -1, bpf_map__fd(p->skel->maps.cpu_views),
		      bpf_map__fd(p->skel->maps.totals));
	if (err)
		goto fail;
	return 0;
fail:
	counter_prog_unload(p);
	return err;
}

int counter_prog_adopt(struct shpmu *pmu, const int fds[N_PROG_FDS],
		       uint32_t nr_cpus, uint32_t max_slots,
		       struct counter_prog *p)
{
	int err;

	memset(p, 0, sizeof(*p));
	p->prog_fd = fds[PROG_FD];
	p->events_fd = fds[EVENTS_FD];
	p->slots_fd = fds[SLOTS_FD];
	p->links_fd = fds[LINKS_FD];
	p->task_totals_fd = fds[TASK_TOTALS_FD];
	p->nr_cpus = nr_cpus;
	p->max_slots = max_slots;
	err = init_common(pmu, p);
	if (!err)
		err = map_all(pmu, p, fds[BSS_FD], fds[VIEWS_FD],
			      fds[TOTALS_FD]);
	/* The mappings hold the maps now. */
	close(fds[BSS_FD]);
	close(fds[VIEWS_FD]);
	close(fds[TOTALS_FD]);
	if (err) {
		close(p->prog_fd);
		close(p->events_fd);
		close(p->slots_fd);
		close(p->links_fd);
		close(p->task_totals_fd);
		if (p->online) {
			free(p->online);
			pthread_mutex_destroy(&p->flush_lock);
		}
		memset(p, 0, sizeof(*p));
	}
	return err;
}

void counter_prog_unload(struct counter_prog *p)
{
	if (!p->online && !p->skel && !p->bss)
		return;
	unmap_all(p);
	if (p->skel) {
		cgroup_counter__destroy(p->skel);
	} else {
		close_if_open(p->prog_fd);
		close_if_open(p->events_fd);
		close_if_open(p->slots_fd);
		close_if_open(p->links_fd);
		close_if_open(p->task_totals_fd);
	}
	pthread_mutex_destroy(&p->flush_lock);
	free(p->online);
	memset(p, 0, sizeof(*p));
}

int counter_prog_refresh_online(struct shpmu *pmu, struct counter_prog *p)
{
	int *online, n = cpus_online(pmu, &online);

	if (n < 0)
		return n;
	pthread_mutex_lock(&p->flush_lock);
	free(p->online);
	p->online = online;
	p->nonline = n;
	pthread_mutex_unlock(&p->flush_lock);
	return 0;
}

/* Runs the program on cpu with no outgoing task: the delta since the CPU's
 * last settle goes to what runs there now. On another CPU it runs in an
 * interrupt, so it also waits out any switch the program is handling
 * there. A CPU gone offline has nothing running to flush: its totals stand
 * as they are. The caller holds flush_lock; another process's flush may
 * still be running on cpu, with interrupts on: then the program returns 1
 * and we try again (that run is short and cannot be preempted). */
static int flush_cpu_locked(struct shpmu *pmu, struct counter_prog *p, int cpu)
{
	uint64_t no_switch[4] = {0};
	LIBBPF_OPTS(bpf_test_run_opts, run, .flags = BPF_F_TEST_RUN_ON_CPU,
		    .cpu = (uint32_t)cpu, .ctx_in = no_switch,
		    .ctx_size_in = sizeof(no_switch));
	int err;

	for (int tries = 0; tries < 100000; tries++) {
		run.retval = 0;
		if (bpf_prog_test_run_opts(p->prog_fd, &run)) {
			if (errno == ENXIO)
				return 0;
			err = -errno;
			goto fail;
		}
		if (run.retval == 0)
			return 0;
		sched_yield();
	}
	err = -EBUSY;
fail:
	pr_err(pmu, "BPF backend: flushing cpu %d: %s", cpu, strerror(-err));
	return err;
}

int counter_prog_flush_cpus(struct shpmu *pmu, struct counter_prog *p,
			    const int *cpus, uint32_t n)
{
	int err = 0;

	pthread_mutex_lock(&p->flush_lock);
	for (uint32_t i = 0; i < n && !err; i++)
		err = flush_cpu_locked(pmu, p, cpus[i]);
	pthread_mutex_unlock(&p->flush_lock);
	return err;
}

int counter_prog_flush(struct shpmu *pmu, struct counter_prog *p)
{
	int err = 0;

	pthread_mutex_lock(&p->flush_lock);
	for (int i = 0; i < p->nonline && !err; i++)
		err = flush_cpu_locked(pmu, p, p->online[i]);
	pthread_mutex_unlock(&p->flush_lock);
	return err;
}

int counter_prog_value(const struct counter_prog *p, int cpu, uint32_t e,
		       uint32_t slot, struct counter_value *out)
{
	const struct cpu_view *view;
	const struct counter_value *from;

	if (cpu < 0 || (uint32_t)cpu >= p->nr_cpus || e >= MAX_EVENTS ||
	    (slot != UINT32_MAX && slot >= p->max_slots))
		return -EINVAL;
	view = &p->views[cpu];
	from = slot == UINT32_MAX
		       ? &view->raw[e]
		       : &p->totals[(size_t)slot * p->nr_cpus + (size_t)cpu]
				  .events[e];
	/* The program's run on cpu writes between two increments of seq;
	 * a run cannot be preempted, so a retry soon finds it done. */
	for (unsigned int tries = 0; tries < 1000000; tries++) {
		uint64_t seq = __atomic_load_n(&view->seq, __ATOMIC_ACQUIRE);

		if (seq & 1)
			continue;
		out->counter =
			__atomic_load_n(&from->counter, __ATOMIC_RELAXED);
		out->enabled =
			__atomic_load_n(&from->enabled, __ATOMIC_RELAXED);
		out->running =
			__atomic_load_n(&from->running, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&view->seq, __ATOMIC_RELAXED) == seq)
			return 0;
	}
	return -EAGAIN;
}

int counter_prog_set_event(struct counter_prog *p, uint32_t e, int cpu, int fd,
			   const struct counter_value *base)
{
	uint32_t index = e * MAX_CPUS + (uint32_t)cpu;

	if (cpu < 0 || (uint32_t)cpu >= p->nr_cpus)
		return -EINVAL;
	/* The program reads no baseline of a CPU without the event, so
	 * this is written before the event goes in. */
	p->views[cpu].raw[e] = *base;
	if (bpf_map_update_elem(p->events_fd, &index, &fd, BPF_ANY))
		return -errno;
	return 0;
}

void counter_prog_clear_event(struct counter_prog *p, uint32_t e)
{
	for (uint32_t cpu = 0; cpu < p->nr_cpus; cpu++) {
		uint32_t index = e * MAX_CPUS + cpu;

		bpf_map_delete_elem(p->events_fd, &index);
	}
}

void counter_prog_set_kind(struct counter_prog *p, uint32_t e, uint8_t kind)
{
	p->bss->event_kind[e] = kind;
}

void counter_prog_use_event(struct counter_prog *p, uint32_t e)
{
	if (p->bss->num_events <= e)
		p->bss->num_events = e + 1;
}

uint16_t *counter_prog_filter(struct counter_prog *p)
{
	return p->bss->counted_ids;
}

uint32_t *counter_prog_task_filter(struct counter_prog *p)
{
	return p->bss->counted_tasks;
}

void counter_prog_changed(struct counter_prog *p)
{
	__atomic_fetch_add(&p->bss->generation, 1, __ATOMIC_RELEASE);
}

#define FILTER_MASK (COUNTED_FILTER_SIZE - 1)

int counter_prog_count_cgroup(struct counter_prog *p, uint64_t id,
			      uint32_t slot)
{
	if (bpf_map_update_elem(p->slots_fd, &id, &slot, BPF_ANY))
		return -errno;
	/* After the map entry: the program finds it once it looks. */
	__atomic_fetch_add(&p->bss->counted_ids[id & FILTER_MASK], 1,
			   __ATOMIC_RELEASE);
	__atomic_fetch_add(&p->bss->generation, 1, __ATOMIC_RELEASE);
	return 0;
}

void counter_prog_uncount_cgroup(struct counter_prog *p, uint64_t id)
{
	__atomic_fetch_sub(&p->bss->counted_ids[id & FILTER_MASK], 1,
			   __ATOMIC_RELEASE);
	bpf_map_delete_elem(p->slots_fd, &id);
	__atomic_fetch_add(&p->bss->generation, 1, __ATOMIC_RELEASE);
}

#define TASK_MASK (TASK_FILTER_SIZE - 1)

int counter_prog_link_task(struct counter_prog *p, uint32_t kind, uint32_t id,
			   uint64_t start_ticks, int which, uint32_t target)
{
	uint64_t key = task_link_key(kind, id);
	struct task_link link = {.start_ticks = start_ticks,
				 .target = {NO_TARGET, NO_TARGET}};
	bool known;

	if (which != TARGET_PLAIN && which != TARGET_INHERIT)
		return -EINVAL;
	known = !bpf_map_lookup_elem(p->links_fd, &key, &link);
	if (known && link.start_ticks != start_ticks)
		link = (struct task_link){.start_ticks = start_ticks,
					  .target = {NO_TARGET, NO_TARGET}};
	if (link.target[which] != NO_TARGET && link.target[which] != target)
		return -EBUSY;
	link.target[which] = target;
	if (bpf_map_update_elem(p->links_fd, &key, &link, BPF_ANY))
		return -errno;
	/* After the entry: the program finds it once it looks. */
	if (!known)
		__atomic_fetch_add(&p->bss->counted_tasks[id & TASK_MASK], 1,
				   __ATOMIC_RELEASE);
	return 0;
}

/* Takes target out of the link at key (read into link); removes a link
 * left with no target. */
static void unlink_one(struct counter_prog *p, uint64_t key,
		       struct task_link *link, uint32_t target)
{
	bool had = false;

	for (int i = 0; i < 2; i++)
		if (link->target[i] == target) {
			link->target[i] = NO_TARGET;
			had = true;
		}
	if (!had)
		return;
	if (link->target[0] != NO_TARGET || link->target[1] != NO_TARGET) {
		bpf_map_update_elem(p->links_fd, &key, link, BPF_EXIST);
		return;
	}
	if (!bpf_map_delete_elem(p->links_fd, &key))
		__atomic_fetch_sub(
			&p->bss->counted_tasks[(uint32_t)key & TASK_MASK], 1,
			__ATOMIC_RELEASE);
}

void counter_prog_unlink_target(struct counter_prog *p, uint32_t kind,
				uint32_t id, uint32_t target, bool children)
{
	uint64_t key = task_link_key(kind, id), next;
	struct task_link link;
	bool more;

	if (!bpf_map_lookup_elem(p->links_fd, &key, &link))
		unlink_one(p, key, &link, target);
	if (!children)
		return;
	/* The children's links: a walk of the map, each next key taken
	 * before the link it follows may be deleted. */
	more = !bpf_map_get_next_key(p->links_fd, NULL, &next);
	while (more) {
		key = next;
		more = !bpf_map_get_next_key(p->links_fd, &key, &next);
		if (!bpf_map_lookup_elem(p->links_fd, &key, &link))
			unlink_one(p, key, &link, target);
	}
}

int counter_prog_add_task_total(struct counter_prog *p, uint32_t target,
				uint32_t e)
{
	uint64_t key = task_total_key(target, e);
	struct counter_value zero = {0};

	if (bpf_map_update_elem(p->task_totals_fd, &key, &zero, BPF_ANY))
		return -errno;
	return 0;
}

void counter_prog_del_task_total(struct counter_prog *p, uint32_t target,
				 uint32_t e)
{
	uint64_t key = task_total_key(target, e);

	bpf_map_delete_elem(p->task_totals_fd, &key);
}

int counter_prog_task_total(const struct counter_prog *p, uint32_t target,
			    uint32_t e, struct counter_value *out)
{
	uint64_t key = task_total_key(target, e);

	if (bpf_map_lookup_elem(p->task_totals_fd, &key, out))
		return -errno;
	return 0;
}

/* A map's memlock line in its fdinfo: the kernel's map_mem_usage(). */
static uint64_t map_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long bytes = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &bytes) == 1)
			break;
	fclose(f);
	return bytes;
}

uint64_t counter_prog_task_bytes(const struct counter_prog *p)
{
	return map_memlock(p->links_fd) + map_memlock(p->task_totals_fd);
}

uint64_t counter_prog_children_lost(const struct counter_prog *p)
{
	return __atomic_load_n(&p->bss->children_lost, __ATOMIC_RELAXED);
}

uint64_t counter_prog_unseen(const struct counter_prog *p)
{
	return __atomic_load_n(&p->bss->unseen_switches, __ATOMIC_RELAXED);
}

uint64_t counter_prog_strays(const struct counter_prog *p)
{
	return __atomic_load_n(&p->bss->unseen_strays, __ATOMIC_RELAXED);
}

uint64_t counter_prog_moves(const struct counter_prog *p)
{
	return __atomic_load_n(&p->bss->moves_settled, __ATOMIC_RELAXED);
}

void counter_prog_tell_unseen(struct shpmu *pmu, struct counter_prog *p)
{
	uint64_t n = counter_prog_unseen(p);

	if (!n || __atomic_exchange_n(&p->told_unseen, true, __ATOMIC_RELAXED))
		return;
	pr_info(pmu,
		"the sched_switch tracepoint has missed %llu context "
		"switches on this machine (a kernel that hides some "
		"tasks from tracing?): %llu were a task coming back, "
		"counted as if it never left; what ran around %llu "
		"others may have gone to the wrong counted cgroup",
		(unsigned long long)n,
		(unsigned long long)__atomic_load_n(&p->bss->unseen_returns,
						    __ATOMIC_RELAXED),
		(unsigned long long)counter_prog_strays(p));
}
