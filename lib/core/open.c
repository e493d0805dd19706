// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Opening and closing handles: the sharing decision lives here. */
#include "core/open.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/api.h"
#include "core/backend.h"
#include "core/budget.h"
#include "core/hw_pmus.h"
#include "core/key.h"
#include "core/kevent.h"
#include "core/log.h"
#include "core/process.h"
#include "core/small.h"
#include "core/symver.h"
#include "core/sync.h"
#include "core/window.h"
#include "sys/sys.h"

/* Room for a one-event key, so that shpmu_open makes no malloc for it. */
union single_key {
	struct share_key key;
	unsigned char
		bytes[sizeof(struct share_key) + sizeof(struct event_key)];
};

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

/* The registered event for key with one more ref on it, or NULL
 * (context lock held). */
static struct kevent *find_shared(struct shpmu *pmu,
				  const struct share_key *key, uint64_t hash)
{
	struct kevent *ev = registry_find(&pmu->registry, key, hash);

	if (ev && task_is_gone(pmu, ev)) {
		/* Its handles keep their final values; new ones get a new
		 * event for the task that has the tid now. */
		registry_remove(&pmu->registry, ev);
		ev = NULL;
	}
	if (ev)
		kevent_get(ev);
	return ev;
}

/* Makes the kernel event for key (create lock held): its CPUs, checked
 * once, then its backend's. */
static int new_event(struct shpmu *pmu, const struct share_key *key,
		     uint64_t hash, int cgroup_fd, struct kevent **out)
{
	int *cpus, n, err;

	n = kevent_cpus(pmu, &key->target, &cpus);
	if (n < 0)
		return n;
	err = backend_new_event(pmu, key, hash, cpus, (uint32_t)n, cgroup_fd,
				out);
	free(cpus);
	return err;
}

/* An open under way: the handle's slot, taken but not published, and its
 * kernel event with one more ref on it. */
struct opening {
	int index;
	struct kevent *ev;
	bool sharing, created;
	uint64_t hash;
	unsigned int flags; /* enum shpmu_open_flags */
};

/* Finds the core PMUs before the first event that may use one: its
 * backend opens it per PMU on a hybrid machine. */
static int know_pmus(struct shpmu *pmu, const struct share_key *key)
{
	const struct hw_pmus *hw;

	int err;

	for (uint32_t m = 0; m < key->nevents; m++)
		if (hw_event_maybe(&key->events[m])) {
			/* PMUs that cannot be read (logged) leave the event
			 * as asked: the kernel places it. Only the budget
			 * needs them. */
			err = hw_pmus_get(pmu, &hw);
			return err == -ENOMEM ? err : 0;
		}
	return 0;
}

/* A new event, made with SHPMU_OPEN_NO_MULTIPLEX: kept only if it fits
 * (create lock held). It is made disabled, so it took no counter. */
static int check_fits(struct shpmu *pmu, struct opening *o)
{
	struct backend_cost cost;
	int err = budget_check_fits(pmu, o->ev);

	if (err) {
		kevent_free(pmu, o->ev, &cost);
		o->ev = NULL;
	}
	return err;
}

/* Makes the event o lacks, under the create lock only: a backend may
 * load, flush every CPU or wait for a host domain's lock, and no other
 * call waits on the context lock meanwhile. */
static int make_event(struct shpmu *pmu, const struct share_key *key,
		      int cgroup_fd, struct opening *o)
{
	int err = 0;

	pthread_mutex_lock(&pmu->create_lock);
	/* Another open may have made it while this one waited. */
	if (o->sharing) {
		pthread_mutex_lock(&pmu->lock);
		o->ev = find_shared(pmu, key, o->hash);
		pthread_mutex_unlock(&pmu->lock);
	}
	if (!o->ev) {
		err = know_pmus(pmu, key);
		if (!err)
			err = new_event(pmu, key, o->hash, cgroup_fd, &o->ev);
		if (!err && o->flags & SHPMU_OPEN_NO_MULTIPLEX)
			err = check_fits(pmu, o);
		o->created = !err;
	}
	if (o->created) {
		budget_track(pmu, o->ev);
		pthread_mutex_lock(&pmu->lock);
		kevent_cost_add(&pmu->stats, &o->ev->cost, 1);
		kevent_get(o->ev);
		if (o->sharing)
			registry_insert(&pmu->registry, o->ev);
		pthread_mutex_unlock(&pmu->lock);
	}
	pthread_mutex_unlock(&pmu->create_lock);
	return err;
}

