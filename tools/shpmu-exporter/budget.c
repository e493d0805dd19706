// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The counter budget as gauges: each core PMU's counters per CPU, and
 * what the exporter's events need of them (shpmu_pmu_budget()). */
#include <stdlib.h>

#include "exporter.h"

static void family(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP shpmu_%s %s\n# TYPE shpmu_%s gauge\n", name, help,
		name);
}

/* Labels pmu and cpu ("task": the events that follow a task). */
static void labels(FILE *f, const struct shpmu_pmu_budget *b)
{
	fputs("pmu=\"", f);
	put_label_value(f, b->pmu);
	if (b->cpu < 0)
		fputs("\",cpu=\"task\"", f);
	else
		fprintf(f, "\",cpu=\"%d\"", b->cpu);
}

static void put_rows(FILE *f, const struct shpmu_pmu_budget *b, int n)
{
	family(f, "pmu_counters",
	       "Counters of a core PMU on a CPU, general-purpose or fixed.");
	for (int i = 0; i < n; i++) {
		if (b[i].cpu < 0)
			continue;
		fputs("shpmu_pmu_counters{", f);
		labels(f, &b[i]);
		fprintf(f, ",kind=\"general\"} %u\n", b[i].general);
		fputs("shpmu_pmu_counters{", f);
		labels(f, &b[i]);
		fprintf(f, ",kind=\"fixed\"} %u\n", b[i].fixed);
	}
	family(f, "pmu_counters_used",
	       "Counters the exporter's distinct kernel events need there.");
	for (int i = 0; i < n; i++) {
		fputs("shpmu_pmu_counters_used{", f);
		labels(f, &b[i]);
		fprintf(f, "} %u\n", b[i].used);
	}
	family(f, "pmu_counters_wanted",
	       "Counters its handles would need with a kernel event each; "
	       "wanted - used is what sharing saves.");
	for (int i = 0; i < n; i++) {
		fputs("shpmu_pmu_counters_wanted{", f);
		labels(f, &b[i]);
		fprintf(f, "} %llu\n", (unsigned long long)b[i].wanted);
	}
	family(f, "pmu_multiplexing",
	       "1 where the events need more counters than there are: "
	       "their counts are scaled estimates.");
	for (int i = 0; i < n; i++) {
		fputs("shpmu_pmu_multiplexing{", f);
		labels(f, &b[i]);
		fprintf(f, "} %u\n", b[i].multiplexing);
	}
}

void put_budget(FILE *f, struct exporter *x)
{
	int n = shpmu_pmu_budget(x->pmu, NULL, 0);
	struct shpmu_pmu_budget *b;

	/* No core PMU (or it cannot be read): no family at all. */
	if (n <= 0)
		return;
	b = calloc((size_t)n, sizeof(*b));
	if (!b)
		return;
	n = shpmu_pmu_budget(x->pmu, b, (size_t)n);
	if (n > 0)
		put_rows(f, b, n);
	free(b);
}
