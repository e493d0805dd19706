/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The BPF switch counter (bpf/prog/) as one context sees it: loaded by the
 * context through its libbpf skeleton (process scope), or found pinned by
 * whichever process of a host domain loaded it (host scope, host_pins.c).
 * Either way the context holds fds of its maps and maps their memory:
 * flushes test-run the program on a CPU, reads copy the totals out of
 * memory. Three files implement it, one job each: prog_load.c makes the
 * program (open, load, attach), prog_lifecycle.c holds it in a context
 * (load or adopt, flush, unload), prog_maps.c reads and writes its maps.
 */
#ifndef SHPMU_COUNTER_PROG_H
#define SHPMU_COUNTER_PROG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/prog/switch_counter.h"
#include "host/pin_check.h"

struct shpmu;
struct switch_counter;
struct switch_counter__bss;

struct counter_prog {
	struct shpmu *pmu;	     /* whose syscall layer its maps go by */
	struct switch_counter *skel; /* process scope: the loaded program */
	int prog_fd;		     /* on_switch: what a flush test-runs */
	int events_fd;		     /* the per-CPU perf events */
	int slots_fd;		     /* counted cgroups: id -> slot */
	int links_fd;		     /* counted tasks: task_links */
	int task_totals_fd;	     /* their totals: task_totals */
	/* Mapped memory: the program's globals, each CPU's view, and the
	 * totals of max_slots slots on nr_cpus CPUs. */
	struct switch_counter__bss *bss;
	struct cpu_view *views;
	const struct slot_totals *totals;
	size_t bss_len, views_len, totals_len; /* what we mapped ourselves */
	uint32_t nr_cpus, max_slots;
	/* Held across every flush, and to change online: two flushes must
	 * not meet on one CPU (a flush of its own CPU runs with interrupts
	 * on), and a flush of every CPU is the barrier before an index or
	 * slot serves something else. Another process's flush may still
	 * meet ours: the program then asks us to try again. */
	pthread_mutex_t flush_lock;
	int *online, nonline; /* as last read: the CPUs a flush visits */
	bool told_unseen;     /* logged that the kernel hides switches */
};

/* The order of a program's fds: counter_prog_adopt's, the pins'. */
enum {
	PROG_FD,
	EVENTS_FD,
	SLOTS_FD,
	BSS_FD,
	VIEWS_FD,
	TOTALS_FD,
	LINKS_FD,
	TASK_TOTALS_FD,
	N_PROG_FDS,
};

/* Making the program (prog_load.c). */

/* The possible CPUs the per-CPU maps need room for: > 0, or -EOPNOTSUPP
 * logged (more than MAX_CPUS). */
int counter_prog_cpus(struct shpmu *pmu);

/* Loads and attaches the program with room for max_slots cgroups on
 * nr_cpus CPUs into *skel: 0, or -EOPNOTSUPP logged with why (no
 * privileges, a kernel that refuses it). Without ipi_hook only the moves
 * a task makes itself are settled when they happen, as where the kernel
 * has no csd tracepoints (for tests). */
int counter_prog_load_skel(struct shpmu *pmu, uint32_t nr_cpus,
			   uint32_t max_slots, bool ipi_hook,
			   struct switch_counter **skel);
/* Detaches and unloads what counter_prog_load_skel made (but not what is
 * pinned of it). */
void counter_prog_destroy_skel(struct switch_counter *skel);

/* The fds of a loaded skeleton's program and maps, in that order (the
 * skeleton keeps them), and its mapped globals. */
void counter_prog_skel_fds(const struct switch_counter *skel,
			   int fds[N_PROG_FDS]);
struct switch_counter__bss *
counter_prog_skel_bss(const struct switch_counter *skel);

/* What the maps pinned at each index but PROG_FD must be for this build,
 * sized for nr_cpus and max_slots, and the program's type. 0 or -errno. */
int counter_prog_shapes(uint32_t nr_cpus, uint32_t max_slots,
			struct map_shape shapes[N_PROG_FDS],
			uint32_t *prog_type);

/* The program in a context (prog_lifecycle.c). */

/* Process scope: loads the program for this context alone. */
int counter_prog_load(struct shpmu *pmu, uint32_t max_slots, bool ipi_hook,
		      struct counter_prog *p);

/* Host scope: takes the fds given (prog_fd, events_fd, slots_fd, links_fd,
 * task_totals_fd), maps the memory of the maps behind bss_fd, views_fd and
 * totals_fd (closing those fds), and checks that their sizes fit nr_cpus
 * and max_slots. 0 or -errno; on failure p holds nothing and every fd
 * given is closed. */
int counter_prog_adopt(struct shpmu *pmu, const int fds[N_PROG_FDS],
		       uint32_t nr_cpus, uint32_t max_slots,
		       struct counter_prog *p);

/* Gives back all p holds (nothing if it holds nothing: zeroed). */
void counter_prog_unload(struct counter_prog *p);

