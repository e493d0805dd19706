// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bpf/prog/counted_set.h, what a settle may credit when the kernel made
 * switches without running the program, compiled for the host: its
 * rules one by one, a hand-written timeline for each plan, then random
 * CPU timelines (tasks in a random cgroup tree, some counted by task
 * targets, runs at known rates, switches some of which the program does
 * not see, ticks, flushes, move checks, moves) played through a model of
 * the program's per-CPU state machine (on_switch, check_cpu, settle,
 * credit: switch_counter.bpf.c, settle.bpf.h, in their order) that calls
 * the headers' functions where the program does. The timeline keeps the
 * truth: what each slot and target ran, of a clock, context-switches and
 * cgroup-switches.
 *
 * After every settle, for every slot and target and each of counter,
 * enabled and running: credited <= truth, and truth - credited <= what
 * went unattributed (the CPU's for a slot, every CPU's for a target): its
 * bound. With no switch hidden both are exact (bound 0). The switches
 * reported unseen are the switches hidden, exactly.
 *
 * What the promise needs, the timelines keep to: each CPU has its switch
 * sequence; a running task's move is checked where it runs when it moves
 * (the csd hook, or the task moving itself); no switch is hidden before
 * a CPU's first settle (see skipped()). The model leaves out a check
 * landing inside a run (enter()/leave()) and the counted set changing.
 *
 * SHPMU_HIDDEN_SEED=N replays the sequences a failure names, and
 * SHPMU_HIDDEN_TRACE=M prints sequence M's events. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpf/prog/counted_set.h"
#include "property.h"

/* Hand-made sets. */

static struct counted_set set_of(__u64 leaf, __u32 nslots, const __u32 *slots,
				 const __u32 targets[TT_N])
{
	struct counted_set s = {.leaf = leaf, .generation = 1};

	s.nslots = nslots;
	for (__u32 i = 0; i < nslots && i < CACHED_SLOTS; i++)
		s.slots[i] = slots[i];
	for (int i = 0; i < TT_N; i++) {
		s.targets[i] = targets ? targets[i] : NO_TARGET;
		s.ntargets += s.targets[i] != NO_TARGET;
	}
	return s;
}

static const __u32 no_targets[TT_N] = {NO_TARGET, NO_TARGET, NO_TARGET,
				       NO_TARGET};

Test(hidden_rules, hidden_switches_are_the_sequence_less_those_seen)
{
	cr_expect_eq(hidden_switches(100, 0, 100), 0);
	cr_expect_eq(hidden_switches(100, 3, 103), 0);
	cr_expect_eq(hidden_switches(100, 3, 104), 1);
	cr_expect_eq(hidden_switches(100, 0, 1100), 1000);
	/* A sequence behind what was seen: none. */
	cr_expect_eq(hidden_switches(100, 3, 102), 0);
	cr_expect_eq(hidden_switches(100, 0, 0), 0);
}

Test(hidden_rules, a_set_has_only_its_listed_slots_and_real_targets)
{
	__u32 slots[CACHED_SLOTS] = {5, 9, 2};
	__u32 targets[TT_N] = {7, NO_TARGET, 11, NO_TARGET};
	struct counted_set s = set_of(3, 3, slots, targets);

	cr_expect(set_has_slot(&s, 5) && set_has_slot(&s, 9) &&
		  set_has_slot(&s, 2));
	cr_expect(!set_has_slot(&s, 0), "slot 0 past nslots");
	cr_expect(set_has_target(&s, 7) && set_has_target(&s, 11));
	cr_expect(!set_has_target(&s, 8));
	cr_expect(!set_has_target(&s, NO_TARGET), "NO_TARGET is no target");
	/* One counted ancestor too many: only the listed are looked at. */
	for (__u32 i = 0; i < CACHED_SLOTS; i++)
		slots[i] = i;
	s = set_of(3, CACHED_SLOTS + 1, slots, NULL);
	cr_expect(!set_listed(&s));
	cr_expect(set_has_slot(&s, CACHED_SLOTS - 1));
	cr_expect(!set_has_slot(&s, CACHED_SLOTS));
}

Test(hidden_rules, sets_are_equal_by_slots_and_targets_not_leaf)
{
	__u32 a_slots[] = {1, 4}, b_slots[] = {4, 1}, many[CACHED_SLOTS] = {0};
	__u32 t[TT_N] = {NO_TARGET, NO_TARGET, 3, NO_TARGET};
	struct counted_set a = set_of(10, 2, a_slots, NULL);
	struct counted_set b = set_of(20, 2, a_slots, NULL);

	cr_expect(sets_equal(&a, &b), "other leaf, same counted ancestors");
	b = set_of(10, 2, b_slots, NULL);
	cr_expect(!sets_equal(&a, &b), "the same slots come in one order");
	b = set_of(10, 1, a_slots, NULL);
	cr_expect(!sets_equal(&a, &b));
	b = set_of(10, 2, a_slots, t);
	cr_expect(!sets_equal(&a, &b), "a target more");
	a = set_of(10, 2, a_slots, t);
	cr_expect(sets_equal(&a, &b));
	a = set_of(10, 0, NULL, NULL);
	b = set_of(11, 0, NULL, no_targets);
	cr_expect(sets_equal(&a, &b), "two uncounted tasks");
	/* Unlisted sets are never equal: who knows what they hold. */
	a = set_of(10, CACHED_SLOTS + 1, many, NULL);
	b = a;
	cr_expect(!sets_equal(&a, &b));
}

Test(hidden_rules, one_plan_for_each_case)
{
	__u32 ab[] = {1, 2}, ac[] = {1, 3}, many[CACHED_SLOTS] = {0};
	struct counted_set a = set_of(10, 2, ab, NULL);
	struct counted_set same = set_of(11, 2, ab, NULL);
	struct counted_set other = set_of(12, 2, ac, NULL);
	struct counted_set unlisted = set_of(13, CACHED_SLOTS + 1, many, NULL);

	/* Every switch seen: A, whatever C is, even unlisted. */
	cr_expect_eq(plan_settle(0, 1, &a, &other, 0), PLAN_ALL);
	cr_expect_eq(plan_settle(0, 1, &unlisted, &other, 1), PLAN_ALL);
	/* One hidden. */
	cr_expect_eq(plan_settle(1, 1, &a, &same, 0), PLAN_COMMON);
	cr_expect_eq(plan_settle(1, 1, &a, &other, 0), PLAN_SHARED);
	cr_expect_eq(plan_settle(1, 1, &a, &unlisted, 0), PLAN_NONE);
	cr_expect_eq(plan_settle(1, 1, &unlisted, &a, 0), PLAN_NONE);
	cr_expect_eq(plan_settle(1, 1, &a, &same, 1), PLAN_NONE,
		     "C may have moved since it came");
	/* More, or unknown, or no A. */
	cr_expect_eq(plan_settle(2, 1, &a, &same, 0), PLAN_NONE);
	cr_expect_eq(plan_settle(HIDDEN_UNKNOWN, 1, &a, &same, 0), PLAN_NONE);
	cr_expect_eq(plan_settle(0, 0, &a, &same, 0), PLAN_NONE);
	cr_expect_eq(plan_settle(1, 0, &a, &same, 0), PLAN_NONE);
}

