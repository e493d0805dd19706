// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Discovering the core PMUs (hw_pmus.h). */
#include "core/hw_pmus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/context.h"
#include "core/cpus.h"
#include "core/log.h"
#include "names/names_pfm.h"
#include "sys/sys.h"

#define DEVICES "/sys/bus/event_source/devices"

/* x86's names: one "cpu", or a hybrid's two. Elsewhere (Arm's
 * armv8_pmuv3_0, ...) a core PMU is one that lists its cpus. */
static const char *const known_names[] = {"cpu", "cpu_core", "cpu_atom"};

/* A small non-negative number, the whole file (one trailing newline
 * allowed): 0, -ENOENT (absent), -EINVAL (junk) or the read's -errno. */
static int read_number(struct shpmu *pmu, const char *path, uint64_t max,
		       uint64_t *out)
{
	char text[32], *end;
	ssize_t n = sys_read_file(pmu, path, text, sizeof(text));
	unsigned long long v;

	if (n < 0)
		return (int)n;
	if (n == 0 || text[0] < '0' || text[0] > '9')
		goto junk;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || v > max || (*end && strcmp(end, "\n")))
		goto junk;
	*out = v;
	return 0;
junk:
	pr_warn(pmu, "PMU discovery: ignoring %s: not a number up to %llu",
		path, (unsigned long long)max);
	return -EINVAL;
}

/* A PMU's CPUs: its cpus file, or (a non-hybrid x86 cpu PMU has none)
 * every possible CPU. */
static int read_cpus(struct shpmu *pmu, const char *name, struct hw_pmu *p)
{
	char path[128], text[4096];
	int *list;
	ssize_t n;
	int count;

	snprintf(path, sizeof(path), DEVICES "/%s/cpus", name);
	n = sys_read_file(pmu, path, text, sizeof(text));
	if (n == -ENOENT) {
		count = cpus_possible(pmu, &p->cpus);
		if (count < 0)
			return count;
		p->ncpus = count;
		return 0;
	}
	if (n < 0)
		return (int)n;
	list = malloc(CPUS_MAX * sizeof(*list));
	if (!list)
		return -ENOMEM;
	/* A file that filled the buffer may have been cut to a shorter,
	 * valid list. */
	count = (size_t)n >= sizeof(text) - 1
			? -EINVAL
			: cpus_parse(text, list, CPUS_MAX);
	if (count < 0) {
		pr_warn(pmu, "PMU discovery: ignoring %s: not a CPU list",
			path);
		free(list);
		return -EINVAL;
	}
	p->cpus = realloc(list, (size_t)count * sizeof(*list)) ?: list;
	p->ncpus = count;
	return 0;
}

/* A counter count from caps/ (0: absent or junk, for libpfm4 to say). */
static int read_caps(struct shpmu *pmu, const char *name, const char *cap,
		     uint32_t *out)
{
	char path[128];
	uint64_t v = 0;
	int err;

	snprintf(path, sizeof(path), DEVICES "/%s/caps/%s", name, cap);
	err = read_number(pmu, path, HW_COUNTERS_MAX, &v);
	if (err == -ENOENT || err == -EINVAL)
		return 0;
	if (!err)
		*out = (uint32_t)v;
	return err;
}

/* Counters where sysfs does not say: libpfm4's nth core PMU. */
static void counters_from_pfm(struct shpmu *pmu, struct hw_pmu *p,
			      unsigned int nth)
{
	unsigned int general, fixed;

	if (names_pfm_core_counters(nth, &general, &fixed) ||
	    general > HW_COUNTERS_MAX || fixed > HW_COUNTERS_MAX) {
		pr_info(pmu,
			"PMU discovery: %s: neither sysfs nor libpfm4 says "
			"how many counters it has; its budget is unknown",
			p->name);
		return;
	}
	if (!p->general)
		p->general = general;
	if (!p->fixed)
		p->fixed = fixed;
}

/* Reads PMU name into hw's next entry: 0 (added, or absent: -ENOENT
 * turned into nothing), or -errno that is not junk. */
