// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One scrape: the cgroups brought up to date, every handle read with one
 * shpmu_read_many, and the page written in the Prometheus text format
 * 0.0.4 or in OpenMetrics 1.0. A target whose read fails is left out of
 * this scrape (and counted in shpmu_target_errors_total); the scrape
 * itself goes on.
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

/* The length of the valid UTF-8 sequence that s starts, 0 if none:
 * overlong forms, surrogates and code points past U+10FFFF are not
 * valid, as Go's utf8.ValidString (Prometheus's check) has it. */
static size_t utf8_len(const unsigned char *s)
{
	/* The second byte's range: narrower after E0, ED, F0 and F4. */
	unsigned char lo = s[0] == 0xe0 ? 0xa0 : s[0] == 0xf0 ? 0x90 : 0x80;
	unsigned char hi = s[0] == 0xed ? 0x9f : s[0] == 0xf4 ? 0x8f : 0xbf;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2 || s[0] > 0xf4 || s[1] < lo || s[1] > hi)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	/* A NUL is no continuation byte: nothing past the string is read. */
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void put_label_value(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = utf8_len(p);

		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '"')
			fputs("\\\"", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (!n) /* a cgroup's name is any bytes: kept readable */
			fprintf(f, "\\\\x%02x", *p);
		else
			fwrite(p, 1, n, f);
		p += n ? n : 1;
	}
}

char *label_pair(const char *name, const char *value)
{
	char *s = NULL;
	size_t len;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		return NULL;
	fprintf(f, "%s=\"", name);
	put_label_value(f, value);
	fputc('"', f);
	if (fclose(f)) {
		free(s);
		return NULL;
	}
	return s;
}

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

