// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * shpmu-cgroups: cgroup ids and paths, and one event counted per cgroup.
 *
 *   shpmu-cgroups id PATH...        path -> id
 *   shpmu-cgroups path ID...        id -> path
 *   shpmu-cgroups count MS CGROUP...  task-clock and context switches of
 *                                     each cgroup (path or id) over MS ms
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shpmu/shpmu.h>

static void print_log(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level <= SHPMU_LOG_WARN)
		fprintf(stderr, "libshpmu: %s\n", msg);
}

static int usage(void)
{
	fprintf(stderr, "usage: shpmu-cgroups id PATH...\n"
			"       shpmu-cgroups path ID...\n"
			"       shpmu-cgroups count MS CGROUP...\n");
	return 2;
}

/* A number names a cgroup id, anything else a path. */
static struct shpmu_target cgroup_target(const char *arg)
{
	struct shpmu_target t = {.kind = SHPMU_TARGET_CGROUP,
				 .cpu = SHPMU_ALL_CPUS};
	char *end;
	uint64_t id = strtoull(arg, &end, 0);

	if (*arg && !*end)
		t.cgroup_id = id;
	else
		t.cgroup_path = arg;
	return t;
}

static int count(struct shpmu *pmu, int ms, char **cgroups, int n)
{
	const uint64_t configs[2] = {PERF_COUNT_SW_TASK_CLOCK,
				     PERF_COUNT_SW_CONTEXT_SWITCHES};
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	struct perf_event_attr attr;
	struct shpmu_stats st;
	int(*h)[2] = calloc((size_t)n, sizeof(*h));
	int status = 0;

	if (!h)
		return 1;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	for (int i = 0; i < n; i++) {
		struct shpmu_target t = cgroup_target(cgroups[i]);

		for (int e = 0; e < 2; e++) {
			attr.config = configs[e];
			h[i][e] = shpmu_open(pmu, &attr, &t);
		}
	}
	nanosleep(&ts, NULL);
	printf("%-40s %14s %12s\n", "cgroup", "task-clock ms", "switches");
	for (int i = 0; i < n; i++) {
		struct shpmu_count c[2];

		if (h[i][0] < 0 || shpmu_read(pmu, h[i][0], &c[0]) ||
		    shpmu_read(pmu, h[i][1], &c[1])) {
			printf("%-40s %s\n", cgroups[i],
			       strerror(h[i][0] < 0 ? -h[i][0] : errno));
			status = 1;
			continue;
		}
		printf("%-40s %14.3f %12" PRIu64 "\n", cgroups[i],
		       shpmu_scale(&c[0]) / 1e6, shpmu_scale(&c[1]));
	}
	shpmu_get_stats(pmu, &st);
	printf("%" PRIu64 " handles on %" PRIu64 " kernel events, %" PRIu64
	       " fds\n",
	       st.handles, st.kernel_events, st.kernel_fds);
	free(h);
	return status;
}

int main(int argc, char **argv)
{
	SHPMU_OPTS(opts, .log = print_log);
	char path[4096];
	struct shpmu *pmu;
	int status = 0;

	if (argc < 3)
		return usage();
	pmu = shpmu_new(&opts);
	if (!pmu) {
		fprintf(stderr, "shpmu_new: %s\n", strerror(errno));
		return 1;
	}
	if (shpmu_cgroup_root(pmu, path, sizeof(path)) == 0)
		printf("cgroup root: %s\n", path);
	if (!strcmp(argv[1], "id")) {
		for (int i = 2; i < argc; i++) {
			uint64_t id;

			if (shpmu_cgroup_id(pmu, argv[i], &id) == 0) {
				printf("%s -> %" PRIu64 "\n", argv[i], id);
			} else {
				printf("%s -> %s\n", argv[i], strerror(errno));
				status = 1;
			}
		}
	} else if (!strcmp(argv[1], "path")) {
		for (int i = 2; i < argc; i++) {
			uint64_t id = strtoull(argv[i], NULL, 0);

			if (shpmu_cgroup_path(pmu, id, path, sizeof(path)) ==
			    0) {
				printf("%" PRIu64 " -> %s\n", id, path);
			} else {
				printf("%" PRIu64 " -> %s\n", id,
				       strerror(errno));
				status = 1;
			}
		}
	} else if (!strcmp(argv[1], "count") && argc >= 4) {
		status = count(pmu, atoi(argv[2]), argv + 3, argc - 3);
	} else {
		status = usage();
	}
	shpmu_free(pmu);
	return status;
}
