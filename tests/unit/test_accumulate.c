// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bpf/prog/accumulate.h, the program's crediting arithmetic compiled for
 * the host: its rules one by one, then random sequences of multiplexing
 * rotations, switches, migrations, wraps, resets and broken readings,
 * played both through the header and through a reference that follows
 * the increments themselves instead of differences of readings. The
 * totals of every counted set must agree exactly.
 *
 * SHPMU_ACC_SEED=N replays the sequences a failure names. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpf/prog/accumulate.h"
#include "property.h"
#include "shpmu/shpmu.h"

static struct counter_value cv(uint64_t counter, uint64_t enabled,
			       uint64_t running)
{
	return (struct counter_value){counter, enabled, running};
}

static void expect_delta(struct counter_value prev, struct counter_value now,
			 struct counter_value want)
{
	struct counter_value d;

	acc_delta(&prev, &now, &d);
	cr_expect_eq(d.counter, want.counter,
		     "counter %" PRIu64 ", want %" PRIu64, (uint64_t)d.counter,
		     (uint64_t)want.counter);
	cr_expect_eq(d.enabled, want.enabled,
		     "enabled %" PRIu64 ", want %" PRIu64, (uint64_t)d.enabled,
		     (uint64_t)want.enabled);
	cr_expect_eq(d.running, want.running,
		     "running %" PRIu64 ", want %" PRIu64, (uint64_t)d.running,
		     (uint64_t)want.running);
	cr_expect(prev.counter == now.counter && prev.enabled == now.enabled &&
			  prev.running == now.running,
		  "the next change starts from the new reading");
}

Test(accumulate, each_value_changes_by_its_difference)
{
	expect_delta(cv(100, 1000, 1000), cv(150, 2000, 2000),
		     cv(50, 1000, 1000));
	/* Multiplexed: off the PMU for part of the time. */
	expect_delta(cv(100, 1000, 500), cv(130, 2000, 800), cv(30, 1000, 300));
	expect_delta(cv(7, 8, 9), cv(7, 8, 9), cv(0, 0, 0));
}

Test(accumulate, a_wrap_past_2_64_is_an_advance)
{
	expect_delta(cv(UINT64_MAX - 9, UINT64_MAX - 99, UINT64_MAX - 49),
		     cv(5, 100, 50), cv(15, 200, 100));
	/* The largest advance, and the smallest step back. */
	expect_delta(cv(0, 0, 0), cv((1ULL << 63) - 1, 10, 10),
		     cv((1ULL << 63) - 1, 10, 10));
	expect_delta(cv(1ULL << 63, 0, 0), cv(0, 10, 10), cv(0, 10, 10));
}

Test(accumulate, a_counter_that_went_back_was_reset)
{
	expect_delta(cv(1000, 10, 10), cv(40, 20, 20), cv(40, 10, 10));
	expect_delta(cv(1000, 10, 10), cv(999, 20, 20), cv(999, 10, 10));
}

Test(accumulate, times_that_went_back_credit_nothing)
{
	struct counter_value prev = cv(10, 1000, 900), now, d;

	expect_delta(prev, cv(20, 900, 900), cv(0, 0, 0));
	expect_delta(prev, cv(20, 1100, 800), cv(0, 0, 0));
	/* And the reading after starts from the broken one. */
	now = cv(20, 900, 900);
	acc_delta(&prev, &now, &d);
	now = cv(30, 1100, 1000);
	acc_delta(&prev, &now, &d);
	cr_expect(d.counter == 10 && d.enabled == 200 && d.running == 100);
}

Test(accumulate, running_above_enabled_is_taken_as_enabled)
{
	expect_delta(cv(0, 100, 100), cv(10, 150, 180), cv(10, 50, 50));
}

/* A clock read by its count alone: its times change as its count does,
 * under the count's rules, and they keep growing from the base that the
 * kernel's reading gave (a CPU target reads them). */
Test(accumulate, a_clock_read_by_its_count_alone)
{
	struct counter_value prev = cv(1000, 5000, 4000), d;

	acc_delta_clock(&prev, 1600, &d);
	cr_expect(d.counter == 600 && d.enabled == 600 && d.running == 600,
		  "delta %llu/%llu/%llu", (unsigned long long)d.counter,
		  (unsigned long long)d.enabled, (unsigned long long)d.running);
	cr_expect(prev.counter == 1600 && prev.enabled == 5600 &&
		  prev.running == 4600);
	/* Past 2^64: an advance. */
	prev = cv(UINT64_MAX - 9, 0, 0);
	acc_delta_clock(&prev, 5, &d);
	cr_expect(d.counter == 15 && d.enabled == 15 && d.running == 15);
	/* Reset: it counted the new reading since, times too. */
	prev = cv(1000, 100, 100);
	acc_delta_clock(&prev, 40, &d);
	cr_expect(d.counter == 40 && d.enabled == 40 && d.running == 40);
	cr_expect(prev.counter == 40 && prev.enabled == 140);
}

