/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A machine with a core PMU, for the tests of a machine without one: a
 * syscall table that shows the library the sysfs files of one (plain,
 * hybrid, or whatever a test writes) and counts each hardware event it
 * opens with a real software event (cpu-clock) on the same target,
 * recording the attr and CPU it was asked for. What a hybrid kernel
 * refuses (a CPU event of one PMU type on the other's CPU) it refuses
 * too. The specs are for this project's machines: 2 CPUs.
 */
#ifndef SHPMU_TEST_FAKE_PMUS_H
#define SHPMU_TEST_FAKE_PMUS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <shpmu/shpmu.h>

#define FAKE_DEVICES "/sys/bus/event_source/devices/"

/* A fake file: its path and its text. Under FAKE_DEVICES a core PMU's
 * file that is not in the spec does not exist. */
struct fake_file {
	const char *path, *text;
};

struct fake_spec {
	const struct fake_file *files;
	size_t n;
};

#define FAKE_SPEC(arr) ((struct fake_spec){arr, sizeof(arr) / sizeof(arr[0])})

/* x86's cpu: no cpus file (all possible CPUs), 4 general and 3 fixed
 * counters, no watchdog. */
extern const struct fake_spec fake_plain;
/* 3 general counters, one the watchdog's, no fixed one. */
extern const struct fake_spec fake_tight;
/* cpu_core (type 4) on CPU 0 with 8 + 3, cpu_atom (10) on CPU 1 with
 * 6 + 3, the watchdog on. */
extern const struct fake_spec fake_hybrid;

/* What the fake perf_event_open was asked for, since the last context
 * made. */
struct fake_opened {
	uint32_t type;
	uint64_t config;
	int cpu;
	pid_t pid;
};
extern struct fake_opened fake_opened[256];
extern int fake_nopened;

/* A suite's .init: skips, saying why, on a machine the fake specs were
 * not worked out for (not 2 CPUs). */
void fake_pmus_machine_check(void);

/* A context made with opts (NULL: logging to record_log, classic cgroup
 * events) that sees spec's files. */
struct shpmu *fake_context(const struct fake_spec *spec,
			   const struct shpmu_opts *opts);

/* Asserts there are n budget rows, and reads them into b. */
void fake_budget(struct shpmu *p, struct shpmu_pmu_budget *b, int n);

static inline struct perf_event_attr fake_hw(uint64_t config)
{
	return (struct perf_event_attr){.size = sizeof(struct perf_event_attr),
					.type = PERF_TYPE_HARDWARE,
					.config = config};
}

static inline struct perf_event_attr fake_raw(uint64_t config)
{
	return (struct perf_event_attr){.size = sizeof(struct perf_event_attr),
					.type = PERF_TYPE_RAW,
					.config = config};
}

#endif
