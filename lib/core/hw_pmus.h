/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The machine's core (CPU) PMUs, the ones whose counters are scarce: their
 * names, perf types, CPUs and counters, and whether the NMI watchdog holds
 * one. Read once per context, through the syscall layer, from
 * /sys/bus/event_source/devices and libpfm4; everything read there is
 * checked, and junk is ignored with a log line.
 *
 * Which PMU an event uses on a CPU: PERF_TYPE_HARDWARE and HW_CACHE the
 * one in config bits 32..63 (Linux 6.0's extended type) when set, else the
 * CPU's; PERF_TYPE_RAW the first core PMU; a core PMU's own type that PMU.
 * Every other event (software, tracepoints, breakpoints, probes, uncore)
 * uses no core counter.
 */
#ifndef SHPMU_HW_PMUS_H
#define SHPMU_HW_PMUS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "core/key.h"

struct shpmu;

#define HW_PMUS_MAX	4
#define HW_PMU_NAME_MAX 32
/* More than any core PMU has; a sysfs value past it is junk. */
#define HW_COUNTERS_MAX 64
/* Fixed counters the budget knows an event for: instructions, cycles,
 * ref-cycles (Intel's fixed counters 0..2). */
#define HW_FIXED_KNOWN 3

struct hw_pmu {
	char name[HW_PMU_NAME_MAX];
	uint32_t type;
	uint32_t general, fixed; /* counters per CPU */
	int ncpus;
	int *cpus; /* sorted */
};

struct hw_pmus {
	uint32_t n;    /* 0: no core PMU */
	bool watchdog; /* the NMI watchdog holds a general counter */
	struct hw_pmu pmu[HW_PMUS_MAX];
};

/* Discovers pmu's core PMUs once (the create lock held): 0 with *out (n 0
 * where there is none), or -errno when a file could not be read for a
 * reason other than its absence (not remembered: the next call tries
 * again). */
int hw_pmus_get(struct shpmu *pmu, const struct hw_pmus **out);

/* What hw_pmus_get() found, or NULL before it ran. */
const struct hw_pmus *hw_pmus_known(const struct shpmu *pmu);

void hw_pmus_free(struct hw_pmus *hw);

/* Whether an event may use a core PMU (before discovery tells which). */
bool hw_event_maybe(const struct event_key *e);

/* The index of the PMU e uses on cpu (-1: a task's event, on whatever CPU
 * it runs; a generic event then uses split_index, a PMU's index), or -1
 * when it uses no core counter. */
int hw_pmu_of(const struct hw_pmus *hw, const struct event_key *e, int cpu,
	      int split_index);

/* The index of the PMU that owns cpu, or -1. */
int hw_pmu_of_cpu(const struct hw_pmus *hw, int cpu);

/* Whether key's events must be opened once per PMU type on a task (and
 * with each CPU's type as extended type on CPUs): a hybrid machine and a
 * generic hardware event without an extended type. */
bool hw_split(const struct hw_pmus *hw, const struct share_key *key);

/* Gives a generic event of attr the extended type of the PMU at index
 * (a task's source on a hybrid machine), or of cpu's PMU (cpu >= 0), when
 * hw_split() says so for its key. */
void hw_attr_for(const struct hw_pmus *hw, struct perf_event_attr *attr,
		 int cpu, int index);

/* The fixed counter a generic event goes to (0 instructions, 1 cycles,
 * 2 ref-cycles), or -1. */
int hw_fixed_slot(const struct event_key *e);

#endif
