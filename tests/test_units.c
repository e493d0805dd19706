// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The parts that only compute, tested without a kernel (as libperf tests
 * its cpumap and threadmap parsers): CPU lists, the dup_count window
 * arithmetic, the registry's growth, handle generations running out, the
 * FIFO free list, sharing keys, and the generic event names.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include "core/cpus.h"
#include "core/fifo.h"
#include "core/handles.h"
#include "core/kevent.h"
#include "core/key.h"
#include "core/registry.h"
#include "core/window.h"
#include "names/names_generic.h"

Test(units, cpu_lists_parse_as_the_kernel_prints_them)
{
	int cpus[16];

	cr_assert_eq(cpus_parse("0-3,8,10-11\n", cpus, 16), 7);
	cr_expect_arr_eq(cpus, ((int[]){0, 1, 2, 3, 8, 10, 11}),
			 7 * sizeof(int));
	cr_expect_eq(cpus_parse("5", cpus, 16), 1);
	cr_expect_eq(cpus[0], 5);
	cr_expect_eq(cpus_index(cpus, 1, 5), 0);
	cr_expect_eq(cpus_parse("0-3,8,10-11", cpus, 16), 7);
	cr_expect_eq(cpus_index(cpus, 7, 10), 5);
	cr_expect_eq(cpus_index(cpus, 7, 9), -1);
}

Test(units, malformed_cpu_lists_are_refused)
{
	static const char *const bad[] = {"",	 "\n",	 "a",	 "3-1",
					  "1,0", "0,,1", "0-",	 "-1",
					  "0 1", "1,1",	 "70000"};
	int cpus[16];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(cpus_parse(bad[i], cpus, 16), -EINVAL, "'%s'",
			     bad[i]);
	cr_expect_eq(cpus_parse("0-16", cpus, 16), -E2BIG);
}

/* A kernel event of nfds sources and one count, for the window alone. */
static struct kevent *fake_event(uint32_t nfds)
{
	struct kevent *ev = calloc(1, sizeof(*ev) + sizeof(struct event_key));

	cr_assert(ev);
	ev->nfds = nfds;
	ev->nvals = KVAL_COUNT + 1;
	ev->key.nevents = 1;
	return ev;
}

Test(units, a_window_counts_only_while_enabled)
{
	struct kevent *ev = fake_event(2);
	struct handle h = {.ev = ev};
	/* Per source: enabled, running, count. */
	uint64_t t0[6] = {100, 100, 10, 200, 150, 20};
	uint64_t t1[6] = {150, 140, 15, 260, 190, 26};
	uint64_t t2[6] = {170, 150, 18, 290, 200, 30};
	struct shpmu_count sum, one;

	cr_assert_eq(window_alloc(&h), 0);
	window_start(&h, t0);
	window_apply_all(&h, t1); /* disabled: nothing moves */
	window_sum(&h, -1, &sum);
	cr_expect_eq(sum.value, 0);
	h.enabled = true;
	window_start(&h, t1);
	window_apply_all(&h, t2);
	window_sum(&h, -1, &sum);
	cr_expect_eq(sum.value, (18 - 15) + (30 - 26));
	cr_expect_eq(sum.time_enabled, (170 - 150) + (290 - 260));
	cr_expect_eq(sum.time_running, (150 - 140) + (200 - 190));
	window_sum(&h, 1, &one);
	cr_expect_eq(one.value, 4);
	window_clear(&h);
	window_sum(&h, -1, &sum);
	cr_expect_eq(sum.value, 0, "clear zeroes what was counted");
	window_apply_all(&h, t2);
	window_sum(&h, -1, &sum);
	cr_expect_eq(sum.value, 0, "and counts on from the last reading");
	window_free(&h);
	free(ev);
}

