/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Event names through libpfm4, as perf and PAPI spell them: generic,
 * "perf::" names, PMU-specific names and their modifiers. */
#ifndef SHPMU_NAMES_PFM_H
#define SHPMU_NAMES_PFM_H

#include <linux/perf_event.h>

/* 0, -ENOTSUP (libpfm4 did not initialize), -ENOENT (no such name),
 * -EINVAL (a bad modifier); *why gets libpfm4's words on failure. */
int names_pfm_encode(const char *name, struct perf_event_attr *attr,
		     const char **why);

/* Calls cb with every event of every PMU present ("pmu::event"); 0,
 * -ENOTSUP, or cb's first non-zero return. */
int names_pfm_list(int (*cb)(const char *name, const char *desc, void *arg),
		   void *arg, const char **why);

/* The counters of the nth present core PMU libpfm4 knows (hybrid CPUs
 * have two, in libpfm4's order): 0, -ENOTSUP (libpfm4 did not
 * initialize) or -ENOENT. */
int names_pfm_core_counters(unsigned int nth, unsigned int *general,
			    unsigned int *fixed);

#endif
