// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/key.h"
#include "core/task.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* Where config3 lives in PERF_ATTR_SIZE_VER8 layouts. */
#define ATTR_CONFIG3_OFFSET 128

/* The key bits and the attr bitfields they come from. */
#define KEY_BITS(X)                                                            \
	X(KEY_INHERIT, inherit)                                                \
	X(KEY_PINNED, pinned)                                                  \
	X(KEY_EXCLUSIVE, exclusive)                                            \
	X(KEY_EXCLUDE_USER, exclude_user)                                      \
	X(KEY_EXCLUDE_KERNEL, exclude_kernel)                                  \
	X(KEY_EXCLUDE_HV, exclude_hv)                                          \
	X(KEY_EXCLUDE_IDLE, exclude_idle)                                      \
	X(KEY_ENABLE_ON_EXEC, enable_on_exec)                                  \
	X(KEY_INHERIT_STAT, inherit_stat)                                      \
	X(KEY_EXCLUDE_HOST, exclude_host)                                      \
	X(KEY_EXCLUDE_GUEST, exclude_guest)                                    \
	X(KEY_INHERIT_THREAD, inherit_thread)                                  \
	X(KEY_REMOVE_ON_EXEC, remove_on_exec)

int key_from_attr(const struct perf_event_attr *attr, struct event_key *key,
		  bool *disabled, const char **why)
{
	unsigned char raw[SHPMU_ATTR_SIZE_KNOWN] = {0};
	struct perf_event_attr a;
	size_t size = attr->size;

	/* The kernel's own reading of size: 0 means the first ABI. */
	if (size == 0)
		size = PERF_ATTR_SIZE_VER0;
	if (size < PERF_ATTR_SIZE_VER0) {
		*why = "attr->size is smaller than PERF_ATTR_SIZE_VER0";
		return -EINVAL;
	}
	/* The kernel's own bound; it also keeps the scan below short. */
	if (size > (size_t)getpagesize()) {
		*why = "attr->size is larger than a page";
		return -E2BIG;
	}
	if (size > SHPMU_ATTR_SIZE_KNOWN &&
	    first_nonzero_byte(attr, SHPMU_ATTR_SIZE_KNOWN, size) < size) {
		*why = "attr has non-zero fields this libshpmu does not know";
		return -E2BIG;
	}
	memcpy(raw, attr,
	       size < SHPMU_ATTR_SIZE_KNOWN ? size : SHPMU_ATTR_SIZE_KNOWN);
	memcpy(&a, raw, sizeof(a));

	if (a.sample_period || a.freq) {
		*why = "sampling (sample_period/sample_freq) is not supported: "
		       "libshpmu counts";
		return -EOPNOTSUPP;
	}
	if (a.sigtrap) {
		*why = "sigtrap needs sampling, which libshpmu does not do";
		return -EOPNOTSUPP;
	}

	memset(key, 0, sizeof(*key));
	key->type = a.type;
	key->config = a.config;
	key->config1 = a.config1;
	key->config2 = a.config2;
	memcpy(&key->config3, raw + ATTR_CONFIG3_OFFSET, sizeof(key->config3));
	key->bp_type = a.bp_type;
	key->precise_ip = a.precise_ip;
#define X(bit, field)                                                          \
	if (a.field)                                                           \
		key->bits |= bit;
	KEY_BITS(X)
#undef X
	/* An event enabled from its open counts before the exec anyway:
	 * enable_on_exec changes nothing for it. */
	if (!a.disabled)
		key->bits &= ~KEY_ENABLE_ON_EXEC;
	*disabled = a.disabled;
	return 0;
}

void key_to_attr(const struct event_key *key, uint64_t read_format, void *buf)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = key->config3 ? SHPMU_ATTR_SIZE_KNOWN : sizeof(a);
	a.type = key->type;
	a.config = key->config;
	a.config1 = key->config1;
	a.config2 = key->config2;
	a.bp_type = key->bp_type;
	a.precise_ip = key->precise_ip;
	a.read_format = read_format;
	a.disabled = 1;
#define X(bit, field) a.field = !!(key->bits & bit);
	KEY_BITS(X)
#undef X
	memset(buf, 0, SHPMU_ATTR_SIZE_KNOWN);
	memcpy(buf, &a, sizeof(a));
	memcpy((unsigned char *)buf + ATTR_CONFIG3_OFFSET, &key->config3,
	       sizeof(key->config3));
}

/*
 * The CPU a target counts on, or -1 for every CPU (any, for a task), by
 * the rule of the caller's version: from 0.4 one CPU only with
 * SHPMU_TARGET_BIND_CPU, so that a zeroed target counts everywhere;
 * before, any cpu >= 0 was one CPU and flags was reserved.
 */