Test(units, a_source_that_goes_back_adds_nothing)
{
	struct kevent *ev = fake_event(1);
	struct handle h = {.ev = ev, .enabled = true};
	uint64_t t0[3] = {100, 100, 50}, back[3] = {90, 90, 40},
		 on[3] = {120, 120, 60};
	struct shpmu_count c;

	cr_assert_eq(window_alloc(&h), 0);
	cr_expect(window_is_single(&h));
	window_start(&h, t0);
	window_apply_sum_one(&h, back, &c);
	cr_expect_eq(c.value, 0, "no negative delta");
	window_apply_sum_one(&h, on, &c);
	cr_expect_eq(c.value, 20, "counted from the last reading");
	window_free(&h);
	free(ev);
}

Test(units, a_window_too_big_for_the_slot_is_allocated)
{
	struct kevent *ev = fake_event(64);
	struct handle h = {.ev = ev};

	cr_assert_eq(window_alloc(&h), 0);
	cr_expect_neq(h.state, h.inline_state);
	window_free(&h);
	free(ev);
}

static struct kevent *keyed_event(uint64_t config)
{
	struct kevent *ev = fake_event(1);

	ev->key.events[0].config = config;
	ev->node.hash = share_key_hash(&ev->key);
	return ev;
}

Test(units, the_registry_grows_and_finds_every_event)
{
	enum { N = 1000 };
	static struct kevent *evs[N];
	struct registry reg;
	size_t first_buckets;

	cr_assert_eq(registry_init(&reg), 0);
	first_buckets = reg.events.nbuckets;
	for (int i = 0; i < N; i++) {
		evs[i] = keyed_event((uint64_t)i);
		registry_insert(&reg, evs[i]);
	}
	cr_expect_gt(reg.events.nbuckets, first_buckets, "it grew");
	cr_expect_geq(reg.events.nbuckets, (size_t)N, "chains stay short");
	for (int i = 0; i < N; i++)
		cr_expect_eq(
			registry_find(&reg, &evs[i]->key, evs[i]->node.hash),
			evs[i]);
	for (int i = 0; i < N; i += 2)
		registry_remove(&reg, evs[i]);
	cr_expect_eq(reg.events.count, (size_t)N / 2);
	for (int i = 0; i < N; i++)
		cr_expect_eq(
			registry_find(&reg, &evs[i]->key, evs[i]->node.hash),
			i % 2 ? evs[i] : NULL);
	for (int i = 1; i < N; i += 2)
		registry_remove(&reg, evs[i]);
	cr_expect_eq(reg.events.count, 0);
	registry_fini(&reg);
	for (int i = 0; i < N; i++)
		free(evs[i]);
}

/* Opens and releases handles until slot 0 comes round again. */
static int open_and_release(struct handle_table *t, struct kevent *ev)
{
	struct handle tmp = {.ev = ev, .state = NULL};
	int index = handles_alloc(t), h;

	cr_assert_geq(index, 0);
	tmp.state = tmp.inline_state;
	h = handles_publish(t, (uint32_t)index, &tmp);
	cr_assert_eq(handle_lock(t, h), handles_slot(t, (uint32_t)index));
	handles_release(t, h);
	handle_unlock(t, h);
	return h;
}

Test(units, a_slot_whose_generations_are_spent_is_retired)
{
	struct kevent *ev = fake_event(1);
	struct handle_table t;
	int first = -1, last = -1;

	cr_assert_eq(handles_init(&t), 0);
	/* Every slot of the first chunk goes through all its generations,
	 * one after the other (the free list is FIFO). */
	for (uint32_t round = 0; round <= HANDLE_GEN_MASK; round++)
		for (uint32_t i = 0; i < HANDLE_CHUNK_SLOTS; i++) {
			int h = open_and_release(&t, ev);

			if (handle_index(h) == 0) {
				if (first < 0)
					first = h;
				last = h;
			}
		}
	cr_expect_eq(handle_gen(last), HANDLE_GEN_MASK,
		     "slot 0 ran through every generation");
	cr_expect_null(handle_lock(&t, first), "its first handle is stale");
	cr_expect_null(handle_lock(&t, last), "and its last one too");
	/* Retired: the next handles come from a new chunk. */
	int h = open_and_release(&t, ev);

	cr_expect_geq(handle_index(h), HANDLE_CHUNK_SLOTS);
	cr_expect_geq(h, 0, "handles stay non-negative");
	handles_fini(&t);
	free(ev);
}

