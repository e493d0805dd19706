// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The calling thread's last failed open (failed_open.h). */
#include "core/failed_open.h"

static __thread struct {
	const struct shpmu *pmu; /* NULL: none kept */
	int err;
	bool cgroup;
	struct event_key event;
} last;

void failed_open_note(const struct shpmu *pmu, int err,
		      const struct event_key *event, bool cgroup)
{
	last.pmu = pmu;
	last.err = err;
	last.cgroup = cgroup;
	last.event = *event;
}

void failed_open_clear(void)
{
	last.pmu = NULL;
}

bool failed_open_event(const struct shpmu *pmu, int err,
		       struct event_key *event)
{
	/* A context freed and another made at its address: the worst is
	 * advice about the event this thread last failed to open. */
	if (!pmu || last.pmu != pmu || last.err != err || last.cgroup)
		return false;
	*event = last.event;
	return true;
}
