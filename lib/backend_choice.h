/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which backend counts a new kernel event, decided here and nowhere else:
 * the classic one, except for cgroup targets of one counting attr, which
 * opts.cgroup_backend sends to BPF (loaded at shpmu_new), to classic
 * events, or (AUTO) to BPF where it can work, loaded at the first cgroup
 * open outside the context lock; AUTO counts a cgroup past the BPF
 * backend's room the classic way. In host scope the context joins its
 * domain at shpmu_new and the domain's BPF backend counts cgroup2 and CPU
 * targets of one counting attr.
 */
#ifndef SHPMU_BACKEND_CHOICE_H
#define SHPMU_BACKEND_CHOICE_H

#include <stdint.h>

struct shpmu;
struct share_key;
struct kevent;

/* At shpmu_new: a BPF backend asked for is loaded now, a host domain
 * joined. 0, or -errno logged with why (-EOPNOTSUPP: BPF cannot work
 * here; host_join() for host scope's). */
int backend_choice_init(struct shpmu *pmu);
void backend_choice_fini(struct shpmu *pmu);

/* Before the context lock is taken for an open of key: makes the backend
 * it will want ready (AUTO's first cgroup open loads the program here, a
 * matter of tens of ms that no other call should wait for). A request
 * for a CPU that is not online gives -EINVAL (logged) before anything is
 * loaded for it; else 0. */
int backend_prepare(struct shpmu *pmu, const struct share_key *key);

/* Makes key's kernel event with its backend (context lock held), adding
 * its cost to the stats. 0 or -errno, logged. */
int backend_new_event(struct shpmu *pmu, const struct share_key *key,
		      uint64_t hash, int cgroup_fd, struct kevent **out);

/* For tests: what the context's BPF program counted of itself (see
 * struct bpf_backend_counters), 0 without one. */
uint64_t shpmu__bpf_unseen_switches(const struct shpmu *pmu);
/* Strays after a flush of every CPU, so that a switch hidden before the
 * call is counted in it. */
uint64_t shpmu__bpf_stray_switches(const struct shpmu *pmu);
uint64_t shpmu__bpf_moves_settled(const struct shpmu *pmu);
uint64_t shpmu__bpf_task_map_bytes(const struct shpmu *pmu);
uint64_t shpmu__bpf_children_lost(const struct shpmu *pmu);

#endif
