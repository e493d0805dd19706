// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Model events: perf_event_open's checks (in the kernel's order where it
 * matters for the errno), read(2)'s layouts, the ioctls, and close(2).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/pmu_model_int.h"
#include "sys/sys.h"

#define KNOWN_FORMAT                                                           \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |     \
	 PERF_FORMAT_ID | PERF_FORMAT_GROUP | PERF_FORMAT_LOST)
#define KNOWN_FLAGS                                                            \
	(PERF_FLAG_FD_CLOEXEC | PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_NO_GROUP)

bool pm_is_model_type(uint32_t type)
{
	return type >= PMU_MODEL_TYPE_FIRST &&
	       type - PMU_MODEL_TYPE_FIRST < pm.cfg.npmus;
}

/* The events the model counts: the generic hardware ones, raw ones and
 * its own PMUs'. */
static bool counted_here(uint32_t type)
{
	return type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE ||
	       type == PERF_TYPE_RAW || pm_is_model_type(type);
}

struct pm_event *pm_event_of_fd(int fd)
{
	return fd >= 0 && (size_t)fd < pm.by_fd_len ? pm.by_fd[fd] : NULL;
}

/* 0, or the kernel's errno for a generic event's config. */
static int check_config(const struct perf_event_attr *a)
{
	uint32_t c = (uint32_t)a->config;

	if (a->type == PERF_TYPE_HARDWARE)
		return c < PERF_COUNT_HW_MAX ? 0 : EINVAL;
	if (a->type == PERF_TYPE_HW_CACHE)
		return (c & 0xff) < PERF_COUNT_HW_CACHE_MAX &&
				       (c >> 8 & 0xff) <
					       PERF_COUNT_HW_CACHE_OP_MAX &&
				       (c >> 16 & 0xff) <
					       PERF_COUNT_HW_CACHE_RESULT_MAX &&
				       !(c >> 24)
			       ? 0
			       : EINVAL;
	return 0;
}

/* The PMU an event counts on into *pmu: a model type names it; a generic
 * event's extended type (config bits 32..63) may; else a CPU event goes
 * to its CPU's, a task event to the first. */
static int pick_pmu(const struct perf_event_attr *a, int cpu, unsigned int *pmu)
{
	uint32_t ext = (uint32_t)(a->config >> 32);

	if (pm_is_model_type(a->type))
		*pmu = a->type - PMU_MODEL_TYPE_FIRST;
	else if ((a->type == PERF_TYPE_HARDWARE ||
		  a->type == PERF_TYPE_HW_CACHE) &&
		 ext) {
		if (!pm_is_model_type(ext))
			return ENOENT;
		*pmu = ext - PMU_MODEL_TYPE_FIRST;
	} else
		*pmu = cpu >= 0 ? pm.pmu_of_cpu[cpu] : 0;
	/* A PMU counts only on its own CPUs. */
	return cpu >= 0 && pm.pmu_of_cpu[cpu] != *pmu ? ENOENT : 0;
}

/* pid >= 0 must name a thread (ESRCH, as the kernel); pid -1 needs a
 * CPU; a CPU past the model's is EINVAL, one offline ENODEV (as Linux
 * 6.x). */
static int check_target(pid_t pid, int cpu, unsigned long flags)
{
	if (cpu < -1 || cpu >= pm.ncpus)
		return EINVAL;
	if (flags & PERF_FLAG_PID_CGROUP) {
		/* A cgroup event is a CPU event; pid is the cgroup's fd. */
		struct stat st;

		if (cpu < 0 || pid < 0)
			return EINVAL;
		if (shpmu_sys_kernel.fstatat(pid, "", &st, AT_EMPTY_PATH,
					     NULL) < 0)
			return EBADF;
		if (!S_ISDIR(st.st_mode))
			return EBADF;
	} else if (pid >= 0) {
		char path[32];
		struct stat st;

		snprintf(path, sizeof(path), "/proc/%d", (int)pid);
		if (pid > 0 &&
		    shpmu_sys_kernel.fstatat(AT_FDCWD, path, &st, 0, NULL) < 0)
			return ESRCH;
	} else if (pid < -1 || cpu < 0) {
		return EINVAL;
	}
	if (cpu >= 0 && !pm.online[cpu])
		return ENODEV;
	return 0;
}

/* The group an event joins: 0 with *leader (NULL: none), or an errno. A
 * model event cannot join a kernel group (a software leader), and the
 * group's events share a domain, as the kernel asks of a hardware
 * group. */
static int find_leader(const struct perf_event_attr *a, struct pm_domain *d,
		       int group_fd, unsigned long flags,
		       struct pm_event **leader)
{
	struct pm_event *l;

