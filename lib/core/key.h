/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The sharing key: what the kernel would count, reduced to the fields that
 * change the count. Two requests with equal keys share one kernel event, and
 * the kernel event is opened from the key alone, so every sharer gets
 * exactly what the key says.
 */
#ifndef SHPMU_KEY_H
#define SHPMU_KEY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <shpmu/shpmu.h>

/* The attr bits that are part of the key, in our own numbering so that the
 * key does not depend on the bitfield layout of the installed header. */
enum key_bit {
	KEY_INHERIT = 1u << 0,
	KEY_PINNED = 1u << 1,
	KEY_EXCLUSIVE = 1u << 2,
	KEY_EXCLUDE_USER = 1u << 3,
	KEY_EXCLUDE_KERNEL = 1u << 4,
	KEY_EXCLUDE_HV = 1u << 5,
	KEY_EXCLUDE_IDLE = 1u << 6,
	KEY_ENABLE_ON_EXEC = 1u << 7,
	KEY_INHERIT_STAT = 1u << 8,
	KEY_EXCLUDE_HOST = 1u << 9,
	KEY_EXCLUDE_GUEST = 1u << 10,
	KEY_INHERIT_THREAD = 1u << 11,
	KEY_REMOVE_ON_EXEC = 1u << 12,
};

/* One counter's identity. Padding is explicit so keys compare with memcmp. */
struct event_key {
	uint32_t type;
	uint32_t bits; /* enum key_bit */
	uint64_t config;
	uint64_t config1; /* also bp_addr */
	uint64_t config2; /* also bp_len */
	uint64_t config3;
	uint32_t bp_type;
	uint32_t precise_ip;
};

/* A target reduced to what the kernel sees. */
struct target_key {
	uint32_t kind; /* enum shpmu_target_kind */
	int32_t pid;   /* TASK: a real tid, PROCESS: a tgid, never 0; else -1 */
	int32_t cpu;   /* a CPU, or -1: any (TASK) / all online (CPU, CGROUP) */
	uint32_t pad;
	uint64_t cgroup_id;
};

/* Whether a target is a task's or a process's: counted wherever it runs,
 * and tied to the task that had its pid when it was opened. */
static inline bool target_is_task(const struct target_key *t)
{
	return t->kind == SHPMU_TARGET_TASK || t->kind == SHPMU_TARGET_PROCESS;
}

/* Largest attr layout this version understands (PERF_ATTR_SIZE_VER8, which
 * adds config3 after the 128 bytes the installed header may stop at). */
#define SHPMU_ATTR_SIZE_KNOWN 136

/* The first non-zero byte of p in [from, to), or to. A caller's struct
 * (an attr, opts) built against a newer header has bytes past what this
 * version knows: non-zero, they ask for what it cannot do. */
static inline size_t first_nonzero_byte(const void *p, size_t from, size_t to)
{
	const unsigned char *b = p;

	while (from < to && !b[from])
		from++;
	return from;
}

/*
 * Reduces a caller's attr to its key. Returns 0, -EINVAL (bad size),
 * -E2BIG (non-zero bytes past what we know) or -EOPNOTSUPP (sampling).
 * *disabled receives attr->disabled. why receives the reason on error.
 */
int key_from_attr(const struct perf_event_attr *attr, struct event_key *key,
		  bool *disabled, const char **why);

/*
 * The attr to open the kernel event with: always disabled (handles enable
 * it) and always reading both times. buf must hold SHPMU_ATTR_SIZE_KNOWN
 * bytes; config3 needs the larger layout.
 */
void key_to_attr(const struct event_key *key, uint64_t read_format, void *buf);

/* Validates a target and reduces it to its key: 0 or -EINVAL. A cgroup
 * target's id is left for the caller to resolve. cpu_rule_0_3: the
 * caller was built against 0.3 or earlier, whose cpu >= 0 is one CPU
 * and whose flags are reserved (target_cpu() in key.c). */
int target_to_key(const struct shpmu_target *target, bool cpu_rule_0_3,
		  struct target_key *key, const char **why);

/* The whole sharing key: a target and the events opened on it, more than
 * one for a group (a group shares only with an identical group). */
struct share_key {
	struct target_key target;
	uint32_t nevents;
	uint32_t pad;
	struct event_key events[];
};

/* Always a whole number of 64-bit words (share_key_hash reads words). */
static inline size_t share_key_size(uint32_t nevents)
{
	return sizeof(struct share_key) + nevents * sizeof(struct event_key);
}

uint64_t share_key_hash(const struct share_key *key);
_Static_assert(sizeof(struct share_key) % 8 == 0 &&
		       sizeof(struct event_key) % 8 == 0,
	       "keys are hashed a 64-bit word at a time");
bool share_key_equal(const struct share_key *a, const struct share_key *b);

/* Whether e is a software task-clock or cpu-clock with no exclude bit: it
 * counts exactly the ns it runs, so its count is its running time, and it
 * never multiplexes, so that is its enabled time too. */
bool event_key_is_plain_clock(const struct event_key *e);

#endif
