// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bpf/counted.c: the bookkeeping around the BPF program's maps (which
 * event index, which slot, which task entry, the refs of each and what a
 * put leaves), on books in malloc'd memory: no program, no root. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/backend_bpf.h"
#include "bpf/counted.h"
#include "core/key.h"
#include "host/books.h"

#define SLOTS 4

static struct books *new_books(void)
{
	struct books *b = malloc(books_size(SLOTS));

	cr_assert(b);
	books_init(b, 4, SLOTS);
	return b;
}

static struct event_key key_of(uint32_t type, uint64_t config, uint32_t bits)
{
	struct event_key k;

	memset(&k, 0, sizeof(k));
	k.type = type;
	k.config = config;
	k.bits = bits;
	return k;
}

/* What make_event does to the books around its perf_event_open calls. */
static void make(struct books *b, uint32_t e, const struct event_key *k)
{
	counted_event_making(&b->events[e], k);
	counted_event_opened(&b->events[e], 0);
	b->events[e].state = EVENT_LIVE;
}

Test(counted, switches_are_counted_as_the_kernel_counts_them)
{
	struct event_key cs =
		key_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0);
	struct event_key cg =
		key_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES, 0);
	struct event_key cs_user =
		key_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
		       KEY_EXCLUDE_KERNEL);
	struct event_key clock =
		key_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0);
	struct event_key cpu_clock =
		key_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0);
	struct event_key clock_user = key_of(
		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, KEY_EXCLUDE_USER);
	struct event_key hw =
		key_of(PERF_TYPE_HARDWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0);

	cr_expect_eq(counted_counter_kind(&cs), KIND_CONTEXT_SWITCHES);
	cr_expect_eq(counted_counter_kind(&cg), KIND_CGROUP_SWITCHES);
	cr_expect_eq(counted_counter_kind(&cs_user), KIND_READ,
		     "user mode never sees a switch: the counter is read");
	cr_expect_eq(counted_counter_kind(&clock), KIND_CLOCK,
		     "a clock's count is its time: only the count is read");
	cr_expect_eq(counted_counter_kind(&cpu_clock), KIND_CLOCK);
	cr_expect_eq(counted_counter_kind(&clock_user), KIND_READ,
		     "a clock that excludes anything is read whole");
	cr_expect_eq(counted_counter_kind(&hw), KIND_READ,
		     "a hardware event with the same config number");
}

Test(counted, one_event_index_per_key)
{
	struct books *b = new_books();
	struct event_key k1 = key_of(PERF_TYPE_SOFTWARE, 1, 0);
	struct event_key k2 = key_of(PERF_TYPE_SOFTWARE, 1, KEY_EXCLUDE_USER);
	bool mk;

	cr_expect_eq(counted_event_index(b, &k1, &mk), 0);
	cr_expect(mk, "new: made at a free index");
	make(b, 0, &k1);
	cr_expect_eq(counted_event_index(b, &k1, &mk), 0);
	cr_expect_not(mk, "counted already: shared");
	cr_expect_eq(counted_event_index(b, &k2, &mk), 1);
	cr_expect(mk);
	make(b, 1, &k2);
	for (uint32_t e = 2; e < MAX_EVENTS; e++) {
		struct event_key k = key_of(PERF_TYPE_SOFTWARE, 100 + e, 0);

		cr_expect_eq(counted_event_index(b, &k, &mk), e);
		make(b, e, &k);
	}
	struct event_key more = key_of(PERF_TYPE_SOFTWARE, 99, 0);

	cr_expect_eq(counted_event_index(b, &more, &mk), MAX_EVENTS,
		     "every index taken");
	cr_expect_eq(counted_event_index(b, &k2, &mk), 1);
	cr_expect_not(mk);
	free(b);
}

