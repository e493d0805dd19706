/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* For tests, through the static library: what the BPF backend the choice
 * made counted of itself. The choice itself is declared in
 * core/backend.h. */
#ifndef SHPMU_BACKEND_CHOICE_H
#define SHPMU_BACKEND_CHOICE_H

#include <stdbool.h>
#include <stdint.h>

struct shpmu;

/* For tests: what the context's BPF program counted of itself (see
 * struct bpf_backend_counters), 0 without one. */
uint64_t shpmu__bpf_unseen_switches(const struct shpmu *pmu);
/* Settles that left a delta unattributed, after a flush of every CPU, so
 * that a switch hidden before the call is counted in it. */
uint64_t shpmu__bpf_unattributed_settles(const struct shpmu *pmu);
uint64_t shpmu__bpf_moves_settled(const struct shpmu *pmu);
uint64_t shpmu__bpf_task_map_bytes(const struct shpmu *pmu);
uint64_t shpmu__bpf_children_lost(const struct shpmu *pmu);
/* Whether the program settles at the scheduler tick (found its function). */
bool shpmu__bpf_sees_tick(const struct shpmu *pmu);

#endif
