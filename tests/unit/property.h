/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the randomized property tests (test_accumulate.c, test_hidden.c)
 * share: the seed of a run, and the report that ends one.
 */
#ifndef SHPMU_TESTS_UNIT_PROPERTY_H
#define SHPMU_TESTS_UNIT_PROPERTY_H

#include <stdint.h>
#include <time.h>

/* The seed in environment variable env, or a new one each run (the time
 * and the pid), which the report prints. */
uint64_t property_seed(const char *env);

/*
 * Prints what a run of sequences random sequences (steps steps in all,
 * started at t0) covered: how many sequences saw each of the nseen cases
 * named in names. Expects each case seen in more than min of them: a
 * generator that stopped making a case tests it no longer.
 */
void property_report(const char *suite, uint64_t seed, unsigned int sequences,
		     unsigned long steps, const struct timespec *t0,
		     const unsigned long *seen, const char *const *names,
		     int nseen, unsigned long min);

#endif
