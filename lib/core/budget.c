// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The counter budget's arithmetic (budget.h). */
#include "core/budget.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
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

/* Member m of an event of the BPF backend: its handles want a counter on
 * every CPU of its PMU; the backend's own perf event is the one used. */
static void add_shared_member(struct rows *r, const struct kevent *ev,
			      uint32_t m)
{
	const struct event_key *e = &ev->key.events[m];
	const struct hw_pmus *hw = r->hw;

	for (uint32_t q = 0; q < hw->n; q++)
		for (int c = 0; c < hw->pmu[q].ncpus; c++) {
			int cpu = hw->pmu[q].cpus[c];

			if (hw_pmu_of(hw, e, cpu, -1) == (int)q)
				need_add(r, row_of(r, (int)q, cpu), e, ev->refs,
					 false);
		}
}

static void add_shared(struct rows *r, const struct budget_shared *s)
{
	int p = hw_pmu_of(r->hw, &s->key, s->cpu, -1);

	r->serial++;
	if (p >= 0)
		need_add(r, row_of(r, p, s->cpu), &s->key, 0, true);
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

static int rows_init(struct rows *r, const struct hw_pmus *hw)
{
	memset(r, 0, sizeof(*r));
	r->hw = hw;
	for (uint32_t p = 0; p < hw->n; p++)
		r->offset[p + 1] =
			r->offset[p] + (uint32_t)hw->pmu[p].ncpus + 1;
	r->need = calloc(r->offset[hw->n] ?: 1, sizeof(*r->need));
	return r->need ? 0 : -ENOMEM;
}

static void rows_fini(struct rows *r)
{
	free(r->need);
}

int budget_compute(struct shpmu *pmu, const struct hw_pmus *hw,
		   const struct budget_shared *shared, size_t nshared,
		   struct shpmu_pmu_budget **out)
{
	struct shpmu_pmu_budget *rows;
	struct rows r;
	uint32_t total;

	if (rows_init(&r, hw))
		return -ENOMEM;
	total = r.offset[hw->n];
	rows = calloc(total ?: 1, sizeof(*rows));
	if (!rows) {
		rows_fini(&r);
		return -ENOMEM;
	}
	for (struct kevent *ev = pmu->hw_events; ev; ev = ev->hw_next)
		add_event(&r, ev);
	for (size_t i = 0; i < nshared; i++)
		add_shared(&r, &shared[i]);
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
	       "on PMU %s, %s: %u general counter%s (%u held by the NMI "
	       "watchdog) and %u fixed; the events counted there (this "
	       "context's, and its host domain's) need %u (%u on fixed "
	       "counters), %u with this one: it would "
	       "multiplex; close an event there, share one, or open it "
	       "without the flag",
	       b->pmu, where, b->general, plural(b->general, "s"), b->watchdog,
	       b->fixed, before->used, before->used_fixed, b->used);
}

struct collect {
	struct budget_shared *list;
	size_t n, cap;
	int err;
};

static void collect_one(const struct event_key *key, uint32_t refs, int cpu,
			void *arg)
{
	struct collect *c = arg;
	struct budget_shared *grown;

	if (c->err)
		return;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		grown = realloc(c->list, c->cap * sizeof(*grown));
		if (!grown) {
			c->err = -ENOMEM;
			return;
		}
		c->list = grown;
	}
	c->list[c->n++] = (struct budget_shared){*key, refs, cpu};
}

int budget_shared_collect(struct shpmu *pmu, struct budget_shared **out)
{
	struct backend *b = backend_shared(pmu);
	struct collect c = {0};
	int err = 0;

	if (b && b->ops->shared_attrs)
		err = b->ops->shared_attrs(pmu, b, collect_one, &c);
	if (!err)
		err = c.err;
	if (err) {
		free(c.list);
		return err;
	}
	*out = c.list;
	return (int)c.n;
}

/* The shared perf events there were before ev: without its attr when ev
 * alone uses it (the backend made it for ev). */
static size_t shared_before(const struct kevent *ev, struct budget_shared *s,
			    size_t n)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++)
		if (!(kevent_has_cache(ev) && s[i].refs <= 1 &&
		      !memcmp(&s[i].key, &ev->key.events[0], sizeof(s[i].key))))
			s[kept++] = s[i];
	return kept;
}

int budget_check_fits(struct shpmu *pmu, struct kevent *ev)
{
	const struct hw_pmus *hw = hw_pmus_known(pmu);
	struct shpmu_pmu_budget *before = NULL, *after = NULL;
	struct budget_shared *shared = NULL;
	int n, nshared, err = 0;

	if (!uses_counters(hw, ev))
		return 0;
	nshared = budget_shared_collect(pmu, &shared);
	if (nshared < 0)
		return nshared;
	pthread_mutex_lock(&pmu->lock);
	budget_track(pmu, ev);
	n = budget_compute(pmu, hw, shared, (size_t)nshared, &after);
	budget_untrack(pmu, ev);
	if (n >= 0)
		n = budget_compute(pmu, hw, shared,
				   shared_before(ev, shared, (size_t)nshared),
				   &before);
	pthread_mutex_unlock(&pmu->lock);
	for (int i = 0; i < n; i++)
		if (after[i].used > before[i].used && after[i].multiplexing) {
			explain_refusal(pmu, &after[i], &before[i]);
			err = -EBUSY;
			break;
		}
	free(before);
	free(after);
	free(shared);
	return n < 0 ? n : err;
}
