/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The context: everything one agent's libshpmu owns. */
#ifndef SHPMU_CONTEXT_H
#define SHPMU_CONTEXT_H

#include <pthread.h>

#include <shpmu/shpmu.h>

#include "cgroup.h"
#include "handles.h"
#include "registry.h"
#include "sys.h"
#include "task.h"

struct shpmu {
	const struct shpmu_sys_ops *sys;
	unsigned int flags;
	enum shpmu_cgroup_backend cgroup_backend;
	void (*log)(int level, const char *msg, void *arg);
	void *log_arg;
	int64_t probe_types[2]; /* the kprobe and uprobe PMU types, or -1 */
	uint64_t fork_generation; /* task_fork_generation() at shpmu_new */
	struct bpf_backend *bpf;  /* the BPF cgroup backend, once chosen */
	bool bpf_decided;	  /* AUTO has tried it (under the lock) */
	bool forked;		  /* shpmu_free in a forked child: no ioctls */

	/* Lock order: lock, then a handle stripe, then a kevent's lock. */
	pthread_mutex_t lock; /* registry, handle allocation, stats */
	struct registry registry;
	struct shpmu_stats stats;
	struct handle_table handles;
	struct cgroups cgroups;
};

/*
 * Every public call that takes a lock starts with context_enter() and ends
 * with context_leave(). It refuses, rather than deadlocks on a lock the
 * thread already holds, a call made from inside the library: a signal
 * handler interrupting a call (-EDEADLK: shpmu_read is not async-signal-
 * safe), or a log callback calling back. It refuses calls from a forked
 * child (-EPERM): its fds share the parent's kernel events.
 */
extern __thread int context_depth; /* calls under way on this thread */
int context_refuse(struct shpmu *pmu, const char *fn);

/* Inline: every read pays for it. */
static inline int context_enter(struct shpmu *pmu, const char *fn)
{
	if (__builtin_expect(context_depth > 0 ||
				     pmu->fork_generation !=
					     task_fork_generation_now(),
			     0))
		return context_refuse(pmu, fn);
	context_depth++;
	return 0;
}

static inline void context_leave(void)
{
	context_depth--;
}

/* The body of a public call: the impl call between context_enter() and
 * context_leave() (a NULL pmu goes straight to impl, which refuses it). */
#define CONTEXT_CALL(pmu, call)                                                \
	do {                                                                   \
		int ret_;                                                      \
                                                                               \
		if (!(pmu))                                                    \
			return (call);                                         \
		ret_ = context_enter((pmu), __func__);                         \
		if (ret_)                                                      \
			return shpmu_err(ret_);                                \
		ret_ = (call);                                                 \
		context_leave();                                               \
		return ret_;                                                   \
	} while (0)

/* The BPF cgroup backend if this context counts cgroups with it: loaded
 * at shpmu_new for BPF, on the first cgroup open for AUTO (falling back to
 * classic cgroup events, logged, where it cannot work). Context lock
 * held. */
struct bpf_backend *context_bpf(struct shpmu *pmu);

/* Closes a locked, live handle (context lock held); unlocks its stripe. */
void context_close_handle(struct shpmu *pmu, struct handle *slot, int h);

#endif
