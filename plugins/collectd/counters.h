/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An instance's counters: one libshpmu handle per (event, target) on the
 * plugin's one context, so instances asking for the same thing share its
 * kernel event. Targets that come and go (a cgroup removed and made again,
 * a process by name) are closed when gone and opened again when back.
 * Nothing here calls collectd: readings go to a callback.
 */
#ifndef SHPMU_COLLECTD_COUNTERS_H
#define SHPMU_COLLECTD_COUNTERS_H

#include <stdint.h>

#include <shpmu/shpmu.h>

#include "settings.h"
#include "total.h"

struct series {
	const char *event;	   /* the instance settings' */
	const struct where *where; /* the instance settings' */
	char type_instance[NAME_ROOM];
	int h;		    /* -1: not open (its target is gone) */
	uint64_t cgroup_id; /* CGROUP: the id opened, to see it replaced */
	pid_t pid;	    /* PROCESS_NAME: the process opened */
	/* PROCESS_NAME: its start time (/proc/PID/stat), which tells the
	 * process from a later one given the same pid */
	unsigned long long start_time;
	struct total total; /* what is passed on: never goes down */
	bool told_gone;	    /* said once until it is back */
	bool told_failed;   /* an open failed: said once until one works */
};

/* collectd runs an instance's read callback on one read thread at a time
 * (it goes back in the queue when it returns) and stops its read threads
 * before the shutdown callbacks: counters need no lock of their own. */
struct counters {
	const struct instance_settings *settings;
	struct shpmu *pmu;
	char *cgroup_root; /* the mount cgroup paths are under; NULL: none */
	/* CGROUP targets: each path as it is under the root, normalized
	 * ("" the root itself), by target */
	char **cgroups;
	struct series *series; /* target by target, an event each */
	size_t nseries;
};

/* What a read passes on: a series and its value (scaled where the event
 * was multiplexed). */
typedef void (*reading_cb)(const struct counters *c, const struct series *s,
			   uint64_t value, void *arg);
/* Where counters say what happened (collectd's log, in the plugin). */
typedef void (*say_cb)(int level, const char *msg, void *arg);

/*
 * Opens every series of an instance. An unknown event, a bad target or a
 * failed open is a config error: returns -1 after saying it (the option
 * and the instance named), with nothing left open. So is a Process that
 * does not exist: a pid names one process, which does not come back. A
 * Cgroup or ProcessName that does not exist yet is not an error: it is
 * counted once it does, and counted again from 0 each time it comes back.
 */
int counters_open(struct counters *c, struct shpmu *pmu,
		  const struct instance_settings *in, say_cb say, void *arg);
/* Reads every series, reopening those whose target came back; a series
 * whose read fails is said and skipped, never passed on as 0. */
void counters_read(struct counters *c, reading_cb cb, say_cb say, void *arg);
void counters_close(struct counters *c);

#endif