Test(counted, an_event_made_again_keeps_nothing_of_the_last)
{
	struct books *b = new_books();
	struct event_key k = key_of(PERF_TYPE_SOFTWARE, 3, 0);
	struct books_event *be = &b->events[2];

	be->refs = 5;
	be->cpus[0] = ~0ull;
	be->state = EVENT_LIVE;
	counted_event_making(be, &k);
	cr_expect_eq(be->state, EVENT_MAKING, "a maker that dies leaves this");
	cr_expect_eq(be->refs, 0);
	cr_expect(!memcmp(&be->key, &k, sizeof(k)));
	for (int cpu = 0; cpu < MAX_CPUS; cpu++)
		cr_expect_not(books_event_on_cpu(be, cpu), "cpu %d", cpu);
	counted_event_opened(be, 1);
	counted_event_opened(be, 130);
	for (int cpu = 0; cpu < MAX_CPUS; cpu++)
		cr_expect_eq(books_event_on_cpu(be, cpu),
			     cpu == 1 || cpu == 130, "cpu %d", cpu);
	free(b);
}

Test(counted, event_refs_over_two_contexts)
{
	struct books *b = new_books();
	struct event_key k = key_of(PERF_TYPE_SOFTWARE, 3, 0);
	uint32_t la[MAX_EVENTS] = {0}, lb[MAX_EVENTS] = {0};

	make(b, 3, &k);
	cr_expect(counted_hold_event(b, la, 3), "a's first: it costs");
	cr_expect_not(counted_hold_event(b, la, 3));
	cr_expect(counted_hold_event(b, lb, 3), "b's first");
	cr_expect_eq(b->events[3].refs, 3);
	cr_expect_eq(la[3], 2);
	cr_expect_eq(counted_release_event(b, la, 3), 0);
	cr_expect_eq(counted_release_event(b, la, 3), COUNTED_LOCAL_LAST,
		     "a is done, b still counts");
	cr_expect_eq(counted_release_event(b, lb, 3),
		     COUNTED_LOCAL_LAST | COUNTED_LAST, "the last of all");
	cr_expect_eq(b->events[3].refs, 0);
	free(b);
}

Test(counted, slots_one_a_cgroup_fresh_then_recycled)
{
	struct books *b = new_books();
	bool fresh;
	uint32_t s;

	cr_expect_eq(counted_hold_slot(b, SLOTS, 10), FIFO_NONE);
	cr_expect_not(counted_slot_recycles(b, SLOTS));
	s = counted_claim_slot(b, SLOTS, 10, &fresh);
	cr_expect_eq(s, 0);
	cr_expect(fresh);
	cr_expect_eq(b->slots[0].id, 10, "in the books before the map");
	cr_expect_eq(b->slots[0].refs, 0, "with no ref till it counts");
	counted_slot_counted(b, SLOTS, s, fresh, true);
	cr_expect_eq(b->slots[0].refs, 1);
	cr_expect_eq(counted_hold_slot(b, SLOTS, 10), 0, "shared");
	cr_expect_eq(b->slots[0].refs, 2);
	for (uint64_t id = 11; id < 11 + SLOTS - 1; id++) {
		s = counted_claim_slot(b, SLOTS, id, &fresh);
		cr_expect_eq(s, id - 10);
		counted_slot_counted(b, SLOTS, s, fresh, true);
	}
	cr_expect_not(counted_slot_recycles(b, SLOTS), "none freed yet");
	cr_expect_eq(counted_claim_slot(b, SLOTS, 20, &fresh), FIFO_NONE,
		     "full");
	/* Slot 2 (id 12) put, then slot 0's two refs. */
	cr_expect(counted_release_slot(b, 2), "its only ref");
	books_give_slot(b, SLOTS, 2, false); /* as counted_free_slot */
	cr_expect_not(counted_release_slot(b, 0));
	cr_expect(counted_release_slot(b, 0));
	books_give_slot(b, SLOTS, 0, false);
	cr_expect(counted_slot_recycles(b, SLOTS), "a flush must come first");
	cr_expect_eq(counted_hold_slot(b, SLOTS, 12), FIFO_NONE);
	s = counted_claim_slot(b, SLOTS, 21, &fresh);
	cr_expect_eq(s, 2, "the longest freed");
	cr_expect_not(fresh);
	counted_slot_counted(b, SLOTS, s, fresh, true);
	cr_expect_eq(counted_hold_slot(b, SLOTS, 21), 2);
	free(b);
}