/* The model. */

#define CPUS	  3
#define MAX_CG	  24 /* a tree of up to 8, and a chain past CACHED_SLOTS */
#define MAX_TASKS 8  /* task 0 is the idle task */
#define MAX_PROCS 4
#define NSLOTS	  32
#define NTARGETS  (2 * MAX_TASKS + 2 * MAX_PROCS)
#define JIFFY	  1000 /* ns of the model's clock a tick */
#define GEN	  7    /* the counted cgroups' generation (never changes) */
/* Sequences a run plays: fewer under valgrind, which checks memory. */
#define SEQUENCES	   5000
#define SEQUENCES_VALGRIND 300

enum { E_CLOCK, E_SWITCHES, E_CGROUP_SWITCHES, EVENTS };
static const __u8 event_kind[EVENTS] = {KIND_READ, KIND_CONTEXT_SWITCHES,
					KIND_CGROUP_SWITCHES};
enum { C, E, R }; /* counter, enabled, running */

/* What a run must have met, or it proved nothing of it. */
enum seen {
	SEEN_ALL,
	SEEN_COMMON,
	SEEN_SHARED,
	SEEN_NONE,
	SEEN_MANY_HIDDEN, /* a settle that found more than one */
	SEEN_UNLISTED,	  /* a set credited by walking the cgroup */
	SEEN_UNWALKABLE,  /* an unlisted set whose task moved */
	SEEN_MOVE,	  /* a running task moved */
	SEEN_PENDING,	  /* a switch counted without a settle */
	SEEN_QUICK,	  /* of those, told without resolving */
	SEEN_TICK_SETTLE, /* a counted run settled at a tick */
	SEEN_COLD,	  /* a CPU whose program had not run yet */
	SEEN_N
};
static const char *const seen_names[SEEN_N] = {
	"all",	       "common",   "shared",	   "none",
	"many hidden", "unlisted", "unwalkable",   "moves",
	"pending",     "quick",	   "tick settles", "cold CPUs"};

/* The program's state on one CPU (struct cpu_state, struct cpu_view, the
 * CPU's share of the totals map). */
struct prog {
	__u64 task;
	struct counted_set now, here;
	__u64 settled_switches;
	__u32 switches_known, pending_switches, pending_cgroup_switches;
	__u32 runs;
	__u64 settled_jiffies;
	struct counter_value raw[EVENTS], unattributed[EVENTS];
	__u64 unseen, unattributed_ns;
	struct counter_value totals[NSLOTS][EVENTS];
};

/* What the program's interval knows (struct interval). */
struct interval {
	__u64 task, hidden;
	__u32 now_switches, now_cgroup_switches;
	int may_have_moved;
};

/* One CPU's timeline: the kernel's side, and the program's. */
struct cpu {
	uint64_t ns;
	int cur;      /* the task running */
	uint64_t seq; /* the CPU's switch sequence */
	struct counter_value ev[EVENTS];
	int cg[MAX_TASKS]; /* each task's cgroup, as this timeline moves it */
	uint64_t hidden;   /* switches skipped */
	bool settled_once, any_hidden;
	/* An unlisted set's task moved: its deep slots went unattributed. */
	bool unwalkable;
	bool hide_next; /* SKIP_SCRIPT: the next switch is hidden */
	enum settle_plan last_plan;
	uint64_t truth[NSLOTS][EVENTS][3];
	struct prog p;
	bool settled; /* a settle ran in the program run just made */
};

enum skip_mode {
	SKIP_NONE,
	SKIP_RANDOM,
	SKIP_TID,
	SKIP_EVERY,
	SKIP_MODES,
	SKIP_SCRIPT = SKIP_MODES, /* the hand-written cases' */
};

struct world {
	uint64_t rng, seed;
	unsigned int sequence, step, ncpus;
	int ncg, parent[MAX_CG], slot[MAX_CG]; /* slot -1: not counted */
	int ntasks, proc[MAX_TASKS], home[MAX_TASKS];
	__u32 rate[MAX_TASKS];
	bool tid_link[MAX_TASKS], tgid_link[MAX_PROCS];
	__u32 tid_target[MAX_TASKS][2], tgid_target[MAX_PROCS][2];
	bool sees_moves, warm;
	enum skip_mode skip;
	unsigned int skip_pct;
	__u32 skip_tid, skip_every;
	struct cpu cpu[CPUS];
	struct counter_value target_totals[NTARGETS][EVENTS]; /* program */
	uint64_t target_truth[NTARGETS][EVENTS][3];
	unsigned long steps, seen[SEEN_N];
};

/* SHPMU_HIDDEN_TRACE=N: sequence N's events on stderr. */
static long trace_sequence = -1;

#define TRACE(w, ...)                                                          \
	do {                                                                   \
		if ((long)(w)->sequence == trace_sequence)                     \
			fprintf(stderr, __VA_ARGS__);                          \
	} while (0)

/* Criterion reports every assertion to its runner, passed or not: the
 * checks of a run (millions) report only their failure, with where. */
