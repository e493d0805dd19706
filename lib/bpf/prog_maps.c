// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The switch counter's maps as userspace uses them, and every bpf(2) call
 * of the BPF backend past the load: the maps' memory mapped (the
 * program's globals, each CPU's view, the totals) and read consistently
 * with their seqcount; the entries of the events, counted cgroups, task
 * links and task totals; the program's own counters; and the test-run
 * that a flush is made of.
 */
#include "bpf/prog_maps.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/log.h"
#include "sys/sys.h"
#include "switch_counter.skel.h"

/* The length of a mapping of map fd's memory. */
static int map_len(struct shpmu *pmu, int fd, size_t *len)
{
	struct bpf_map_info info;
	uint32_t info_len = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);
	int err;

	memset(&info, 0, sizeof(info));
	err = sys_bpf_obj_info(pmu, fd, &info, &info_len);
	if (err)
		return err;
	*len = ((size_t)info.max_entries * ((info.value_size + 7) & ~7u) +
		(size_t)page - 1) &
	       ~((size_t)page - 1);
	return 0;
}

/* fd's memory mapped, or NULL with errno set. */
static void *map_memory(struct shpmu *pmu, int fd, bool writable, size_t *len)
{
	void *mem;
	int err = map_len(pmu, fd, len);

	if (!err)
		err = sys_mmap(pmu, *len,
			       PROT_READ | (writable ? PROT_WRITE : 0),
			       MAP_SHARED, fd, 0, &mem);
	errno = -err;
	return err ? NULL : mem;
}

void prog_unmap_memory(struct counter_prog *p)
{
	if (p->bss && p->bss_len)
		sys_munmap(p->pmu, p->bss, p->bss_len);
	if (p->views)
		sys_munmap(p->pmu, p->views, p->views_len);
	if (p->totals)
		sys_munmap(p->pmu, (void *)p->totals, p->totals_len);
}

int prog_map_memory(struct shpmu *pmu, struct counter_prog *p, int bss_fd,
		    int views_fd, int totals_fd)
{
	size_t need_views = (size_t)p->nr_cpus * sizeof(struct cpu_view);
	size_t need_totals =
		(size_t)p->max_slots * p->nr_cpus * sizeof(struct slot_totals);
	int err;

	if (bss_fd >= 0) {
		p->bss = map_memory(pmu, bss_fd, true, &p->bss_len);
		if (!p->bss)
			goto fail;
	}
	p->views = map_memory(pmu, views_fd, true, &p->views_len);
	if (!p->views)
		goto fail;
	p->totals = map_memory(pmu, totals_fd, false, &p->totals_len);
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
	/* (The unmapping below may set errno: the cause is kept first.) */
	err = -errno;
	prog_unmap_memory(p);
	p->bss = NULL;
	p->views = NULL;
	p->totals = NULL;
	return err;
}

int prog_run_on_cpu(const struct counter_prog *p, int cpu, const void *ctx,
		    uint32_t ctx_size, uint32_t *retval)
{
	return sys_bpf_prog_test_run(p->pmu, p->prog_fd, BPF_F_TEST_RUN_ON_CPU,
				     (uint32_t)cpu, ctx, ctx_size, retval);
}

/* Copies what is at from[0 .. n) on cpu between two equal even values of
 * its view's seq. The program's run on cpu writes between two increments
 * of seq; a run cannot be preempted, so a retry soon finds it done. */
static int copy_consistent(const struct cpu_view *view,
			   const struct counter_value *const *from,
			   struct counter_value *out, uint32_t n)
{
	for (unsigned int tries = 0; tries < 1000000; tries++) {
		uint64_t seq = __atomic_load_n(&view->seq, __ATOMIC_ACQUIRE);

		if (seq & 1)
			continue;
		for (uint32_t i = 0; i < n; i++) {
			out[i].counter = __atomic_load_n(&from[i]->counter,
							 __ATOMIC_RELAXED);
			out[i].enabled = __atomic_load_n(&from[i]->enabled,
							 __ATOMIC_RELAXED);
			out[i].running = __atomic_load_n(&from[i]->running,
							 __ATOMIC_RELAXED);
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&view->seq, __ATOMIC_RELAXED) == seq)
			return 0;
	}
	return -EAGAIN;
}