/* Takes a slot for the handle and the event for key: the shared one in
 * the same hold of the context lock, else a new one. */
static int begin_open(struct shpmu *pmu, const struct share_key *key,
		      int cgroup_fd, struct opening *o)
{
	int err;

	o->sharing = shareable(pmu, &key->events[0]);
	o->hash = share_key_hash(key);
	pthread_mutex_lock(&pmu->lock);
	o->index = handles_alloc(&pmu->handles);
	if (o->index >= 0 && o->sharing)
		o->ev = find_shared(pmu, key, o->hash);
	pthread_mutex_unlock(&pmu->lock);
	if (o->index < 0) {
		pr_err(pmu, "shpmu_open: %s",
		       o->index == -ENOSPC ? "the handle table is full"
					   : "out of memory");
		return o->index;
	}
	if (o->ev)
		return 0;
	err = make_event(pmu, key, cgroup_fd, o);
	if (err) {
		pthread_mutex_lock(&pmu->lock);
		handles_unalloc(&pmu->handles, (uint32_t)o->index);
		pthread_mutex_unlock(&pmu->lock);
	}
	return err;
}

/* Frees an event nobody refers to any more, taken out of the registry. */
static void free_event(struct shpmu *pmu, struct kevent *ev)
{
	struct backend_cost cost;

	pthread_mutex_lock(&pmu->create_lock);
	budget_untrack(pmu, ev);
	kevent_free(pmu, ev, &cost);
	pthread_mutex_unlock(&pmu->create_lock);
	pthread_mutex_lock(&pmu->lock);
	kevent_cost_add(&pmu->stats, &cost, -1);
	pthread_mutex_unlock(&pmu->lock);
}

/* Undoes begin_open(): the slot back, the event's ref dropped (the last
 * frees it). */
static void abandon_open(struct shpmu *pmu, struct opening *o)
{
	struct kevent *ev = o->ev;
	bool last;

	pthread_mutex_lock(&pmu->lock);
	handles_unalloc(&pmu->handles, (uint32_t)o->index);
	last = kevent_put(ev);
	if (last && ev->registered)
		registry_remove(&pmu->registry, ev);
	pthread_mutex_unlock(&pmu->lock);
	if (last)
		free_event(pmu, ev);
}

/* Opens a handle on the kernel event for key, creating the event unless
 * one can be shared, counting from now unless disabled. Called with every
 * argument checked; cgroup_fd is the cgroup's directory for a cgroup
 * target. The handle's window opens outside the context lock: nobody can
 * see the handle before it is published. */
static int open_shared(struct shpmu *pmu, const struct share_key *key,
		       int cgroup_fd, bool disabled, unsigned int flags)
{
	struct opening o = {.ev = NULL, .created = false, .flags = flags};
	struct handle tmp;
	int h, err;

	err = begin_open(pmu, key, cgroup_fd, &o);
	if (err)
		return err;
	tmp = (struct handle){.ev = o.ev};
	err = window_alloc(&tmp);
	if (err)
		goto abandon;
	/* An enable_on_exec handle's window opens now; the kernel switches
	 * the event on at the exec. */
	if (!disabled || (o.ev->key.events[0].bits & KEY_ENABLE_ON_EXEC)) {
		err = sync_start(pmu, &tmp, true);
		if (err)
			goto free_state;
		tmp.enabled = true;
	}
	pthread_mutex_lock(&pmu->lock);
	h = handles_publish(&pmu->handles, (uint32_t)o.index, &tmp);
	if (!o.created)
		pmu->stats.shared_opens++;
	pmu->stats.handles++;
	pmu->stats.opens++;
	pthread_mutex_unlock(&pmu->lock);
	return h;

free_state:
	window_free(&tmp);
abandon:
	abandon_open(pmu, &o);
	return err;
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
			 const struct shpmu_target *target, bool disabled,
			 unsigned int flags)
{
	int fd, err;

	if (target->kind == SHPMU_TARGET_PROCESS) {
		err = check_process(pmu, key->target.pid);
		if (err)
			return err;
	}
	if (target->kind != SHPMU_TARGET_CGROUP)
		return open_shared(pmu, key, -1, disabled, flags);
	key->target.cgroup_id = target->cgroup_id;
	err = target->cgroup_id ? cgroup_open_id(pmu, &pmu->cgroups,
						 target->cgroup_id, &fd)
				: cgroup_open_path(pmu, &pmu->cgroups,
						   target->cgroup_path, &fd,
						   &key->target.cgroup_id);
	if (err)
		return err;
	err = open_shared(pmu, key, fd, disabled, flags);
	sys_close(pmu, fd);
	return err;
}

