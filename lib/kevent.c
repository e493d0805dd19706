// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "kevent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "cpus.h"
#include "explain.h"
#include "log.h"
#include "sys.h"
#include "task.h"

#define READ_FORMAT                                                            \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)
#define GROUP_FORMAT (READ_FORMAT | PERF_FORMAT_GROUP | PERF_FORMAT_ID)

static const char *target_name(const struct target_key *t, char *buf,
			       size_t len)
{
	if (t->kind == SHPMU_TARGET_TASK)
		snprintf(buf, len, "task %d", t->pid);
	else if (t->kind == SHPMU_TARGET_CGROUP)
		snprintf(buf, len, "cgroup %llu",
			 (unsigned long long)t->cgroup_id);
	else if (t->cpu == SHPMU_ALL_CPUS)
		snprintf(buf, len, "all CPUs");
	else
		snprintf(buf, len, "cpu %d", t->cpu);
	return buf;
}

/* The CPUs a new event spans. A single CPU must be online, whatever
 * backend counts it: the BPF backend would otherwise accept a CPU it has
 * no event for. */
static int kevent_cpus(struct shpmu *pmu, const struct target_key *t,
		       int **cpus)
{
	int n, *online;

	if (t->kind != SHPMU_TARGET_TASK && t->cpu == SHPMU_ALL_CPUS)
		return cpus_online(pmu, cpus);
	if (t->cpu >= 0) {
		n = cpus_online(pmu, &online);
		if (n < 0)
			return n;
		n = cpus_index(online, n, t->cpu) < 0 ? -EINVAL : 0;
		free(online);
		if (n) {
			pr_err(pmu, "cpu %d is not online (see "
				    "/sys/devices/system/cpu/online)",
			       t->cpu);
			return n;
		}
	}
	*cpus = malloc(sizeof(**cpus));
	if (!*cpus)
		return -ENOMEM;
	**cpus = t->cpu;
	return 1;
}

static void explain_failure(struct shpmu *pmu, const struct kevent *ev,
			    uint32_t i, uint32_t m,
			    const struct perf_event_attr *attr, pid_t pid,
			    unsigned long flags, int err)
{
	int group_fd = m ? ev->fds[(size_t)i * ev->nevents] : -1;
	char why[384], where[64];

	explain_open_error(pmu, err, attr, pid, ev->cpus[i], group_fd, flags,
			   why, sizeof(why));
	pr_err(pmu,
	       "perf_event_open(type %u, config %#llx%s) for %s (cpu %d): "
	       "%s: %s",
	       attr->type, (unsigned long long)attr->config,
	       ev->nevents > 1 ? ", in a group" : "",
	       target_name(&ev->key.target, where, sizeof(where)),
	       ev->cpus[i], strerror(-err), why);
}

/* Opens one CPU's events: the leader, then the members into its group. */
static int open_cpu(struct shpmu *pmu, struct kevent *ev, uint32_t i,
		    pid_t pid, unsigned long flags)
{
	unsigned char attr[SHPMU_ATTR_SIZE_KNOWN];
	int *fds = &ev->fds[(size_t)i * ev->nevents];
	uint32_t m;
	int fd;

	for (m = 0; m < ev->nevents; m++) {
		key_to_attr(&ev->key.events[m], ev->nevents > 1 ? GROUP_FORMAT
								: READ_FORMAT,
			    attr);
		/* Members follow their leader's enable state. */
		if (m > 0)
			((struct perf_event_attr *)attr)->disabled = 0;
		fd = sys_perf_event_open(pmu, (struct perf_event_attr *)attr,
					 pid, ev->cpus[i], m ? fds[0] : -1,
					 flags);
		if (fd < 0)
			goto fail;
		fds[m] = fd;
	}
	return 0;
fail:
	explain_failure(pmu, ev, i, m, (struct perf_event_attr *)attr, pid,
			flags, fd);
	while (m--)
		sys_close(pmu, fds[m]);
	return fd;
}

