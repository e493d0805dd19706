// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* auto_rule.c: where AUTO turns from classic cgroup events to BPF. */
#include <criterion/criterion.h>

#include "auto_rule.h"

/* The crossover as the bench measures it (fd_crossover_cgroups): the
 * first number of cgroups, each one event on every CPU, for which
 * classic holds more fds than BPF's own and one per CPU. */
static uint32_t fd_crossover(uint32_t online)
{
	uint32_t n = 1;

	while ((uint64_t)n * online <= (uint64_t)AUTO_BPF_OWN_FDS + online)
		n++;
	return n;
}

Test(auto_rule, the_crossover_is_where_classic_holds_more_fds)
{
	cr_expect_eq(auto_crossover(2), 13, "2 CPUs, as measured");
	cr_expect_eq(auto_crossover(1), AUTO_BPF_OWN_FDS + 2);
	for (uint32_t online = 1; online <= 4096; online++)
		cr_expect_eq(auto_crossover(online), fd_crossover(online),
			     "%u CPUs", online);
	cr_expect_eq(auto_crossover(4096), 2, "a big machine: one classic");
}

/* Opened one after another, all-CPU events stay classic up to the
 * crossover, the same on every machine size. */
Test(auto_rule, events_stay_classic_below_the_crossover)
{
	for (uint32_t online = 1; online <= 512; online++) {
		uint64_t held = 0;
		uint32_t n = 1;

		while (auto_stays_classic(held, online, online)) {
			held += online;
			n++;
		}
		cr_expect_eq(n, auto_crossover(online), "%u CPUs", online);
	}
}

/* A cgroup event on one CPU holds one fd: more of them fit below. */
Test(auto_rule, one_cpu_events_count_one_fd_each)
{
	cr_expect(auto_stays_classic(AUTO_BPF_OWN_FDS + 1, 1, 2));
	cr_expect_not(auto_stays_classic(AUTO_BPF_OWN_FDS + 2, 1, 2));
	cr_expect(auto_stays_classic(0, 1, 1));
}
