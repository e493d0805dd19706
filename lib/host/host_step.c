// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "host/host_step.h"

#include <signal.h>

uint32_t shpmu__host_kill_at;
void (*shpmu__host_step_hook)(void);

void host_step(void)
{
	void (*hook)(void) = shpmu__host_step_hook;

	if (hook)
		hook();
	uint32_t left = __atomic_load_n(&shpmu__host_kill_at, __ATOMIC_RELAXED);

	if (left &&
	    __atomic_sub_fetch(&shpmu__host_kill_at, 1, __ATOMIC_RELAXED) == 0)
		raise(SIGKILL);
}
