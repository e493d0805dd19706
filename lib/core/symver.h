/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Several versions of one public function, as libbpf keeps them: binaries
 * linked against 0.1 call the function of that version (compat.c), which
 * takes their shorter 0.1 structs; those linked against 0.2 and 0.3 call
 * the open functions of the 0.3 target rule; everything built since, and
 * every static link, the default (0.4). A caller inside the library calls
 * the plain name and gets the default.
 */
#ifndef SHPMU_SYMVER_H
#define SHPMU_SYMVER_H

#include <shpmu/shpmu.h>

/* version is a string: "LIBSHPMU_0.2". */
#define SHPMU_DEFAULT_VERSION(internal, api, version)                          \
	__asm__(".symver " #internal "," #api "@@" version)
#define SHPMU_COMPAT_VERSION(internal, api, version)                           \
	__asm__(".symver " #internal "," #api "@" version)

/* The 0.4 defaults: a zeroed target counts everywhere (key.c). */
SHPMU_API int shpmu_open_v0_4(struct shpmu *pmu,
			      const struct perf_event_attr *attr,
			      const struct shpmu_target *target);
SHPMU_API int shpmu_open_name_v0_4(struct shpmu *pmu, const char *event,
				   const struct shpmu_target *target);
SHPMU_API int shpmu_open_group_v0_4(struct shpmu *pmu,
				    const struct perf_event_attr *attrs,
				    size_t n,
				    const struct shpmu_target *target);
SHPMU_API int shpmu_open_opts_v0_4(struct shpmu *pmu,
				   const struct perf_event_attr *attr,
				   const struct shpmu_target *target,
				   const struct shpmu_open_opts *opts);

/* What binaries built against 0.2 and 0.3 call (and the 0.1 versions):
 * their targets' cpu >= 0 is one CPU. */
SHPMU_API int shpmu_open_v0_2(struct shpmu *pmu,
			      const struct perf_event_attr *attr,
			      const struct shpmu_target *target);
SHPMU_API int shpmu_open_name_v0_2(struct shpmu *pmu, const char *event,
				   const struct shpmu_target *target);
SHPMU_API int shpmu_open_group_v0_2(struct shpmu *pmu,
				    const struct perf_event_attr *attrs,
				    size_t n,
				    const struct shpmu_target *target);
SHPMU_API int shpmu_open_opts_v0_3(struct shpmu *pmu,
				   const struct perf_event_attr *attr,
				   const struct shpmu_target *target,
				   const struct shpmu_open_opts *opts);
SHPMU_API int shpmu_get_stats_v0_2(struct shpmu *pmu, struct shpmu_stats *out);

#endif
