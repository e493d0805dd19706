// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/process.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int process_check(pid_t pid, pid_t *tgid)
{
	char path[64], line[128];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "Tgid: %d", tgid) == 1;
	fclose(f);
	if (!found)
		return -ESRCH;
	return *tgid == pid ? 0 : -EINVAL;
}

int process_threads(pid_t tgid, pid_t **tids)
{
	char path[64];
	struct dirent *d;
	pid_t *list = NULL, *grown;
	size_t n = 0, cap = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)tgid);
	dir = opendir(path);
	if (!dir)
		return -ESRCH;
	while ((d = readdir(dir))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			grown = realloc(list, cap * sizeof(*list));
			if (!grown) {
				free(list);
				closedir(dir);
				return -ENOMEM;
			}
			list = grown;
		}
		list[n++] = (pid_t)atoi(d->d_name);
	}
	closedir(dir);
	if (!n) {
		/* A process whose threads have all exited. */
		free(list);
		return -ESRCH;
	}
	*tids = list;
	return (int)n;
}

int process_stat(pid_t pid, char *comm, uint64_t *start_ticks)
{
	char path[64], stat[1024], *close_paren, *field;
	FILE *f;
	size_t n;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	n = fread(stat, 1, sizeof(stat) - 1, f);
	fclose(f);
	stat[n] = '\0';
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
