// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/process.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys/sys.h"

int process_check(struct shpmu *pmu, pid_t pid, pid_t *tgid)
{
	char path[64], line[128];
	struct sys_lines *f = malloc(sizeof(*f));
	int found = 0, err;

	if (!f)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	err = sys_lines_open(pmu, f, path);
	if (err) {
		free(f);
		return err == -ENOENT ? -ESRCH : err;
	}
	while (!found && (err = sys_lines_next(pmu, f, line, sizeof(line))) > 0)
		found = sscanf(line, "Tgid: %d", tgid) == 1;
	sys_lines_close(pmu, f);
	free(f);
	if (err < 0 && err != -ESRCH)
		return err;
	if (!found)
		return -ESRCH;
	return *tgid == pid ? 0 : -EINVAL;
}

int process_threads(struct shpmu *pmu, pid_t tgid, pid_t **tids)
{
	char path[64];
	pid_t *list = NULL, *grown;
	size_t n = 0, cap = 0;
	struct sys_dir dir;
	unsigned char type;
	const char *name;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)tgid);
	err = sys_dir_open(pmu, &dir, AT_FDCWD, path);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	while ((err = sys_dir_next(pmu, &dir, &name, &type)) > 0) {
		if (name[0] < '0' || name[0] > '9')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			grown = realloc(list, cap * sizeof(*list));
			if (!grown) {
				err = -ENOMEM;
				break;
			}
			list = grown;
		}
		list[n++] = (pid_t)atoi(name);
	}
	sys_dir_close(pmu, &dir);
	/* (A process that exited meanwhile reads as ENOENT.) */
	if (err < 0 && err != -ENOENT) {
		free(list);
		return err;
	}
	if (!n) {
		/* A process whose threads have all exited. */
		free(list);
		return -ESRCH;
	}
	*tids = list;
	return (int)n;
}

int process_read_stat(struct shpmu *pmu, pid_t pid, char *comm,
		      uint64_t *start_ticks)
{
	char path[64], stat[1024], *close_paren, *field;
	ssize_t n;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	n = sys_read_file(pmu, path, stat, sizeof(stat));
	if (n < 0)
		return n == -ENOENT || n == -ESRCH ? -ESRCH : (int)n;
	field = strchr(stat, '(');
	close_paren = strrchr(stat, ')');
	if (!field || !close_paren || close_paren < field)
		return -ESRCH;
	if (comm)
		snprintf(comm, 16, "%.*s", (int)(close_paren - field - 1),
			 field + 1);
	/* Field 22, starttime: ")" is followed by " " and field 3, so
	 * field 22 follows the 20th space after ")". */
	field = close_paren + 1;
	for (int i = 0; i < 19 && field; i++)
		field = strchr(field + 1, ' ');
	if (!field)
		return -ESRCH;
	*start_ticks = strtoull(field + 1, NULL, 10);
	return 0;
}

int process_stat(pid_t pid, char *comm, uint64_t *start_ticks)
{
	return process_read_stat(NULL, pid, comm, start_ticks);
}
