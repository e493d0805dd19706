/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * id -> path without CAP_DAC_READ_SEARCH: a walk of the hierarchy fills an
 * id -> relative path map, refreshed when a lookup misses or finds a path
 * that now names another cgroup. Guarded by struct cgroups' lock.
 */
#ifndef SHPMU_CGROUP_WALK_H
#define SHPMU_CGROUP_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "core/hashtab.h"

struct shpmu;

struct cgroup_path_entry {
	struct hash_node node; /* hashed by id */
	char path[];	       /* relative to the root; "" is the root */
};

/* Zeroed, an empty map. */
struct cgroup_path_map {
	struct hashtab ids;
};

void cgroup_path_map_clear(struct cgroup_path_map *map);

/* Rebuilds map by walking everything under root_fd (directories it may
 * not read are skipped). 0 or -errno; on failure map is unchanged. */
int cgroup_walk(struct shpmu *pmu, int root_fd, struct cgroup_path_map *map);

/* The relative path of id, or NULL. */
const char *cgroup_path_map_find(const struct cgroup_path_map *map,
				 uint64_t id);

#endif