static uint32_t links[8];

static uint32_t *link_of(void *owner, uint32_t i)
{
	return &((uint32_t *)owner)[i];
}

Test(units, the_free_list_hands_out_the_oldest_first)
{
	struct fifo f;

	fifo_init(&f);
	cr_expect(fifo_empty(&f));
	for (uint32_t i = 3; i < 6; i++)
		fifo_push(&f, i, link_of, links);
	cr_expect_eq(fifo_pop(&f, link_of, links), 3);
	fifo_push(&f, 1, link_of, links);
	cr_expect_eq(fifo_pop(&f, link_of, links), 4);
	cr_expect_eq(fifo_pop(&f, link_of, links), 5);
	cr_expect_eq(fifo_pop(&f, link_of, links), 1);
	cr_expect_eq(fifo_pop(&f, link_of, links), FIFO_NONE);
	cr_expect(fifo_empty(&f));
}

Test(units, equal_requests_have_equal_keys)
{
	struct perf_event_attr a = {.size = sizeof(a),
				    .type = PERF_TYPE_SOFTWARE,
				    .config = PERF_COUNT_SW_TASK_CLOCK};
	struct perf_event_attr b = a;
	union {
		struct share_key key;
		unsigned char bytes[sizeof(struct share_key) +
				    sizeof(struct event_key)];
	} ka = {0}, kb = {0};
	const char *why;
	bool disabled;

	b.disabled = 1;
	b.read_format = PERF_FORMAT_GROUP; /* not part of the key */
	ka.key.nevents = kb.key.nevents = 1;
	cr_assert_eq(key_from_attr(&a, &ka.key.events[0], &disabled, &why), 0);
	cr_assert_eq(key_from_attr(&b, &kb.key.events[0], &disabled, &why), 0);
	cr_expect(disabled);
	cr_expect(share_key_equal(&ka.key, &kb.key));
	cr_expect_eq(share_key_hash(&ka.key), share_key_hash(&kb.key));
	b.exclude_kernel = 1;
	cr_assert_eq(key_from_attr(&b, &kb.key.events[0], &disabled, &why), 0);
	cr_expect_not(share_key_equal(&ka.key, &kb.key));
	cr_expect_neq(share_key_hash(&ka.key), share_key_hash(&kb.key));
}

Test(units, generic_names_encode_as_libpfm4_does)
{
	struct perf_event_attr a;

	cr_assert_eq(names_generic_encode("task-clock", &a), 0);
	cr_expect_eq(a.type, PERF_TYPE_SOFTWARE);
	cr_expect_eq(a.config, PERF_COUNT_SW_TASK_CLOCK);
	cr_expect(a.exclude_hv && a.exclude_guest);
	cr_expect(!a.exclude_user && !a.exclude_kernel);
	cr_assert_eq(names_generic_encode("perf::CPU_CLOCK:u", &a), 0);
	cr_expect_eq(a.config, PERF_COUNT_SW_CPU_CLOCK);
	cr_expect(a.exclude_kernel && !a.exclude_user);
	cr_assert_eq(names_generic_encode("L1-dcache-load-misses", &a), 0);
	cr_expect_eq(a.type, PERF_TYPE_HW_CACHE);
	cr_expect_eq(a.config,
		     PERF_COUNT_HW_CACHE_L1D |
			     PERF_COUNT_HW_CACHE_OP_READ << 8 |
			     (uint64_t)PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
	cr_expect_eq(names_generic_encode("cs:x", &a), -EINVAL);
	cr_expect_eq(names_generic_encode("no-such-event", &a), -ENOENT);
}
