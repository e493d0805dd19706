// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One scrape: the cgroups brought up to date, every handle read with one
 * shpmu_read_many, and the page written in the Prometheus text format
 * 0.0.4 or in OpenMetrics 1.0 (the targets' families by series.c). A
 * target whose read fails is left out of this scrape (and counted in
 * shpmu_target_errors_total); the scrape itself goes on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exporter.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Room for n readings in r, kept from scrape to scrape. */
static int reading_room(struct reading *r, size_t n)
{
	size_t cap = r->cap;
	int *hs;
	struct shpmu_count *counts;
	bool *ok;

	if (n <= r->cap)
		return 0;
	while (cap < n)
		cap = cap * 2 + 64;
	hs = realloc(r->hs, sizeof(*hs) * cap);
	if (hs)
		r->hs = hs;
	counts = realloc(r->counts, sizeof(*counts) * cap);
	if (counts)
		r->counts = counts;
	ok = realloc(r->ok, sizeof(*ok) * cap);
	if (ok)
		r->ok = ok;
	if (!hs || !counts || !ok)
		return -ENOMEM;
	r->cap = cap;
	return 0;
}

void reading_fini(struct reading *r)
{
	free(r->hs);
	free(r->counts);
	free(r->ok);
	*r = (struct reading){0};
}

/* Every handle: CPUs first, then cgroups, events innermost. */
static int read_all(struct exporter *x, struct reading *r)
{
	size_t ncpu = x->opts->per_cpu ? (size_t)x->ncpus * x->nevents : 0;
	size_t i = 0;
	int err = reading_room(r, ncpu + x->ncgroups * x->nevents);

	if (err)
		return err;
	r->n = ncpu + x->ncgroups * x->nevents;
	for (; i < ncpu; i++)
		r->hs[i] = x->cpu_handles[i];
	for (size_t g = 0; g < x->ncgroups; g++)
		for (size_t e = 0; e < x->nevents; e++)
			r->hs[i++] = x->cgroups[g].handles[e];
	if (!r->n)
		return 0;
	if (!shpmu_read_many(x->pmu, r->hs, r->n, r->counts)) {
		memset(r->ok, 1, r->n);
		return 0;
	}
	/* One bad target must not cost the others their scrape. */
	for (i = 0; i < r->n; i++) {
		char why[EXPLAIN_MAX];

		err = shpmu_read(x->pmu, r->hs[i], &r->counts[i]);
		r->ok[i] = !err;
		if (err) {
			x->target_errors++;
			say("a read failed: %s; left out of this scrape",
			    explain(x, r->hs[i], err, why, sizeof(why)));
		}
	}
	return 0;
}

static void gauge(struct page *p, const char *name, const char *help, double v)
{
	page_printf(p,
		    "# HELP shpmu_%s %s\n# TYPE shpmu_%s gauge\nshpmu_%s "
		    "%.9g\n",
		    name, help, name, name, v);
}

void put_counter(struct page *p, enum format fmt, const char *name,
		 const char *unit, const char *help)
{
	if (fmt == OPENMETRICS_1_0) {
		page_printf(p, "# TYPE shpmu_%s counter\n", name);
		if (unit)
			page_printf(p, "# UNIT shpmu_%s %s\n", name, unit);
		page_printf(p, "# HELP shpmu_%s %s\n", name, help);
	} else
		page_printf(p,
			    "# HELP shpmu_%s_total %s\n# TYPE shpmu_%s_total "
			    "counter\n",
			    name, help, name);
}

static const char *const cut_names[CUT_REASONS] = {
	[CUT_DEADLINE] = "deadline",
	[CUT_ADDRESS] = "address",
	[CUT_LIMIT] = "limit",
};

static void put_own(struct page *p, struct exporter *x, enum format fmt,
		    double started)
{
	struct shpmu_stats st;

	shpmu_get_stats(x->pmu, &st);
	gauge(p, "handles", "Open libshpmu handles of this exporter.",
	      (double)st.handles);
	gauge(p, "kernel_events",
	      "Kernel events behind them (this process's share).",
	      (double)st.kernel_events);
	gauge(p, "kernel_fds", "perf_event fds this process holds.",
	      (double)st.kernel_fds);
	gauge(p, "cgroups", "Cgroups counted.", (double)x->ncgroups);
	gauge(p, "cgroups_left_out",
	      "Cgroups found but not counted: past --max-cgroups, or "
	      "their paths longer than PATH_MAX.",
	      (double)x->left_out);
	put_counter(p, fmt, "target_errors", NULL,
		    "Targets left out of a scrape because they failed.");
	page_printf(p, "shpmu_target_errors_total %llu\n",
		    (unsigned long long)x->target_errors);
	put_counter(p, fmt, "scrapes", NULL,
		    "Scrapes of /metrics, this one too.");
	page_printf(p, "shpmu_scrapes_total %llu\n",
		    (unsigned long long)x->scrapes);
	put_counter(p, fmt, "http_connections_cut", NULL,
		    "Client connections the exporter closed: request not whole "
		    "in time (deadline), past the connections of one address "
		    "(address), past the connection limit (limit).");
	for (int i = 0; i < CUT_REASONS; i++)
		page_printf(p,
			    "shpmu_http_connections_cut_total{reason=\"%s\"} "
			    "%llu\n",
			    cut_names[i],
			    (unsigned long long)__atomic_load_n(
				    &x->cuts[i], __ATOMIC_RELAXED));
	x->last_scrape_s = now_s() - started;
	gauge(p, "scrape_duration_seconds",
	      "How long this scrape took: cgroups found, read, written.",
	      x->last_scrape_s);
	if (fmt == OPENMETRICS_1_0)
		page_puts(p, "# EOF\n");
}

int scrape(struct exporter *x, enum format fmt, struct page **out)
{
	struct page *p = page_take(&x->pages);
	double started;
	int err;

	if (!p)
		return -ENOMEM;
	pthread_mutex_lock(&x->lock);
	started = now_s();
	x->scrapes++;
	cgroups_refresh(x);
	err = read_all(x, &x->reading);
	if (!err) {
		put_targets(p, x, fmt, &x->reading);
		put_unattributed(p, x, fmt);
		put_budget(p, x);
		put_own(p, x, fmt, started);
		if (p->failed)
			err = -ENOMEM;
	}
	pthread_mutex_unlock(&x->lock);
	if (err) {
		page_give_back(p);
		return err;
	}
	*out = p;
	return 0;
}
