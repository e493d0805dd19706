// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The files the model serves: its PMUs' sysfs directories
 * (/sys/bus/event_source/devices/NAME: type, cpus, caps/num_counters,
 * caps/num_fixed_counters) and /proc/sys/kernel/nmi_watchdog. A file
 * opens as a sealed memfd holding its text; a directory is only stat'ed
 * (opening one goes to the kernel). Only absolute paths, spelled exactly,
 * are served.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/pmu_model_int.h"

#define DEVICES	 "/sys/bus/event_source/devices/"
#define WATCHDOG "/proc/sys/kernel/nmi_watchdog"

const char *pm_pmu_name(unsigned int pmu)
{
	if (pm.cfg.npmus == 1)
		return "cpu";
	return pmu ? "cpu_atom" : "cpu_core";
}

/* A PMU's CPUs as the kernel lists them: "0-3,6\n". */
static void cpu_list(unsigned int pmu, char *text, size_t len)
{
	size_t used = 0;

	text[0] = '\0';
	for (int c = 0; c < pm.ncpus; c++) {
		int end = c;

		if (!pm.online[c] || pm.pmu_of_cpu[c] != pmu)
			continue;
		while (end + 1 < pm.ncpus && pm.online[end + 1] &&
		       pm.pmu_of_cpu[end + 1] == pmu)
			end++;
		used += (size_t)snprintf(text + used, len - used,
					 end > c ? "%s%d-%d" : "%s%d",
					 used ? "," : "", c, end);
		if (used >= len)
			break;
		c = end;
	}
	if (used + 1 < len)
		strcpy(text + used, "\n");
}

/* A file of a PMU's directory (rest: what follows "NAME/"). */
static int pmu_file(unsigned int pmu, const char *rest, char *text, size_t len)
{
	if (!strcmp(rest, "type"))
		snprintf(text, len, "%u\n", PMU_MODEL_TYPE_FIRST + pmu);
	else if (!strcmp(rest, "cpus"))
		cpu_list(pmu, text, len);
	else if (!strcmp(rest, "caps/num_counters"))
		snprintf(text, len, "%u\n", pm.cfg.counters[pmu]);
	else if (!strcmp(rest, "caps/num_fixed_counters"))
		snprintf(text, len, "%u\n", pm.cfg.fixed);
	else
		return 0;
	return 1;
}

/* 1 for a file (its text in text), 2 for a directory, 0 for a path the
 * model does not serve. */
static int lookup(const char *path, char *text, size_t len)
{
	if (!strcmp(path, WATCHDOG)) {
		snprintf(text, len, "%d\n", pm.cfg.watchdog);
		return 1;
	}
	if (strncmp(path, DEVICES, strlen(DEVICES)))
		return 0;
	path += strlen(DEVICES);
	for (unsigned int pmu = 0; pmu < pm.cfg.npmus; pmu++) {
		const char *name = pm_pmu_name(pmu);
		size_t n = strlen(name);

		if (strncmp(path, name, n))
			continue;
		if (!path[n] || !strcmp(path + n, "/") ||
		    !strcmp(path + n, "/caps") || !strcmp(path + n, "/caps/"))
			return 2;
		if (path[n] == '/')
			return pmu_file(pmu, path + n + 1, text, len);
	}
	return 0;
}

/* A sealed memfd holding text, at offset 0. */
static int text_fd(const char *text, int flags)
{
	size_t len = strlen(text);
	int fd = memfd_create("shpmu-pmu-model",
			      MFD_ALLOW_SEALING |
				      (flags & O_CLOEXEC ? MFD_CLOEXEC : 0));

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len ||
	    lseek(fd, 0, SEEK_SET) != 0 ||
	    fcntl(fd, F_ADD_SEALS,
		  F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)) {
		int err = errno ? errno : EIO;

		close(fd);
		return -err;
	}
	return fd;
}

int pm_fs_open(const char *path, int flags, int *fd)
{
	char text[256];
	int kind = lookup(path, text, sizeof(text));

	if (kind != 1)
		return 0;
	/* Read-only files, as sysfs's are (and the watchdog's, for the
	 * model: its spec sets it). */
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_TRUNC | O_CREAT)))
		return -EACCES;
	if (flags & O_DIRECTORY)
		return -ENOTDIR;
	*fd = text_fd(text, flags);
	return *fd < 0 ? *fd : 1;
}

int pm_fs_stat(const char *path, struct stat *st)
{
	char text[256];
	int kind = lookup(path, text, sizeof(text));

	if (!kind)
		return 0;
	memset(st, 0, sizeof(*st));
	st->st_mode = kind == 2 ? S_IFDIR | 0755 : S_IFREG | 0444;
	st->st_nlink = kind == 2 ? 2 : 1;
	/* sysfs says a page for every file. */
	st->st_size = kind == 2 ? 0 : 4096;
	st->st_blksize = 4096;
	return 1;
}

int pm_fs_statx(const char *path, unsigned int mask, struct statx *stx)
{
	struct stat st;
	int ret = pm_fs_stat(path, &st);

	(void)mask;
	if (ret != 1)
		return ret;
	memset(stx, 0, sizeof(*stx));
	stx->stx_mask = STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_SIZE;
	stx->stx_mode = (uint16_t)st.st_mode;
	stx->stx_nlink = (uint32_t)st.st_nlink;
	stx->stx_size = (uint64_t)st.st_size;
	stx->stx_blksize = (uint32_t)st.st_blksize;
	return 1;
}