int counter_prog_value(const struct counter_prog *p, int cpu, uint32_t e,
		       uint32_t slot, struct counter_value *out,
		       uint64_t *unattributed)
{
	const struct cpu_view *view;
	const struct counter_value *from[2];
	struct counter_value got[2];
	int err;

	if (cpu < 0 || (uint32_t)cpu >= p->nr_cpus || e >= MAX_EVENTS ||
	    (slot != UINT32_MAX && slot >= p->max_slots))
		return -EINVAL;
	view = &p->views[cpu];
	from[0] = slot == UINT32_MAX
			  ? &view->raw[e]
			  : &p->totals[(size_t)slot * p->nr_cpus + (size_t)cpu]
				     .events[e];
	from[1] = &view->unattributed[e];
	err = copy_consistent(view, from, got, 2);
	if (err)
		return err;
	*out = got[0];
	/* A CPU target's raw reading is the kernel's own: never off. */
	*unattributed = slot == UINT32_MAX ? 0 : got[1].counter;
	return 0;
}

int counter_prog_unattributed(const struct counter_prog *p, int cpu, uint32_t e,
			      struct counter_value *out)
{
	const struct counter_value *from;

	if (cpu < 0 || (uint32_t)cpu >= p->nr_cpus || e >= MAX_EVENTS)
		return -EINVAL;
	from = &p->views[cpu].unattributed[e];
	return copy_consistent(&p->views[cpu], &from, out, 1);
}

void counter_prog_cpu_unseen(const struct counter_prog *p, int cpu,
			     uint64_t *unseen, uint64_t *unattributed_ns)
{
	const struct cpu_view *view = &p->views[cpu];

	*unseen = __atomic_load_n(&view->unseen, __ATOMIC_RELAXED);
	*unattributed_ns =
		__atomic_load_n(&view->unattributed_ns, __ATOMIC_RELAXED);
}

int counter_prog_set_event(struct counter_prog *p, uint32_t e, int cpu, int fd,
			   const struct counter_value *base)
{
	uint32_t index = e * MAX_CPUS + (uint32_t)cpu;

	if (cpu < 0 || (uint32_t)cpu >= p->nr_cpus)
		return -EINVAL;
	/* The program reads no baseline of a CPU without the event, nor
	 * adds to its unattributed totals, so these are written before the
	 * event goes in: the totals start again for the new attr. */
	p->views[cpu].raw[e] = *base;
	memset(&p->views[cpu].unattributed[e], 0,
	       sizeof(p->views[cpu].unattributed[e]));
	return sys_bpf_map_update(p->pmu, p->events_fd, &index, &fd, BPF_ANY);
}