/* How a public open call was made: shpmu_open_group's or one event's,
 * its enum shpmu_open_flags, and whether the caller was built against
 * 0.3 or earlier (target_to_key()). */
struct open_call {
	bool group;
	unsigned int flags;
	bool cpu_rule_0_3;
};

/* shpmu_open (n 1) and shpmu_open_group: the key, from every attr and the
 * target, then the open. */
static int open_checked(struct shpmu *pmu, const struct perf_event_attr *attrs,
			size_t n, const struct shpmu_target *target,
			struct open_call call)
{
	bool group = call.group;
	const char *fn = group ? "shpmu_open_group" : "shpmu_open";
	union single_key inline_key;
	bool disabled, member_disabled;
	struct share_key *key;
	const char *why;
	int err;

	err = api_check(pmu, attrs, fn, group ? "attrs" : "attr");
	if (!err)
		err = api_check(pmu, target, fn, "target");
	if (err)
		return shpmu_err(err);
	if (group && (n == 0 || n > SHPMU_GROUP_MAX)) {
		pr_err(pmu, "shpmu_open_group: a group has 1 to %d members",
		       SHPMU_GROUP_MAX);
		return shpmu_err(-EINVAL);
	}
	key = small_zalloc(&inline_key, sizeof(inline_key),
			   share_key_size((uint32_t)n));
	if (!key)
		return shpmu_err(-ENOMEM);
	key->nevents = (uint32_t)n;
	for (size_t i = 0; i < n && !err; i++)
		err = key_from_attr(&attrs[i], &key->events[i],
				    i ? &member_disabled : &disabled, &why);
	if (!err)
		err = target_to_key(target, call.cpu_rule_0_3, &key->target,
				    &why);
	if (err)
		pr_err(pmu, "%s: %s", fn, why);
	else
		err = open_resolved(pmu, key, target, disabled, call.flags);
	small_free(key, &inline_key);
	return shpmu_err(err);
}

/* The 0.4 calls, and those that binaries built against 0.2 and 0.3 bind
 * to, whose targets follow the 0.3 rule (compat.c holds 0.1's). */
int shpmu_open_v0_4(struct shpmu *pmu, const struct perf_event_attr *attr,
		    const struct shpmu_target *target)
{
	API_CALL(pmu, open_checked(pmu, attr, 1, target,
				   (struct open_call){.group = false}));
}
SHPMU_DEFAULT_VERSION(shpmu_open_v0_4, shpmu_open, "LIBSHPMU_0.4");

int shpmu_open_v0_2(struct shpmu *pmu, const struct perf_event_attr *attr,
		    const struct shpmu_target *target)
{
	API_CALL(pmu, open_checked(pmu, attr, 1, target,
				   (struct open_call){.cpu_rule_0_3 = true}));
}
SHPMU_COMPAT_VERSION(shpmu_open_v0_2, shpmu_open, "LIBSHPMU_0.2");

int shpmu_open_group_v0_4(struct shpmu *pmu,
			  const struct perf_event_attr *attrs, size_t n,
			  const struct shpmu_target *target)
{
	API_CALL(pmu, open_checked(pmu, attrs, n, target,
				   (struct open_call){.group = true}));
}
SHPMU_DEFAULT_VERSION(shpmu_open_group_v0_4, shpmu_open_group, "LIBSHPMU_0.4");

int shpmu_open_group_v0_2(struct shpmu *pmu,
			  const struct perf_event_attr *attrs, size_t n,
			  const struct shpmu_target *target)
{
	API_CALL(pmu, open_checked(pmu, attrs, n, target,
				   (struct open_call){.group = true,
						      .cpu_rule_0_3 = true}));
}
SHPMU_COMPAT_VERSION(shpmu_open_group_v0_2, shpmu_open_group, "LIBSHPMU_0.2");

#define SHPMU_OPEN_F_ALL SHPMU_OPEN_NO_MULTIPLEX

/* opts as this version knows them: sz covers flags, and every byte
 * past them that this version does not use is zero. */
