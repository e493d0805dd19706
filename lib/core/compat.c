// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What binaries linked against libshpmu 0.1 call: their struct
 * shpmu_target and struct shpmu_stats end where 0.1's did, before the
 * reserved fields. Each call copies the old struct into a current one.
 */
#include <string.h>

#include "core/symver.h"

struct target_v0_1 {
	enum shpmu_target_kind kind;
	pid_t pid;
	int cpu;
	uint64_t cgroup_id;
	const char *cgroup_path;
};

struct stats_v0_1 {
	uint64_t handles, kernel_events, kernel_fds, opens, shared_opens;
};

SHPMU_API int shpmu_open_v0_1(struct shpmu *pmu,
			      const struct perf_event_attr *attr,
			      const struct target_v0_1 *target);
SHPMU_API int shpmu_open_name_v0_1(struct shpmu *pmu, const char *event,
				   const struct target_v0_1 *target);
SHPMU_API int shpmu_open_group_v0_1(struct shpmu *pmu,
				    const struct perf_event_attr *attrs,
				    size_t n, const struct target_v0_1 *target);
SHPMU_API int shpmu_get_stats_v0_1(struct shpmu *pmu, struct stats_v0_1 *out);

static const struct shpmu_target *target_of(const struct target_v0_1 *old,
					    struct shpmu_target *t)
{
	if (!old)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->kind = old->kind;
	t->pid = old->pid;
	t->cpu = old->cpu;
	t->cgroup_id = old->cgroup_id;
	t->cgroup_path = old->cgroup_path;
	return t;
}

SHPMU_API int shpmu_open_v0_1(struct shpmu *pmu,
			      const struct perf_event_attr *attr,
			      const struct target_v0_1 *target)
{
	struct shpmu_target t;

	return shpmu_open_v0_2(pmu, attr, target_of(target, &t));
}
SHPMU_COMPAT_VERSION(shpmu_open_v0_1, shpmu_open, "LIBSHPMU_0.1");

SHPMU_API int shpmu_open_name_v0_1(struct shpmu *pmu, const char *event,
				   const struct target_v0_1 *target)
{
	struct shpmu_target t;

	return shpmu_open_name_v0_2(pmu, event, target_of(target, &t));
}
SHPMU_COMPAT_VERSION(shpmu_open_name_v0_1, shpmu_open_name, "LIBSHPMU_0.1");

SHPMU_API int shpmu_open_group_v0_1(struct shpmu *pmu,
				    const struct perf_event_attr *attrs,
				    size_t n, const struct target_v0_1 *target)
{
	struct shpmu_target t;

	return shpmu_open_group_v0_2(pmu, attrs, n, target_of(target, &t));
}
SHPMU_COMPAT_VERSION(shpmu_open_group_v0_1, shpmu_open_group, "LIBSHPMU_0.1");

SHPMU_API int shpmu_get_stats_v0_1(struct shpmu *pmu, struct stats_v0_1 *out)
{
	struct shpmu_stats st;
	int err = shpmu_get_stats_v0_2(pmu, out ? &st : NULL);

	if (!err)
		memcpy(out, &st, sizeof(*out));
	return err;
}
SHPMU_COMPAT_VERSION(shpmu_get_stats_v0_1, shpmu_get_stats, "LIBSHPMU_0.1");
