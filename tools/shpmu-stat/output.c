// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* shpmu-stat's output: perf stat's human layout, its CSV field order
 * ([thread,] value, unit, event, [cgroup,] run time, running %, metric value,
 * metric unit), or one JSON object per line. */
#include <inttypes.h>
#include <string.h>

#include "stat.h"

static bool is_clock(const char *event)
{
	return strstr(event, "task-clock") || strstr(event, "cpu-clock") ||
	       strstr(event, "TASK_CLOCK") || strstr(event, "CPU_CLOCK") ||
	       strstr(event, "TASK-CLOCK") || strstr(event, "CPU-CLOCK");
}

/* The share of its enabled time the event ran, as perf stat shows it:
 * 100 unless multiplexed; in CSV and JSON perf's integer division. */
static double running_pct(const struct shpmu_count *c, bool whole)
{
	if (c->time_running == c->time_enabled)
		return 100;
	if (whole)
		return (double)((unsigned __int128)c->time_running * 100 /
				c->time_enabled);
	return 100.0 * (double)c->time_running / (double)c->time_enabled;
}

/* Whether the event never ran in the window (perf's test): its count
 * would be a guess from nothing. */
static bool not_counted(const struct shpmu_count *c)
{
	return !c->time_running || !c->time_enabled;
}

static void value_text(const struct row *r, char *buf, size_t len)
{
	uint64_t v = shpmu_scale(&r->count);

	if (r->unsupported)
		snprintf(buf, len, "<not supported>");
	else if (not_counted(&r->count))
		snprintf(buf, len, "<not counted>");
	else if (is_clock(r->event))
		snprintf(buf, len, "%.2f", (double)v / 1e6);
	else
		snprintf(buf, len, "%" PRIu64, v);
}

static void print_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

void print_header(const struct options *o)
{
	if (o->format != OUT_HUMAN || o->interval_ms)
		return;
	printf("\n Performance counter stats for ");
	/* With -p, a command only says how long to count. */
	if (o->pid) {
		printf("process id '%d'", (int)o->pid);
	} else if (o->command) {
		printf("'");
		for (char **a = o->command; *a; a++)
			printf("%s%s", *a, a[1] ? " " : "");
		printf("'");
	} else {
		printf("'system wide'");
	}
	printf(":\n\n");
}

void print_row(const struct options *o, const struct row *r, double ts)
{
	const char *unit = is_clock(r->event) ? "msec" : "";
	double pct = running_pct(&r->count, o->format != OUT_HUMAN);
	char value[64], thread[48];

	value_text(r, value, sizeof(value));
	/* perf's name for a thread's row: comm-tid. */
	if (r->comm)
		snprintf(thread, sizeof(thread), "%s-%d", r->comm, (int)r->tid);
	switch (o->format) {
	case OUT_CSV:
		if (o->interval_ms)
			printf("%.9f%s", ts, o->sep);
		if (r->comm)
			printf("%s%s", thread, o->sep);
		printf("%s%s%s%s%s%s", value, o->sep, unit, o->sep, r->event,
		       o->sep);
		if (r->cgroup)
			printf("%s%s", r->cgroup, o->sep);
		printf("%" PRIu64 "%s%.2f%s%s\n", r->count.time_running, o->sep,
		       pct, o->sep, o->sep);
		break;
	case OUT_JSON:
		printf("{");
		if (o->interval_ms)
			printf("\"interval\" : %.9f, ", ts);
		if (r->comm) {
			printf("\"thread\" : ");
			print_json_string(thread);
			printf(", ");
		}
		printf("\"counter-value\" : \"%s\", \"unit\" : \"%s\", "
		       "\"event\" : ",
		       value, unit);
		print_json_string(r->event);
		if (r->cgroup) {
			printf(", \"cgroup\" : ");
			print_json_string(r->cgroup);
		}
		printf(", \"event-runtime\" : %" PRIu64
		       ", \"pcnt-running\" : %.2f}\n",
		       r->count.time_running, pct);
		break;
	case OUT_HUMAN:
		if (o->interval_ms)
			printf("%14.9f ", ts);
		/* Aligned on the dash, as perf aligns it. */
		if (r->comm)
			printf("%16s-%-8d ", r->comm, (int)r->tid);
		printf("%18s %-5s %-24s", value, unit, r->event);
		if (r->cgroup)
			printf(" %s", r->cgroup);
		/* Multiplexed: the value above is scaled from this share
		 * (0.00% for an event enabled that never ran). */
		if (r->count.time_running != r->count.time_enabled)
			printf("  (%.2f%%)", pct);
		printf("\n");
		break;
	}
}

void print_footer(const struct options *o, double elapsed_s,
		  const struct shpmu_stats *st, uint64_t fds_unshared)
{
	if (o->format == OUT_HUMAN && !o->interval_ms)
		printf("\n %17.9f seconds time elapsed\n\n", elapsed_s);
	/* On stderr, so that CSV and JSON stay parseable. */
	fflush(stdout);
	if (o->verbose)
		fprintf(stderr,
			"shpmu-stat: %" PRIu64 " handles on %" PRIu64
			" kernel events, %" PRIu64
			" fds (without sharing: %" PRIu64 " fds)\n",
			st->handles, st->kernel_events, st->kernel_fds,
			fds_unshared);
}