static int add_pmu(struct shpmu *pmu, struct hw_pmus *hw, const char *name)
{
	struct hw_pmu *p = &hw->pmu[hw->n];
	char path[128];
	uint64_t type;
	int err;

	if (hw->n == HW_PMUS_MAX || strlen(name) >= HW_PMU_NAME_MAX)
		return 0;
	snprintf(path, sizeof(path), DEVICES "/%s/type", name);
	err = read_number(pmu, path, UINT32_MAX, &type);
	if (err == -ENOENT || err == -EINVAL)
		return 0;
	if (err)
		return err;
	/* A core PMU is PERF_TYPE_RAW's (x86's cpu) or a dynamic type:
	 * one of the fixed types would make their events look like its. */
	if (type != PERF_TYPE_RAW && type < PERF_TYPE_MAX) {
		pr_warn(pmu,
			"PMU discovery: ignoring %s: type %llu is not a "
			"core PMU's",
			path, (unsigned long long)type);
		return 0;
	}
	memset(p, 0, sizeof(*p));
	strcpy(p->name, name);
	p->type = (uint32_t)type;
	err = read_cpus(pmu, name, p);
	if (!err)
		err = read_caps(pmu, name, "num_counters", &p->general);
	if (!err)
		err = read_caps(pmu, name, "num_fixed_counters", &p->fixed);
	if (err) {
		free(p->cpus);
		p->cpus = NULL;
		return err == -EINVAL ? 0 : err;
	}
	if (!p->general)
		counters_from_pfm(pmu, p, hw->n);
	hw->n++;
	return 0;
}

static bool is_known(const char *name)
{
	for (size_t i = 0; i < sizeof(known_names) / sizeof(*known_names); i++)
		if (!strcmp(name, known_names[i]))
			return true;
	return false;
}

/* Whether a directory entry's name can be a PMU's: what the kernel
 * names them with, and nothing that walks out of the directory. */
static bool plausible_name(const char *name)
{
	size_t len = strlen(name);

	if (!len || len >= HW_PMU_NAME_MAX || name[0] == '.')
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW"
			    "XYZ0123456789_.-") == len;
}

/* Other architectures: every PMU with a cpus file is a core PMU. */
static int scan_devices(struct shpmu *pmu, struct hw_pmus *hw)
{
	struct sys_dir d;
	const char *name;
	unsigned char type;
	char path[128];
	int err, r;

	err = sys_dir_open(pmu, &d, AT_FDCWD, DEVICES);
	if (err)
		return err == -ENOENT ? 0 : err;
	while ((r = sys_dir_next(pmu, &d, &name, &type)) > 0) {
		struct stat st;

		if (!plausible_name(name) || is_known(name))
			continue;
		snprintf(path, sizeof(path), DEVICES "/%s/cpus", name);
		if (sys_fstatat(pmu, AT_FDCWD, path, &st, 0))
			continue;
		err = add_pmu(pmu, hw, name);
		if (err)
			break;
	}
	sys_dir_close(pmu, &d);
	return err ? err : r;
}

static int read_watchdog(struct shpmu *pmu, struct hw_pmus *hw)
{
	uint64_t v = 0;
	int err = read_number(pmu, "/proc/sys/kernel/nmi_watchdog", 1, &v);

	hw->watchdog = !err && v == 1;
	return err == -ENOENT || err == -EINVAL ? 0 : err;
}

static int discover(struct shpmu *pmu, struct hw_pmus *hw)
{
	int err = 0;

	for (size_t i = 0;
	     !err && i < sizeof(known_names) / sizeof(*known_names); i++)
		err = add_pmu(pmu, hw, known_names[i]);
	if (!err && !hw->n)
		err = scan_devices(pmu, hw);
	if (!err && hw->n)
		err = read_watchdog(pmu, hw);
	return err;
}

void hw_pmus_free(struct hw_pmus *hw)
{
	if (!hw)
		return;
	for (uint32_t i = 0; i < hw->n; i++)
		free(hw->pmu[i].cpus);
	free(hw);
}

int hw_pmus_get(struct shpmu *pmu, const struct hw_pmus **out)
{
	struct hw_pmus *hw = __atomic_load_n(&pmu->hw, __ATOMIC_ACQUIRE);
	int err;

	if (hw) {
		*out = hw;
		return 0;
	}
	hw = calloc(1, sizeof(*hw));
	if (!hw)
		return -ENOMEM;
	err = discover(pmu, hw);
	if (err) {
		pr_err(pmu, "PMU discovery: cannot read %s: %s", DEVICES,
		       strerror(-err));
		hw_pmus_free(hw);
		return err;
	}
	for (uint32_t i = 0; i < hw->n; i++)
		pr_debug(pmu,
			 "PMU %s: type %u, %d CPUs, %u general and %u fixed "
			 "counters%s",
			 hw->pmu[i].name, hw->pmu[i].type, hw->pmu[i].ncpus,
			 hw->pmu[i].general, hw->pmu[i].fixed,
			 hw->watchdog ? ", one held by the NMI watchdog" : "");
	__atomic_store_n(&pmu->hw, hw, __ATOMIC_RELEASE);
	*out = hw;
	return 0;
}

const struct hw_pmus *hw_pmus_known(const struct shpmu *pmu)
{
	return __atomic_load_n(&pmu->hw, __ATOMIC_ACQUIRE);
}
