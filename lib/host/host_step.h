/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kill points for tests: the steps of a change of a host domain's books
 * (host*.c, counted.c, backend_bpf.c) where a test may have the process
 * die, to show that what a process killed anywhere leaves is reclaimed.
 */
#ifndef SHPMU_HOST_STEP_H
#define SHPMU_HOST_STEP_H

#include <stdint.h>

/* When shpmu__host_kill_at is non-zero, the process kills itself with
 * SIGKILL at that many steps. */
void host_step(void);
extern uint32_t shpmu__host_kill_at;
/* For tests: when set, called at every step (with the domain's lock
 * held), before the kill point. */
extern void (*shpmu__host_step_hook)(void);

#endif
