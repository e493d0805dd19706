/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The layout version of what host scope shares between processes: the
 * books (books.h), the program's maps (bpf/prog/switch_counter.h) and the event
 * key (key.h). Builds with different layouts keep to different
 * directories (<bpffs>/layout-N/), so they never read each other's state.
 * Bump HOST_LAYOUT with any change to those structures, or to how they
 * are shared (3: users' liveness as byte locks on users/; 4: each CPU's
 * switch sequence in the events map, and its unattributed totals in its
 * view; 5: the links filter split into tids and tgids, and software clocks
 * read by their count alone, KIND_CLOCK).
 */
#ifndef SHPMU_HOST_LAYOUT_H
#define SHPMU_HOST_LAYOUT_H

#include <stdint.h>

#define HOST_LAYOUT 5

/* For tests: when non-zero, the layout this process claims to have. */
extern uint32_t shpmu__host_layout;

static inline uint32_t host_layout(void)
{
	return shpmu__host_layout ? shpmu__host_layout : HOST_LAYOUT;
}

#endif
