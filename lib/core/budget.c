// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The counter budget's arithmetic (budget.h). */
#include "core/budget.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/cpus.h"
#include "core/kevent.h"
#include "core/log.h"

/* What the events need of one row, before the fixed counters are
 * handed out. */
struct need {
	uint32_t
		fixed_kind[HW_FIXED_KNOWN]; /* events each fixed counter fits */
	uint32_t general;		    /* events only a general one fits */
	uint64_t wanted;
	uint64_t stamp; /* the last (event, member) counted here */
};

struct rows {
	const struct hw_pmus *hw;
	uint32_t offset[HW_PMUS_MAX + 1]; /* PMU p's rows: offset[p] ... */
	struct need *need;
	uint64_t serial;
	/* The attrs of the BPF backend's events seen so far: it keeps one
	 * perf event per attr and CPU for all of them. */
	const struct event_key **shared;
	const struct backend **shared_by;
	uint32_t nshared;
};

static uint32_t row_of(const struct rows *r, int p, int cpu)
{
	const struct hw_pmu *hp = &r->hw->pmu[p];
	int i;

	if (cpu < 0)
		return r->offset[p] + (uint32_t)hp->ncpus;
	i = cpus_index(hp->cpus, hp->ncpus, cpu);
	return i < 0 ? UINT32_MAX : r->offset[p] + (uint32_t)i;
}

static void need_add(struct rows *r, uint32_t row, const struct event_key *e,
		     uint32_t refs, bool used)
{
	struct need *n = &r->need[row];
	int f;

	/* A process's threads, or a group's CPUs, each count once. */
	if (row == UINT32_MAX || n->stamp == r->serial)
		return;
	n->stamp = r->serial;
	n->wanted += refs;
	if (!used)
		return;
	f = hw_fixed_slot(e);
	if (f >= 0)
		n->fixed_kind[f]++;
	else
		n->general++;
}

/* Whether the BPF backend's attr e was counted already; else remembers
 * it. */
static bool shared_seen(struct rows *r, const struct kevent *ev,
			const struct event_key *e)
{
	for (uint32_t i = 0; i < r->nshared; i++)
		if (r->shared_by[i] == ev->backend &&
		    !memcmp(r->shared[i], e, sizeof(*e)))
			return true;
	r->shared[r->nshared] = e;
	r->shared_by[r->nshared++] = ev->backend;
	return false;
}

/* Member m of an event of the BPF backend: a perf event on every CPU of
 * its PMU. */
static void add_shared_member(struct rows *r, const struct kevent *ev,
			      uint32_t m)
{
	const struct event_key *e = &ev->key.events[m];
	const struct hw_pmus *hw = r->hw;
	bool used = !shared_seen(r, ev, e);

	for (uint32_t q = 0; q < hw->n; q++)
		for (int c = 0; c < hw->pmu[q].ncpus; c++) {
			int cpu = hw->pmu[q].cpus[c];

			if (hw_pmu_of(hw, e, cpu, -1) == (int)q)
				need_add(r, row_of(r, (int)q, cpu), e, ev->refs,
					 used);
		}
}

/* Member m of a classic event: one counter where each source counts. */
static void add_member(struct rows *r, const struct kevent *ev, uint32_t m)
{
	const struct event_key *e = &ev->key.events[m];
	bool split = hw_split(r->hw, &ev->key);

	for (uint32_t i = 0; i < ev->nfds; i++) {
		int cpu = ev->cpus[i];
		int index = split && cpu < 0 ? (int)(i % r->hw->n) : -1;
		int p = hw_pmu_of(r->hw, e, cpu, index);

		if (p >= 0)
			need_add(r, row_of(r, p, cpu), e, ev->refs, true);
	}
}

static void add_event(struct rows *r, const struct kevent *ev)
{
	for (uint32_t m = 0; m < ev->key.nevents; m++) {
		r->serial++;
		if (kevent_has_cache(ev))
			add_shared_member(r, ev, m);
		else
			add_member(r, ev, m);
	}
}

static void fill_row(const struct hw_pmus *hw, int p, int cpu,
		     const struct need *n, struct shpmu_pmu_budget *out)
{
	const struct hw_pmu *hp = &hw->pmu[p];
	uint32_t fixed =
		hp->fixed < HW_FIXED_KNOWN ? hp->fixed : HW_FIXED_KNOWN;
	uint32_t general = n->general, on_fixed = 0;

	memset(out, 0, sizeof(*out));
	memcpy(out->pmu, hp->name, sizeof(hp->name));
	out->type = hp->type;
	out->cpu = cpu;
	out->general = hp->general;
	out->fixed = hp->fixed;
	out->watchdog = hw->watchdog && hp->general ? 1 : 0;
	/* The first event of each kind takes its fixed counter; the
	 * others, and those of a fixed counter the PMU lacks, a general
	 * one. */
	for (uint32_t f = 0; f < HW_FIXED_KNOWN; f++) {
		uint32_t k = n->fixed_kind[f];

		if (f < fixed && k) {
			on_fixed++;
			k--;
		}
		general += k;
	}
	out->used = general + on_fixed;
	out->used_fixed = on_fixed;
	out->multiplexing =
		hp->general && general + out->watchdog > hp->general;
	out->wanted = n->wanted;
	out->saved = n->wanted > out->used ? n->wanted - out->used : 0;
}

