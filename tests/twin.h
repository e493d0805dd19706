/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A handle's twins (tests/README.md): two private raw events on the
 * handle's target, "out" enabled just before each edge that opens the
 * handle's window (open, enable, reset) and read or disabled just after
 * each edge that closes it (read, disable), "in" just after and just
 * before. Where the kernel orders all of it on one clock (a task's
 * task-clock, any time_enabled), in <= handle <= out holds exactly, and
 * out - in is what the handle's own calls at its edges took.
 */
#ifndef SHPMU_TEST_TWIN_H
#define SHPMU_TEST_TWIN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/perf_event.h>

struct twin {
	int out, in;
	uint64_t o[3], i[3]; /* value, time_enabled, time_running */
};

/* Both disabled, on pid and cpu as perf_event_open takes them. */
struct twin twin_open_attr(const struct perf_event_attr *attr, pid_t pid,
			   int cpu);
struct twin twin_open(uint64_t config, pid_t pid, int cpu);
void twin_close(struct twin *t);

/* Around an edge that opens the window. */
void twin_before_open(struct twin *t);
void twin_after_open(struct twin *t);
/* Around an edge that closes it: a disable, or a read. */
void twin_before_close(struct twin *t, bool disable);
void twin_after_close(struct twin *t, bool disable);

/*
 * Asserts that got (field f: 0 value, 1 time_enabled, 2 time_running)
 * lies between the twins' last readings, give or take give (0: exactly).
 * Returns how far apart the twins are (0 if they crossed).
 */
uint64_t expect_twin_give(uint64_t got, const struct twin *t, int f,
			  uint64_t give, const char *what);
uint64_t expect_twin(uint64_t got, const struct twin *t, int f,
		     const char *what);

#endif