Test(counted, a_slot_the_map_refused_goes_back)
{
	struct books *b = new_books();
	bool fresh;
	uint32_t s;

	s = counted_claim_slot(b, SLOTS, 10, &fresh);
	counted_slot_counted(b, SLOTS, s, fresh, false);
	cr_expect_eq(b->slots_used, 0, "a fresh one: not even on the list");
	cr_expect_eq(counted_hold_slot(b, SLOTS, 10), FIFO_NONE);
	cr_expect_eq(counted_claim_slot(b, SLOTS, 11, &fresh), 0);
	cr_expect(fresh);
	free(b);
}

Test(counted, task_entries_with_refs_by_event)
{
	struct books *b = new_books();
	struct books_task mine = {
		.start_ticks = 5, .id = 77, .kind = LINK_TGID};
	struct books_task kids = mine;
	bool fresh, reused;
	uint32_t t, u;

	kids.inherit = TARGET_INHERIT;
	t = counted_task_for(b, &mine, &fresh, &reused);
	cr_expect_eq(t, 0);
	cr_expect(fresh);
	cr_expect_not(reused);
	counted_enter_task(b, t, &mine);
	cr_expect_eq(b->tasks_used, 1);
	b->tasks[t].refs[1] = 2; /* as counted_get_task, once counted */
	b->tasks[t].refs[4] = 1;
	cr_expect_eq(counted_task_for(b, &mine, &fresh, &reused), t);
	cr_expect_not(fresh);
	u = counted_task_for(b, &kids, &fresh, &reused);
	cr_expect(fresh, "with its children: another target");
	cr_expect_eq(u, 1);
	cr_expect_eq(counted_release_task(b, t, 1), TASK_HELD);
	cr_expect_eq(counted_release_task(b, t, 1), TASK_EVENT_GONE,
		     "event 1's total goes, the entry stays for event 4");
	cr_expect_eq(counted_release_task(b, t, 4), TASK_GONE);
	counted_leave_task(b, t);
	cr_expect_eq(b->tasks_used, 0);
	cr_expect_eq(b->tasks[t].id, 0);
	/* Entry 0 has served: a CPU may still hold its index. */
	b->next_task = 0;
	t = counted_task_for(b, &mine, &fresh, &reused);
	cr_expect_eq(t, 0);
	cr_expect(fresh);
	cr_expect(reused, "the caller flushes first");
	free(b);
}

Test(counted, slots_fit_the_totals_budget)
{
	uint32_t last = UINT32_MAX;

	shpmu__bpf_max_slots = 0;
	for (uint32_t cpus = 1; cpus <= MAX_CPUS; cpus *= 2) {
		uint32_t n = counted_max_slots(cpus);
		uint64_t bytes =
			(uint64_t)n * cpus * sizeof(struct slot_totals);

		cr_expect_leq(n, MAX_SLOTS);
		cr_expect_leq(n, last, "fewer on more CPUs");
		/* 64 MiB of totals, the budget, unless that is below the
		 * least slots the program ever gets. */
		cr_expect(bytes <= (64u << 20) ||
				  n == counted_max_slots(MAX_CPUS),
			  "%u cpus: %u slots, %llu bytes", cpus, n,
			  (unsigned long long)bytes);
		last = n;
	}
	cr_expect_lt(counted_max_slots(MAX_CPUS), MAX_SLOTS);
	cr_expect_eq(counted_max_slots(1), MAX_SLOTS);
	shpmu__bpf_max_slots = 4;
	cr_expect_eq(counted_max_slots(1), 4, "a test's own limit");
	shpmu__bpf_max_slots = 0;
}
