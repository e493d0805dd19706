/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The plugin's configuration, read from collectd's parsed config tree
 * (liboconfig's items) into plain structs. Nothing here calls collectd or
 * libshpmu: a bad option comes back as a message naming it, which the
 * glue logs.
 */
#ifndef SHPMU_COLLECTD_SETTINGS_H
#define SHPMU_COLLECTD_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <shpmu/shpmu.h>

#include "liboconfig/oconfig.h"

/* What one series counts: a cgroup, a CPU or all of them, a process by
 * pid or by name. */
enum where_kind {
	WHERE_CGROUP,
	WHERE_ALL_CPUS,
	WHERE_CPU,
	WHERE_PROCESS,
	WHERE_PROCESS_NAME,
};

struct where {
	enum where_kind kind;
	char *text; /* CGROUP: the path; PROCESS_NAME: the name (comm) */
	int cpu;    /* CPU */
	pid_t pid;  /* PROCESS */
};

struct instance_settings {
	char *name;
	char **events;
	size_t nevents;
	struct where *wheres;
	size_t nwheres;
};

struct settings {
	enum shpmu_scope scope;
	enum shpmu_cgroup_backend cgroup_backend;
	char *domain, *bpffs_dir; /* host scope; NULL: unset */
	struct instance_settings *instances;
	size_t ninstances;
};

/* Longest plugin or type instance collectd takes, NUL included
 * (DATA_MAX_NAME_LEN in its plugin.h). */
#define NAME_ROOM 128
/* Most events or targets one instance may list: far beyond any real
 * config, low enough that a typo cannot open thousands of fds. */
#define INSTANCE_LIST_MAX 256

/*
 * Reads the <Plugin shpmu> block into *s (zeroed first). Returns 0, or -1
 * with *s freed and a message in err (len bytes) that names the option and
 * the instance.
 */
int settings_parse(const oconfig_item_t *block, struct settings *s, char *err,
		   size_t len);
void settings_free(struct settings *s);

/* Parses a CPU list ("0-3,8,10-11") into a malloc'd array of CPUs in the
 * order given, without repeats. Returns how many, or -1 (bad list). */
int cpu_list_parse(const char *text, int **cpus);

#endif
