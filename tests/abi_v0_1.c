// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A program linked against libshpmu 0.1 keeps working with this library:
 * its calls bind to the 0.1 versions of the functions whose structs grew
 * (as a binary linked then does), which read and write only 0.1's struct
 * shpmu_target and struct shpmu_stats. Each old struct sits at the very
 * end of a page followed by an inaccessible one: touching a byte past it
 * faults. The current versions are checked beside them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <shpmu/shpmu.h>

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

int old_open(struct shpmu *pmu, const struct perf_event_attr *attr,
	     const struct target_v0_1 *target);
int old_open_name(struct shpmu *pmu, const char *event,
		  const struct target_v0_1 *target);
int old_open_group(struct shpmu *pmu, const struct perf_event_attr *attrs,
		   size_t n, const struct target_v0_1 *target);
int old_get_stats(struct shpmu *pmu, struct stats_v0_1 *out);
__asm__(".symver old_open,shpmu_open@LIBSHPMU_0.1");
__asm__(".symver old_open_name,shpmu_open_name@LIBSHPMU_0.1");
__asm__(".symver old_open_group,shpmu_open_group@LIBSHPMU_0.1");
__asm__(".symver old_get_stats,shpmu_get_stats@LIBSHPMU_0.1");

static int passed, failed;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	if (ok)
		passed++;
	else
		failed++;
}

/* Room for size bytes ending where an inaccessible page begins. */
static void *at_page_end(size_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + page, (size_t)page, PROT_NONE))
		return NULL;
	return p + page - size;
}

int main(void)
{
	struct target_v0_1 *old = at_page_end(sizeof(*old));
	struct stats_v0_1 *old_stats = at_page_end(sizeof(*old_stats));
	struct perf_event_attr attrs[2];
	struct shpmu_stats stats;
	struct shpmu *pmu = shpmu_new(NULL);

	if (!old || !old_stats || !pmu) {
		perror("setup");
		return 1;
	}
	memset(attrs, 0, sizeof(attrs));
	for (int i = 0; i < 2; i++) {
		attrs[i].size = sizeof(attrs[i]);
		attrs[i].type = PERF_TYPE_SOFTWARE;
		attrs[i].config = i ? PERF_COUNT_SW_PAGE_FAULTS
				    : PERF_COUNT_SW_TASK_CLOCK;
	}
	*old = (struct target_v0_1){.kind = SHPMU_TARGET_TASK, .cpu = -1};
	check(old_open(pmu, &attrs[0], old) >= 0, "0.1 shpmu_open");
	check(old_open(pmu, &attrs[0], old) >= 0, "0.1 shpmu_open, shared");
	check(old_open_name(pmu, "cs", old) >= 0, "0.1 shpmu_open_name");
	check(old_open_group(pmu, attrs, 2, old) >= 0, "0.1 shpmu_open_group");
	check(old_get_stats(pmu, old_stats) == 0 && old_stats->handles == 4 &&
		      old_stats->kernel_events == 3 &&
		      old_stats->shared_opens == 1,
	      "0.1 shpmu_get_stats");

	struct shpmu_target now = {.kind = SHPMU_TARGET_TASK, .cpu = -1};
	check(shpmu_open(pmu, &attrs[1], &now) >= 0, "current shpmu_open");
	memset(&stats, 0xff, sizeof(stats));
	check(shpmu_get_stats(pmu, &stats) == 0 && stats.handles == 5 &&
		      stats.switches_unseen == 0 &&
		      stats.unattributed_ns == 0 && stats.reserved[0] == 0 &&
		      stats.reserved[5] == 0,
	      "current shpmu_get_stats, 0.4's fields and reserved zeroed");
	now.reserved[2] = 1;
	check(shpmu_open(pmu, &attrs[1], &now) == -EINVAL,
	      "a target with reserved fields set is refused");
	check(shpmu_version() == SHPMU_VERSION, "shpmu_version");
	shpmu_free(pmu);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