Test(accumulate, totals_add_up)
{
	struct counter_value total = cv(1, 2, 3), shared = cv(1, 2, 3);
	struct counter_value d = cv(10, 20, 30);

	acc_add(&total, &d);
	acc_add_shared(&shared, &d);
	acc_add_shared(&shared, &d);
	cr_expect(total.counter == 11 && total.enabled == 22 &&
		  total.running == 33);
	cr_expect(shared.counter == 21 && shared.enabled == 42 &&
		  shared.running == 63);
}

/* The property test. */

#define CPUS   4
#define SETS   4
#define SHARED 2 /* sets 0 and 1 are task targets: one total, atomic */
#define TASKS  6
#define IDLE   (-1)
/* Sequences a run plays: fewer under valgrind, which checks memory. */
#define SEQUENCES	   10000
#define SEQUENCES_VALGRIND 1000
#define HALF		   (1ULL << 63)

enum { C, E, R }; /* counter, enabled, running */

/* The situations a run must have met, or it proved nothing of them. */
enum seen {
	SEEN_ROTATED,	 /* a settle's running below its enabled */
	SEEN_WRAP,	 /* a value past 2^64 between two settles */
	SEEN_RESET,	 /* a reset counter */
	SEEN_TIMES_BACK, /* broken times */
	SEEN_OVERRUN,	 /* running above enabled */
	SEEN_MIGRATION,
	SEEN_NEW_EVENT, /* a first reading after the sequence began */
	SEEN_N
};
static const char *const seen_names[SEEN_N] = {
	"rotated",  "wraps",	  "resets",    "times back",
	"overruns", "migrations", "new events"};

/* splitmix64: one small generator, the same on every host. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t *s, uint64_t n)
{
	return n ? rnd(s) % n : 0;
}

static bool chance(uint64_t *s, unsigned int percent)
{
	return below(s, 100) < percent;
}

struct cpu {
	uint64_t src[3];  /* the event's reading now */
	uint64_t read[3]; /* its reading at the last settle */
	/* Reference: what it counted since the last settle (since the
	 * last reset, for the counter), and whether a value went back. */
	uint64_t since[3];
	bool back[3];
	int task;
	/* Under test: the header's last reading, and per-CPU totals of
	 * the sets from SHARED on (as the program's cgroup slots). */
	struct counter_value prev;
	struct counter_value total[SETS];
};

struct world {
	uint64_t rng, seed;
	unsigned int sequence, step, ncpus, on_pmu; /* % of ticks on it */
	unsigned int sets_of[TASKS];		    /* a bit per set */
	struct cpu cpu[CPUS];
	struct counter_value shared[SHARED]; /* under test: task targets */
	uint64_t ref[SETS][3];
	unsigned long steps, seen[SEEN_N];
};

#define CHECK(w, cond, ...)                                                    \
	cr_assert(cond, "SHPMU_ACC_SEED=%" PRIu64 " sequence %u step %u: %s",  \
		  (w)->seed, (w)->sequence, (w)->step, __VA_ARGS__)

static unsigned int sets_of(const struct world *w, int task)
{
	return task == IDLE ? 0 : w->sets_of[task];
}

/* A value moves on by `by`; one that went back since the last settle
 * stays below its last reading, so that it still reads as back then. */
static void bump(struct cpu *c, int f, uint64_t by)
{
	if (c->back[f] && by > c->read[f] - 1 - c->src[f])
		by = c->read[f] - 1 - c->src[f];
	c->src[f] += by;
	c->since[f] += by;
}

/* Time passes on a CPU: the event is enabled throughout and on the PMU
 * for all of it, none (rotated out) or part (rotated mid-way). */
static void tick(struct world *w, struct cpu *c)
{
	uint64_t dt = below(&w->rng, 20000), ran = 0;

	if (chance(&w->rng, w->on_pmu))
		ran = dt;
	else if (chance(&w->rng, 30))
		ran = below(&w->rng, dt + 1);
	bump(c, E, dt);
	bump(c, R, ran);
	bump(c, C, below(&w->rng, 4 * ran + 1));
}

/* A broken source: running grows with enabled standing still. */
static void overrun(struct world *w, struct cpu *c)
{
	uint64_t by = below(&w->rng, 5000);

	bump(c, R, by);
	bump(c, C, below(&w->rng, by + 1));
}

