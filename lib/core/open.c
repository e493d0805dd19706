// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Opening and closing handles: the sharing decision lives here. */
#include "core/open.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/api.h"
#include "core/backend.h"
#include "core/kevent.h"
#include "core/log.h"
#include "core/process.h"
#include "core/symver.h"
#include "core/sync.h"
#include "core/window.h"
#include "sys/sys.h"

/* A key with room for one event, without a malloc on the open path. */
union single_key {
	struct share_key key;
	unsigned char
		bytes[sizeof(struct share_key) + sizeof(struct event_key)];
};

/* Makes a handle on ev, counting from now unless disabled (context lock
 * held; nobody can see the handle before it is published). */
static int open_handle(struct shpmu *pmu, struct kevent *ev, bool disabled)
{
	struct handle tmp = {.ev = ev};
	int index, err;

	index = handles_alloc(&pmu->handles);
	if (index < 0) {
		pr_err(pmu, "shpmu_open: %s",
		       index == -ENOSPC ? "the handle table is full"
					: "out of memory");
		return index;
	}
	err = window_alloc(&tmp);
	if (err)
		goto unalloc;
	/* An enable_on_exec handle's window opens now; the kernel switches
	 * the event on at the exec. */
	if (!disabled || (ev->key.events[0].bits & KEY_ENABLE_ON_EXEC)) {
		err = sync_start(pmu, &tmp, true);
		if (err)
			goto free_state;
		tmp.enabled = true;
	}
	kevent_get(ev);
	return handles_publish(&pmu->handles, (uint32_t)index, &tmp);

free_state:
	window_free(&tmp);
unalloc:
	handles_unalloc(&pmu->handles, (uint32_t)index);
	return err;
}

/* An event whose thread exited counts nothing more, and its tid may name
 * another thread now. */
static bool task_is_gone(struct shpmu *pmu, const struct kevent *ev)
{
	if (!target_is_task(&ev->key.target) || ev->task == 0)
		return false;
	return task_identity(pmu, ev->key.target.pid) != ev->task;
}

/* Events that must not be shared: remove_on_exec ones vanish at the
 * target's exec, while a request made after it expects a live event; and
 * kprobe/uprobe config1 is a pointer to a name, not a name. */
static bool shareable(const struct shpmu *pmu, const struct event_key *e)
{
	if (pmu->flags & SHPMU_F_NO_SHARING || e->bits & KEY_REMOVE_ON_EXEC)
		return false;
	for (size_t i = 0;
	     i < sizeof(pmu->probe_types) / sizeof(pmu->probe_types[0]); i++)
		if ((int64_t)e->type == pmu->probe_types[i])
			return false;
	return true;
}

/* Opens a handle on the kernel event for key, creating the event unless
 * one can be shared. Called with every argument checked; cgroup_fd is the
 * cgroup's directory for a cgroup target. */
static int open_shared(struct shpmu *pmu, const struct share_key *key,
		       int cgroup_fd, bool disabled)
{
	bool sharing = shareable(pmu, &key->events[0]);
	uint64_t hash = share_key_hash(key);
	struct kevent *ev = NULL;
	bool created = false;
	int h;

	h = backend_prepare(pmu, key);
	if (h < 0)
		return h;
	pthread_mutex_lock(&pmu->lock);
	if (sharing)
		ev = registry_find(&pmu->registry, key, hash);
	if (ev && task_is_gone(pmu, ev)) {
		/* Its handles keep their final values; new ones get a new
		 * event for the task that has the tid now. */
		registry_remove(&pmu->registry, ev);
		ev = NULL;
	}
	if (!ev) {
		h = backend_new_event(pmu, key, hash, cgroup_fd, &ev);
		if (h < 0)
			goto unlock;
		created = true;
	}
	h = open_handle(pmu, ev, disabled);
	if (h < 0) {
		if (created)
			kevent_free(pmu, ev, &pmu->stats);
		goto unlock;
	}
	if (created && sharing)
		registry_insert(&pmu->registry, ev);
	if (!created)
		pmu->stats.shared_opens++;
	pmu->stats.handles++;
	pmu->stats.opens++;
unlock:
	pthread_mutex_unlock(&pmu->lock);
	return h;
}

/* A process target names a thread-group leader: two requests for one
 * process then have one key, whichever thread makes them. */
static int check_process(struct shpmu *pmu, pid_t pid)
{
	pid_t tgid = 0;
	int err = process_check(pmu, pid, &tgid);

	if (err == -EINVAL)
		pr_err(pmu,
		       "shpmu_open: process target: %d is a thread of process "
		       "%d: name the process by its id, or count the thread "
		       "with SHPMU_TARGET_TASK",
		       (int)pid, (int)tgid);
	else if (err == -ESRCH)
		pr_err(pmu, "shpmu_open: process target: no such process: %d",
		       (int)pid);
	else if (err)
		pr_err(pmu, "shpmu_open: process target %d: cannot read it: %s",
		       (int)pid, strerror(-err));
	return err;
}

/* Resolves a cgroup target to its directory and id (the id is what the
 * key holds, so a path and its id share), then opens. */