static int target_cpu(const struct shpmu_target *target, bool cpu_rule_0_3,
		      int *cpu, const char **why)
{
	bool bound = target->flags & SHPMU_TARGET_BIND_CPU;

	if (cpu_rule_0_3) {
		if (target->flags) {
			*why = "target: reserved fields are set (they must be "
			       "zero: zero-initialize the target)";
			return -EINVAL;
		}
		bound = target->cpu >= 0;
	} else if (target->flags & ~(uint32_t)SHPMU_TARGET_BIND_CPU) {
		*why = "target: unknown flags (SHPMU_TARGET_BIND_CPU is the "
		       "only one)";
		return -EINVAL;
	} else if (bound && target->cpu < 0) {
		*why = "target: SHPMU_TARGET_BIND_CPU needs cpu to be a CPU "
		       "(0 or more)";
		return -EINVAL;
	} else if (!bound && target->cpu != 0 &&
		   target->cpu != SHPMU_ALL_CPUS) {
		*why = "target: cpu is set without SHPMU_TARGET_BIND_CPU: set "
		       "the flag to count on that CPU alone (0 and "
		       "SHPMU_ALL_CPUS count on every CPU)";
		return -EINVAL;
	}
	if (!bound && target->cpu < -1) {
		*why = "target: cpu must be -1 (every CPU) or a CPU";
		return -EINVAL;
	}
	*cpu = bound ? target->cpu : -1;
	return 0;
}

int target_to_key(const struct shpmu_target *target, bool cpu_rule_0_3,
		  struct target_key *key, const char **why)
{
	int cpu, err;

	memset(key, 0, sizeof(*key));
	if (target->reserved32) {
		*why = "target: reserved fields are set (they must be zero: "
		       "zero-initialize the target)";
		return -EINVAL;
	}
	for (size_t i = 0;
	     i < sizeof(target->reserved) / sizeof(target->reserved[0]); i++)
		if (target->reserved[i]) {
			*why = "target: reserved fields are set (they must be "
			       "zero: zero-initialize the target)";
			return -EINVAL;
		}
	err = target_cpu(target, cpu_rule_0_3, &cpu, why);
	if (err)
		return err;
	key->kind = target->kind;
	key->cpu = cpu;
	switch (target->kind) {
	case SHPMU_TARGET_TASK:
		if (target->pid < 0) {
			*why = "task target: pid must be 0 (this thread) or a "
			       "tid/pid";
			return -EINVAL;
		}
		/* Two threads asking for "pid 0" mean two different tasks. */
		key->pid = target->pid ? target->pid : task_self();
		return 0;
	case SHPMU_TARGET_PROCESS:
		if (target->pid < 0) {
			*why = "process target: pid must be 0 (this process) "
			       "or a process id";
			return -EINVAL;
		}
		key->pid = target->pid ? target->pid : getpid();
		return 0;
	case SHPMU_TARGET_CPU:
		key->pid = -1;
		return 0;
	case SHPMU_TARGET_CGROUP:
		if (!target->cgroup_id && !target->cgroup_path) {
			*why = "cgroup target: set cgroup_id or cgroup_path";
			return -EINVAL;
		}
		/* The id goes in once the cgroup is resolved. */
		key->pid = -1;
		return 0;
	}
	*why = "unknown target kind";
	return -EINVAL;
}

/* Keys are a whole number of 64-bit words with explicit padding: mix them
 * a word at a time (a multiply and a shift each), then avalanche. */
uint64_t share_key_hash(const struct share_key *key)
{
	const unsigned char *p = (const unsigned char *)key;
	size_t words = share_key_size(key->nevents) / sizeof(uint64_t);
	uint64_t h = 0x9e3779b97f4a7c15ull, w;

	for (size_t i = 0; i < words; i++) {
		memcpy(&w, p + i * sizeof(w), sizeof(w));
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 29);
}

bool share_key_equal(const struct share_key *a, const struct share_key *b)
{
	return a->nevents == b->nevents &&
	       memcmp(a, b, share_key_size(a->nevents)) == 0;
}

bool event_key_is_plain_clock(const struct event_key *e)
{
	/* A clock counts time whatever it excludes (the exclude bits filter
	 * its samples only); one with any set is left to the kernel's
	 * times, as nothing is saved by reasoning about them. */
	return e->type == PERF_TYPE_SOFTWARE &&
	       (e->config == PERF_COUNT_SW_TASK_CLOCK ||
		e->config == PERF_COUNT_SW_CPU_CLOCK) &&
	       !(e->bits &
		 (KEY_EXCLUDE_USER | KEY_EXCLUDE_KERNEL | KEY_EXCLUDE_HV |
		  KEY_EXCLUDE_IDLE | KEY_EXCLUDE_HOST | KEY_EXCLUDE_GUEST));
}