/* PERF_EVENT_IOC_RESET: told from a reading that went back, so only
 * from a last reading in (0, 2^63]. */
static void reset_counter(struct cpu *c)
{
	if (!c->read[C] || c->read[C] > HALF)
		return;
	c->src[C] = 0;
	c->since[C] = 0;
	c->back[C] = true;
}

/* A broken source: enabled, running or both go back below their last
 * reading. */
static void times_back(struct world *w, struct cpu *c)
{
	unsigned int which = 1 + below(&w->rng, 3);

	for (int f = E; f <= R; f++) {
		if (!(which & (1u << (f - E))) || !c->read[f] ||
		    c->read[f] > HALF)
			continue;
		c->src[f] = below(&w->rng, c->read[f]);
		c->back[f] = true;
	}
}

/* A new event goes in on the CPU with its first reading as the base, as
 * userspace writes it before the event (counter_prog_set_event): what
 * the old one counted since the last settle is never read. Counters and
 * times start anywhere, near 2^64 too, so that they wrap later. */
static void new_event(struct world *w, struct cpu *c)
{
	uint64_t base[3] = {below(&w->rng, 1000000000), 0, 0};

	if (chance(&w->rng, 30))
		base[C] = UINT64_MAX - below(&w->rng, 1000000);
	if (chance(&w->rng, 20)) {
		base[E] = chance(&w->rng, 50)
				  ? UINT64_MAX - below(&w->rng, 100000)
				  : below(&w->rng, 1ULL << 40);
		base[R] = base[E] - below(&w->rng, 100000);
	}
	for (int f = C; f <= R; f++) {
		c->src[f] = c->read[f] = base[f];
		c->since[f] = 0;
		c->back[f] = false;
	}
	c->prev = cv(base[C], base[E], base[R]);
}

/* The reference's settle: the task's sets get what the CPU counted, as
 * the rules in accumulate.h say, from the increments themselves. */
static void ref_settle(struct world *w, struct cpu *c)
{
	uint64_t credit[3] = {c->since[C], c->since[E], c->since[R]};
	unsigned int sets = sets_of(w, c->task);

	for (int f = C; f <= R; f++)
		w->seen[SEEN_WRAP] += !c->back[f] && c->src[f] < c->read[f];
	w->seen[SEEN_RESET] += c->back[C];
	w->seen[SEEN_ROTATED] += credit[R] < credit[E];
	if (c->back[E] || c->back[R]) {
		w->seen[SEEN_TIMES_BACK]++;
		credit[C] = credit[E] = credit[R] = 0;
	}
	if (credit[R] > credit[E]) {
		w->seen[SEEN_OVERRUN]++;
		credit[R] = credit[E];
	}
	for (int s = 0; s < SETS; s++)
		for (int f = C; f <= R && (sets & (1u << s)); f++)
			w->ref[s][f] += credit[f];
	for (int f = C; f <= R; f++) {
		c->read[f] = c->src[f];
		c->since[f] = 0;
		c->back[f] = false;
	}
}

/* The header's settle, as the program does it: read, take the delta,
 * add it to each set's total. */
static void code_settle(struct world *w, struct cpu *c)
{
	struct counter_value now = cv(c->src[C], c->src[E], c->src[R]), d;
	unsigned int sets = sets_of(w, c->task);

	acc_delta(&c->prev, &now, &d);
	CHECK(w, d.running <= d.enabled, "a delta runs longer than enabled");
	for (int s = 0; s < SETS; s++) {
		if (!(sets & (1u << s)))
			continue;
		if (s < SHARED)
			acc_add_shared(&w->shared[s], &d);
		else
			acc_add(&c->total[s], &d);
	}
}

static void settle(struct world *w, struct cpu *c)
{
	code_settle(w, c);
	ref_settle(w, c);
}

/* A switch to task; between tasks of the same sets the program may read
 * nothing (the time goes on accruing to the same sets). */
static void switch_to(struct world *w, struct cpu *c, int task)
{
	if (sets_of(w, task) != sets_of(w, c->task) || chance(&w->rng, 50))
		settle(w, c);
	c->task = task;
}

static int cpu_of(const struct world *w, int task)
{
	for (unsigned int i = 0; i < w->ncpus; i++)
		if (w->cpu[i].task == task)
			return (int)i;
	return -1;
}

/* A switch on c to a task that runs nowhere, or to idle. */
static void switch_any(struct world *w, struct cpu *c)
{
	int task = (int)below(&w->rng, TASKS + 1) - 1;

	if (task != IDLE && cpu_of(w, task) >= 0)
		task = IDLE;
	switch_to(w, c, task);
}

