/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The calling thread's last failed open, kept so that shpmu_explain() of
 * an open's error (no handle to name) can say which event it was about:
 * "this machine has no hardware PMU" for cycles, rather than every reason
 * an open may meet ENOENT.
 */
#ifndef SHPMU_FAILED_OPEN_H
#define SHPMU_FAILED_OPEN_H

#include <stdbool.h>

#include "core/key.h"

struct shpmu;

/* Notes that an open on pmu of event (a group's leader) returned err;
 * cgroup: its target was a cgroup, whose lookup may be what failed. */
void failed_open_note(const struct shpmu *pmu, int err,
		      const struct event_key *event, bool cgroup);
/* Forgets it: an open succeeded. */
void failed_open_clear(void);
/* The event of this thread's last open on pmu, where it failed with err
 * and was not on a cgroup: true and *event, else false. */
bool failed_open_event(const struct shpmu *pmu, int err,
		       struct event_key *event);

#endif
