// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "names/names_generic.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

struct generic {
	const char *name;
	uint32_t type;
	uint64_t config;
	const char *desc;
};

static const struct generic generics[] = {
	{"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
	 "CPU cycles"},
	{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "CPU cycles"},
	{"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
	 "instructions retired"},
	{"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES,
	 "cache accesses"},
	{"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES,
	 "cache misses"},
	{"branch-instructions", PERF_TYPE_HARDWARE,
	 PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branches retired"},
	{"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
	 "branches retired"},
	{"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES,
	 "mispredicted branches"},
	{"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES,
	 "bus cycles"},
	{"stalled-cycles-frontend", PERF_TYPE_HARDWARE,
	 PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "cycles the front end idled"},
	{"idle-cycles-frontend", PERF_TYPE_HARDWARE,
	 PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "cycles the front end idled"},
	{"stalled-cycles-backend", PERF_TYPE_HARDWARE,
	 PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "cycles the back end idled"},
	{"idle-cycles-backend", PERF_TYPE_HARDWARE,
	 PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "cycles the back end idled"},
	{"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES,
	 "reference cycles, unscaled by frequency"},
	{"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
	 "ns of the CPU's clock"},
	{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
	 "ns the task ran"},
	{"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
	 "page faults"},
	{"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
	 "page faults"},
	{"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
	 "context switches"},
	{"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
	 "context switches"},
	{"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS,
	 "moves to another CPU"},
	{"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS,
	 "moves to another CPU"},
	{"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN,
	 "page faults served without I/O"},
	{"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ,
	 "page faults that needed I/O"},
	{"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS,
	 "alignment faults"},
	{"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS,
	 "emulated instructions"},
	{"dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, "nothing"},
	{"cgroup-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES,
	 "context switches to another cgroup"},
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The hardware cache events: <cache>-<op>s and <cache>-<op>-misses. */
static const char *const caches[] = {"L1-dcache", "L1-icache", "LLC", "dTLB",
				     "iTLB",	  "branch",    "node"};
static const char *const cache_ops[] = {"load", "store", "prefetch"};

/* The kernel's encoding of a hardware cache event. */
static uint64_t cache_config(size_t cache, size_t op, bool miss)
{
	uint64_t result = miss ? PERF_COUNT_HW_CACHE_RESULT_MISS
			       : PERF_COUNT_HW_CACHE_RESULT_ACCESS;

	return cache | op << 8 | result << 16;
}

/* a and b equal, ignoring case and taking '_' for '-' (libpfm4's perf::
 * names are upper case with either). */
static bool same_name(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char x = a[i] == '_' ? '-' : a[i], y = b[i] == '_' ? '-' : b[i];

		if (tolower((unsigned char)x) != tolower((unsigned char)y))
			return false;
	}
	return true;
}

static bool lookup(const char *name, size_t len, uint32_t *type,
		   uint64_t *config)
{
	char buf[64];

	for (size_t i = 0; i < ARRAY_LEN(generics); i++)
		if (strlen(generics[i].name) == len &&
		    same_name(generics[i].name, name, len)) {
			*type = generics[i].type;
			*config = generics[i].config;
			return true;
		}
	for (size_t c = 0; c < ARRAY_LEN(caches); c++)
		for (size_t op = 0; op < ARRAY_LEN(cache_ops); op++)
			for (int miss = 0; miss < 2; miss++) {
				snprintf(buf, sizeof(buf), "%s-%s%s", caches[c],
					 cache_ops[op], miss ? "-misses" : "s");
				if (strlen(buf) != len ||
				    !same_name(buf, name, len))
					continue;
				*type = PERF_TYPE_HW_CACHE;
				*config = cache_config(c, op, miss);
				return true;
			}
	return false;
}

int names_generic_encode(const char *name, struct perf_event_attr *attr)
{
	const char *mods;
	uint32_t type;
	uint64_t config;
	size_t len;

	if (!strncasecmp(name, "perf::", 6))
		name += 6;
	mods = strchr(name, ':');
	len = mods ? (size_t)(mods - name) : strlen(name);
	if (!lookup(name, len, &type, &config))
		return -ENOENT;
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->config = config;
	/* As libpfm4 encodes its default (user and kernel). */
	attr->exclude_hv = 1;
	attr->exclude_guest = 1;
	if (mods) {
		bool user = strchr(mods + 1, 'u'),
		     kernel = strchr(mods + 1, 'k');

		if (mods[1] == '\0' ||
		    strspn(mods + 1, "uk") != strlen(mods + 1))
			return -EINVAL;
		attr->exclude_kernel = !kernel;
		attr->exclude_user = !user;
	}
	return 0;
}

int names_generic_list(int (*cb)(const char *name, const char *desc, void *arg),
		       void *arg)
{
	char name[64];
	int ret;

	for (size_t i = 0; i < ARRAY_LEN(generics); i++) {
		ret = cb(generics[i].name, generics[i].desc, arg);
		if (ret)
			return ret;
	}
	for (size_t c = 0; c < ARRAY_LEN(caches); c++)
		for (size_t op = 0; op < ARRAY_LEN(cache_ops); op++)
			for (int miss = 0; miss < 2; miss++) {
				snprintf(name, sizeof(name), "%s-%s%s",
					 caches[c], cache_ops[op],
					 miss ? "-misses" : "s");
				ret = cb(name, "a hardware cache event", arg);
				if (ret)
					return ret;
			}
	return 0;
}
