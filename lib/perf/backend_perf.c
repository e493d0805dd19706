// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The classic backend: every kernel event has its own perf fds, one per
 * CPU it spans (a group: a leader and its members per CPU).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/explain.h"
#include "core/hw_pmus.h"
#include "core/kevent.h"
#include "core/log.h"
#include "core/process.h"
#include "perf/backend_perf.h"
#include "sys/sys.h"

#define READ_FORMAT                                                            \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)
#define GROUP_FORMAT (READ_FORMAT | PERF_FORMAT_GROUP | PERF_FORMAT_ID)

/* ev's fds: nfds * nevents, CPU by CPU; fds_of(ev, i)[0] is CPU i's
 * group leader, the fd that is read and switched. */
static int *fds_of(const struct kevent *ev, uint32_t i)
{
	return &ev->priv.fds[(size_t)i * ev->key.nevents];
}

static size_t nfds_total(const struct kevent *ev)
{
	return (size_t)ev->nfds * ev->key.nevents;
}

static const char *target_name(const struct target_key *t, char *buf,
			       size_t len)
{
	if (t->kind == SHPMU_TARGET_TASK)
		snprintf(buf, len, "task %d", t->pid);
	else if (t->kind == SHPMU_TARGET_PROCESS)
		snprintf(buf, len, "process %d", t->pid);
	else if (t->kind == SHPMU_TARGET_CGROUP)
		snprintf(buf, len, "cgroup %llu",
			 (unsigned long long)t->cgroup_id);
	else if (t->cpu == SHPMU_ALL_CPUS)
		snprintf(buf, len, "all CPUs");
	else
		snprintf(buf, len, "cpu %d", t->cpu);
	return buf;
}

static void explain_failure(struct shpmu *pmu, const struct kevent *ev,
			    uint32_t i, uint32_t m,
			    const struct perf_event_attr *attr, pid_t pid,
			    unsigned long flags, int err)
{
	int group_fd = m ? fds_of(ev, i)[0] : -1;
	const struct target_key *t = &ev->key.target;
	char why[384], where[64], on_cpu[24] = "";

	explain_open_error(pmu, err, attr, pid, ev->cpus[i], group_fd, flags,
			   why, sizeof(why));
	/* A CPU target's name is its CPU already; a task's on any CPU has
	 * none. */
	if ((t->kind != SHPMU_TARGET_CPU || t->cpu == SHPMU_ALL_CPUS) &&
	    ev->cpus[i] >= 0)
		snprintf(on_cpu, sizeof(on_cpu), " (cpu %d)", ev->cpus[i]);
	pr_err(pmu, "perf_event_open(type %u, config %#llx%s) for %s%s: %s: %s",
	       attr->type, (unsigned long long)attr->config,
	       ev->key.nevents > 1 ? ", in a group" : "",
	       target_name(t, where, sizeof(where)), on_cpu, strerror(-err),
	       why);
}

/* A process is counted thread by thread, as perf stat -p does: each
 * thread's event is inherited by the threads it starts, and by the
 * processes it forks only when the caller asked for inherit. */
static void count_threads_to_come(const struct kevent *ev,
				  struct perf_event_attr *attr)
{
	if (ev->key.target.kind != SHPMU_TARGET_PROCESS)
		return;
	attr->inherit_thread = !attr->inherit;
	attr->inherit = 1;
}

/* Sources per task (or thread) of ev: one per core PMU type for a
 * generic hardware event on a hybrid machine (the task may run on either
 * kind of CPU), else one. */
static uint32_t per_task(struct shpmu *pmu, const struct kevent *ev)
{
	const struct hw_pmus *hw = hw_pmus_known(pmu);

	/* Bound to one CPU, a task runs on that CPU's PMU only. */
	if (ev->key.target.cpu >= 0)
		return 1;
	return hw_split(hw, &ev->key) ? hw->n : 1;
}

/* Opens one source's events (a CPU's, or a thread's): the leader, then the
 * members into its group. On a hybrid machine a generic event names the
 * PMU of its CPU, or of its place among a task's sources, in its
 * extended type. */