static void fail_at(const struct world *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define CHECK(w, cond, ...)                                                    \
	do {                                                                   \
		if (!(cond))                                                   \
			fail_at(w, __VA_ARGS__);                               \
	} while (0)

static void fail_at(const struct world *w, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	cr_assert_fail("SHPMU_HIDDEN_SEED=%" PRIu64 " sequence %u step %u "
		       "(SHPMU_HIDDEN_TRACE=%u shows it): %s",
		       w->seed, w->sequence, w->step, w->sequence, what);
}

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

/* Tasks travel as the program sees them: a task pointer is never 0. */
static __u64 ptr(int task)
{
	return (__u64)task + 1;
}

static int task_of(__u64 p)
{
	return (int)p - 1;
}

static __u32 pid_of(int task)
{
	return task ? 1000 + (__u32)task : 0;
}

static __u64 leaf_of(const struct cpu *c, int task)
{
	return (__u64)c->cg[task] + 1;
}

/* cg's counted ancestors, root first, into slots; returns how many. */
static int counted_chain(const struct world *w, int cg, int slots[MAX_CG])
{
	int chain[MAX_CG], n = 0, k = 0;

	for (int g = cg; g >= 0; g = w->parent[g])
		chain[n++] = g;
	while (n--)
		if (w->slot[chain[n]] >= 0)
			slots[k++] = w->slot[chain[n]];
	return k;
}

/* The task's targets (NO_TARGET where none), in TT_ order. */
static int task_targets(const struct world *w, int task, __u32 t[TT_N])
{
	int p = w->proc[task];

	t[TT_TID_PLAIN] =
		w->tid_link[task] ? w->tid_target[task][0] : NO_TARGET;
	t[TT_TID_INHERIT] =
		w->tid_link[task] ? w->tid_target[task][1] : NO_TARGET;
	t[TT_TGID_PLAIN] = w->tgid_link[p] ? w->tgid_target[p][0] : NO_TARGET;
	t[TT_TGID_INHERIT] = w->tgid_link[p] ? w->tgid_target[p][1] : NO_TARGET;
	return (w->tid_link[task] ? 2 : 0) + (w->tgid_link[p] ? 2 : 0);
}

/* The program's resolve() (resolve_cgroups, resolve_tasks): what it
 * writes, no more. The slots past those it lists keep what was there;
 * they are made garbage here, so that reading them would show. */
static void resolve(struct world *w, const struct cpu *c, __u64 task,
		    struct counted_set *out)
{
	int t = task_of(task), slots[MAX_CG],
	    n = counted_chain(w, c->cg[t], slots);

	out->leaf = leaf_of(c, t);
	out->generation = GEN;
	out->nslots = (__u32)n;
	for (int i = 0; i < CACHED_SLOTS; i++)
		out->slots[i] =
			i < n ? (__u32)slots[i] : (__u32)below(&w->rng, NSLOTS);
	out->ntargets = (__u32)task_targets(w, t, out->targets);
}

/* The program's same_set() (settle.bpf.h) is the header's. */
static int same_set(const struct counted_set *a, const struct counted_set *b)
{
	return sets_continue(a, b);
}

static __u64 jiffies(const struct cpu *c)
{
	return c->ns / JIFFY;
}

/* The program's quick_same() (switch_counter.bpf.c): next's link filter
 * holds its tid or tgid where either has a link. */
static int quick_same(const struct world *w, const struct cpu *c, __u64 next)
{
	const struct prog *p = &c->p;
	int t = task_of(next);

	if (p->now.ntargets || p->now.generation != GEN ||
	    jiffies(c) != p->settled_jiffies)
		return 0;
	if (leaf_of(c, t) != p->now.leaf)
		return 0;
	return !w->tid_link[t] && !w->tgid_link[w->proc[t]];
}

/* take_deltas() (deltas.bpf.h): each event's change since the view's
 * raw readings; the switch kinds count the switches given. */
static void take_deltas(struct cpu *c, __u32 switches, __u32 cgroup_switches,
			struct counter_value delta[EVENTS])
{
	for (int e = 0; e < EVENTS; e++) {
		acc_delta(&c->p.raw[e], &c->ev[e], &delta[e]);
		if (event_kind[e] == KIND_CONTEXT_SWITCHES)
			delta[e].counter = switches;
		else if (event_kind[e] == KIND_CGROUP_SWITCHES)
			delta[e].counter = cgroup_switches;
	}
}

static void add_delta(struct cpu *c, __u32 slot,
		      const struct counter_value delta[EVENTS])
{
	for (int e = 0; e < EVENTS; e++)
		acc_add(&c->p.totals[slot][e], &delta[e]);
}

static void add_task_delta(struct world *w, __u32 target,
			   const struct counter_value delta[EVENTS])
{
	if (target == NO_TARGET)
		return;
	for (int e = 0; e < EVENTS; e++)
		acc_add_shared(&w->target_totals[target][e], &delta[e]);
}

/* credit_all(): a set too big to list walks the cgroup of the task on
 * the CPU now, unless that is not the set's (the task moved). */
static bool credit_all(struct world *w, struct cpu *c,
		       const struct counted_set *set,
		       const struct counter_value delta[EVENTS])
{
	__u32 n = set->nslots;

	if (!set_listed(set) && !set_walkable(set, leaf_of(c, c->cur))) {
		c->unwalkable = true;
		w->seen[SEEN_UNWALKABLE]++;
		return false;
	}
	for (__u32 i = 0; i < TT_N; i++)
		add_task_delta(w, set->targets[i], delta);
	if (n > CACHED_SLOTS) {
		int slots[MAX_CG], k = counted_chain(w, c->cg[c->cur], slots);

		for (int i = 0; i < k; i++)
			add_delta(c, (__u32)slots[i], delta);
		w->seen[SEEN_UNLISTED]++;
		return true;
	}
	for (__u32 i = 0; i < CACHED_SLOTS && i < n; i++)
		add_delta(c, set->slots[i], delta);
	return true;
}

static void credit_shared(struct world *w, struct cpu *c,
			  const struct counted_set *a,
			  const struct counted_set *s,
			  const struct counter_value delta[EVENTS])
{
	for (__u32 i = 0; i < TT_N; i++)
		if (set_has_target(s, a->targets[i]))
			add_task_delta(w, a->targets[i], delta);
	for (__u32 i = 0; i < CACHED_SLOTS && i < a->nslots; i++)
		if (set_has_slot(s, a->slots[i]))
			add_delta(c, a->slots[i], delta);
}

static void unattribute(struct cpu *c, const struct counter_value delta[EVENTS])
{
	__u64 ns = 0;

	for (int e = 0; e < EVENTS; e++) {
		acc_add(&c->p.unattributed[e], &delta[e]);
		if (delta[e].enabled > ns)
			ns = delta[e].enabled;
	}
	c->p.unattributed_ns += ns;
}

/* credit() */
static void credit(struct world *w, struct cpu *c, const struct interval *in)
{
	struct prog *st = &c->p;
	struct counter_value delta[EVENTS] = {0};
	__u32 hidden, switches, cgroup_switches;
	enum settle_plan plan;

	hidden = in->hidden == HIDDEN_UNKNOWN ? 1 : (__u32)in->hidden;
	switches = st->pending_switches + in->now_switches + hidden;
	cgroup_switches =
		st->pending_cgroup_switches + in->now_cgroup_switches + hidden;
	plan = PLAN_ALL;
	if (in->hidden || !st->task) {
		resolve(w, c, in->task, &st->here);
		plan = plan_settle(in->hidden, st->task != 0, &st->now,
				   &st->here, in->may_have_moved);
		if (plan != PLAN_NONE && st->now.leaf == st->here.leaf)
			cgroup_switches--;
	}
	if (in->hidden > 1)
		cgroup_switches = switches;
	st->pending_switches = 0;
	st->pending_cgroup_switches = 0;
	take_deltas(c, switches, cgroup_switches, delta);
	if ((plan == PLAN_ALL || plan == PLAN_COMMON) &&
	    !credit_all(w, c, &st->now, delta)) {
		plan = PLAN_SHARED;
		credit_shared(w, c, &st->now, &st->now, delta);
	} else if (plan == PLAN_SHARED) {
		credit_shared(w, c, &st->now, &st->here, delta);
	}
	if (plan == PLAN_SHARED || plan == PLAN_NONE)
		unattribute(c, delta);
	TRACE(w,
	      "  settle task %d: hidden %llu, plan %d, A leaf %llu (%u slots, "
	      "%u targets), C leaf %llu; switches %u/%u, clock %llu\n",
	      task_of(in->task), (unsigned long long)in->hidden, plan,
	      (unsigned long long)st->now.leaf, st->now.nslots,
	      st->now.ntargets, (unsigned long long)st->here.leaf, switches,
	      cgroup_switches, (unsigned long long)delta[E_CLOCK].counter);
	w->seen[SEEN_ALL + plan]++;
	w->seen[SEEN_MANY_HIDDEN] += in->hidden > 1;
	c->last_plan = plan;
}

/* settle(): the CPU always has its sequence here. */
static void settle(struct world *w, struct cpu *c, struct interval *in)
{
	struct prog *st = &c->p;
	__u64 switches = c->seq;

	in->hidden = 0;
	if (st->switches_known)
		in->hidden = hidden_switches(st->settled_switches,
					     st->pending_switches, switches);
	if (st->task && st->task != in->task && !in->hidden)
		in->hidden = HIDDEN_UNKNOWN;
	CHECK(w, in->hidden != HIDDEN_UNKNOWN,
	      "a new task, yet the sequence says no switch was hidden");
	credit(w, c, in);
	if (in->hidden && in->hidden != HIDDEN_UNKNOWN)
		st->unseen += in->hidden;
	st->settled_switches = switches + in->now_switches;
	st->switches_known = 1;
	st->settled_jiffies = jiffies(c);
	c->settled = true;
}

static void restart(struct world *w, struct cpu *c, int may_have_moved)
{
	struct interval in = {.task = ptr(c->cur),
			      .may_have_moved = may_have_moved};

	settle(w, c, &in);
	c->p.task = in.task;
	resolve(w, c, in.task, &c->p.now);
}

/* Where a check runs, as prog/settle.bpf.h has it. */
#define AT_NO_TIMER   0
#define AT_TIMER      1
#define AT_SCHED_TICK 2

/* check_cpu(): on_tick (0, AT_TIMER), or (0, AT_SCHED_TICK) at the
 * scheduler tick; on_ipi (1, AT_NO_TIMER) for a call that may be a move,
 * (0, AT_NO_TIMER) for any other; on_attach (1, AT_NO_TIMER). */
static void check_cpu(struct world *w, struct cpu *c, int at_move, int at_tick)
{
	struct prog *st = &c->p;
	__u64 task = ptr(c->cur);

	if (!st->task)
		return;
	if (st->task != task) {
		restart(w, c, at_move || !w->sees_moves);
		return;
	}
	if (leaf_of(c, c->cur) != st->now.leaf) {
		restart(w, c, 0);
		return;
	}
	if ((at_tick == AT_SCHED_TICK ||
	     (at_tick && jiffies(c) != st->settled_jiffies)) &&
	    (st->now.nslots || st->now.ntargets)) {
		struct interval in = {.task = task,
				      .may_have_moved = !w->sees_moves};

		settle(w, c, &in);
		w->seen[SEEN_TICK_SETTLE]++;
	}
}

/* on_switch(): prev 0 is a flush. The caller has decided whether the
 * kernel runs it (skipped()). */
static void on_switch(struct world *w, struct cpu *c, __u64 prev, __u64 next)
{
	struct prog *st = &c->p;
	struct interval in = {.task = prev, .now_switches = 1};
	struct counted_set incoming = {0};
	__u64 prev_leaf;

	if (!next) {
		restart(w, c, !w->sees_moves);
		return;
	}
	if (st->task == prev && quick_same(w, c, next)) {
		st->pending_switches++;
		st->task = next;
		w->seen[SEEN_PENDING]++;
		w->seen[SEEN_QUICK]++;
		return;
	}
	prev_leaf = st->task == prev ? st->now.leaf : leaf_of(c, c->cur);
	resolve(w, c, next, &incoming);
	if (st->task == prev && same_set(&st->now, &incoming) &&
	    jiffies(c) == st->settled_jiffies) {
		st->pending_switches++;
		st->pending_cgroup_switches += prev_leaf != incoming.leaf;
		w->seen[SEEN_PENDING]++;
	} else {
		in.now_cgroup_switches = prev_leaf != incoming.leaf;
		in.may_have_moved = !w->sees_moves;
		settle(w, c, &in);
	}
	st->task = next;
	st->now = incoming;
}

/* skipped(): the test knobs, and random skips as a kernel makes them. */
static bool skipped(struct world *w, struct cpu *c, int prev)
{
	/* Before a CPU's first settle the program has no reading of its
	 * sequence: a switch hidden then is counted by no one, and its
	 * switch kinds (not read from their counters) would miss it. The
	 * library opens every window with a flush of its CPUs, after which
	 * none is first: so no switch is hidden before it here. */
	if (!c->settled_once)
		return false;
	if (w->skip == SKIP_SCRIPT) {
		bool hide = c->hide_next;

		c->hide_next = false;
		return hide;
	}
	if (w->skip == SKIP_RANDOM)
		return chance(&w->rng, w->skip_pct);
	if (w->skip_tid && pid_of(prev) == w->skip_tid)
		return true;
	if (!w->skip_every)
		return false;
	return ++c->p.runs % w->skip_every == 0;
}

/* The truth. */

/* Adds amount (per field) to every slot and target of the task's set
 * now, by the timeline's own reckoning. */
static void truth_add(struct world *w, struct cpu *c, int task, int e,
		      const uint64_t amount[3])
{
	int slots[MAX_CG], n = counted_chain(w, c->cg[task], slots);
	__u32 t[TT_N];

	task_targets(w, task, t);
	for (int f = C; f <= R; f++) {
		for (int i = 0; i < n; i++)
			c->truth[slots[i]][e][f] += amount[f];
		for (int i = 0; i < TT_N; i++)
			if (t[i] != NO_TARGET)
				w->target_truth[t[i]][e][f] += amount[f];
	}
}

/* The task on the CPU runs for ns, on the PMU for ran of them. */
static void run(struct world *w, struct cpu *c, uint64_t ns, uint64_t ran)
{
	for (int e = 0; e < EVENTS; e++) {
		uint64_t a[3] = {0, ns, ran};

		if (e == E_CLOCK)
			a[C] = (uint64_t)w->rate[c->cur] * ran;
		c->ev[e].counter += a[C];
		c->ev[e].enabled += ns;
		c->ev[e].running += ran;
		truth_add(w, c, c->cur, e, a);
	}
	c->ns += ns;
}

/* The program's runs below are followed by the checks. */
static void check(struct world *w, struct cpu *c);

/* A switch to next; the program runs first (the tracepoint comes before
 * the kernel counts the switch), unless skipped. */
static void switch_to(struct world *w, struct cpu *c, int next)
{
	int prev = c->cur;
	uint64_t one[3] = {1, 0, 0};

	truth_add(w, c, prev, E_SWITCHES, one);
	if (c->cg[prev] != c->cg[next])
		truth_add(w, c, prev, E_CGROUP_SWITCHES, one);
	TRACE(w, "%u: switch %d -> %d\n", w->step, prev, next);
	if (skipped(w, c, prev)) {
		TRACE(w, "  (hidden)\n");
		c->hidden++;
		c->any_hidden = true;
	} else {
		on_switch(w, c, ptr(prev), ptr(next));
	}
	c->ev[E_SWITCHES].counter++;
	c->ev[E_CGROUP_SWITCHES].counter += c->cg[prev] != c->cg[next];
	c->seq++;
	c->cur = next;
	check(w, c);
}

/* A cgroup for task to move to: another one, where there is one. */
static int another_cg(struct world *w, const struct cpu *c, int task)
{
	int g = (int)below(&w->rng, (uint64_t)w->ncg);

	return g == c->cg[task] ? (g + 1) % w->ncg : g;
}

static void fields(const struct counter_value *v, uint64_t out[3])
{
	out[C] = v->counter;
	out[E] = v->enabled;
	out[R] = v->running;
}

/* One slot's or target's total of event e against its truth: never
 * above, and (bound) below by no more than lost, unless exact. */
static void check_one(struct world *w, const char *what, int i, int e,
		      const struct counter_value *total,
		      const uint64_t truth[3], const uint64_t lost[3],
		      bool bound, bool exact)
{
	uint64_t got[3];

	fields(total, got);
	for (int f = C; f <= R; f++) {
		CHECK(w, got[f] <= truth[f],
		      "%s %d event %d field %d: %" PRIu64
		      " counted above its truth %" PRIu64,
		      what, i, e, f, got[f], truth[f]);
		if (!bound)
			continue;
		CHECK(w, truth[f] - got[f] <= lost[f],
		      "%s %d event %d field %d: %" PRIu64
		      " short of its truth %" PRIu64
		      " by more than the unattributed %" PRIu64,
		      what, i, e, f, got[f], truth[f], lost[f]);
		CHECK(w, !exact || got[f] == truth[f],
		      "%s %d event %d field %d: %" PRIu64
		      " not its truth %" PRIu64 " with no switch hidden",
		      what, i, e, f, got[f], truth[f]);
	}
}

/* Every slot's and target's credited against its truth. bound: also
 * what is missing against what went unattributed (after a settle: no
 * pending switch since), the CPU's for a slot (its totals are per CPU),
 * every CPU's for a target. */
static void check_all(struct world *w, struct cpu *c, bool bound)
{
	bool exact = !c->any_hidden && !c->unwalkable && w->warm;
	bool all_exact = w->warm;

	for (unsigned int i = 0; i < w->ncpus; i++)
		all_exact = all_exact && !w->cpu[i].any_hidden &&
			    !w->cpu[i].unwalkable;
	for (int e = 0; e < EVENTS; e++) {
		uint64_t lost[3], all_lost[3] = {0}, one[3];

		fields(&c->p.unattributed[e], lost);
		for (unsigned int i = 0; i < w->ncpus; i++) {
			fields(&w->cpu[i].p.unattributed[e], one);
			for (int f = C; f <= R; f++)
				all_lost[f] += one[f];
		}
		if (exact && bound)
			CHECK(w, !lost[C] && !lost[E] && !lost[R],
			      "event %d unattributed with no switch hidden", e);
		for (int s = 0; s < NSLOTS; s++)
			check_one(w, "slot", s, e, &c->p.totals[s][e],
				  c->truth[s][e], lost, bound, exact);
		for (int t = 0; t < NTARGETS; t++)
			check_one(w, "target", t, e, &w->target_totals[t][e],
				  w->target_truth[t][e], all_lost, bound,
				  all_exact);
	}
	CHECK(w, c->p.unattributed_ns == c->p.unattributed[E_CLOCK].enabled,
	      "unattributed_ns %" PRIu64 ", unattributed time %" PRIu64,
	      (uint64_t)c->p.unattributed_ns,
	      (uint64_t)c->p.unattributed[E_CLOCK].enabled);
}

static void check(struct world *w, struct cpu *c)
{
	if (!c->settled)
		return;
	c->settled = false;
	/* Switches hidden before the first settle are not known to the
	 * program: it has no sequence reading to count from. */
	c->settled_once = true;
	CHECK(w, c->p.unseen == c->hidden,
	      "%" PRIu64 " switches reported unseen, %" PRIu64 " hidden",
	      (uint64_t)c->p.unseen, c->hidden);
	/* Targets are checked in full once the CPUs before are done. */
	check_all(w, c, c->p.pending_switches == 0);
}

static void flush(struct world *w, struct cpu *c)
{
	on_switch(w, c, 0, 0);
	check(w, c);
}

static void step(struct world *w, struct cpu *c)
{
	uint64_t pick = below(&w->rng, 100);
	int next;

	if (pick < 35) {
		uint64_t ns = 1 + below(&w->rng, 3 * JIFFY);

		run(w, c, ns, chance(&w->rng, 80) ? ns : below(&w->rng, ns));
		TRACE(w, "%u: task %d ran %llu\n", w->step, c->cur,
		      (unsigned long long)ns);
	} else if (pick < 65) {
		/* Another task; often a ping-pong back to the last. */
		next = (int)below(&w->rng, (uint64_t)w->ntasks);
		if (next == c->cur)
			next = (next + 1) % w->ntasks;
		switch_to(w, c, next);
	} else if (pick < 75) {
		/* Another timer's expiry, or the scheduler tick's. */
		int tick = chance(&w->rng, 50) ? AT_SCHED_TICK : AT_TIMER;

		TRACE(w, "%u: %s\n", w->step,
		      tick == AT_SCHED_TICK ? "the scheduler tick" : "a timer");
		check_cpu(w, c, 0, tick);
		check(w, c);
	} else if (pick < 80) {
		TRACE(w, "%u: flush\n", w->step);
		flush(w, c);
	} else if (pick < 85) {
		/* A call that may be a move (of a task elsewhere), or any
		 * other function call from another CPU. */
		int at_move = chance(&w->rng, 50);

		TRACE(w, "%u: ipi (%s)\n", w->step,
		      at_move ? "a move's" : "another");
		check_cpu(w, c, at_move, 0);
		check(w, c);
	} else if (pick < 90) {
		/* The running task moves: by another (sees_moves: the IPI
		 * is here at once) or by itself (on_attach, anyway). */
		if (!c->cur)
			return; /* the idle task stays in the root */
		c->cg[c->cur] = another_cg(w, c, c->cur);
		TRACE(w, "%u: task %d moves to cgroup %d\n", w->step, c->cur,
		      c->cg[c->cur]);
		w->seen[SEEN_MOVE]++;
		check_cpu(w, c, 1, 0);
		check(w, c);
	} else if (pick < 95) {
		/* A task not running moves. */
		next = (int)below(&w->rng, (uint64_t)w->ntasks);
		if (next != c->cur && next) {
			c->cg[next] = another_cg(w, c, next);
			TRACE(w,
			      "%u: task %d (not running) moves to cgroup "
			      "%d\n",
			      w->step, next, c->cg[next]);
		}
	} else {
		/* Time passes in the same task, across ticks. */
		run(w, c, JIFFY, JIFFY);
		TRACE(w, "%u: task %d ran a tick, tick\n", w->step, c->cur);
		check_cpu(w, c, 0, AT_SCHED_TICK);
		check(w, c);
	}
}

#define UNDECIDED (-2)

/* A random cgroup tree: some counted (a slot each), now and then a
 * chain of more counted ancestors than a set lists. */
static void make_tree(struct world *w)
{
	int order[NSLOTS], used = 0;

	for (int g = 0; g < MAX_CG; g++)
		w->slot[g] = UNDECIDED;
	for (int i = 0; i < NSLOTS; i++)
		order[i] = i;
	for (int i = NSLOTS - 1; i > 0; i--) {
		int j = (int)below(&w->rng, (uint64_t)i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	w->ncg = 1 + (int)below(&w->rng, 8);
	w->parent[0] = -1;
	for (int g = 1; g < w->ncg; g++)
		w->parent[g] = (int)below(&w->rng, (uint64_t)g);
	if (chance(&w->rng, 20)) {
		int from = (int)below(&w->rng, (uint64_t)w->ncg),
		    deep = CACHED_SLOTS + 1 + (int)below(&w->rng, 3);

		for (int k = 0; k < deep; k++, w->ncg++)
			w->parent[w->ncg] = k ? w->ncg - 1 : from;
		for (int g = w->ncg - deep; g < w->ncg; g++)
			w->slot[g] = order[used++];
	}
	for (int g = 0; g < w->ncg; g++)
		if (w->slot[g] == UNDECIDED)
			w->slot[g] = chance(&w->rng, 50) ? order[used++] : -1;
}

static void make_world(struct world *w)
{
	static const unsigned int pcts[] = {2, 10, 30, 70};
	/* Process 0 is the idle task's. */
	int nprocs = 1 + (int)below(&w->rng, MAX_PROCS - 1);
	__u32 target = 0;

	make_tree(w);
	w->ntasks = 2 + (int)below(&w->rng, MAX_TASKS - 1);
	for (int t = 0; t < w->ntasks; t++) {
		/* Tasks crowd a few cgroups and processes, so that sets
		 * are often equal. */
		w->home[t] = t ? (int)below(&w->rng, (uint64_t)w->ncg) : 0;
		w->proc[t] = t ? 1 + (int)below(&w->rng, (uint64_t)nprocs) : 0;
		w->rate[t] = 1 + (__u32)below(&w->rng, 4);
		w->tid_link[t] = t && chance(&w->rng, 25);
		for (int k = 0; k < 2; k++)
			w->tid_target[t][k] = chance(&w->rng, k ? 40 : 70)
						      ? target++
						      : NO_TARGET;
	}
	for (int p = 0; p < MAX_PROCS; p++) {
		w->tgid_link[p] = p && chance(&w->rng, 30);
		for (int k = 0; k < 2; k++)
			w->tgid_target[p][k] = chance(&w->rng, k ? 40 : 70)
						       ? target++
						       : NO_TARGET;
	}
	w->sees_moves = chance(&w->rng, 70);
	w->warm = chance(&w->rng, 85);
	w->skip = (enum skip_mode)below(&w->rng, SKIP_MODES);
	w->skip_pct = pcts[below(&w->rng, 4)];
	if (w->skip == SKIP_TID ||
	    (w->skip == SKIP_EVERY && chance(&w->rng, 30)))
		w->skip_tid = pid_of(
			1 + (int)below(&w->rng, (uint64_t)w->ntasks - 1));
	if (w->skip == SKIP_EVERY)
		w->skip_every = 1 + (__u32)below(&w->rng, 3);
}

static void start_cpu(struct world *w, struct cpu *c)
{
	memset(c, 0, sizeof(*c));
	memcpy(c->cg, w->home, sizeof(c->cg));
	c->cur = (int)below(&w->rng, (uint64_t)w->ntasks);
	c->seq = below(&w->rng, 1000000);
	c->ns = below(&w->rng, 100) * JIFFY + below(&w->rng, JIFFY);
	for (int e = 0; e < EVENTS; e++) {
		c->ev[e].counter = below(&w->rng, 1000000000);
		c->ev[e].enabled = below(&w->rng, 1ULL << 40);
		c->ev[e].running = c->ev[e].enabled - below(&w->rng, 1000);
		/* Userspace writes an event's first reading as its base. */
		c->p.raw[e] = c->ev[e];
	}
	if (w->warm) {
		flush(w, c);
	} else {
		w->seen[SEEN_COLD]++;
		run(w, c, 1 + below(&w->rng, JIFFY), 0);
	}
}

static void run_sequence(struct world *w, uint64_t seed, unsigned int seq)
{
	unsigned int steps = 0;

	memset(w, 0, sizeof(*w));
	w->seed = seed;
	w->sequence = seq;
	w->rng = seed ^ ((uint64_t)seq * 0xd1b54a32d192ed03ULL);
	make_world(w);
	for (int g = 0; g < w->ncg; g++)
		TRACE(w, "cgroup %d: parent %d, slot %d\n", g, w->parent[g],
		      w->slot[g]);
	for (int t = 0; t < w->ntasks; t++)
		TRACE(w, "task %d: cgroup %d, process %d, links %d %d\n", t,
		      w->home[t], w->proc[t], w->tid_link[t],
		      w->tgid_link[w->proc[t]]);
	TRACE(w, "sees_moves %d, warm %d, skip %d (%u%%, tid %u, every %u)\n",
	      w->sees_moves, w->warm, w->skip, w->skip_pct, w->skip_tid,
	      w->skip_every);
	w->ncpus = 1 + (unsigned int)below(&w->rng, CPUS);
	for (unsigned int i = 0; i < w->ncpus; i++) {
		struct cpu *c = &w->cpu[i];
		unsigned int n = 50 + (unsigned int)below(&w->rng, 250);

		TRACE(w, "cpu %u\n", i);
		start_cpu(w, c);
		for (w->step = 0; w->step < n; w->step++)
			step(w, c);
		flush(w, c);
		CHECK(w, c->p.unseen == c->hidden,
		      "%" PRIu64 " switches reported unseen, %" PRIu64
		      " hidden",
		      (uint64_t)c->p.unseen, c->hidden);
		steps += n;
	}
	for (unsigned int i = 0; i < w->ncpus; i++)
		check_all(w, &w->cpu[i], true);
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
	if (getenv("SHPMU_HIDDEN_TRACE"))
		trace_sequence = strtol(getenv("SHPMU_HIDDEN_TRACE"), NULL, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned int seq = 0; seq < sequences; seq++) {
		run_sequence(w, seed, seq);
		steps += w->steps;
		for (int i = 0; i < SEEN_N; i++)
			seen[i] += w->seen[i];
	}
	free(w);
	property_report("hidden", seed, sequences, steps, &t0, seen, seen_names,
			SEEN_N, sequences / 10);
}

Test(hidden, random_timelines_from_the_fixed_seed)
{
	run_all(0x41dde2025);
}

/* A new seed each run (or SHPMU_HIDDEN_SEED's), printed on failure. */
Test(hidden, random_timelines_from_a_fresh_seed)
{
	run_all(property_seed("SHPMU_HIDDEN_SEED"));
}

/* Hand-written timelines, one for each plan: every number worked out. */

/* The tree: root (slot 0) with a (slot 1) and b (slot 2); a2 under a is
 * not counted, so a task there has a's set. A deep chain under b holds
 * more counted ancestors than a set lists. Tasks: X in a, Y in a2, Z in
 * b, W in a counted by a task target; rates 1, 2, 3, 1. */
enum { X = 1, Y, Z, W, D };
enum { CG_ROOT, CG_A, CG_B, CG_A2, CG_DEEP };
#define TARGET_W 0

static struct world *hand_world(bool sees_moves)
{
	struct world *w = calloc(1, sizeof(*w));
	int deep = CACHED_SLOTS + 2;

	cr_assert(w);
	w->ncg = CG_DEEP + deep;
	w->parent[CG_ROOT] = -1;
	w->parent[CG_A] = w->parent[CG_B] = CG_ROOT;
	w->parent[CG_A2] = CG_A;
	w->slot[CG_ROOT] = 0;
	w->slot[CG_A] = 1;
	w->slot[CG_B] = 2;
	w->slot[CG_A2] = -1;
	for (int k = 0; k < deep; k++) {
		w->parent[CG_DEEP + k] = k ? CG_DEEP + k - 1 : CG_B;
		w->slot[CG_DEEP + k] = 3 + k;
	}
	w->ntasks = D + 1;
	w->home[X] = CG_A;
	w->home[Y] = CG_A2;
	w->home[Z] = CG_B;
	w->home[W] = CG_A;
	w->home[D] = w->ncg - 1;
	for (int t = 0; t < w->ntasks; t++) {
		w->proc[t] = t ? 1 : 0;
		w->rate[t] = t == Y ? 2 : t == Z ? 3 : 1;
		w->tid_target[t][0] = w->tid_target[t][1] = NO_TARGET;
	}
	for (int p = 0; p < MAX_PROCS; p++)
		w->tgid_target[p][0] = w->tgid_target[p][1] = NO_TARGET;
	w->tid_link[W] = true;
	w->tid_target[W][0] = TARGET_W;
	w->sees_moves = sees_moves;
	w->warm = true;
	w->skip = SKIP_SCRIPT;
	w->ncpus = 1;
	w->rng = 1;
	return w;
}

/* CPU 0 of w, settled with task running: every event at 0. */
static struct cpu *hand_cpu(struct world *w, int task)
{
	struct cpu *c = &w->cpu[0];

	memcpy(c->cg, w->home, sizeof(c->cg));
	c->cur = task;
	c->seq = 500;
	flush(w, c);
	return c;
}

/* Each run a tick long, so that every switch settles. */
static void hand_run(struct world *w, struct cpu *c, uint64_t ticks)
{
	run(w, c, ticks * JIFFY, ticks * JIFFY);
}

static void hand_hidden_switch(struct world *w, struct cpu *c, int next)
{
	c->hide_next = true;
	switch_to(w, c, next);
}

static uint64_t slot_clock(const struct cpu *c, int slot)
{
	return c->p.totals[slot][E_CLOCK].counter;
}

static uint64_t slot_switches(const struct cpu *c, int slot, int e)
{
	return c->p.totals[slot][e].counter;
}

static void hand_end(struct world *w, struct cpu *c)
{
	flush(w, c);
	check_all(w, c, true);
	free(w);
}

Test(hidden_plans, all_every_switch_seen)
{
	struct world *w = hand_world(true);
	struct cpu *c = hand_cpu(w, X);

	hand_run(w, c, 1);
	switch_to(w, c, Z);
	cr_expect_eq(c->last_plan, PLAN_ALL);
	hand_run(w, c, 2);
	flush(w, c);
	cr_expect_eq(c->last_plan, PLAN_ALL);
	cr_expect_eq(slot_clock(c, 0), 1 * JIFFY + 2 * 3 * JIFFY);
	cr_expect_eq(slot_clock(c, 1), JIFFY);
	cr_expect_eq(slot_clock(c, 2), 2 * 3 * JIFFY);
	cr_expect_eq(slot_switches(c, 1, E_SWITCHES), 1);
	cr_expect_eq(slot_switches(c, 1, E_CGROUP_SWITCHES), 1);
	cr_expect_eq(slot_switches(c, 2, E_SWITCHES), 0);
	cr_expect_eq(c->p.unattributed[E_CLOCK].enabled, 0);
	cr_expect_eq(c->p.unseen, 0);
	hand_end(w, c);
}

/* X leaves for Y unseen; X and Y count for the same slots: Y's leaving
 * finds one switch hidden, and all of it is theirs, exactly. */
Test(hidden_plans, common_one_hidden_between_equal_sets)
{
	struct world *w = hand_world(true);
	struct cpu *c = hand_cpu(w, X);

	hand_run(w, c, 1);
	hand_hidden_switch(w, c, Y);
	hand_run(w, c, 1);
	switch_to(w, c, Z);
	cr_expect_eq(c->last_plan, PLAN_COMMON);
	cr_expect_eq(slot_clock(c, 0), JIFFY + 2 * JIFFY);
	cr_expect_eq(slot_clock(c, 1), JIFFY + 2 * JIFFY);
	cr_expect_eq(slot_clock(c, 2), 0);
	/* X to Y (hidden; a to a2, another cgroup) and Y to Z. */
	cr_expect_eq(slot_switches(c, 1, E_SWITCHES), 2);
	cr_expect_eq(slot_switches(c, 1, E_CGROUP_SWITCHES), 2);
	cr_expect_eq(c->p.unattributed[E_CLOCK].enabled, 0);
	cr_expect_eq(c->p.unseen, 1);
	hand_end(w, c);
}

/* The same between two tasks of one cgroup: the hidden switch was no
 * cgroup switch. */
Test(hidden_plans, common_within_one_cgroup)
{
	struct world *w = hand_world(true);
	struct cpu *c = hand_cpu(w, X);

	w->home[Y] = c->cg[Y] = CG_A;
	hand_run(w, c, 1);
	hand_hidden_switch(w, c, Y);
	hand_run(w, c, 1);
	switch_to(w, c, Z);
	cr_expect_eq(c->last_plan, PLAN_COMMON);
	cr_expect_eq(slot_switches(c, 1, E_SWITCHES), 2);
	cr_expect_eq(slot_switches(c, 1, E_CGROUP_SWITCHES), 1);
	hand_end(w, c);
}

/* X leaves for Z unseen: only the root ran throughout. The root gets it
 * all exactly, a and b nothing, and the CPU's unattributed all of it:
 * their bound. */
Test(hidden_plans, shared_one_hidden_between_other_sets)
{
	struct world *w = hand_world(true);
	struct cpu *c = hand_cpu(w, X);

	hand_run(w, c, 1);
	hand_hidden_switch(w, c, Z);
	hand_run(w, c, 1);
	switch_to(w, c, X);
	cr_expect_eq(c->last_plan, PLAN_SHARED);
	cr_expect_eq(slot_clock(c, 0), JIFFY + 3 * JIFFY);
	cr_expect_eq(slot_clock(c, 1), 0);
	cr_expect_eq(slot_clock(c, 2), 0);
	cr_expect_eq(slot_switches(c, 0, E_SWITCHES), 2);
	cr_expect_eq(c->p.unattributed[E_CLOCK].counter, JIFFY + 3 * JIFFY);
	cr_expect_eq(c->p.unattributed[E_CLOCK].enabled, 2 * JIFFY);
	cr_expect_eq(c->p.unattributed[E_SWITCHES].counter, 2);
	cr_expect_eq(c->p.unattributed_ns, 2 * JIFFY);
	cr_expect_eq(c->p.unseen, 1);
	hand_end(w, c);
}

/* A task target is no slot: W's target gets W's run only where the task
 * found is W too. */
Test(hidden_plans, shared_leaves_a_task_target_out)
{
	struct world *w = hand_world(true);
	struct cpu *c = hand_cpu(w, W);

	hand_run(w, c, 1);
	hand_hidden_switch(w, c, X);
	hand_run(w, c, 1);
	switch_to(w, c, Z);
	/* W and X: both in a, but only W counted by a target. */
	cr_expect_eq(c->last_plan, PLAN_SHARED);
	cr_expect_eq(slot_clock(c, 1), 2 * JIFFY);
	cr_expect_eq(w->target_totals[TARGET_W][E_CLOCK].counter, 0);
	cr_expect_eq(w->target_truth[TARGET_W][E_CLOCK][C], JIFFY);
	hand_end(w, c);
}

/* Two hidden switches: who ran between them is anyone's guess. */
Test(hidden_plans, none_two_hidden)
{
	struct world *w = hand_world(true);
	struct cpu *c = hand_cpu(w, X);

	hand_run(w, c, 1);
	hand_hidden_switch(w, c, Z);
	hand_run(w, c, 1);
	hand_hidden_switch(w, c, Y);
	hand_run(w, c, 1);
	switch_to(w, c, X);
	cr_expect_eq(c->last_plan, PLAN_NONE);
	for (int s = 0; s < 3; s++)
		cr_expect_eq(slot_clock(c, s), 0);
	cr_expect_eq(c->p.unattributed[E_CLOCK].counter, (1 + 3 + 2) * JIFFY);
	cr_expect_eq(c->p.unattributed[E_SWITCHES].counter, 3);
	cr_expect_eq(c->p.unseen, 2);
	hand_end(w, c);
}

/* A tick finds the hidden switch (the task here is not the one that
 * came), within a tick of it. */
Test(hidden_plans, a_tick_finds_the_hidden_switch)
{
	struct world *w = hand_world(true);
	struct cpu *c = hand_cpu(w, X);

	hand_run(w, c, 1);
	hand_hidden_switch(w, c, Y);
	hand_run(w, c, 1);
	check_cpu(w, c, 0, 1);
	check(w, c);
	cr_expect_eq(c->last_plan, PLAN_COMMON);
	cr_expect_eq(c->p.unseen, 1);
	cr_expect_eq(c->p.task, ptr(Y));
	hand_end(w, c);
}

/* Without the move hook, the task found may have changed cgroups since
 * it came, unseen: nothing is credited. */
Test(hidden_plans, none_where_moves_are_not_seen)
{
	struct world *w = hand_world(false);
	struct cpu *c = hand_cpu(w, X);

	hand_run(w, c, 1);
	hand_hidden_switch(w, c, Y);
	hand_run(w, c, 1);
	switch_to(w, c, Z);
	cr_expect_eq(c->last_plan, PLAN_NONE);
	cr_expect_eq(slot_clock(c, 0), 0);
	cr_expect_eq(c->p.unattributed[E_CLOCK].counter, 3 * JIFFY);
	hand_end(w, c);
}

/* A CPU the program never ran on: what accrued before is no one's. */
Test(hidden_plans, none_before_the_first_run)
{
	struct world *w = hand_world(true);
	struct cpu *c = &w->cpu[0];

	memcpy(c->cg, w->home, sizeof(c->cg));
	c->cur = X;
	w->warm = false;
	hand_run(w, c, 1);
	switch_to(w, c, Z);
	cr_expect_eq(c->last_plan, PLAN_NONE);
	cr_expect_eq(slot_clock(c, 1), 0);
	cr_expect_eq(c->p.unattributed[E_CLOCK].counter, JIFFY);
	hand_run(w, c, 1);
	flush(w, c);
	cr_expect_eq(c->last_plan, PLAN_ALL);
	cr_expect_eq(slot_clock(c, 2), 3 * JIFFY);
	hand_end(w, c);
}

/* A task whose cgroup has more counted ancestors than a set lists is
 * credited by a walk of its cgroup; moved, that walk would credit the
 * new cgroup's ancestors with what it ran in the old. What it ran goes
 * to the ancestors it lists and to unattributed. */
Test(hidden_plans, a_moved_task_of_a_deep_cgroup_is_not_walked)
{
	struct world *w = hand_world(true);
	struct cpu *c = hand_cpu(w, D);
	int deep_slot = 3 + CACHED_SLOTS; /* the first one not listed */

	hand_run(w, c, 1);
	flush(w, c);
	cr_expect_eq(c->last_plan, PLAN_ALL);
	cr_expect_eq(slot_clock(c, deep_slot), JIFFY);
	hand_run(w, c, 1);
	c->cg[D] = CG_A;
	check_cpu(w, c, 1, 0);
	check(w, c);
	cr_expect_eq(c->last_plan, PLAN_SHARED);
	cr_expect_eq(slot_clock(c, 0), 2 * JIFFY);
	cr_expect_eq(slot_clock(c, 2), 2 * JIFFY);
	cr_expect_eq(slot_clock(c, deep_slot), JIFFY);
	cr_expect_eq(slot_clock(c, 1), 0, "a credited with b's run");
	cr_expect_eq(c->p.unattributed[E_CLOCK].counter, JIFFY);
	hand_end(w, c);
}

/* X leaves and comes back unseen, moved meanwhile from a to b: the
 * switch it makes next was told by the cgroup it had (a, W's) as no
 * cgroup switch. With two hidden, every switch of the interval counts
 * as one may have been. */
Test(hidden_plans, none_counts_every_switch_a_cgroup_switch)
{
	struct world *w = hand_world(true);
	struct cpu *c = hand_cpu(w, X);

	hand_run(w, c, 1);
	hand_hidden_switch(w, c, Y);
	c->cg[X] = CG_B;
	hand_run(w, c, 1);
	hand_hidden_switch(w, c, X);
	hand_run(w, c, 1);
	switch_to(w, c, W);
	cr_expect_eq(c->last_plan, PLAN_NONE);
	cr_expect_eq(c->truth[0][E_CGROUP_SWITCHES][C], 3);
	cr_expect_eq(c->p.unattributed[E_CGROUP_SWITCHES].counter, 3);
	hand_end(w, c);
}
