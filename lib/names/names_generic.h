/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel's generic event names, as perf spells them ("cycles",
 * "task-clock", "cs", "L1-dcache-load-misses", with ":u" and ":k"), for a
 * machine whose CPU libpfm4 does not know, or where libpfm4 cannot
 * initialize. Encoded as libpfm4 encodes them, so that either way a name
 * shares the same kernel event.
 */
#ifndef SHPMU_NAMES_GENERIC_H
#define SHPMU_NAMES_GENERIC_H

#include <linux/perf_event.h>

/* 0, -ENOENT (not a generic name), -EINVAL (a modifier other than u, k,
 * or both). */
int names_generic_encode(const char *name, struct perf_event_attr *attr);

/* Calls cb with every generic name and what it counts; stops at and
 * returns cb's first non-zero return. */
int names_generic_list(int (*cb)(const char *name, const char *desc, void *arg),
		       void *arg);

#endif