static int open_opts_check(struct shpmu *pmu,
			   const struct shpmu_open_opts *opts,
			   unsigned int *flags)
{
	size_t known =
		offsetof(struct shpmu_open_opts, flags) + sizeof(opts->flags);
	size_t set;

	*flags = 0;
	if (!opts)
		return 0;
	/* Bounded as an attr is: the tail is read byte by byte. */
	if (opts->sz < known || opts->sz > 4096) {
		pr_err(pmu,
		       "shpmu_open_opts: opts->sz %zu is too %s: use "
		       "SHPMU_OPEN_OPTS()",
		       opts->sz, opts->sz < known ? "small" : "large");
		return -EINVAL;
	}
	set = first_nonzero_byte(opts, known, opts->sz);
	if (set < opts->sz) {
		pr_err(pmu,
		       "shpmu_open_opts: opts has non-zero bytes past its "
		       "flags (at %zu): fields this version does not know",
		       set);
		return -EINVAL;
	}
	if (opts->flags & ~SHPMU_OPEN_F_ALL) {
		pr_err(pmu, "shpmu_open_opts: unknown flags %#x",
		       opts->flags & ~SHPMU_OPEN_F_ALL);
		return -EINVAL;
	}
	*flags = opts->flags;
	return 0;
}

static int open_opts_checked(struct shpmu *pmu,
			     const struct perf_event_attr *attr,
			     const struct shpmu_target *target,
			     const struct shpmu_open_opts *opts,
			     bool cpu_rule_0_3)
{
	unsigned int flags;
	int err = open_opts_check(pmu, opts, &flags);

	if (err)
		return shpmu_err(err);
	return open_checked(pmu, attr, 1, target,
			    (struct open_call){.flags = flags,
					       .cpu_rule_0_3 = cpu_rule_0_3});
}

int shpmu_open_opts_v0_4(struct shpmu *pmu, const struct perf_event_attr *attr,
			 const struct shpmu_target *target,
			 const struct shpmu_open_opts *opts)
{
	API_CALL(pmu, open_opts_checked(pmu, attr, target, opts, false));
}
SHPMU_DEFAULT_VERSION(shpmu_open_opts_v0_4, shpmu_open_opts, "LIBSHPMU_0.4");

int shpmu_open_opts_v0_3(struct shpmu *pmu, const struct perf_event_attr *attr,
			 const struct shpmu_target *target,
			 const struct shpmu_open_opts *opts)
{
	API_CALL(pmu, open_opts_checked(pmu, attr, target, opts, true));
}
SHPMU_COMPAT_VERSION(shpmu_open_opts_v0_3, shpmu_open_opts, "LIBSHPMU_0.3");

/* Closes a locked, live handle (context lock held); unlocks its stripe.
 * Returns its event when this was the last handle on it, for the caller
 * to free outside the context lock. */
static struct kevent *close_handle(struct shpmu *pmu, struct handle *slot,
				   int h)
{
	struct kevent *ev = slot->ev;

	sync_drop(pmu, slot);
	handles_release(&pmu->handles, h);
	handle_unlock(&pmu->handles, h);
	pmu->stats.handles--;
	if (!kevent_put(ev))
		return NULL;
	if (ev->registered)
		registry_remove(&pmu->registry, ev);
	return ev;
}

static int close_checked(struct shpmu *pmu, int h)
{
	struct kevent *last = NULL;
	struct handle *slot;

	pthread_mutex_lock(&pmu->lock);
	slot = api_handle(pmu, h, "shpmu_close");
	if (slot)
		last = close_handle(pmu, slot, h);
	pthread_mutex_unlock(&pmu->lock);
	if (last)
		free_event(pmu, last);
	return slot ? 0 : shpmu_err(-EBADF);
}

int shpmu_close(struct shpmu *pmu, int h)
{
	API_CALL(pmu, close_checked(pmu, h));
}

void close_all_handles(struct shpmu *pmu)
{
	for (uint32_t i = 0; i < pmu->handles.nslots; i++) {
		struct handle *slot = handles_slot(&pmu->handles, i);
		struct kevent *last;
		int h;

		if (!slot->ev)
			continue;
		h = handle_of(slot, i);
		pthread_mutex_lock(&pmu->lock);
		slot = handle_lock(&pmu->handles, h);
		last = close_handle(pmu, slot, h);
		pthread_mutex_unlock(&pmu->lock);
		if (last)
			free_event(pmu, last);
	}
}
