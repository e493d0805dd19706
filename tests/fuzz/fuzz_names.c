// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer target: event-name parsing (libpfm4 through shpmu_event_attr). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <shpmu/shpmu.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct shpmu *pmu;
	struct perf_event_attr attr;
	char *name;

	if (!pmu)
		pmu = shpmu_new(NULL);
	if (!pmu || size > 4096)
		return 0;
	name = malloc(size + 1);
	if (!name)
		return 0;
	memcpy(name, data, size);
	name[size] = '\0';
	shpmu_event_attr(pmu, name, &attr);
	free(name);
	return 0;
}
