// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* shpmu-stat's output: perf stat's human layout, its CSV field order
 * ([thread,] value, unit, event, [cgroup,] run time, running %, metric value,
 * metric unit), or one JSON object per line. A count that may fall short of
 * the truth (the BPF backend's bound, see libshpmu(3)) says by how much: a
 * suffix in the human layout, and in CSV and JSON perf's metric value and
 * unit, which perf uses for a number shown beside a count and which are
 * otherwise empty here. */
#include <inttypes.h>
#include <string.h>

#include "stat.h"
#include "../plural.h"

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

/* ns as msec to two decimals, rounded up: a bound never reads smaller
 * than it is, nor a non-zero one as 0.00. */
static void msec_up(uint64_t ns, char *buf, size_t len)
{
	uint64_t hundredths = ns / 10000 + (ns % 10000 != 0);

	snprintf(buf, len, "%" PRIu64 ".%02" PRIu64, hundredths / 100,
		 hundredths % 100);
}

/* The row's bound as its value is shown, or false where it has none:
 * scaled as the value is (a multiplexed count is an estimate from the same
 * share), a clock's in msec. */
static bool bound_text(const struct row *r, char *buf, size_t len)
{
	struct shpmu_count b = {.value = r->bound,
				.time_enabled = r->count.time_enabled,
				.time_running = r->count.time_running};

	if (!r->bound || r->unsupported || not_counted(&r->count))
		return false;
	if (is_clock(r->event))
		msec_up(shpmu_scale(&b), buf, len);
	else
		snprintf(buf, len, "%" PRIu64, shpmu_scale(&b));
	return true;
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
	/* As perf stat names what it counted: with -p, -a, -C or -G a
	 * command only says how long to count. -G counts its cgroups on
	 * every CPU, as perf's -G -a. */
	if (o->pid) {
		printf("process id '%d'", (int)o->pid);
	} else if (o->ncpus) {
		printf("'CPU(s) %s'", o->cpu_list);
	} else if (o->all_cpus || o->ncgroups) {
		printf("'system wide'");
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
	const char *bound_unit =
		is_clock(r->event) ? "msec unattributed" : "unattributed";
	double pct = running_pct(&r->count, o->format != OUT_HUMAN);
	char value[64], thread[48], bound[32] = "";
	bool bounded = bound_text(r, bound, sizeof(bound));

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
		printf("%" PRIu64 "%s%.2f%s%s%s%s\n", r->count.time_running,
		       o->sep, pct, o->sep, bound, o->sep,
		       bounded ? bound_unit : "");
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
		       ", \"pcnt-running\" : %.2f",
		       r->count.time_running, pct);
		if (bounded)
			printf(", \"metric-value\" : \"%s\", "
			       "\"metric-unit\" : \"%s\"",
			       bound, bound_unit);
		printf("}\n");
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
		/* The truth lies between the value and the value plus
		 * this. */
		if (bounded)
			printf("  (up to +%s%s unattributed)", bound,
			       is_clock(r->event) ? " msec" : "");
		/* Multiplexed: the value above is scaled from this share
		 * (0.00% for an event enabled that never ran). */
		if (r->count.time_running != r->count.time_enabled)
			printf("  (%.2f%%)", pct);
		printf("\n");
		break;
	}
}

/* Why a count may carry a bound: the kernel switched tasks without
 * running the BPF backend's program (libshpmu(7), BACKENDS). */
static void print_unseen(const struct shpmu_stats *st)
{
	char ms[32];

	if (!st->switches_unseen)
		return;
	msec_up(st->unattributed_ns, ms, sizeof(ms));
	fprintf(stderr,
		"shpmu-stat: %" PRIu64 " context %s unseen by the BPF "
		"backend, %s msec of CPU time unattributed: a count may fall "
		"short by the bound shown with it\n",
		st->switches_unseen,
		st->switches_unseen == 1 ? "switch" : "switches", ms);
}

void print_footer(const struct options *o, double elapsed_s,
		  const struct shpmu_stats *st, uint64_t fds_unshared)
{
	if (o->format == OUT_HUMAN && !o->interval_ms)
		printf("\n %17.9f seconds time elapsed\n\n", elapsed_s);
	/* On stderr, so that CSV and JSON stay parseable. */
	fflush(stdout);
	print_unseen(st);
	if (o->verbose)
		fprintf(stderr,
			"shpmu-stat: %" PRIu64 " handle%s on %" PRIu64
			" kernel event%s, %" PRIu64
			" fd%s (without sharing: %" PRIu64 " fd%s)\n",
			st->handles, plural(st->handles, "s"),
			st->kernel_events, plural(st->kernel_events, "s"),
			st->kernel_fds, plural(st->kernel_fds, "s"),
			fds_unshared, plural(fds_unshared, "s"));
}
