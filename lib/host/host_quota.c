// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "host/host_quota.h"

#include <errno.h>
#include <stdlib.h>

#include "bpf/counted.h"
#include "core/log.h"

uint32_t shpmu__host_quota, shpmu__host_quota_refs;

static uint32_t half(uint32_t n, uint32_t test_limit)
{
	return test_limit ? test_limit : n / 2;
}

int host_quota_init(struct host_quota *q, uint32_t max_slots, uint32_t max_refs)
{
	*q = (struct host_quota){
		.refs_max = half(max_refs, shpmu__host_quota_refs),
		.slots_max = half(max_slots, shpmu__host_quota),
		.tasks_max = half(MAX_TASK_TARGETS, shpmu__host_quota),
		.nslots = max_slots};
	q->slot_refs = calloc(max_slots, sizeof(*q->slot_refs));
	q->task_refs = calloc(MAX_TASK_TARGETS, sizeof(*q->task_refs));
	if (q->slot_refs && q->task_refs)
		return 0;
	host_quota_fini(q);
	return -ENOMEM;
}

void host_quota_fini(struct host_quota *q)
{
	free(q->slot_refs);
	free(q->task_refs);
	q->slot_refs = q->task_refs = NULL;
}

/* Our refs on s's slot or task entry; NULL for a CPU (or out of range). */
static uint32_t *refs_on(const struct host_quota *q, uint32_t s)
{
	if (s == NO_SLOT)
		return NULL;
	if (ref_is_task(s))
		return (s & ~TASK_REF) < MAX_TASK_TARGETS
			       ? &q->task_refs[s & ~TASK_REF]
			       : NULL;
	return s < q->nslots ? &q->slot_refs[s] : NULL;
}

int host_quota_check(struct shpmu *pmu, const struct host_quota *q, uint32_t s,
		     const char *domain)
{
	const uint32_t *on = refs_on(q, s);
	const char *what = NULL;
	uint32_t max = 0;

	if (on && !*on && !ref_is_task(s) && q->slots >= q->slots_max) {
		what = "cgroups";
		max = q->slots_max;
	} else if (on && !*on && ref_is_task(s) && q->tasks >= q->tasks_max) {
		what = "tasks and processes";
		max = q->tasks_max;
	} else if (q->refs >= q->refs_max) {
		what = "kernel events (refs)";
		max = q->refs_max;
	}
	if (!what)
		return 0;
	pr_warn(pmu,
		"host domain %s: this context counts %u %s already, the most "
		"one member may (half of what the domain holds, so that "
		"others keep room)",
		domain, max, what);
	return -ENOSPC;
}

void host_quota_add(struct host_quota *q, uint32_t s, int delta)
{
	uint32_t *on = refs_on(q, s);
	uint32_t *held = !on ? NULL : ref_is_task(s) ? &q->tasks : &q->slots;

	if (delta > 0) {
		q->refs++;
		if (on && (*on)++ == 0)
			(*held)++;
	} else if (q->refs) {
		q->refs--;
		if (on && *on && --*on == 0)
			(*held)--;
	}
}
