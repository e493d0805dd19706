// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "auto_rule.h"

bool auto_stays_classic(uint64_t held, uint32_t ncpus, uint32_t online)
{
	return held + ncpus <= (uint64_t)AUTO_BPF_OWN_FDS + online;
}

uint32_t auto_crossover(uint32_t online)
{
	/* The first n with n * online > AUTO_BPF_OWN_FDS + online. */
	return online ? AUTO_BPF_OWN_FDS / online + 2 : 1;
}