	*leader = NULL;
	if (group_fd < 0 || (flags & PERF_FLAG_FD_NO_GROUP))
		return 0;
	l = pm_event_of_fd(group_fd);
	if (!l)
		return EINVAL;
	if (l->leader != l || l->dom != d)
		return EINVAL;
	/* Only a group's leader may be pinned or exclusive. */
	if (a->pinned || a->exclusive)
		return EINVAL;
	*leader = l;
	return 0;
}

static int remember_fd(struct pm_event *e)
{
	if ((size_t)e->fd >= pm.by_fd_len) {
		size_t len = (size_t)e->fd * 2 + 16;
		struct pm_event **t = realloc(pm.by_fd, len * sizeof(*t));

		if (!t)
			return ENOMEM;
		memset(t + pm.by_fd_len, 0, (len - pm.by_fd_len) * sizeof(*t));
		pm.by_fd = t;
		pm.by_fd_len = len;
	}
	pm.by_fd[e->fd] = e;
	return 0;
}

static void join(struct pm_event *e, struct pm_event *leader)
{
	struct pm_domain *d = e->dom;

	e->leader = leader ? leader : e;
	if (leader) {
		struct pm_event **at = &leader->sibs;

		while (*at)
			at = &(*at)->next_sib;
		*at = e;
		leader->nr_sibs++;
		return;
	}
	e->prev = d->tail;
	if (d->tail)
		d->tail->next = e;
	else
		d->head = e;
	d->tail = e;
}

/* Checks and makes an event: its fd, or -errno. */
static int open_checked(struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags)
{
	struct pm_event *e, *leader;
	unsigned int pmu;
	int err;

	if (flags & ~(unsigned long)KNOWN_FLAGS)
		return -EINVAL;
	/* The kernel's smallest attr is its first version's. */
	if (attr->size && attr->size < PERF_ATTR_SIZE_VER0)
		return -E2BIG;
	if (attr->read_format & ~(uint64_t)KNOWN_FORMAT)
		return -EINVAL;
	err = check_config(attr);
	if (!err)
		err = check_target(pid, cpu, flags);
	if (!err)
		err = pick_pmu(attr, cpu, &pmu);
	if (err)
		return -err;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	memcpy(&e->attr, attr,
	       attr->size && attr->size < sizeof(*attr) ? attr->size
							: sizeof(*attr));
	/* A task event counts in its PMU's task domain; a cgroup event
	 * counts on its CPU all the time (the model runs no cgroups). */
	e->dom = pm_domain_of(
		pmu, pid >= 0 && !(flags & PERF_FLAG_PID_CGROUP) ? -1 : cpu);
	err = find_leader(attr, e->dom, group_fd, flags, &leader);
	if (!err && !(leader ? pm_group_can_ever_fit(leader, e)
			     : pm_group_can_ever_fit(e, NULL)))
		err = EINVAL;
	if (!err) {
		e->fd = eventfd(0,
				flags & PERF_FLAG_FD_CLOEXEC ? EFD_CLOEXEC : 0);
		if (e->fd < 0)
			err = errno;
	}
	if (!err && (err = remember_fd(e)))
		close(e->fd);
	if (err) {
		free(e);
		return -err;
	}
	e->id = ++pm.next_id;
	e->st = attr->disabled ? PM_OFF : PM_ENABLED;
	join(e, leader);
	pm.nevents++;
	pm_domain_schedule(e->dom);
	return e->fd;
}

int pm_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
		  int group_fd, unsigned long flags)
{
	int ret;

	if (!counted_here(attr->type)) {
		/* A kernel event cannot join a model group. */
		if (group_fd >= 0 && pm_event_of_fd(group_fd) &&
		    !(flags & PERF_FLAG_FD_NO_GROUP)) {
			errno = EINVAL;
			return -1;
		}
		return shpmu_sys_kernel.perf_event_open(attr, pid, cpu,
							group_fd, flags, NULL);
	}
	pm_catch_up();
	ret = open_checked(attr, pid, cpu, group_fd, flags);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

/* Per value in the group layout: value, then id and lost if asked. */
static size_t entry_words(uint64_t rf)
{
	return 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
}

size_t pm_read_size(const struct pm_event *e)
{
	uint64_t rf = e->attr.read_format;
	size_t words = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		       !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);

	if (rf & PERF_FORMAT_GROUP)
		words += 1 + (1 + e->leader->nr_sibs) * entry_words(rf);
	else
		words += entry_words(rf);
	return words * sizeof(uint64_t);
}

