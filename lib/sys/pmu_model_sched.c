// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The model's counters: which event may sit on which counter, putting a
 * domain's groups on them (pinned first, then flexible, as the kernel's
 * ctx_resched does, from scratch each time), rotation, and time.
 */
#include <string.h>
#include <time.h>

#include "sys/pmu_model_int.h"

struct pm_event pm_watchdog;

struct pm_domain *pm_domain_of(unsigned int pmu, int cpu)
{
	return &pm.domains[(size_t)pmu * (size_t)(pm.ncpus + 1) +
			   (size_t)(cpu + 1)];
}

/* The fixed counter a generic event may use, or -1. */
static int fixed_of(const struct perf_event_attr *a)
{
	if (a->type != PERF_TYPE_HARDWARE)
		return -1;
	switch ((uint32_t)a->config) {
	case PERF_COUNT_HW_INSTRUCTIONS:
		return 0;
	case PERF_COUNT_HW_CPU_CYCLES:
		return 1;
	case PERF_COUNT_HW_REF_CPU_CYCLES:
		return 2;
	default:
		return -1;
	}
}

/* A raw or model event's mask of general counters (0: any). */
static uint32_t constraint(const struct perf_event_attr *a)
{
	if (a->type == PERF_TYPE_RAW || pm_is_model_type(a->type))
		return (uint32_t)(a->config >> 32) & 0xff;
	return 0;
}

bool pm_slot_fits(const struct pm_event *e, unsigned int slot)
{
	uint32_t mask;

	if (slot >= PMU_MODEL_MAX_COUNTERS)
		return slot - PMU_MODEL_MAX_COUNTERS < pm.cfg.fixed &&
		       fixed_of(&e->attr) ==
			       (int)(slot - PMU_MODEL_MAX_COUNTERS);
	if (slot >= pm.cfg.counters[e->dom->pmu])
		return false;
	mask = constraint(&e->attr);
	return !mask || (mask >> slot & 1);
}

/* Kuhn's augmenting path: e gets a counter, maybe by moving the events
 * already placed to others (never the watchdog). Fixed counters are
 * tried first, as the kernel prefers them. */
static bool augment(struct pm_event **owner, struct pm_event *e,
		    uint64_t *visited)
{
	for (unsigned int i = 0; i < PM_SLOTS; i++) {
		unsigned int slot = (i + PMU_MODEL_MAX_COUNTERS) % PM_SLOTS;
		struct pm_event *o = owner[slot];

		if (*visited >> slot & 1 || !pm_slot_fits(e, slot))
			continue;
		*visited |= 1ull << slot;
		if (!o || (o != &pm_watchdog && augment(owner, o, visited))) {
			owner[slot] = e;
			return true;
		}
	}
	return false;
}

static bool place(struct pm_event **owner, struct pm_event *e)
{
	uint64_t visited = 0;

	return augment(owner, e, &visited);
}

/* A group goes on whole or not at all: its leader and its enabled
 * members (all of them when all is set). */
static bool place_group(struct pm_event **owner, struct pm_event *leader,
			const struct pm_event *extra, bool all)
{
	struct pm_event *saved[PM_SLOTS];

	memcpy(saved, owner, sizeof(saved));
	if (!place(owner, leader))
		goto undo;
	for (struct pm_event *s = leader->sibs; s; s = s->next_sib)
		if ((all || s->st == PM_ENABLED) && !place(owner, s))
			goto undo;
	if (extra && !place(owner, (struct pm_event *)extra))
		goto undo;
	return true;
undo:
	memcpy(owner, saved, sizeof(saved));
	return false;
}

bool pm_group_can_ever_fit(const struct pm_event *leader,
			   const struct pm_event *extra)
{
	struct pm_event *owner[PM_SLOTS] = {0};

	return place_group(owner, (struct pm_event *)leader, extra, true);
}

static void group_off(struct pm_event *g)
{
	g->on = false;
	for (struct pm_event *s = g->sibs; s; s = s->next_sib)
		s->on = false;
}

/* One pass over the pinned or the flexible groups. As in the kernel's
 * merge_sched_in, once a group fails no later group of the pass goes
 * on; a pinned group that fails goes to error. An exclusive group goes on
 * only when no other group is on, and then alone. */
