// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/kevent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/cpus.h"
#include "core/env.h"
#include "core/log.h"
#include "core/task.h"

int kevent_cpus(struct shpmu *pmu, const struct target_key *t, int **cpus)
{
	int err;

	if (!target_is_task(t) && t->cpu == SHPMU_ALL_CPUS)
		return cpus_online(pmu, cpus);
	if (t->cpu >= 0) {
		err = cpus_check_online(pmu, t->cpu);
		if (err)
			return err;
	}
	*cpus = malloc(sizeof(**cpus));
	if (!*cpus)
		return -ENOMEM;
	**cpus = t->cpu;
	return 1;
}

void kevent_cost_add(struct shpmu_stats *stats, const struct backend_cost *c,
		     int sign)
{
	stats->kernel_events += (uint64_t)(sign * c->events);
	stats->kernel_fds += (uint64_t)(sign * c->fds);
}

int kevent_new(struct shpmu *pmu, struct backend *b,
	       const struct share_key *key, uint64_t hash, const int *cpus,
	       uint32_t ncpus, int cgroup_fd, struct kevent **out)
{
	size_t key_size = share_key_size(key->nevents);
	struct kevent *ev;
	int err;

	if (key->nevents > KVAL_MAX - KVAL_COUNT)
		return -E2BIG;
	ev = calloc(1, offsetof(struct kevent, key) + key_size);
	if (!ev)
		return -ENOMEM;
	memcpy(&ev->key, key, key_size);
	ev->node.hash = hash;
	ev->backend = b;
	ev->nvals = KVAL_COUNT + key->nevents;
	ev->nfds = ncpus;
	ev->cpus = malloc(ncpus * sizeof(*cpus));
	if (!ev->cpus) {
		err = -ENOMEM;
		goto free_ev;
	}
	memcpy(ev->cpus, cpus, ncpus * sizeof(*cpus));
	/* Before the open: a tid reused in between then looks stale, which
	 * only costs a fresh event later. */
	if (target_is_task(&key->target))
		ev->task = task_identity(pmu, key->target.pid);
	err = -pthread_mutex_init(&ev->lock, NULL);
	if (err)
		goto free_cpus;
	err = b->ops->open(pmu, ev, cgroup_fd, &ev->cost);
	if (err)
		goto destroy_lock;
	*out = ev;
	return 0;

destroy_lock:
	pthread_mutex_destroy(&ev->lock);
free_cpus:
	free(ev->cpus);
free_ev:
	free(ev);
	return err;
}

void kevent_free(struct shpmu *pmu, struct kevent *ev,
		 struct backend_cost *cost)
{
	*cost = (struct backend_cost){0};
	ev->backend->ops->close(pmu, ev, cost);
	pthread_mutex_destroy(&ev->lock);
	free(ev->cpus);
	free(ev);
}

static int switch_sources(struct shpmu *pmu, struct kevent *ev, bool on)
{
	const struct backend_ops *ops = ev->backend->ops;

	return ops->enable ? ops->enable(pmu, ev, on) : 0;
}

int kevent_enable_get(struct shpmu *pmu, struct kevent *ev, bool at_open)
{
	/* The kernel enables an enable_on_exec event itself at exec: no
	 * ioctl may pre-empt the exec. */
	bool by_kernel =
		at_open && (ev->key.events[0].bits & KEY_ENABLE_ON_EXEC);
	int err = 0;

	if (ev->enabled == 0 && !by_kernel)
		err = switch_sources(pmu, ev, true);
	if (!err)
		ev->enabled++;
	return err;
}

int kevent_revive(struct shpmu *pmu, struct kevent *ev)
{
	/* The kernel takes PERF_EVENT_IOC_ENABLE from error state (it
	 * clears the error first); an event already on ignores it. On
	 * sources other handles count with, a failure must switch nothing
	 * off. */
	int err;

	if (ev->enabled > 0)
		return ev->backend->ops->revive
			       ? ev->backend->ops->revive(pmu, ev)
			       : 0;
	err = switch_sources(pmu, ev, true);
	if (!err)
		err = switch_sources(pmu, ev, false);
	return err;
}

int kevent_enable_put(struct shpmu *pmu, struct kevent *ev)
{
	int err = 0;

	if (ev->enabled == 1)
		err = switch_sources(pmu, ev, false);
	if (!err)
		ev->enabled--;
	return err;
}

void kevent_enable_drop(struct shpmu *pmu, struct kevent *ev)
{
	/* The last handle's sources close with it; a forked child's are
	 * its parent's to switch. */
	if (--ev->enabled == 0 && ev->refs > 1 && !env_of(pmu)->forked)
		switch_sources(pmu, ev, false);
}

int kevent_read(struct shpmu *pmu, const struct kevent *ev, uint32_t first,
		uint32_t n, uint64_t *vals)
{
	return ev->backend->ops->read(pmu, ev, first, n, true, vals);
}

bool kevent_has_cache(const struct kevent *ev)
{
	return ev->backend->ops->flush != NULL;
}

int kevent_read_cached(struct shpmu *pmu, const struct kevent *ev,
		       uint64_t *vals)
{
	if (!kevent_has_cache(ev))
		return -EOPNOTSUPP;
	return ev->backend->ops->read(pmu, ev, 0, ev->nfds, false, vals);
}

int kevent_read_batched(struct shpmu *pmu, struct kevent_batch *batch,
			const struct kevent *ev, uint64_t *vals)
{
	struct backend *b = ev->backend;
	unsigned int i;
	int err;

	if (b->ops->flush) {
		for (i = 0; i < batch->nflushed && batch->flushed[i] != b; i++)
			;
		if (i == batch->nflushed) {
			err = b->ops->flush(pmu, b);
			if (err)
				return err;
			if (i <
			    sizeof(batch->flushed) / sizeof(batch->flushed[0]))
				batch->flushed[batch->nflushed++] = b;
		}
	}
	return b->ops->read(pmu, ev, 0, ev->nfds, !b->ops->flush, vals);
}

int kevent_fd_index(const struct kevent *ev, int cpu)
{
	/* A process's sources are its threads, not CPUs; a task's on a
	 * hybrid machine are its PMU types. */
	if (target_is_task(&ev->key.target) && ev->nfds > 1)
		return -1;
	if (ev->nfds == 1 && (cpu == -1 || cpu == ev->cpus[0]))
		return 0;
	/* cpus is sorted: the online list is, and single-CPU lists are. */
	return cpus_index(ev->cpus, (int)ev->nfds, cpu);
}
