// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What the Go side needs that cgo cannot do itself: function pointers,
 * bitfields and unions of perf_event_attr, a reading returned by value (a
 * Go pointer passed to C would make each Read allocate). */
#ifndef SHPMU_GO_GLUE_H
#define SHPMU_GO_GLUE_H

#include <stdint.h>
#include <shpmu/shpmu.h>

/* The attr fields the binding carries, flags one bit each. */
enum {
	SHPMU_GO_DISABLED = 1 << 0,
	SHPMU_GO_INHERIT = 1 << 1,
	SHPMU_GO_PINNED = 1 << 2,
	SHPMU_GO_EXCLUSIVE = 1 << 3,
	SHPMU_GO_EXCLUDE_USER = 1 << 4,
	SHPMU_GO_EXCLUDE_KERNEL = 1 << 5,
	SHPMU_GO_EXCLUDE_HV = 1 << 6,
	SHPMU_GO_EXCLUDE_IDLE = 1 << 7,
	SHPMU_GO_ENABLE_ON_EXEC = 1 << 8,
	SHPMU_GO_EXCLUDE_HOST = 1 << 9,
	SHPMU_GO_EXCLUDE_GUEST = 1 << 10,
};

struct shpmu_go_attr {
	uint32_t type;
	uint64_t config, config1, config2, flags;
};

enum {
	SHPMU_GO_READ = 0,
	SHPMU_GO_READ_CACHED = 1,
	SHPMU_GO_READ_CPU = 2,
	SHPMU_GO_READ_BOUND = 3,
	SHPMU_GO_READ_UNATTRIBUTED = 4,
};

struct shpmu_go_reading {
	struct shpmu_count count;
	uint64_t bound; /* SHPMU_GO_READ_BOUND's */
	int rc;
};

struct shpmu *shpmu_go_new(struct shpmu_opts *opts, uintptr_t sink);
int shpmu_go_list_events(struct shpmu *pmu, uintptr_t fn);
void shpmu_go_attr_set(struct perf_event_attr *a,
		       const struct shpmu_go_attr *g);
void shpmu_go_attr_get(const struct perf_event_attr *a,
		       struct shpmu_go_attr *g);
struct shpmu_go_reading shpmu_go_read(struct shpmu *pmu, int h, int how,
				      int cpu);

#endif