static int open_fds(struct shpmu *pmu, struct kevent *ev, int cgroup_fd)
{
	const struct target_key *t = &ev->key.target;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC;
	pid_t pid = t->pid;
	uint32_t i;
	int err;

	if (t->kind == SHPMU_TARGET_CGROUP) {
		pid = cgroup_fd;
		flags |= PERF_FLAG_PID_CGROUP;
	}
	for (i = 0; i < ev->nfds; i++) {
		err = open_cpu(pmu, ev, i, pid, flags);
		if (err)
			goto fail;
	}
	return 0;
fail:
	while (i--)
		for (uint32_t m = 0; m < ev->nevents; m++)
			sys_close(pmu, ev->fds[(size_t)i * ev->nevents + m]);
	return err;
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
		goto free_cpus;
	}
	ev->nevents = key->nevents;
	ev->nvals = KVAL_COUNT + key->nevents;
	/* Before the open: a tid reused in between then looks stale, which
	 * only costs a fresh event later. */
	if (key->target.kind == SHPMU_TARGET_TASK)
		ev->task = task_identity(key->target.pid);
	if (key->target.kind == SHPMU_TARGET_CGROUP && key->nevents == 1 &&
	    context_bpf(pmu)) {
		err = bpf_backend_attach(pmu, pmu->bpf, &key->events[0],
					 key->target.cgroup_id, &ev->counter);
		/* Out of room: AUTO counts this one the classic way. */
		if (err == -ENOSPC &&
		    pmu->cgroup_backend == SHPMU_CGROUP_BACKEND_AUTO) {
			pr_info(pmu, "counting this cgroup with classic cgroup "
				     "events instead");
		} else if (err) {
			goto free_cpus;
		} else {
			ev->bpf = true;
			err = -pthread_mutex_init(&ev->lock, NULL);
			if (err) {
				bpf_backend_detach(pmu, pmu->bpf,
						   &ev->counter);
				goto free_cpus;
			}
			*out = ev;
			return 0;
		}
	}
	ev->fds = calloc(kevent_nfds_total(ev), sizeof(*ev->fds));
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
	for (uint32_t i = 0; i < kevent_nfds_total(ev); i++)
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
	if (ev->bpf)
		bpf_backend_detach(pmu, pmu->bpf, &ev->counter);
	for (uint32_t i = 0; i < kevent_nfds_total(ev); i++)
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

	/* The BPF backend's shared per-CPU events always run; each handle's
	 * windows come from its own base readings. */
	if (ev->bpf)
		return 0;
	for (i = 0; i < ev->nfds; i++) {
		err = sys_ioctl(pmu, kevent_fd(ev, i), req,
				PERF_IOC_FLAG_GROUP);
		if (err < 0)
			break;
	}
	if (!err)
		return 0;
	pr_err(pmu, "cannot %s kernel event on cpu %d: %s",
	       on ? "enable" : "disable", ev->cpus[i], strerror(-err));
	while (i--)
		sys_ioctl(pmu, kevent_fd(ev, i), undo, PERF_IOC_FLAG_GROUP);
	return err;
}

/* A group reads as nr, time_enabled, time_running, then (value, id) per
 * member in the order they joined: leader first. */
static int read_group(struct shpmu *pmu, const struct kevent *ev, uint32_t i,
		      uint64_t *vals)
{
	uint64_t buf[3 + 2 * (KVAL_MAX - KVAL_COUNT)];
	size_t want = (3 + 2 * (size_t)ev->nevents) * sizeof(uint64_t);
	ssize_t n;

	n = sys_read(pmu, kevent_fd(ev, i), buf, want);
	if (n < 0)
		return (int)n;
	if ((size_t)n != want || buf[0] != ev->nevents) {
		pr_err(pmu, "short read of group on cpu %d: %zd of %zu bytes",
		       ev->cpus[i], n, want);
		return -EIO;
	}
	vals[KVAL_ENABLED] = buf[1];
	vals[KVAL_RUNNING] = buf[2];
	for (uint32_t m = 0; m < ev->nevents; m++)
		vals[KVAL_COUNT + m] = buf[3 + 2 * m];
	return 0;
}

int kevent_read(struct shpmu *pmu, const struct kevent *ev, uint32_t i,
		uint64_t *vals)
{
	/* The kernel's layout for READ_FORMAT: value, enabled, running. */
	uint64_t buf[3];
	ssize_t n;

	if (ev->bpf)
		return bpf_backend_read(pmu, pmu->bpf, &ev->counter,
					&ev->cpus[i], 1, true, vals,
					ev->nvals);
	if (ev->nevents > 1)
		return read_group(pmu, ev, i, vals);
	n = sys_read(pmu, kevent_fd(ev, i), buf, sizeof(buf));
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

int kevent_read_all(struct shpmu *pmu, const struct kevent *ev,
		    bool flushed, uint64_t *vals)
{
	int err = 0;

	/* One lookup serves every CPU of a BPF-counted cgroup. */
	if (ev->bpf)
		return bpf_backend_read(pmu, pmu->bpf, &ev->counter, ev->cpus,
					ev->nfds, !flushed, vals, ev->nvals);
	for (uint32_t i = 0; i < ev->nfds && !err; i++)
		err = kevent_read(pmu, ev, i, vals + (size_t)i * ev->nvals);
	return err;
}

int kevent_fd_index(const struct kevent *ev, int cpu)
{
	if (ev->nfds == 1 && (cpu == -1 || cpu == ev->cpus[0]))
		return 0;
	/* cpus is sorted: the online list is, and single-CPU lists are. */
	return cpus_index(ev->cpus, (int)ev->nfds, cpu);
}