static void pass(struct pm_domain *d, bool pinned, bool *any_on, bool *excl)
{
	bool can = true;

	for (struct pm_event *g = d->head; g; g = g->next) {
		if ((bool)g->attr.pinned != pinned || g->st != PM_ENABLED)
			continue;
		if (can && !*excl && !(g->attr.exclusive && *any_on) &&
		    place_group(d->owner, g, NULL, false)) {
			*any_on = true;
			*excl = g->attr.exclusive;
			continue;
		}
		can = false;
		if (pinned)
			g->st = PM_ERROR;
	}
}

void pm_domain_schedule(struct pm_domain *d)
{
	unsigned int k = pm.cfg.counters[d->pmu];
	bool any_on = false, excl = false;

	memset(d->owner, 0, sizeof(d->owner));
	for (struct pm_event *g = d->head; g; g = g->next)
		group_off(g);
	/* The watchdog holds the last general counter. */
	if (pm.cfg.watchdog)
		d->owner[k - 1] = &pm_watchdog;
	pass(d, true, &any_on, &excl);
	pass(d, false, &any_on, &excl);
	for (unsigned int s = 0; s < PM_SLOTS; s++)
		if (d->owner[s] && d->owner[s] != &pm_watchdog)
			d->owner[s]->on = true;
}

unsigned int pm_domain_in_use(const struct pm_domain *d)
{
	unsigned int n = 0;

	for (unsigned int s = 0; s < PM_SLOTS; s++)
		n += d->owner[s] != NULL;
	return n;
}

/* Some enabled flexible group is not on a counter. */
static bool wants_rotation(const struct pm_domain *d)
{
	for (const struct pm_event *g = d->head; g; g = g->next)
		if (!g->attr.pinned && g->st == PM_ENABLED && !g->on)
			return true;
	return false;
}

static size_t ndomains(void)
{
	return (size_t)pm.cfg.npmus * (size_t)(pm.ncpus + 1);
}

static bool any_wants_rotation(void)
{
	for (size_t i = 0; i < ndomains(); i++)
		if (wants_rotation(&pm.domains[i]))
			return true;
	return false;
}

/* The first flexible group that is on (or, when none is, the first
 * enabled one) moves to the tail, as the kernel's rotate_ctx. */
static void rotate(struct pm_domain *d)
{
	struct pm_event *g, *pick = NULL;

	for (g = d->head; g && !pick; g = g->next)
		if (!g->attr.pinned && g->on)
			pick = g;
	for (g = d->head; g && !pick; g = g->next)
		if (!g->attr.pinned && g->st == PM_ENABLED)
			pick = g;
	if (pick && pick != d->tail) {
		if (pick->prev)
			pick->prev->next = pick->next;
		else
			d->head = pick->next;
		pick->next->prev = pick->prev;
		pick->prev = d->tail;
		pick->next = NULL;
		d->tail->next = pick;
		d->tail = pick;
	}
	pm_domain_schedule(d);
}

/* Every event's times and count over dt ns of the current schedule. */
static void account(uint64_t dt)
{
	for (size_t fd = 0; fd < pm.by_fd_len; fd++) {
		struct pm_event *e = pm.by_fd[fd];

		if (!e || e->st != PM_ENABLED)
			continue;
		e->time_enabled += dt;
		if (e->on) {
			e->time_running += dt;
			e->value += pmu_model_rate(&e->attr) * dt;
		}
	}
}

void pm_advance_to(uint64_t t)
{
	uint64_t rot = pm.cfg.rotate_ns;

	while (pm.now < t) {
		/* Between period ends nothing changes: a model that does not
		 * multiplex moves to t in one step. */
		bool rotating = any_wants_rotation();
		/* No period ends past UINT64_MAX: the clock saturates. */
		uint64_t periods = pm.now / rot + 1;
		bool edge = rotating && periods <= UINT64_MAX / rot &&
			    periods * rot <= t;
		uint64_t end = edge ? periods * rot : t;

		account(end - pm.now);
		pm.now = end;
		if (edge)
			for (size_t i = 0; i < ndomains(); i++)
				if (wants_rotation(&pm.domains[i]))
					rotate(&pm.domains[i]);
	}
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t pm_clock_now(void)
{
	return pm.cfg.manual ? pm.manual_now : monotonic_ns() - pm.epoch;
}

void pm_catch_up(void)
{
	pm_advance_to(pm_clock_now());
}