static int open_resolved(struct shpmu *pmu, struct share_key *key,
			 const struct shpmu_target *target, bool disabled)
{
	int fd, err;

	if (target->kind == SHPMU_TARGET_PROCESS) {
		err = check_process(pmu, key->target.pid);
		if (err)
			return err;
	}
	if (target->kind != SHPMU_TARGET_CGROUP)
		return open_shared(pmu, key, -1, disabled);
	key->target.cgroup_id = target->cgroup_id;
	err = target->cgroup_id ? cgroup_open_id(pmu, &pmu->cgroups,
						 target->cgroup_id, &fd)
				: cgroup_open_path(pmu, &pmu->cgroups,
						   target->cgroup_path, &fd,
						   &key->target.cgroup_id);
	if (err)
		return err;
	err = open_shared(pmu, key, fd, disabled);
	sys_close(pmu, fd);
	return err;
}

static int open_checked(struct shpmu *pmu, const struct perf_event_attr *attr,
			const struct shpmu_target *target)
{
	union single_key k;
	const char *why;
	bool disabled;
	int err;

	err = api_check(pmu, attr, "shpmu_open", "attr");
	if (!err)
		err = api_check(pmu, target, "shpmu_open", "target");
	if (err)
		return shpmu_err(err);
	memset(&k, 0, sizeof(k));
	err = key_from_attr(attr, &k.key.events[0], &disabled, &why);
	if (!err)
		err = target_to_key(target, &k.key.target, &why);
	if (err) {
		pr_err(pmu, "shpmu_open: %s", why);
		return shpmu_err(err);
	}
	k.key.nevents = 1;
	return shpmu_err(open_resolved(pmu, &k.key, target, disabled));
}

int shpmu_open_v0_2(struct shpmu *pmu, const struct perf_event_attr *attr,
		    const struct shpmu_target *target)
{
	API_CALL(pmu, open_checked(pmu, attr, target));
}
SHPMU_DEFAULT_VERSION(shpmu_open_v0_2, shpmu_open, "LIBSHPMU_0.2");

static int open_group_checked(struct shpmu *pmu,
			      const struct perf_event_attr *attrs, size_t n,
			      const struct shpmu_target *target)
{
	struct share_key *key;
	const char *why;
	bool disabled, member_disabled;
	int err;

	err = api_check(pmu, attrs, "shpmu_open_group", "attrs");
	if (!err)
		err = api_check(pmu, target, "shpmu_open_group", "target");
	if (err)
		return shpmu_err(err);
	if (n == 0 || n > SHPMU_GROUP_MAX) {
		pr_err(pmu, "shpmu_open_group: a group has 1 to %d members",
		       SHPMU_GROUP_MAX);
		return shpmu_err(-EINVAL);
	}
	key = calloc(1, share_key_size((uint32_t)n));
	if (!key)
		return shpmu_err(-ENOMEM);
	key->nevents = (uint32_t)n;
	for (size_t i = 0; i < n && !err; i++)
		err = key_from_attr(&attrs[i], &key->events[i],
				    i ? &member_disabled : &disabled, &why);
	if (!err)
		err = target_to_key(target, &key->target, &why);
	if (err)
		pr_err(pmu, "shpmu_open_group: %s", why);
	else
		err = open_resolved(pmu, key, target, disabled);
	free(key);
	return shpmu_err(err);
}

int shpmu_open_group_v0_2(struct shpmu *pmu,
			  const struct perf_event_attr *attrs, size_t n,
			  const struct shpmu_target *target)
{
	API_CALL(pmu, open_group_checked(pmu, attrs, n, target));
}
SHPMU_DEFAULT_VERSION(shpmu_open_group_v0_2, shpmu_open_group, "LIBSHPMU_0.2");

/* Closes a locked, live handle (context lock held); unlocks its stripe. */
static void close_handle(struct shpmu *pmu, struct handle *slot, int h)
{
	struct kevent *ev = slot->ev;

	sync_drop(pmu, slot);
	handles_release(&pmu->handles, h);
	handle_unlock(&pmu->handles, h);
	pmu->stats.handles--;
	if (!kevent_put(ev))
		return;
	if (ev->registered)
		registry_remove(&pmu->registry, ev);
	kevent_free(pmu, ev, &pmu->stats);
}

static int close_checked(struct shpmu *pmu, int h)
{
	struct handle *slot;

	pthread_mutex_lock(&pmu->lock);
	slot = api_handle(pmu, h, "shpmu_close");
	if (slot)
		close_handle(pmu, slot, h);
	pthread_mutex_unlock(&pmu->lock);
	return slot ? 0 : shpmu_err(-EBADF);
}

int shpmu_close(struct shpmu *pmu, int h)
{
	API_CALL(pmu, close_checked(pmu, h));
}

void close_all_handles(struct shpmu *pmu)
{
	pthread_mutex_lock(&pmu->lock);
	for (uint32_t i = 0; i < pmu->handles.nslots; i++) {
		struct handle *slot = handles_slot(&pmu->handles, i);
		int h;

		if (!slot->ev)
			continue;
		h = handle_of(slot, i);
		slot = handle_lock(&pmu->handles, h);
		close_handle(pmu, slot, h);
	}
	pthread_mutex_unlock(&pmu->lock);
}
