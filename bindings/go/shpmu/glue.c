// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The C side of the callbacks: the library calls these, they call Go. */
#include <stdint.h>
#include <shpmu/shpmu.h>

#include "_cgo_export.h"
#include "glue.h"

static void go_log(int level, const char *msg, void *arg)
{
	shpmuGoLog(level, (char *)msg, (uintptr_t)arg);
}

struct shpmu *shpmu_go_new(struct shpmu_opts *opts, uintptr_t sink)
{
	opts->log = go_log;
	opts->log_arg = (void *)sink;
	return shpmu_new(opts);
}

static int go_event(const char *name, const char *desc, void *arg)
{
	return shpmuGoEvent((char *)name, (char *)desc, (uintptr_t)arg);
}

int shpmu_go_list_events(struct shpmu *pmu, uintptr_t fn)
{
	return shpmu_list_events(pmu, go_event, (void *)fn);
}

void shpmu_go_attr_set(struct perf_event_attr *a, const struct shpmu_go_attr *g)
{
	a->size = sizeof(*a);
	a->type = g->type;
	a->config = g->config;
	a->config1 = g->config1;
	a->config2 = g->config2;
	a->disabled = !!(g->flags & SHPMU_GO_DISABLED);
	a->inherit = !!(g->flags & SHPMU_GO_INHERIT);
	a->pinned = !!(g->flags & SHPMU_GO_PINNED);
	a->exclusive = !!(g->flags & SHPMU_GO_EXCLUSIVE);
	a->exclude_user = !!(g->flags & SHPMU_GO_EXCLUDE_USER);
	a->exclude_kernel = !!(g->flags & SHPMU_GO_EXCLUDE_KERNEL);
	a->exclude_hv = !!(g->flags & SHPMU_GO_EXCLUDE_HV);
	a->exclude_idle = !!(g->flags & SHPMU_GO_EXCLUDE_IDLE);
	a->enable_on_exec = !!(g->flags & SHPMU_GO_ENABLE_ON_EXEC);
	a->exclude_host = !!(g->flags & SHPMU_GO_EXCLUDE_HOST);
	a->exclude_guest = !!(g->flags & SHPMU_GO_EXCLUDE_GUEST);
}

void shpmu_go_attr_get(const struct perf_event_attr *a, struct shpmu_go_attr *g)
{
	g->type = a->type;
	g->config = a->config;
	g->config1 = a->config1;
	g->config2 = a->config2;
	g->flags = (a->disabled ? SHPMU_GO_DISABLED : 0) |
		   (a->inherit ? SHPMU_GO_INHERIT : 0) |
		   (a->pinned ? SHPMU_GO_PINNED : 0) |
		   (a->exclusive ? SHPMU_GO_EXCLUSIVE : 0) |
		   (a->exclude_user ? SHPMU_GO_EXCLUDE_USER : 0) |
		   (a->exclude_kernel ? SHPMU_GO_EXCLUDE_KERNEL : 0) |
		   (a->exclude_hv ? SHPMU_GO_EXCLUDE_HV : 0) |
		   (a->exclude_idle ? SHPMU_GO_EXCLUDE_IDLE : 0) |
		   (a->enable_on_exec ? SHPMU_GO_ENABLE_ON_EXEC : 0) |
		   (a->exclude_host ? SHPMU_GO_EXCLUDE_HOST : 0) |
		   (a->exclude_guest ? SHPMU_GO_EXCLUDE_GUEST : 0);
}

struct shpmu_go_reading shpmu_go_read(struct shpmu *pmu, int h, int how,
				      int cpu)
{
	struct shpmu_go_reading r = {0};
	struct shpmu_count c;

	switch (how) {
	case SHPMU_GO_READ_CACHED:
		r.rc = shpmu_read_cached(pmu, h, &c);
		break;
	case SHPMU_GO_READ_CPU:
		r.rc = shpmu_read_cpu(pmu, h, cpu, &c);
		break;
	case SHPMU_GO_READ_BOUND:
		r.rc = shpmu_read_bound(pmu, h, &c, &r.bound);
		break;
	case SHPMU_GO_READ_UNATTRIBUTED:
		r.rc = shpmu_read_unattributed(pmu, h, cpu, &c);
		break;
	default:
		r.rc = shpmu_read(pmu, h, &c);
	}
	if (!r.rc)
		r.count = c;
	return r;
}
