// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The per-CPU and per-cgroup families of a scrape's page: most of its
 * bytes (1000 cgroups x 8 events are 8000 samples). A sample is written
 * from pieces made before the scrape: the family's name, the target's
 * label set (a cgroup's escaped once, when it was opened) and the
 * event's, then its number, with no printf.
 *
 * The enabled and running times are exported only for events that can
 * be multiplexed: a software event or a tracepoint never is (it needs
 * no counter of a PMU), so its times always equal each other and say
 * nothing its clock does not.
 */
#include <stdio.h>
#include <string.h>

#include "exporter.h"

/* What one family of samples shows of a reading. */
enum shows { VALUE, CLOCK, ENABLED, RUNNING };

struct family {
	const char *name; /* OpenMetrics family name (no _total) */
	enum shows shows;
	const char *help;
	/* Per cgroup, what the root's series holds besides: a reader used to
	 * cAdvisor takes a rate of 2 there for 200% CPU use. */
	const char *root_note;
};

static const struct family families[] = {
	{"events", VALUE,
	 "Events counted, scaled for multiplexing (value x enabled / "
	 "running)",
	 NULL},
	{"clock_seconds", CLOCK,
	 "Clock events (task-clock, cpu-clock) in seconds, scaled for "
	 "multiplexing",
	 "The root cgroup (label /) holds every CPU's idle task: its clocks "
	 "count idle time too (about 1 s per CPU per second), so they are "
	 "not CPU use."},
	{"time_enabled_seconds", ENABLED,
	 "Time the event was enabled, for events that can be multiplexed "
	 "(not software events or tracepoints)",
	 NULL},
	{"time_running_seconds", RUNNING,
	 "Time the event was counting on the PMU: less than the time "
	 "enabled when multiplexed",
	 NULL},
};

static bool unit_seconds(const struct family *fam)
{
	return fam->shows != VALUE;
}

/* The rest of a HELP line: what a series spans, and per cgroup what the
 * root holds. */
static void put_help(struct page *p, const char *kind, const struct family *fam)
{
	if (strcmp(kind, "cgroup")) {
		page_printf(p, "%s; a series per CPU.\n", fam->help);
		return;
	}
	page_printf(p, "%s; a series per cgroup, summed over every CPU.",
		    fam->help);
	if (fam->root_note)
		page_printf(p, " %s", fam->root_note);
	page_putc(p, '\n');
}

static void header(struct page *p, enum format fmt, const char *kind,
		   const struct family *fam)
{
	if (fmt == OPENMETRICS_1_0) {
		page_printf(p, "# TYPE shpmu_%s_%s counter\n", kind, fam->name);
		if (unit_seconds(fam))
			page_printf(p, "# UNIT shpmu_%s_%s seconds\n", kind,
				    fam->name);
		page_printf(p, "# HELP shpmu_%s_%s ", kind, fam->name);
		put_help(p, kind, fam);
		return;
	}
	page_printf(p, "# HELP shpmu_%s_%s_total ", kind, fam->name);
	put_help(p, kind, fam);
	page_printf(p, "# TYPE shpmu_%s_%s_total counter\n", kind, fam->name);
}

/* Whether fam has a sample for event e: counts and clocks apart, and
 * times only where they can differ. */
static bool family_has(const struct family *fam, const struct event *e)
{
	switch (fam->shows) {
	case VALUE:
		return !e->clock;
	case CLOCK:
		return e->clock;
	default:
		return e->multiplexes;
	}
}

static void put_value(struct page *p, const struct family *fam,
		      const struct shpmu_count *c)
{
	switch (fam->shows) {
	case VALUE:
		page_u64(p, shpmu_scale(c));
		break;
	case CLOCK:
		page_seconds(p, shpmu_scale(c));
		break;
	case ENABLED:
		page_seconds(p, c->time_enabled);
		break;
	case RUNNING:
		page_seconds(p, c->time_running);
		break;
	}
	page_putc(p, '\n');
}

/* A target's label set: a cgroup's as it was made, a CPU's here. */
static const char *target_labels(struct exporter *x, bool cgroup, size_t t,
				 char *buf, size_t size, size_t *len)
{
	int n;

	if (cgroup) {
		*len = x->cgroups[t].labels_len;
		return x->cgroups[t].labels;
	}
	n = snprintf(buf, size, "cpu=\"%d\"", x->cpus[t]);
	*len = n > 0 ? (size_t)n : 0;
	return buf;
}

/* Family fam of one kind of target, its samples [first, end) of r:
 * each target's events in turn. */
static void put_family(struct page *p, struct exporter *x, enum format fmt,
		       bool cgroup, const struct family *fam,
		       const struct reading *r, size_t first, size_t end)
{
	const char *kind = cgroup ? "cgroup" : "cpu";
	char name[96], cpu[32];
	int name_len;

	header(p, fmt, kind, fam);
	name_len = snprintf(name, sizeof(name), "shpmu_%s_%s_total{", kind,
			    fam->name);
	for (size_t t = 0, i = first; i < end; t++) {
		size_t len;
		const char *labels =
			target_labels(x, cgroup, t, cpu, sizeof(cpu), &len);

		for (size_t e = 0; e < x->nevents; e++, i++) {
			if (!r->ok[i] || !family_has(fam, &x->events[e]))
				continue;
			page_put(p, name, (size_t)name_len);
			page_put(p, labels, len);
			page_put(p, x->events[e].tail, x->events[e].tail_len);
			put_value(p, fam, &r->counts[i]);
		}
	}
}

void put_targets(struct page *p, struct exporter *x, enum format fmt,
		 const struct reading *r)
{
	size_t ncpu = x->opts->per_cpu ? (size_t)x->ncpus * x->nevents : 0;

	for (int cgroup = 0; cgroup < 2; cgroup++) {
		size_t first = cgroup ? ncpu : 0, end = cgroup ? r->n : ncpu;

		if (first == end)
			continue;
		for (size_t f = 0; f < sizeof(families) / sizeof(families[0]);
		     f++) {
			bool any = false;

			for (size_t e = 0; e < x->nevents; e++)
				any |= family_has(&families[f], &x->events[e]);
			if (any)
				put_family(p, x, fmt, cgroup, &families[f], r,
					   first, end);
		}
	}
}