/* Re-reads the online CPUs (they may have come and gone). */
int counter_prog_refresh_online(struct shpmu *pmu, struct counter_prog *p);

/* Brings cpus[0 .. n), or every online CPU, up to now; logs, after the
 * first flush that finds any, that the tracepoint hides switches on this
 * machine. */
int counter_prog_flush_cpus(struct shpmu *pmu, struct counter_prog *p,
			    const int *cpus, uint32_t n);
int counter_prog_flush(struct shpmu *pmu, struct counter_prog *p);

/* Its maps (prog_maps.c). */

/* Copies, consistently (see struct cpu_view), event e's raw reading on
 * cpu, and when slot != UINT32_MAX the slot's total of it instead, with
 * the CPU's unattributed count of e (0 for a raw reading, which is
 * exact). */
int counter_prog_value(const struct counter_prog *p, int cpu, uint32_t e,
		       uint32_t slot, struct counter_value *out,
		       uint64_t *unattributed);
/* The CPU's unattributed totals of event e, consistently. */
int counter_prog_unattributed(const struct counter_prog *p, int cpu, uint32_t e,
			      struct counter_value *out);
/* The switches cpu made unseen by the program, and the time whose deltas
 * went unattributed there (cpu < nr_cpus). */
void counter_prog_cpu_unseen(const struct counter_prog *p, int cpu,
			     uint64_t *unseen, uint64_t *unattributed_ns);

/* Puts perf event fd in as event e on cpu, reading from base on. */
int counter_prog_set_event(struct counter_prog *p, uint32_t e, int cpu, int fd,
			   const struct counter_value *base);
/* Takes event e out on every CPU. */
void counter_prog_clear_event(struct counter_prog *p, uint32_t e);

/* The counter kind of event e (enum counter_kind). */
void counter_prog_set_kind(struct counter_prog *p, uint32_t e, uint8_t kind);
/* Has the program read event e from now on. */
void counter_prog_use_event(struct counter_prog *p, uint32_t e);

/* The program's filter of counted ids (COUNTED_FILTER_SIZE counts by the
 * id's low bits), and the bump that tells it the counted set changed. */
uint16_t *counter_prog_filter(struct counter_prog *p);
/* The same for the links: tids in its lower half, tgids in its upper
 * (task_filter_index(), TASK_FILTER_SIZE). */
uint32_t *counter_prog_task_filter(struct counter_prog *p);
void counter_prog_changed(struct counter_prog *p);

/* Counts cgroup id in slot, or stops counting it. */
int counter_prog_count_cgroup(struct counter_prog *p, uint64_t id,
			      uint32_t slot);
void counter_prog_uncount_cgroup(struct counter_prog *p, uint64_t id);

/* Links (kind, id), for the task that started at start_ticks, to target
 * as its TARGET_PLAIN or TARGET_INHERIT one (which). A link left by an
 * exited task with that id is replaced. -EBUSY when that place holds
 * another target (a child already counted through inheritance). */
int counter_prog_link_task(struct counter_prog *p, uint32_t kind, uint32_t id,
			   uint64_t start_ticks, int which, uint32_t target);
/* Takes target out of the link of (kind, id) and, when it may have
 * inherited links (children), out of every link. */
void counter_prog_unlink_target(struct counter_prog *p, uint32_t kind,
				uint32_t id, uint32_t target, bool children);
/* Makes target's total of event e, from zero; removes it. */
int counter_prog_add_task_total(struct counter_prog *p, uint32_t target,
				uint32_t e);
void counter_prog_del_task_total(struct counter_prog *p, uint32_t target,
				 uint32_t e);
/* Target's total of event e so far (the CPUs as last settled). */
int counter_prog_task_total(const struct counter_prog *p, uint32_t target,
			    uint32_t e, struct counter_value *out);
/* What the task targets' maps take of the kernel's memory now (their
 * memlock: entries, not room, as neither is preallocated). */
uint64_t counter_prog_task_bytes(const struct counter_prog *p);
/* Children of inherit targets that found no room for their link. */
uint64_t counter_prog_children_lost(const struct counter_prog *p);

/* Context switches the kernel made without running the program, on every
 * CPU; moves of a running task settled when they happened. */
uint64_t counter_prog_unseen(const struct counter_prog *p);
/* Settles that left a delta unattributed (on any CPU). */
uint64_t counter_prog_unattributed_settles(const struct counter_prog *p);
uint64_t counter_prog_moves(const struct counter_prog *p);
/* Whether the program knows the scheduler tick's function (tick_fn). */
bool counter_prog_sees_tick(const struct counter_prog *p);

/* Test knobs (set before a load; 0 in every library build): the program
 * skips the switch runs whose outgoing thread is skip_tid, and every
 * skip_every-th switch run of a CPU, as a kernel that hides switches
 * does. */
extern uint32_t shpmu__bpf_skip_tid, shpmu__bpf_skip_every;

#endif
