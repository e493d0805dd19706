/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * AUTO's rule for cgroup targets in process scope, as arithmetic alone
 * (tested without a kernel): lib/backend_choice.c keeps the counts and
 * acts on it.
 *
 * Per context switch the BPF backend costs less than classic cgroup
 * events from the first counted cgroup on, and neither cost moves with
 * the number of cgroups: shpmu-bench's ladder_classic_switch_overhead_N
 * and ladder_bpf_switch_overhead_N, 1.25-1.38 against 1.16-1.20 for N = 1
 * to 64 (switch_crossover_cgroups 1) on 2 vCPUs with no hardware PMU,
 * kernel 6.18. The kernel switches classic cgroup events only where the
 * cgroup changes, and then only those of the incoming cgroup, whatever
 * their number. What grows with the cgroups is classic's fds (and kernel
 * events): one per CPU for each cgroup and attr, where the BPF backend
 * holds one per CPU for each attr plus its program's and maps' own. And
 * only classic events are exact, cost no program load, and leave alone
 * the switches inside one cgroup, which the BPF program runs at too
 * (tax_counted_same_cgroup, 1.04-1.06 here).
 *
 * So AUTO counts a new cgroup kernel event classic while the context's
 * classic cgroup events, this one included, hold no more fds than the
 * BPF backend would for one attr; the next is the crossover, where the
 * program loads and counts it and every later one (those made classic
 * stay so until closed).
 */
#ifndef SHPMU_AUTO_RULE_H
#define SHPMU_AUTO_RULE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The fds the BPF backend holds of its own, beyond one perf event per
 * CPU per attr: shpmu-bench's bpf_backend_own_fds, 23 with lib/bpf/ as
 * of 0.4 on 2 vCPUs, kernel 6.18 (its programs, maps and links; 20 in
 * 0.3, before the tick check and the load's symbol lookup). Its
 * fd_crossover_cgroups (13 there) is auto_crossover() of the machine.
 * Re-measure after a change to lib/bpf/ that opens or closes a map or
 * link: build/shpmu-bench | grep -e own_fds -e crossover.
 */
#define AUTO_BPF_OWN_FDS 23

/* Whether AUTO counts a new cgroup kernel event of ncpus fds classic,
 * the context's classic cgroup events holding held fds, on a machine of
 * online CPUs. */
bool auto_stays_classic(uint64_t held, uint32_t ncpus, uint32_t online);

/* The crossover: which cgroup kernel event on every one of online CPUs,
 * counted from 1 with none closed, AUTO counts by BPF. */
uint32_t auto_crossover(uint32_t online);

#endif
