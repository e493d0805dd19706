// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/cpus.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "sys/sys.h"

#define CPUS_ONLINE_PATH "/sys/devices/system/cpu/online"

static int parse_number(const char **p, long *out)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*out = strtol(*p, &end, 10);
	if (errno || *out >= CPUS_MAX)
		return -EINVAL;
	*p = end;
	return 0;
}

int cpus_parse(const char *text, int *cpus, int max)
{
	const char *p = text;
	int n = 0;
	long first, last;

	while (*p && *p != '\n') {
		if (parse_number(&p, &first))
			return -EINVAL;
		last = first;
		if (*p == '-') {
			p++;
			if (parse_number(&p, &last) || last < first)
				return -EINVAL;
		}
		/* The kernel prints ascending ranges; anything else is not a
		 * list we understand. */
		if (n > 0 && first <= cpus[n - 1])
			return -EINVAL;
		for (long c = first; c <= last; c++) {
			if (n == max)
				return -E2BIG;
			cpus[n++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return n ? n : -EINVAL;
}

int cpus_index(const int *cpus, int n, int cpu)
{
	for (int lo = 0, hi = n; lo < hi;) {
		int mid = lo + (hi - lo) / 2;

		if (cpus[mid] == cpu)
			return mid;
		if (cpus[mid] < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int cpus_check_online(struct shpmu *pmu, int cpu)
{
	int *online, n = cpus_online(pmu, &online);

	if (n < 0)
		return n;
	n = cpus_index(online, n, cpu) < 0 ? -EINVAL : 0;
	free(online);
	if (n)
		pr_err(pmu, "cpu %d is not online (see %s)", cpu,
		       CPUS_ONLINE_PATH);
	return n;
}

static int cpus_read(struct shpmu *pmu, const char *path, int **cpus)
{
	char text[4096];
	int *list, n;
	ssize_t len;

	len = sys_read_file(pmu, path, text, sizeof(text));
	if (len < 0) {
		pr_err(pmu, "cannot read %s: %s", path, strerror((int)-len));
		return (int)len;
	}
	list = malloc(CPUS_MAX * sizeof(*list));
	if (!list)
		return -ENOMEM;
	n = cpus_parse(text, list, CPUS_MAX);
	if (n < 0) {
		pr_err(pmu, "cannot parse %s: '%s'", path, text);
		free(list);
		return -EIO;
	}
	*cpus = realloc(list, (size_t)n * sizeof(*list)) ?: list;
	return n;
}

int cpus_online(struct shpmu *pmu, int **cpus)
{
	return cpus_read(pmu, CPUS_ONLINE_PATH, cpus);
}

int cpus_possible(struct shpmu *pmu, int **cpus)
{
	return cpus_read(pmu, "/sys/devices/system/cpu/possible", cpus);
}

int cpus_possible_count(struct shpmu *pmu)
{
	int *list, n = cpus_possible(pmu, &list);

	if (n >= 0)
		free(list);
	return n;
}
