// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Which core PMU, and which of its counters, an event uses (hw_pmus.h). */
#include <errno.h>

#include "core/cpus.h"
#include "core/hw_pmus.h"

#define EXT_SHIFT 32

static bool is_generic(const struct event_key *e)
{
	return e->type == PERF_TYPE_HARDWARE || e->type == PERF_TYPE_HW_CACHE;
}

bool hw_event_maybe(const struct event_key *e)
{
	return is_generic(e) || e->type == PERF_TYPE_RAW ||
	       e->type >= PERF_TYPE_MAX;
}

int hw_pmu_of_cpu(const struct hw_pmus *hw, int cpu)
{
	for (uint32_t i = 0; i < hw->n; i++)
		if (cpus_index(hw->pmu[i].cpus, hw->pmu[i].ncpus, cpu) >= 0)
			return (int)i;
	return -1;
}

static int pmu_of_type(const struct hw_pmus *hw, uint64_t type)
{
	for (uint32_t i = 0; i < hw->n; i++)
		if (hw->pmu[i].type == type)
			return (int)i;
	return -1;
}

int hw_pmu_of(const struct hw_pmus *hw, const struct event_key *e, int cpu,
	      int split_index)
{
	if (!hw->n)
		return -1;
	if (is_generic(e)) {
		if (e->config >> EXT_SHIFT)
			return pmu_of_type(hw, e->config >> EXT_SHIFT);
		if (cpu >= 0)
			return hw_pmu_of_cpu(hw, cpu);
		if (split_index >= 0 && (uint32_t)split_index < hw->n)
			return split_index;
		return 0;
	}
	if (e->type == PERF_TYPE_RAW)
		return 0;
	return pmu_of_type(hw, e->type);
}

bool hw_split(const struct hw_pmus *hw, const struct share_key *key)
{
	if (!hw || hw->n < 2)
		return false;
	for (uint32_t m = 0; m < key->nevents; m++)
		if (is_generic(&key->events[m]) &&
		    !(key->events[m].config >> EXT_SHIFT))
			return true;
	return false;
}

void hw_attr_for(const struct hw_pmus *hw, struct perf_event_attr *attr,
		 int cpu, int index)
{
	int p;

	if (!hw || hw->n < 2 ||
	    (attr->type != PERF_TYPE_HARDWARE &&
	     attr->type != PERF_TYPE_HW_CACHE) ||
	    attr->config >> EXT_SHIFT)
		return;
	p = cpu >= 0 ? hw_pmu_of_cpu(hw, cpu) : index;
	if (p >= 0 && (uint32_t)p < hw->n)
		attr->config |= (uint64_t)hw->pmu[p].type << EXT_SHIFT;
}

int hw_fixed_slot(const struct event_key *e)
{
	if (e->type != PERF_TYPE_HARDWARE)
		return -1;
	switch (e->config & 0xffffffffu) {
	case PERF_COUNT_HW_INSTRUCTIONS:
		return 0;
	case PERF_COUNT_HW_CPU_CYCLES:
		return 1;
	case PERF_COUNT_HW_REF_CPU_CYCLES:
		return 2;
	default:
		return -1;
	}
}