static int rows_init(struct rows *r, struct shpmu *pmu,
		     const struct hw_pmus *hw)
{
	uint32_t nevents = 0;

	memset(r, 0, sizeof(*r));
	r->hw = hw;
	for (uint32_t p = 0; p < hw->n; p++)
		r->offset[p + 1] =
			r->offset[p] + (uint32_t)hw->pmu[p].ncpus + 1;
	for (struct kevent *ev = pmu->hw_events; ev; ev = ev->hw_next)
		nevents += ev->key.nevents;
	r->need = calloc(r->offset[hw->n] ?: 1, sizeof(*r->need));
	r->shared = malloc((nevents + 1) * sizeof(*r->shared));
	r->shared_by = malloc((nevents + 1) * sizeof(*r->shared_by));
	if (r->need && r->shared && r->shared_by)
		return 0;
	free(r->need);
	free(r->shared);
	free(r->shared_by);
	return -ENOMEM;
}

static void rows_fini(struct rows *r)
{
	free(r->need);
	free(r->shared);
	free(r->shared_by);
}

int budget_compute(struct shpmu *pmu, const struct hw_pmus *hw,
		   struct shpmu_pmu_budget **out)
{
	struct shpmu_pmu_budget *rows;
	struct rows r;
	uint32_t total;

	if (rows_init(&r, pmu, hw))
		return -ENOMEM;
	total = r.offset[hw->n];
	rows = calloc(total ?: 1, sizeof(*rows));
	if (!rows) {
		rows_fini(&r);
		return -ENOMEM;
	}
	for (struct kevent *ev = pmu->hw_events; ev; ev = ev->hw_next)
		add_event(&r, ev);
	for (uint32_t p = 0; p < hw->n; p++)
		for (int c = 0; c <= hw->pmu[p].ncpus; c++)
			fill_row(hw, (int)p,
				 c < hw->pmu[p].ncpus ? hw->pmu[p].cpus[c] : -1,
				 &r.need[r.offset[p] + (uint32_t)c],
				 &rows[r.offset[p] + (uint32_t)c]);
	rows_fini(&r);
	*out = rows;
	return (int)total;
}

static bool uses_counters(const struct hw_pmus *hw, const struct kevent *ev)
{
	for (uint32_t m = 0; hw && m < ev->key.nevents; m++)
		if (hw_pmu_of(hw, &ev->key.events[m], -1, 0) >= 0)
			return true;
	return false;
}

void budget_track(struct shpmu *pmu, struct kevent *ev)
{
	if (!uses_counters(hw_pmus_known(pmu), ev))
		return;
	ev->hw_prev = NULL;
	ev->hw_next = pmu->hw_events;
	if (pmu->hw_events)
		pmu->hw_events->hw_prev = ev;
	pmu->hw_events = ev;
	ev->on_hw_list = true;
}

void budget_untrack(struct shpmu *pmu, struct kevent *ev)
{
	if (!ev->on_hw_list)
		return;
	if (ev->hw_prev)
		ev->hw_prev->hw_next = ev->hw_next;
	else
		pmu->hw_events = ev->hw_next;
	if (ev->hw_next)
		ev->hw_next->hw_prev = ev->hw_prev;
	ev->on_hw_list = false;
}

static void explain_refusal(struct shpmu *pmu, const struct shpmu_pmu_budget *b,
			    const struct shpmu_pmu_budget *before)
{
	char where[32];

	if (b->cpu >= 0)
		snprintf(where, sizeof(where), "cpu %d", b->cpu);
	else
		snprintf(where, sizeof(where), "the events that follow tasks");
	pr_err(pmu,
	       "shpmu_open: SHPMU_OPEN_NO_MULTIPLEX: the event does not fit "
	       "on PMU %s, %s: %u general counters (%u held by the NMI "
	       "watchdog) and %u fixed; this context's kernel events there "
	       "need %u (%u on fixed counters), %u with this one: it would "
	       "multiplex; close an event there, share one, or open it "
	       "without the flag",
	       b->pmu, where, b->general, b->watchdog, b->fixed, before->used,
	       before->used_fixed, b->used);
}

int budget_check_fits(struct shpmu *pmu, struct kevent *ev)
{
	const struct hw_pmus *hw = hw_pmus_known(pmu);
	struct shpmu_pmu_budget *before, *after;
	int n, err = 0;

	if (!uses_counters(hw, ev))
		return 0;
	n = budget_compute(pmu, hw, &before);
	if (n < 0)
		return n;
	budget_track(pmu, ev);
	n = budget_compute(pmu, hw, &after);
	budget_untrack(pmu, ev);
	if (n < 0) {
		free(before);
		return n;
	}
	for (int i = 0; i < n; i++)
		if (after[i].used > before[i].used && after[i].multiplexing) {
			explain_refusal(pmu, &after[i], &before[i]);
			err = -EBUSY;
			break;
		}
	free(before);
	free(after);
	return err;
}