/* A running task moves from its CPU to c: its old CPU settles what it
 * ran there and goes idle, c takes it on. */
static void migrate(struct world *w, struct cpu *c)
{
	int task = (int)below(&w->rng, TASKS), from = cpu_of(w, task);

	if (from < 0 || &w->cpu[from] == c)
		return;
	switch_to(w, &w->cpu[from], IDLE);
	switch_to(w, c, task);
	w->seen[SEEN_MIGRATION]++;
}

static uint64_t ref_scaled(const uint64_t v[3])
{
	unsigned __int128 x;

	if (!v[R])
		return 0;
	x = (unsigned __int128)v[C] * v[E] / v[R];
	return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
}

/* Every set's totals, as userspace sums them over CPUs, against the
 * reference's. */
static void check_totals(struct world *w)
{
	for (int s = 0; s < SETS; s++) {
		struct counter_value sum =
			s < SHARED ? w->shared[s] : cv(0, 0, 0);
		struct shpmu_count count;

		for (unsigned int i = 0; i < w->ncpus && s >= SHARED; i++) {
			const struct counter_value *t = &w->cpu[i].total[s];

			CHECK(w, t->running <= t->enabled,
			      "a CPU's total runs longer than enabled");
			acc_add(&sum, t);
		}
		CHECK(w, sum.counter == w->ref[s][C], "counter differs");
		CHECK(w, sum.enabled == w->ref[s][E], "enabled differs");
		CHECK(w, sum.running == w->ref[s][R], "running differs");
		CHECK(w, sum.running <= sum.enabled,
		      "a set runs longer than enabled");
		count = (struct shpmu_count){sum.counter, sum.enabled,
					     sum.running};
		CHECK(w, shpmu_scale(&count) == ref_scaled(w->ref[s]),
		      "scaled totals differ");
	}
}

static void step(struct world *w)
{
	struct cpu *c = &w->cpu[below(&w->rng, w->ncpus)];
	uint64_t pick = below(&w->rng, 100);

	if (pick < 45)
		tick(w, c);
	else if (pick < 60)
		switch_any(w, c);
	else if (pick < 70)
		migrate(w, c);
	else if (pick < 80)
		settle(w, c); /* a flush before a read */
	else if (pick < 85)
		reset_counter(c);
	else if (pick < 89)
		times_back(w, c);
	else if (pick < 93)
		overrun(w, c);
	else if (pick < 95) {
		new_event(w, c);
		w->seen[SEEN_NEW_EVENT]++;
	} else
		check_totals(w);
}

static void run_sequence(struct world *w, uint64_t seed, unsigned int seq)
{
	static const unsigned int on_pmu[] = {100, 75, 50, 25, 0};
	unsigned int steps;

	memset(w, 0, sizeof(*w));
	w->seed = seed;
	w->sequence = seq;
	w->rng = seed ^ ((uint64_t)seq * 0xd1b54a32d192ed03ULL);
	w->ncpus = 1 + below(&w->rng, CPUS);
	w->on_pmu = on_pmu[below(&w->rng, 5)];
	for (int t = 0; t < TASKS; t++)
		w->sets_of[t] = below(&w->rng, 1u << SETS);
	for (unsigned int i = 0; i < w->ncpus; i++) {
		w->cpu[i].task = IDLE;
		new_event(w, &w->cpu[i]);
	}
	steps = 100 + below(&w->rng, 400);
	for (w->step = 0; w->step < steps; w->step++)
		step(w);
	for (unsigned int i = 0; i < w->ncpus; i++)
		settle(w, &w->cpu[i]);
	check_totals(w);
	w->steps = steps;
}

static void run_all(uint64_t seed)
{
	unsigned int sequences =
		getenv("SHPMU_TEST_VALGRIND") ? SEQUENCES_VALGRIND : SEQUENCES;
	struct world *w = malloc(sizeof(*w));
	unsigned long steps = 0, seen[SEEN_N] = {0};
	struct timespec t0;

	cr_assert(w);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned int seq = 0; seq < sequences; seq++) {
		run_sequence(w, seed, seq);
		steps += w->steps;
		for (int i = 0; i < SEEN_N; i++)
			seen[i] += w->seen[i];
	}
	free(w);
	property_report("accumulate", seed, sequences, steps, &t0, seen,
			seen_names, SEEN_N, sequences / 4);
}

Test(accumulate, random_sequences_from_the_fixed_seed)
{
	run_all(0x5eed2025);
}

/* A new seed each run (or SHPMU_ACC_SEED's), printed on failure. */
Test(accumulate, random_sequences_from_a_fresh_seed)
{
	run_all(property_seed("SHPMU_ACC_SEED"));
}
