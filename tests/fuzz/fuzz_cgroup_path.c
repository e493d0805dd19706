// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: cgroup path resolution and id lookups, read-only,
 * against the real cgroup hierarchy: escapes, odd bytes, long paths.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <shpmu/shpmu.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct shpmu *pmu;
	char buf[512], *path;
	uint64_t id;

	if (!pmu)
		pmu = shpmu_new(NULL);
	if (!pmu || size < 1 || size > 8192)
		return 0;
	path = malloc(size);
	if (!path)
		return 0;
	/* The first byte sizes the output buffer; the rest is the path. */
	memcpy(path, data + 1, size - 1);
	path[size - 1] = '\0';
	if (shpmu_cgroup_id(pmu, path, &id) == 0)
		shpmu_cgroup_path(pmu, id, buf, data[0] % sizeof(buf));
	memcpy(&id,
	       (size >= 9 ? data + 1 : (const uint8_t *)"\1\0\0\0\0\0\0\0"),
	       sizeof(id));
	shpmu_cgroup_path(pmu, id, buf, sizeof(buf));
	free(path);
	return 0;
}
