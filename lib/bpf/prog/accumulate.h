/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a counted set is credited with between two readings of one CPU's
 * event (counter, enabled, running): the arithmetic of a settle, apart
 * from everything that reads the kernel.
 *
 * It is shared: the program compiles it (clang -target bpf) and so does a
 * userspace unit test (tests/unit/test_accumulate.c), which checks it
 * against a model of multiplexing rotations, migrations, wraps and resets
 * that no kernel without a PMU makes. Hence only inline functions on
 * plain integers: no BPF helper, no libc.
 *
 * Each value only grows, so its change is the difference modulo 2^64 (a
 * wrap past 2^64 is an ordinary advance). A difference of 2^63 or more is
 * no advance (centuries at any rate): the value went back.
 *   - A counter goes back when it is reset (PERF_EVENT_IOC_RESET on any fd
 *     of the event): it counted the new reading since. (A reset after
 *     which it passed the last reading again cannot be told apart: what
 *     came before the reset is credited too.)
 *   - Times are never reset: times that went back come from a broken
 *     source, and nothing of that reading is credited.
 *   - Running above enabled is broken too (an event runs only while
 *     enabled): it is taken as the enabled time, so that every set's
 *     enabled >= running and scaling never shrinks a count.
 * The next change starts from the new reading in every case.
 */
#ifndef SHPMU_PROG_ACCUMULATE_H
#define SHPMU_PROG_ACCUMULATE_H

/* The program's types come from the kernel's BTF; userspace's from
 * <linux/types.h>, which switch_counter.h includes without them. */
#ifdef __bpf__
#include "vmlinux.h"
#endif
#include "bpf/prog/switch_counter.h"

/* Inlined in the program too: its maps' pointers stay in one function
 * for the verifier. */
#define ACC_INLINE static inline __attribute__((always_inline))

#define ACC_WENT_BACK (1ULL << 63) /* a difference this large: backwards */

/* The change of one value from prev to now, or went_back if it went back
 * (the caller decides what a value that went back is worth). */
ACC_INLINE __u64 acc_change(__u64 prev, __u64 now, int *went_back)
{
	__u64 change = now - prev;

	if (change >= ACC_WENT_BACK)
		*went_back = 1;
	return change;
}

/* What the set running on a CPU since its last reading prev is credited,
 * now that the CPU reads now, into delta; prev moves on to now. */
ACC_INLINE void acc_delta(struct counter_value *prev,
			  const struct counter_value *now,
			  struct counter_value *delta)
{
	int counter_back = 0, times_back = 0;
	__u64 counter = acc_change(prev->counter, now->counter, &counter_back);
	__u64 enabled = acc_change(prev->enabled, now->enabled, &times_back);
	__u64 running = acc_change(prev->running, now->running, &times_back);

	if (counter_back)
		counter = now->counter;
	if (times_back)
		counter = enabled = running = 0;
	if (running > enabled)
		running = enabled;
	delta->counter = counter;
	delta->enabled = enabled;
	delta->running = running;
	*prev = *now;
}

/* acc_delta() for a clock whose count is its time (KIND_CLOCK), from its
 * count alone: enabled and running change as the count does, and the
 * count's rules hold for all three. */
ACC_INLINE void acc_delta_clock(struct counter_value *prev, __u64 now,
				struct counter_value *delta)
{
	int counter_back = 0;
	__u64 counter = acc_change(prev->counter, now, &counter_back);

	if (counter_back)
		counter = now;
	delta->counter = delta->enabled = delta->running = counter;
	prev->counter = now;
	prev->enabled += counter;
	prev->running += counter;
}

/* Adds delta to a set's total that only this CPU writes. */
ACC_INLINE void acc_add(struct counter_value *total,
			const struct counter_value *delta)
{
	total->counter += delta->counter;
	total->enabled += delta->enabled;
	total->running += delta->running;
}

/* Adds delta to a total that several CPUs write at once (a process's
 * threads on several CPUs). */
ACC_INLINE void acc_add_shared(struct counter_value *total,
			       const struct counter_value *delta)
{
	__sync_fetch_and_add(&total->counter, delta->counter);
	__sync_fetch_and_add(&total->enabled, delta->enabled);
	__sync_fetch_and_add(&total->running, delta->running);
}

#endif
