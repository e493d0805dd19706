// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* shpmu-stat --budget: the counter budget of the events opened, a row per
 * core PMU and CPU. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stat.h"

int budget_has_pmu(struct shpmu *pmu)
{
	int n = shpmu_pmu_budget(pmu, NULL, 0);

	if (n < 0) {
		fprintf(stderr, "shpmu-stat: cannot read the PMUs: %s\n",
			strerror(-n));
		return n;
	}
	if (!n)
		printf("shpmu-stat: this machine has no hardware PMU: there "
		       "is no counter budget\n");
	return n;
}

int print_budget(struct shpmu *pmu)
{
	int n = shpmu_pmu_budget(pmu, NULL, 0);
	struct shpmu_pmu_budget *b;
	char cpu[16];

	if (n <= 0)
		return n;
	b = calloc((size_t)n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	/* Read again: n cannot change, the PMUs are read once. */
	n = shpmu_pmu_budget(pmu, b, (size_t)n);
	printf("%-12s %5s %8s %6s %9s %5s %7s %6s %s\n", "pmu", "cpu",
	       "general", "fixed", "watchdog", "used", "wanted", "saved",
	       "multiplexing");
	for (int i = 0; i < n; i++) {
		if (b[i].cpu < 0)
			snprintf(cpu, sizeof(cpu), "task");
		else
			snprintf(cpu, sizeof(cpu), "%d", b[i].cpu);
		printf("%-12s %5s %8u %6u %9u %5u %7llu %6llu %s\n", b[i].pmu,
		       cpu, b[i].general, b[i].fixed, b[i].watchdog, b[i].used,
		       (unsigned long long)b[i].wanted,
		       (unsigned long long)b[i].saved,
		       b[i].multiplexing ? "yes" : "no");
	}
	free(b);
	return n < 0 ? n : 0;
}
