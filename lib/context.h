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

struct shpmu {
	const struct shpmu_sys_ops *sys;
	unsigned int flags;
	enum shpmu_cgroup_backend cgroup_backend;
	void (*log)(int level, const char *msg, void *arg);
	void *log_arg;
	int64_t probe_types[2]; /* the kprobe and uprobe PMU types, or -1 */

	/* Lock order: lock, then a handle stripe, then a kevent's lock. */
	pthread_mutex_t lock; /* registry, handle allocation, stats */
	struct registry registry;
	struct shpmu_stats stats;
	struct handle_table handles;
	struct cgroups cgroups;
};

/* Closes a locked, live handle (context lock held); unlocks its stripe. */
void context_close_handle(struct shpmu *pmu, struct handle *slot, int h);

#endif