void counter_prog_clear_event(struct counter_prog *p, uint32_t e)
{
	for (uint32_t cpu = 0; cpu < p->nr_cpus; cpu++) {
		uint32_t index = e * MAX_CPUS + cpu;

		sys_bpf_map_delete(p->pmu, p->events_fd, &index);
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
	int err = sys_bpf_map_update(p->pmu, p->slots_fd, &id, &slot, BPF_ANY);

	if (err)
		return err;
	/* After the map entry: the program finds it once it looks. */
	__atomic_fetch_add(&p->bss->counted_ids[id & FILTER_MASK], 1,
			   __ATOMIC_RELEASE);
	counter_prog_changed(p);
	return 0;
}

void counter_prog_uncount_cgroup(struct counter_prog *p, uint64_t id)
{
	__atomic_fetch_sub(&p->bss->counted_ids[id & FILTER_MASK], 1,
			   __ATOMIC_RELEASE);
	sys_bpf_map_delete(p->pmu, p->slots_fd, &id);
	counter_prog_changed(p);
}

int counter_prog_link_task(struct counter_prog *p, uint32_t kind, uint32_t id,
			   uint64_t start_ticks, int which, uint32_t target)
{
	uint64_t key = task_link_key(kind, id);
	struct task_link link = {.start_ticks = start_ticks,
				 .target = {NO_TARGET, NO_TARGET}};
	bool known;
	int err;

	if (which != TARGET_PLAIN && which != TARGET_INHERIT)
		return -EINVAL;
	err = sys_bpf_map_lookup(p->pmu, p->links_fd, &key, &link);
	if (err && err != -ENOENT)
		return err;
	known = !err;
	if (known && link.start_ticks != start_ticks)
		link = (struct task_link){.start_ticks = start_ticks,
					  .target = {NO_TARGET, NO_TARGET}};
	if (link.target[which] != NO_TARGET && link.target[which] != target)
		return -EBUSY;
	link.target[which] = target;
	err = sys_bpf_map_update(p->pmu, p->links_fd, &key, &link, BPF_ANY);
	if (err)
		return err;
	/* After the entry: the program finds it once it looks. */
	if (!known)
		__atomic_fetch_add(
			&p->bss->counted_tasks[task_filter_index(kind, id)], 1,
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
		sys_bpf_map_update(p->pmu, p->links_fd, &key, link, BPF_EXIST);
		return;
	}
	if (!sys_bpf_map_delete(p->pmu, p->links_fd, &key))
		__atomic_fetch_sub(
			&p->bss->counted_tasks[task_filter_index(
				(uint32_t)(key >> 32), (uint32_t)key)],
			1, __ATOMIC_RELEASE);
}

void counter_prog_unlink_target(struct counter_prog *p, uint32_t kind,
				uint32_t id, uint32_t target, bool children)
{
	uint64_t key = task_link_key(kind, id), next;
	struct task_link link;
	bool more;

	if (!sys_bpf_map_lookup(p->pmu, p->links_fd, &key, &link))
		unlink_one(p, key, &link, target);
	if (!children)
		return;
	/* The children's links: a walk of the map, each next key taken
	 * before the link it follows may be deleted. */
	more = !sys_bpf_map_next_key(p->pmu, p->links_fd, NULL, &next);
	while (more) {
		key = next;
		more = !sys_bpf_map_next_key(p->pmu, p->links_fd, &key, &next);
		if (!sys_bpf_map_lookup(p->pmu, p->links_fd, &key, &link))
			unlink_one(p, key, &link, target);
	}
}

int counter_prog_add_task_total(struct counter_prog *p, uint32_t target,
				uint32_t e)
{
	uint64_t key = task_total_key(target, e);
	struct counter_value zero = {0};

	return sys_bpf_map_update(p->pmu, p->task_totals_fd, &key, &zero,
				  BPF_ANY);
}

void counter_prog_del_task_total(struct counter_prog *p, uint32_t target,
				 uint32_t e)
{
	uint64_t key = task_total_key(target, e);

	sys_bpf_map_delete(p->pmu, p->task_totals_fd, &key);
}

int counter_prog_task_total(const struct counter_prog *p, uint32_t target,
			    uint32_t e, struct counter_value *out)
{
	uint64_t key = task_total_key(target, e);

	return sys_bpf_map_lookup(p->pmu, p->task_totals_fd, &key, out);
}

/* A map's memlock line in its fdinfo: the kernel's map_mem_usage(). */
static uint64_t map_memlock(struct shpmu *pmu, int fd)
{
	char path[64], line[128];
	unsigned long long bytes = 0;
	struct sys_lines l;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (sys_lines_open(pmu, &l, path))
		return 0;
	while (sys_lines_next(pmu, &l, line, sizeof(line)) > 0)
		if (sscanf(line, "memlock: %llu", &bytes) == 1)
			break;
	sys_lines_close(pmu, &l);
	return bytes;
}

uint64_t counter_prog_task_bytes(const struct counter_prog *p)
{
	return map_memlock(p->pmu, p->links_fd) +
	       map_memlock(p->pmu, p->task_totals_fd);
}

uint64_t counter_prog_children_lost(const struct counter_prog *p)
{
	return __atomic_load_n(&p->bss->children_lost, __ATOMIC_RELAXED);
}

uint64_t counter_prog_unseen(const struct counter_prog *p)
{
	return __atomic_load_n(&p->bss->unseen_switches, __ATOMIC_RELAXED);
}

uint64_t counter_prog_unattributed_settles(const struct counter_prog *p)
{
	return __atomic_load_n(&p->bss->unattributed_settles, __ATOMIC_RELAXED);
}

bool counter_prog_sees_tick(const struct counter_prog *p)
{
	return __atomic_load_n(&p->bss->tick_fn, __ATOMIC_RELAXED) != 0;
}

uint64_t counter_prog_moves(const struct counter_prog *p)
{
	return __atomic_load_n(&p->bss->moves_settled, __ATOMIC_RELAXED);
}
