// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "kevent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "cpus.h"
#include "log.h"
#include "sys.h"
#include "task.h"

#define READ_FORMAT                                                            \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

static const char *target_name(const struct target_key *t, char *buf,
			       size_t len)
{
	if (t->kind == SHPMU_TARGET_TASK)
		snprintf(buf, len, "task %d on cpu %d", t->pid, t->cpu);
	else if (t->kind == SHPMU_TARGET_CGROUP)
		snprintf(buf, len, "cgroup %llu",
			 (unsigned long long)t->cgroup_id);
	else if (t->cpu == SHPMU_ALL_CPUS)
		snprintf(buf, len, "all CPUs");
	else
		snprintf(buf, len, "cpu %d", t->cpu);
	return buf;
}

static int kevent_cpus(struct shpmu *pmu, const struct target_key *t,
		       int **cpus)
{
	if (t->kind != SHPMU_TARGET_TASK && t->cpu == SHPMU_ALL_CPUS)
		return cpus_online(pmu, cpus);
	*cpus = malloc(sizeof(**cpus));
	if (!*cpus)
		return -ENOMEM;
	**cpus = t->cpu;
	return 1;
}

static int open_fds(struct shpmu *pmu, struct kevent *ev, int cgroup_fd)
{
	const struct target_key *t = &ev->key.target;
	unsigned char attr[SHPMU_ATTR_SIZE_KNOWN];
	unsigned long flags = PERF_FLAG_FD_CLOEXEC;
	char why[256], where[64];
	pid_t pid = t->pid;
	uint32_t i;
	int fd;

	if (t->kind == SHPMU_TARGET_CGROUP) {
		pid = cgroup_fd;
		flags |= PERF_FLAG_PID_CGROUP;
	}
	key_to_attr(&ev->key.events[0], READ_FORMAT, attr);
	for (i = 0; i < ev->nfds; i++) {
		fd = sys_perf_event_open(pmu, (struct perf_event_attr *)attr,
					 pid, ev->cpus[i], -1, flags);
		if (fd < 0)
			goto fail;
		ev->fds[i] = fd;
	}
	return 0;
fail:
	shpmu_explain_open_error(pmu, fd, why, sizeof(why));
	pr_err(pmu,
	       "perf_event_open(type %u, config %#llx) for %s (cpu %d): %s: %s",
	       ev->key.events[0].type,
	       (unsigned long long)ev->key.events[0].config,
	       target_name(t, where, sizeof(where)), ev->cpus[i],
	       strerror(-fd), why);
	while (i--)
		sys_close(pmu, ev->fds[i]);
	return fd;
}

int kevent_open(struct shpmu *pmu, const struct share_key *key, int cgroup_fd,
		struct kevent **out)
{
	size_t key_size = share_key_size(key->nevents);
	struct kevent *ev;
	int n, err;

	ev = calloc(1, offsetof(struct kevent, key) + key_size);
	if (!ev)
		return -ENOMEM;
	memcpy(&ev->key, key, key_size);
	n = kevent_cpus(pmu, &key->target, &ev->cpus);
	if (n < 0) {
		err = n;
		goto free_ev;
	}
	ev->nfds = (uint32_t)n;
	if (key->nevents + KVAL_COUNT > KVAL_MAX) {
		err = -E2BIG;
		goto free_ev;
	}
	ev->nvals = KVAL_COUNT + key->nevents;
	/* Before the open: a tid reused in between then looks stale, which
	 * only costs a fresh event later. */
	if (key->target.kind == SHPMU_TARGET_TASK)
		ev->task = task_identity(key->target.pid);
	ev->fds = calloc(ev->nfds, sizeof(*ev->fds));
	if (!ev->fds) {
		err = -ENOMEM;
		goto free_cpus;
	}
	err = open_fds(pmu, ev, cgroup_fd);
	if (err)
		goto free_fds;
	err = -pthread_mutex_init(&ev->lock, NULL);
	if (err)
		goto close_fds;
	*out = ev;
	return 0;

close_fds:
	for (uint32_t i = 0; i < ev->nfds; i++)
		sys_close(pmu, ev->fds[i]);
free_fds:
	free(ev->fds);
free_cpus:
	free(ev->cpus);
free_ev:
	free(ev);
	return err;
}

void kevent_close(struct shpmu *pmu, struct kevent *ev)
{
	for (uint32_t i = 0; i < ev->nfds; i++)
		sys_close(pmu, ev->fds[i]);
	pthread_mutex_destroy(&ev->lock);
	free(ev->fds);
	free(ev->cpus);
	free(ev);
}

int kevent_switch(struct shpmu *pmu, struct kevent *ev, bool on)
{
	unsigned long req = on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE;
	unsigned long undo = on ? PERF_EVENT_IOC_DISABLE : PERF_EVENT_IOC_ENABLE;
	uint32_t i;
	int err = 0;

	for (i = 0; i < ev->nfds; i++) {
		err = sys_ioctl(pmu, ev->fds[i], req, 0);
		if (err < 0)
			break;
	}
	if (!err)
		return 0;
	pr_err(pmu, "cannot %s kernel event on cpu %d: %s",
	       on ? "enable" : "disable", ev->cpus[i], strerror(-err));
	while (i--)
		sys_ioctl(pmu, ev->fds[i], undo, 0);
	return err;
}

int kevent_read(struct shpmu *pmu, const struct kevent *ev, uint32_t i,
		uint64_t *vals)
{
	/* The kernel's layout for READ_FORMAT: value, enabled, running. */
	uint64_t buf[3];
	ssize_t n;

	n = sys_read(pmu, ev->fds[i], buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (n != (ssize_t)sizeof(buf)) {
		pr_err(pmu, "short read of kernel event on cpu %d: %zd bytes",
		       ev->cpus[i], n);
		return -EIO;
	}
	vals[KVAL_ENABLED] = buf[1];
	vals[KVAL_RUNNING] = buf[2];
	vals[KVAL_COUNT] = buf[0];
	return 0;
}

int kevent_fd_index(const struct kevent *ev, int cpu)
{
	if (ev->nfds == 1 && (cpu == -1 || cpu == ev->cpus[0]))
		return 0;
	/* cpus is sorted: the online list is, and single-CPU lists are. */
	for (uint32_t lo = 0, hi = ev->nfds; lo < hi;) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ev->cpus[mid] == cpu)
			return (int)mid;
		if (ev->cpus[mid] < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}