static int open_cpu(struct shpmu *pmu, struct kevent *ev, uint32_t i, pid_t pid,
		    unsigned long flags)
{
	const struct hw_pmus *hw = hw_pmus_known(pmu);
	int index = (int)(i % per_task(pmu, ev));
	unsigned char attr[SHPMU_ATTR_SIZE_KNOWN];
	uint32_t nevents = ev->key.nevents, m;
	int *fds = fds_of(ev, i);
	int fd;

	for (m = 0; m < nevents; m++) {
		key_to_attr(&ev->key.events[m],
			    nevents > 1 ? GROUP_FORMAT : READ_FORMAT, attr);
		/* Members follow their leader's enable state. */
		if (m > 0)
			((struct perf_event_attr *)attr)->disabled = 0;
		count_threads_to_come(ev, (struct perf_event_attr *)attr);
		hw_attr_for(hw, (struct perf_event_attr *)attr, ev->cpus[i],
			    index);
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

/* Closes sources [first, last). */
static void close_range_of(struct shpmu *pmu, struct kevent *ev, uint32_t first,
			   uint32_t last)
{
	while (last-- > first)
		for (uint32_t m = 0; m < ev->key.nevents; m++)
			sys_close(pmu, fds_of(ev, last)[m]);
}

static void close_sources(struct shpmu *pmu, struct kevent *ev, uint32_t n)
{
	close_range_of(pmu, ev, 0, n);
}

/* Room for source n in ev's arrays. */
static int grow_sources(struct kevent *ev, uint32_t n, uint32_t *cap)
{
	int *fds, *cpus;

	if (n < *cap)
		return 0;
	*cap = *cap ? 2 * *cap : 16;
	fds = realloc(ev->priv.fds,
		      (size_t)*cap * ev->key.nevents * sizeof(int));
	if (fds)
		ev->priv.fds = fds;
	cpus = fds ? realloc(ev->cpus, (size_t)*cap * sizeof(int)) : NULL;
	if (cpus)
		ev->cpus = cpus;
	return cpus ? 0 : -ENOMEM;
}

static bool listed(const pid_t *tids, uint32_t n, pid_t tid)
{
	for (uint32_t i = 0; i < n; i++)
		if (tids[i] == tid)
			return true;
	return false;
}

/* Opens thread tid's sources, per of them, as sources ev->nfds on; on
 * failure closes those it opened. */
static int open_thread(struct shpmu *pmu, struct kevent *ev, pid_t tid,
		       uint32_t per)
{
	uint32_t n = ev->nfds, k;
	int err = 0;

	for (k = 0; k < per && !err; k++) {
		ev->cpus[n + k] = ev->key.target.cpu;
		err = open_cpu(pmu, ev, n + k, tid, PERF_FLAG_FD_CLOEXEC);
	}
	if (!err)
		return 0;
	close_range_of(pmu, ev, n, n + k - 1);
	return err;
}

/* Opens an event on each new thread of walk[0 .. nwalk) not in
 * (*tids)[0 .. ev->nfds) (a tid per source). A thread that exits first
 * is left out. */
static int open_new_threads(struct shpmu *pmu, struct kevent *ev,
			    const pid_t *walk, int nwalk, pid_t **tids,
			    uint32_t *cap, int *added)
{
	uint32_t per = per_task(pmu, ev), old_cap = *cap, n;
	pid_t *grown;
	int err;

	for (int w = 0; w < nwalk; w++) {
		n = ev->nfds;
		if (listed(*tids, n, walk[w]))
			continue;
		err = grow_sources(ev, n + per - 1, cap);
		if (!err && *cap != old_cap) {
			grown = realloc(*tids, *cap * sizeof(pid_t));
			err = grown ? 0 : -ENOMEM;
			if (grown)
				*tids = grown;
			old_cap = *cap;
		}
		if (err)
			return err;
		err = open_thread(pmu, ev, walk[w], per);
		if (err == -ESRCH)
			continue;
		if (err)
			return err;
		for (uint32_t k = 0; k < per; k++)
			(*tids)[n + k] = walk[w];
		ev->nfds += per;
		(*added)++;
	}
	return 0;
}

/* A process: an event on each of its threads. Threads started during the
 * walk by a thread not yet counted are found by walking again, until a
 * walk finds no new one (kevent.h says what can still be missed). */
static int open_process(struct shpmu *pmu, struct kevent *ev)
{
	pid_t *tids = NULL, *walk;
	uint32_t cap = 0;
	int nwalk, added, err = 0;

	free(ev->cpus);
	ev->cpus = NULL;
	ev->nfds = 0;
	do {
		nwalk = process_threads(pmu, ev->key.target.pid, &walk);
		if (nwalk < 0) {
			err = nwalk;
			break;
		}
		added = 0;
		err = open_new_threads(pmu, ev, walk, nwalk, &tids, &cap,
				       &added);
		free(walk);
	} while (!err && added);
	free(tids);
	/* Every thread exited while we walked: the process is gone. */
	if (!err && !ev->nfds)
		err = -ESRCH;
	if (err == -ESRCH)
		pr_err(pmu, "no such process: %d", ev->key.target.pid);
	if (err)
		close_sources(pmu, ev, ev->nfds);
	return err;
}

/* A task on any CPU, of a generic event on a hybrid machine: a source per
 * core PMU type. */
static int split_task(struct shpmu *pmu, struct kevent *ev)
{
	uint32_t per = per_task(pmu, ev);
	int *cpus;

	if (ev->key.target.kind != SHPMU_TARGET_TASK ||
	    ev->key.target.cpu >= 0 || per == 1)
		return 0;
	cpus = realloc(ev->cpus, per * sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	for (uint32_t k = 0; k < per; k++)
		cpus[k] = -1;
	ev->cpus = cpus;
	ev->nfds = per;
	return 0;
}

static int perf_open(struct shpmu *pmu, struct kevent *ev, int cgroup_fd,
		     struct backend_cost *cost)
{
	const struct target_key *t = &ev->key.target;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC;
	pid_t pid = t->pid;
	uint32_t i;
	int err;

	if (t->kind == SHPMU_TARGET_TASK || t->kind == SHPMU_TARGET_PROCESS)
		ev->enabled_together = per_task(pmu, ev);
	if (t->kind == SHPMU_TARGET_PROCESS) {
		err = open_process(pmu, ev);
		if (err) {
			free(ev->priv.fds);
			return err;
		}
		goto opened;
	}
	err = split_task(pmu, ev);
	if (err)
		return err;
	ev->priv.fds = calloc(nfds_total(ev), sizeof(int));
	if (!ev->priv.fds)
		return -ENOMEM;
	if (t->kind == SHPMU_TARGET_CGROUP) {
		pid = cgroup_fd;
		flags |= PERF_FLAG_PID_CGROUP;
	}
	for (i = 0; i < ev->nfds; i++) {
		err = open_cpu(pmu, ev, i, pid, flags);
		if (err)
			goto fail;
	}
opened:
	cost->events = 1;
	cost->fds = (int64_t)nfds_total(ev);
	return 0;
fail:
	close_sources(pmu, ev, i);
	free(ev->priv.fds);
	return err;
}

static void perf_close(struct shpmu *pmu, struct kevent *ev,
		       struct backend_cost *cost)
{
	for (size_t i = 0; i < nfds_total(ev); i++)
		sys_close(pmu, ev->priv.fds[i]);
	free(ev->priv.fds);
	cost->events = 1;
	cost->fds = (int64_t)nfds_total(ev);
}

static int perf_enable(struct shpmu *pmu, struct kevent *ev, bool on)
{
	unsigned long req = on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE;
	unsigned long undo =
		on ? PERF_EVENT_IOC_DISABLE : PERF_EVENT_IOC_ENABLE;
	uint32_t i;
	int err = 0;

	for (i = 0; i < ev->nfds; i++) {
		err = sys_ioctl(pmu, fds_of(ev, i)[0], req,
				PERF_IOC_FLAG_GROUP);
		if (err < 0)
			break;
	}
	if (!err)
		return 0;
	pr_err(pmu, "cannot %s kernel event on cpu %d: %s",
	       on ? "enable" : "disable", ev->cpus[i], strerror(-err));
	while (i--)
		sys_ioctl(pmu, fds_of(ev, i)[0], undo, PERF_IOC_FLAG_GROUP);
	return err;
}

/* A read(2) of 0 bytes: the kernel put the event in error state, as it
 * does to a pinned event (or group) that cannot get its counters. It
 * stays there, reading nothing, until PERF_EVENT_IOC_ENABLE. */
static int in_error_state(struct shpmu *pmu, const struct kevent *ev,
			  uint32_t i)
{
	const struct event_key *e = &ev->key.events[0];
	char where[64];

	pr_err(pmu,
	       "kernel event (type %u, config %#llx%s) for %s is in error "
	       "state on cpu %d: it%s could not get a hardware counter "
	       "(held by other pinned or exclusive events, or by the NMI "
	       "watchdog); free counters (close those events, or echo 0 > "
	       "/proc/sys/kernel/nmi_watchdog), then shpmu_enable() the "
	       "handle to bring it back",
	       e->type, (unsigned long long)e->config,
	       ev->key.nevents > 1 ? ", a group" : "",
	       target_name(&ev->key.target, where, sizeof(where)), ev->cpus[i],
	       e->bits & KEY_PINNED ? " is pinned and" : "");
	return -ENODATA;
}

static int perf_revive(struct shpmu *pmu, struct kevent *ev)
{
	int err, first = 0;

	for (uint32_t i = 0; i < ev->nfds; i++) {
		err = sys_ioctl(pmu, fds_of(ev, i)[0], PERF_EVENT_IOC_ENABLE,
				PERF_IOC_FLAG_GROUP);
		if (err < 0 && !first) {
			pr_err(pmu,
			       "cannot schedule kernel event on cpu %d "
			       "again: %s",
			       ev->cpus[i], strerror(-err));
			first = err;
		}
	}
	return first;
}

/* A group reads as nr, time_enabled, time_running, then (value, id) per
 * member in the order they joined: leader first. */
static int read_group(struct shpmu *pmu, const struct kevent *ev, uint32_t i,
		      uint64_t *vals)
{
	uint64_t buf[3 + 2 * SHPMU_GROUP_MAX];
	uint32_t nevents = ev->key.nevents;
	size_t want = (3 + 2 * (size_t)nevents) * sizeof(uint64_t);
	ssize_t n;

	n = sys_read(pmu, fds_of(ev, i)[0], buf, want);
	if (n <= 0)
		return n ? (int)n : in_error_state(pmu, ev, i);
	if ((size_t)n != want || buf[0] != nevents) {
		pr_err(pmu, "short read of group on cpu %d: %zd of %zu bytes",
		       ev->cpus[i], n, want);
		return -EIO;
	}
	vals[KVAL_ENABLED] = buf[1];
	vals[KVAL_RUNNING] = buf[2];
	for (uint32_t m = 0; m < nevents; m++)
		vals[KVAL_COUNT + m] = buf[3 + 2 * m];
	return 0;
}

/*
 * Whether ev's times are taken from its count: a cgroup's plain clock
 * (event_key_is_plain_clock()). The kernel keeps a cgroup event's times
 * by a clock per cgroup and CPU, and a kernel can set that clock's stamp
 * back whenever a task with events of its own is scheduled in on the CPU
 * (its context's start stamps every cgroup above the running task with the
 * CPU context's last stamp): the cgroup's times then run ahead of the wall
 * clock, by seconds a window, while its counts stay right. A clock's count
 * is its running time, kept by the event itself.
 */
static bool times_from_count(const struct kevent *ev)
{
	return ev->key.target.kind == SHPMU_TARGET_CGROUP &&
	       event_key_is_plain_clock(&ev->key.events[0]);
}

static int read_one(struct shpmu *pmu, const struct kevent *ev, uint32_t i,
		    uint64_t *vals)
{
	/* The kernel's layout for READ_FORMAT: value, enabled, running. */
	uint64_t buf[3];
	ssize_t n;

	if (ev->key.nevents > 1)
		return read_group(pmu, ev, i, vals);
	n = sys_read(pmu, fds_of(ev, i)[0], buf, sizeof(buf));
	if (n <= 0)
		return n ? (int)n : in_error_state(pmu, ev, i);
	if (n != (ssize_t)sizeof(buf)) {
		pr_err(pmu, "short read of kernel event on cpu %d: %zd byte%s",
		       ev->cpus[i], n, plural((uint64_t)n, "s"));
		return -EIO;
	}
	vals[KVAL_COUNT] = buf[0];
	if (times_from_count(ev))
		buf[1] = buf[2] = buf[0];
	vals[KVAL_ENABLED] = buf[1];
	vals[KVAL_RUNNING] = buf[2];
	return 0;
}

/* A read(2) of an fd is always current: fresh changes nothing. */
static int perf_read(struct shpmu *pmu, const struct kevent *ev, uint32_t first,
		     uint32_t n, bool fresh, uint64_t *vals)
{
	int err = 0;

	(void)fresh;
	for (uint32_t i = 0; i < n && !err; i++)
		err = read_one(pmu, ev, first + i,
			       vals + (size_t)i * ev->nvals);
	return err;
}

static const struct backend_ops perf_ops = {
	.open = perf_open,
	.close = perf_close,
	.enable = perf_enable,
	.revive = perf_revive,
	.read = perf_read,
};

struct backend backend_perf = {.ops = &perf_ops};