static const struct family per_target[] = {
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
	{"time_enabled_seconds", ENABLED, "Time the event was enabled", NULL},
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
static void put_help(FILE *f, const char *kind, const struct family *fam)
{
	if (strcmp(kind, "cgroup")) {
		fprintf(f, "%s; a series per CPU.\n", fam->help);
		return;
	}
	fprintf(f, "%s; a series per cgroup, summed over every CPU.",
		fam->help);
	if (fam->root_note)
		fprintf(f, " %s", fam->root_note);
	fputc('\n', f);
}

static void header(FILE *f, enum format fmt, const char *kind,
		   const struct family *fam)
{
	if (fmt == OPENMETRICS_1_0) {
		fprintf(f, "# TYPE shpmu_%s_%s counter\n", kind, fam->name);
		if (unit_seconds(fam))
			fprintf(f, "# UNIT shpmu_%s_%s seconds\n", kind,
				fam->name);
		fprintf(f, "# HELP shpmu_%s_%s ", kind, fam->name);
		put_help(f, kind, fam);
		return;
	}
	fprintf(f, "# HELP shpmu_%s_%s_total ", kind, fam->name);
	put_help(f, kind, fam);
	fprintf(f, "# TYPE shpmu_%s_%s_total counter\n", kind, fam->name);
}

void put_seconds(FILE *f, uint64_t ns)
{
	fprintf(f, "%llu.%09llu\n", (unsigned long long)(ns / 1000000000),
		(unsigned long long)(ns % 1000000000));
}

/* Whether fam has a sample for event e: counts and clocks apart. */
static bool family_has(const struct family *fam, const struct event *e)
{
	if (fam->shows == VALUE)
		return !e->clock;
	if (fam->shows == CLOCK)
		return e->clock;
	return true;
}

static void put_value(FILE *f, const struct family *fam,
		      const struct shpmu_count *c)
{
	switch (fam->shows) {
	case VALUE:
		fprintf(f, "%llu\n", (unsigned long long)shpmu_scale(c));
		break;
	case CLOCK:
		put_seconds(f, shpmu_scale(c));
		break;
	case ENABLED:
		put_seconds(f, c->time_enabled);
		break;
	case RUNNING:
		put_seconds(f, c->time_running);
		break;
	}
}

struct reading {
	int *hs;
	struct shpmu_count *counts;
	bool *ok;
	size_t n;
};

/* Every handle: CPUs first, then cgroups, events innermost. */
static int read_all(struct exporter *x, struct reading *r)
{
	size_t ncpu = x->opts->per_cpu ? (size_t)x->ncpus * x->nevents : 0;
	size_t i = 0;

	r->n = ncpu + x->ncgroups * x->nevents;
	r->hs = malloc(sizeof(int) * (r->n + 1));
	r->counts = calloc(r->n + 1, sizeof(*r->counts));
	r->ok = calloc(r->n + 1, sizeof(bool));
	if (!r->hs || !r->counts || !r->ok)
		return -ENOMEM;
	for (; i < ncpu; i++)
		r->hs[i] = x->cpu_handles[i];
	for (size_t g = 0; g < x->ncgroups; g++)
		for (size_t e = 0; e < x->nevents; e++)
			r->hs[i++] = x->cgroups[g].handles[e];
	if (!r->n || !shpmu_read_many(x->pmu, r->hs, r->n, r->counts)) {
		memset(r->ok, 1, r->n);
		return 0;
	}
	/* One bad target must not cost the others their scrape. */
	for (i = 0; i < r->n; i++) {
		int err = shpmu_read(x->pmu, r->hs[i], &r->counts[i]);
		char why[EXPLAIN_MAX];

		r->ok[i] = !err;
		if (err) {
			x->target_errors++;
			say("a read failed: %s; left out of this scrape",
			    explain(x, r->hs[i], err, why, sizeof(why)));
		}
	}
	return 0;
}

static void put_per_target(FILE *f, struct exporter *x, enum format fmt,
			   const struct reading *r)
{
	size_t ncpu = x->opts->per_cpu ? (size_t)x->ncpus * x->nevents : 0;

	for (int kind = 0; kind < 2; kind++) {
		const char *name = kind ? "cgroup" : "cpu";
		size_t first = kind ? ncpu : 0, end = kind ? r->n : ncpu;

		if (first == end)
			continue;
		for (size_t fi = 0;
		     fi < sizeof(per_target) / sizeof(per_target[0]); fi++) {
			const struct family *fam = &per_target[fi];
			bool any = false;

			for (size_t e = 0; e < x->nevents; e++)
				any |= family_has(fam, &x->events[e]);
			if (!any)
				continue;
			header(f, fmt, name, fam);
			for (size_t i = first; i < end; i++) {
				size_t t = (i - first) / x->nevents;
				const struct event *e =
					&x->events[(i - first) % x->nevents];

				if (!r->ok[i] || !family_has(fam, e))
					continue;
				/* Label sets escaped once, when the
				 * cgroup or event was opened. */
				fprintf(f, "shpmu_%s_%s_total{", name,
					fam->name);
				if (kind)
					fputs(x->cgroups[t].labels, f);
				else
					fprintf(f, "cpu=\"%d\"", x->cpus[t]);
				fprintf(f, ",%s} ", e->label);
				put_value(f, fam, &r->counts[i]);
			}
		}
	}
}

static void gauge(FILE *f, const char *name, const char *help, double v)
{
	fprintf(f, "# HELP shpmu_%s %s\n# TYPE shpmu_%s gauge\nshpmu_%s %.9g\n",
		name, help, name, name, v);
}

void put_counter(FILE *f, enum format fmt, const char *name, const char *unit,
		 const char *help)
{
	if (fmt == OPENMETRICS_1_0) {
		fprintf(f, "# TYPE shpmu_%s counter\n", name);
		if (unit)
			fprintf(f, "# UNIT shpmu_%s %s\n", name, unit);
		fprintf(f, "# HELP shpmu_%s %s\n", name, help);
	} else
		fprintf(f,
			"# HELP shpmu_%s_total %s\n# TYPE shpmu_%s_total "
			"counter\n",
			name, help, name);
}

static const char *const cut_names[CUT_REASONS] = {
	[CUT_DEADLINE] = "deadline",
	[CUT_ADDRESS] = "address",
	[CUT_LIMIT] = "limit",
};

static void put_own(FILE *f, struct exporter *x, enum format fmt,
		    double started)
{
	struct shpmu_stats st;

	shpmu_get_stats(x->pmu, &st);
	gauge(f, "handles", "Open libshpmu handles of this exporter.",
	      (double)st.handles);
	gauge(f, "kernel_events",
	      "Kernel events behind them (this process's share).",
	      (double)st.kernel_events);
	gauge(f, "kernel_fds", "perf_event fds this process holds.",
	      (double)st.kernel_fds);
	gauge(f, "cgroups", "Cgroups counted.", (double)x->ncgroups);
	gauge(f, "cgroups_left_out",
	      "Cgroups found but not counted: past --max-cgroups, or "
	      "their paths longer than PATH_MAX.",
	      (double)x->left_out);
	put_counter(f, fmt, "target_errors", NULL,
		    "Targets left out of a scrape because they failed.");
	fprintf(f, "shpmu_target_errors_total %llu\n",
		(unsigned long long)x->target_errors);
	put_counter(f, fmt, "scrapes", NULL,
		    "Scrapes of /metrics, this one too.");
	fprintf(f, "shpmu_scrapes_total %llu\n",
		(unsigned long long)x->scrapes);
	put_counter(f, fmt, "http_connections_cut", NULL,
		    "Client connections the exporter closed: request not whole "
		    "in time (deadline), past the connections of one address "
		    "(address), past the connection limit (limit).");
	for (int i = 0; i < CUT_REASONS; i++)
		fprintf(f,
			"shpmu_http_connections_cut_total{reason=\"%s\"} "
			"%llu\n",
			cut_names[i],
			(unsigned long long)__atomic_load_n(&x->cuts[i],
							    __ATOMIC_RELAXED));
	x->last_scrape_s = now_s() - started;
	gauge(f, "scrape_duration_seconds",
	      "How long this scrape took: cgroups found, read, written.",
	      x->last_scrape_s);
	if (fmt == OPENMETRICS_1_0)
		fputs("# EOF\n", f);
}

int scrape(struct exporter *x, enum format fmt, char **out, size_t *len)
{
	struct reading r = {0};
	double started;
	FILE *f;
	int err;

	pthread_mutex_lock(&x->lock);
	started = now_s();
	x->scrapes++;
	cgroups_refresh(x);
	err = read_all(x, &r);
	if (!err) {
		f = open_memstream(out, len);
		if (!f) {
			err = -errno;
		} else {
			put_per_target(f, x, fmt, &r);
			put_unattributed(f, x, fmt);
			put_budget(f, x);
			put_own(f, x, fmt, started);
			if (fclose(f)) {
				err = -ENOMEM;
				free(*out);
				*out = NULL;
			}
		}
	}
	pthread_mutex_unlock(&x->lock);
	free(r.hs);
	free(r.counts);
	free(r.ok);
	return err;
}