static uint64_t *put_entry(uint64_t *w, const struct pm_event *e, uint64_t rf)
{
	*w++ = e->value;
	if (rf & PERF_FORMAT_ID)
		*w++ = e->id;
	if (rf & PERF_FORMAT_LOST)
		*w++ = 0;
	return w;
}

/* The kernel's layouts: { value, enabled?, running?, id?, lost? }, or for
 * a group { nr, enabled?, running?, { value, id?, lost? }[nr] } with the
 * leader's times and the leader first. */
ssize_t pm_event_read(struct pm_event *e, void *buf, size_t len)
{
	/* A group holds at most every counter (perf_event_open checks). */
	uint64_t rf = e->attr.read_format, words[3 + 3 * PM_SLOTS], *w = words;
	const struct pm_event *t = rf & PERF_FORMAT_GROUP ? e->leader : e;
	size_t size = pm_read_size(e);

	if (e->st == PM_ERROR)
		return 0;
	if (len < size) {
		errno = ENOSPC;
		return -1;
	}
	*w++ = rf & PERF_FORMAT_GROUP ? 1 + t->nr_sibs : e->value;
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		*w++ = t->time_enabled;
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		*w++ = t->time_running;
	if (rf & PERF_FORMAT_GROUP) {
		w = put_entry(w, t, rf);
		for (const struct pm_event *s = t->sibs; s; s = s->next_sib)
			w = put_entry(w, s, rf);
	} else {
		if (rf & PERF_FORMAT_ID)
			*w++ = e->id;
		if (rf & PERF_FORMAT_LOST)
			*w++ = 0;
	}
	memcpy(buf, words, size);
	return (ssize_t)size;
}

static void set_state(struct pm_event *e, unsigned long request)
{
	switch (request) {
	case PERF_EVENT_IOC_ENABLE:
		/* From error too: the kernel tries a pinned group again. */
		e->st = PM_ENABLED;
		break;
	case PERF_EVENT_IOC_DISABLE:
		if (e->st == PM_ENABLED)
			e->st = PM_OFF;
		break;
	default: /* PERF_EVENT_IOC_RESET: the count, not the times */
		e->value = 0;
	}
}

int pm_event_ioctl(struct pm_event *e, unsigned long request, unsigned long val)
{
	switch (request) {
	case PERF_EVENT_IOC_ENABLE:
	case PERF_EVENT_IOC_DISABLE:
	case PERF_EVENT_IOC_RESET:
		/* Other bits of val are ignored, as the kernel does. */
		pm_catch_up();
		if (val & PERF_IOC_FLAG_GROUP) {
			set_state(e->leader, request);
			for (struct pm_event *s = e->leader->sibs; s;
			     s = s->next_sib)
				set_state(s, request);
		} else {
			set_state(e, request);
		}
		pm_domain_schedule(e->dom);
		return 0;
	case PERF_EVENT_IOC_ID:
		if (!val) {
			errno = EFAULT;
			return -1;
		}
		memcpy((void *)val, &e->id, sizeof(e->id));
		return 0;
	case PERF_EVENT_IOC_REFRESH:
	case PERF_EVENT_IOC_PERIOD:
	case PERF_EVENT_IOC_SET_OUTPUT:
	case PERF_EVENT_IOC_SET_FILTER:
	case PERF_EVENT_IOC_SET_BPF:
	case PERF_EVENT_IOC_PAUSE_OUTPUT:
	case PERF_EVENT_IOC_QUERY_BPF:
	case PERF_EVENT_IOC_MODIFY_ATTRIBUTES:
		/* Sampling and outputs: not modelled. */
		errno = EINVAL;
		return -1;
	default:
		errno = ENOTTY;
		return -1;
	}
}

/* A leader's members become groups of their own at the tail, as the
 * kernel's perf_group_detach makes them singletons that go on counting. */
static void detach(struct pm_event *e)
{
	struct pm_domain *d = e->dom;

	if (e->leader != e) {
		struct pm_event **at = &e->leader->sibs;

		while (*at != e)
			at = &(*at)->next_sib;
		*at = e->next_sib;
		e->leader->nr_sibs--;
		return;
	}
	if (e->prev)
		e->prev->next = e->next;
	else
		d->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		d->tail = e->prev;
	for (struct pm_event *s = e->sibs, *next; s; s = next) {
		next = s->next_sib;
		s->next_sib = NULL;
		s->prev = s->next = NULL;
		join(s, NULL);
	}
}

void pm_event_close(struct pm_event *e)
{
	pm_catch_up();
	detach(e);
	pm.by_fd[e->fd] = NULL;
	pm.nevents--;
	pm_domain_schedule(e->dom);
	free(e);
}
