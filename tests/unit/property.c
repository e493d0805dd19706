// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The seed and the report of a randomized property test (property.h). */
#include "property.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

uint64_t property_seed(const char *env)
{
	const char *given = getenv(env);

	if (given)
		return strtoull(given, NULL, 0);
	return (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
}

void property_report(const char *suite, uint64_t seed, unsigned int sequences,
		     unsigned long steps, const struct timespec *t0,
		     const unsigned long *seen, const char *const *names,
		     int nseen, unsigned long min)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr,
		"%s: seed %" PRIu64 ": %u sequences, %lu steps, %.3f s;", suite,
		seed, sequences, steps,
		(double)(t1.tv_sec - t0->tv_sec) +
			(double)(t1.tv_nsec - t0->tv_nsec) / 1e9);
	for (int i = 0; i < nseen; i++)
		fprintf(stderr, " %s %lu", names[i], seen[i]);
	fprintf(stderr, "\n");
	for (int i = 0; i < nseen; i++)
		cr_expect_gt(seen[i], min, "seed %" PRIu64 ": too few %s", seed,
			     names[i]);
}
