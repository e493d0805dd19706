// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the BPF backend could not attribute. On a kernel that switches
 * tasks without running its program, what a CPU counted across such a
 * switch that the program cannot prove whose it was goes to that CPU's
 * unattributed totals, never to a guess (libshpmu(7), BACKENDS): a
 * cgroup's count then falls short of the truth by at most what went
 * unattributed on its CPUs. Exported per event and CPU (summed over CPUs
 * with --no-cpu), through one handle of the event that the backend
 * counts, and in all from the context's stats.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exporter.h"

/* One handle of event e that the BPF backend counts, with the event's
 * unattributed totals over every CPU in *all; -1 where there is none.
 * Cgroups first: in process scope the CPUs' events are classic perf fds,
 * which attribute everything (-EOPNOTSUPP, logged by the library as an
 * error, which here is only the answer). */
static int bpf_handle(struct exporter *x, size_t e, struct shpmu_count *all)
{
	size_t ncpu = x->opts->per_cpu ? (size_t)x->ncpus : 0;
	int h = -1, err = -EOPNOTSUPP;

	x->probing = true;
	for (size_t g = 0; err == -EOPNOTSUPP && g < x->ncgroups; g++) {
		h = x->cgroups[g].handles[e];
		err = shpmu_read_unattributed(x->pmu, h, -1, all);
	}
	for (size_t c = 0; err == -EOPNOTSUPP && c < ncpu; c++) {
		h = x->cpu_handles[c * x->nevents + e];
		err = shpmu_read_unattributed(x->pmu, h, -1, all);
	}
	x->probing = false;
	if (err && err != -EOPNOTSUPP) {
		char why[EXPLAIN_MAX];

		x->target_errors++;
		say("unattributed totals of %s: %s; left out of this scrape",
		    x->events[e].name, explain(x, h, err, why, sizeof(why)));
	}
	return err ? -1 : h;
}

/* Event e's totals into counts[0 .. ncols), setting ok for each one read:
 * one column (every CPU), or one per CPU. */
static void read_event(struct exporter *x, size_t e, size_t ncols,
		       struct shpmu_count *counts, bool *ok)
{
	struct shpmu_count all;
	int h = bpf_handle(x, e, &all);

	if (h < 0)
		return;
	for (size_t c = 0; c < ncols; c++) {
		/* Nothing on any CPU: no need to ask each (every read
		 * brings all the CPUs up to now first). */
		if (ncols == 1 ||
		    (!all.value && !all.time_enabled && !all.time_running)) {
			counts[c] = ncols == 1 ? all : (struct shpmu_count){0};
			ok[c] = true;
			continue;
		}
		ok[c] = !shpmu_read_unattributed(x->pmu, h, x->cpus[c],
						 &counts[c]);
	}
}

static const char *const help_events =
	"Events the BPF backend counted but could not attribute to any "
	"target, since it began counting the event; scaled for "
	"multiplexing.";
static const char *const help_clock =
	"Clock events (task-clock, cpu-clock) in seconds the BPF backend "
	"counted but could not attribute to any target, since it began "
	"counting the event.";

/* One sample: column c of event e. */
static void put_sample(struct page *p, struct exporter *x, const char *name,
		       size_t e, size_t c, size_t ncols,
		       const struct shpmu_count *count)
{
	page_printf(p, "shpmu_%s_total{", name);
	if (ncols > 1)
		page_printf(p, "cpu=\"%d\",", x->cpus[c]);
	page_printf(p, "%s} ", x->events[e].label);
	if (x->events[e].clock)
		page_seconds(p, shpmu_scale(count));
	else
		page_u64(p, shpmu_scale(count));
	page_putc(p, '\n');
}

/* The counts (!clock), or the clock events' seconds (clock), of every
 * event that has them; no family where none has. */
static void put_family(struct page *p, struct exporter *x, enum format fmt,
		       bool clock, size_t ncols,
		       const struct shpmu_count *counts, const bool *ok)
{
	const char *name =
		clock ? "unattributed_clock_seconds" : "unattributed_events";
	bool header = false;

	for (size_t e = 0; e < x->nevents; e++) {
		if (x->events[e].clock != clock)
			continue;
		for (size_t c = 0; c < ncols; c++) {
			if (!ok[e * ncols + c])
				continue;
			if (!header)
				put_counter(p, fmt, name,
					    clock ? "seconds" : NULL,
					    clock ? help_clock : help_events);
			header = true;
			put_sample(p, x, name, e, c, ncols,
				   &counts[e * ncols + c]);
		}
	}
}

void put_unattributed(struct page *p, struct exporter *x, enum format fmt)
{
	size_t ncols = x->opts->per_cpu ? (size_t)x->ncpus : 1;
	struct shpmu_count *counts =
		calloc(x->nevents * ncols, sizeof(*counts));
	bool *ok = calloc(x->nevents * ncols, sizeof(*ok));
	struct shpmu_stats st;

	if (counts && ok) {
		for (size_t e = 0; e < x->nevents; e++)
			read_event(x, e, ncols, counts + e * ncols,
				   ok + e * ncols);
		put_family(p, x, fmt, false, ncols, counts, ok);
		put_family(p, x, fmt, true, ncols, counts, ok);
	}
	free(counts);
	free(ok);
	shpmu_get_stats(x->pmu, &st);
	put_counter(p, fmt, "switches_unseen", NULL,
		    "Context switches the kernel made without running the BPF "
		    "backend's program, on every CPU, since it was loaded.");
	page_printf(p, "shpmu_switches_unseen_total %llu\n",
		    (unsigned long long)st.switches_unseen);
	put_counter(p, fmt, "unattributed_seconds", "seconds",
		    "CPU time, summed over CPUs, whose counts the BPF backend "
		    "could not attribute to any target, since its program was "
		    "loaded.");
	page_puts(p, "shpmu_unattributed_seconds_total ");
	page_seconds(p, st.unattributed_ns);
	page_putc(p, '\n');
}
