/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The oracle for handles counted on the PMU model (lib/sys/pmu_model.h):
 * the model's own truth about the very kernel event a handle shares,
 * taken at the same edges as the handle's (enable, disable, reset, read).
 * With a manual clock nothing moves between a call and its truth, so a
 * handle's window must match to the nanosecond and the count.
 *
 * The context runs on a recorder over the model's syscall table: every
 * perf_event_open it makes is noted (fd, CPU, attr), in order, so that a
 * test knows which model event a handle's kernel event is.
 */
#ifndef SHPMU_TEST_MODEL_TWIN_H
#define SHPMU_TEST_MODEL_TWIN_H

#include <stdbool.h>
#include <stdint.h>

#include <shpmu/shpmu.h>

#include "sys/pmu_model.h"

#define MODEL_MAX_OPENS 256

struct model_open {
	int fd, cpu, group_fd;
	struct perf_event_attr attr;
};

extern struct model_open model_opens[MODEL_MAX_OPENS];
extern int model_nopens;

/* Configures the model with spec and makes a context on the recorder
 * (log: record_log); asserts both work. */
struct shpmu *model_context(const char *spec, unsigned int flags);
/* Frees it, then checks that no model event is left and switches the
 * model off. */
void model_context_free(struct shpmu *pmu);

/* A counting attr of a generic hardware event (cycles 0, instructions
 * 1, cache-misses 3, branches 4: the model counts 1 + config per ns). */
struct perf_event_attr hw_attr(uint64_t config, bool disabled);

/* The model's truth about a model fd, asserted to exist and to hold the
 * model's law: value == rate * time_running. */
struct pmu_model_truth model_truth(int fd);

/* One handle and what it must read: the sums of its kernel event's truth
 * over the handle's windows. */
struct twin {
	struct shpmu *pmu;
	int h, fd; /* fd: the model event its window is judged by */
	bool on;
	struct pmu_model_truth base;
	struct shpmu_count acc;
};

/* A twin for handle h, just opened on fd, enabled as the handle is. */
struct twin twin_of(struct shpmu *pmu, int h, int fd, bool on);
void twin_enable(struct twin *t);
void twin_disable(struct twin *t);
void twin_reset(struct twin *t);
/* What the handle must read now. */
struct shpmu_count twin_expect(const struct twin *t);
/* Asserts that a reading is exactly the expected one. */
void expect_count(const struct shpmu_count *got, const struct shpmu_count *want,
		  const char *what, int step);

#endif
