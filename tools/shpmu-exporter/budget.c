// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The counter budget as gauges: each core PMU's counters per CPU, and
 * what the exporter's events need of them (shpmu_pmu_budget()). */
#include <stdlib.h>

#include "exporter.h"

static void family(struct page *p, const char *name, const char *help)
{
	page_printf(p, "# HELP shpmu_%s %s\n# TYPE shpmu_%s gauge\n", name,
		    help, name);
}

/* Labels pmu and cpu ("task": the events that follow a task). */
static void labels(struct page *p, const struct shpmu_pmu_budget *b)
{
	page_puts(p, "pmu=\"");
	page_label_value(p, b->pmu);
	if (b->cpu < 0)
		page_puts(p, "\",cpu=\"task\"");
	else
		page_printf(p, "\",cpu=\"%d\"", b->cpu);
}

static void put_rows(struct page *p, const struct shpmu_pmu_budget *b, int n)
{
	family(p, "pmu_counters",
	       "Counters of a core PMU on a CPU, general-purpose or fixed.");
	for (int i = 0; i < n; i++) {
		if (b[i].cpu < 0)
			continue;
		page_puts(p, "shpmu_pmu_counters{");
		labels(p, &b[i]);
		page_printf(p, ",kind=\"general\"} %u\n", b[i].general);
		page_puts(p, "shpmu_pmu_counters{");
		labels(p, &b[i]);
		page_printf(p, ",kind=\"fixed\"} %u\n", b[i].fixed);
	}
	family(p, "pmu_counters_used",
	       "Counters the exporter's distinct kernel events need there.");
	for (int i = 0; i < n; i++) {
		page_puts(p, "shpmu_pmu_counters_used{");
		labels(p, &b[i]);
		page_printf(p, "} %u\n", b[i].used);
	}
	family(p, "pmu_counters_wanted",
	       "Counters its handles would need with a kernel event each; "
	       "wanted - used is what sharing saves.");
	for (int i = 0; i < n; i++) {
		page_puts(p, "shpmu_pmu_counters_wanted{");
		labels(p, &b[i]);
		page_printf(p, "} %llu\n", (unsigned long long)b[i].wanted);
	}
	family(p, "pmu_multiplexing",
	       "1 where the events need more counters than there are: "
	       "their counts are scaled estimates.");
	for (int i = 0; i < n; i++) {
		page_puts(p, "shpmu_pmu_multiplexing{");
		labels(p, &b[i]);
		page_printf(p, "} %u\n", b[i].multiplexing);
	}
}

void put_budget(struct page *p, struct exporter *x)
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
		put_rows(p, b, n);
	free(b);
}
