/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A userspace model of hardware PMUs, for tests. Built only with
 * -Dpmu_model=true (HAVE_PMU_MODEL), which meson refuses to install.
 *
 * The model is a syscall table (struct shpmu_sys_ops) over the kernel's:
 * perf_event_open of a hardware event (PERF_TYPE_HARDWARE, HW_CACHE, RAW
 * or one of the model's own PMU types) makes a model event behind a real
 * fd (an eventfd), whose read(2), ioctl(2) and close(2) the model serves;
 * every other event and call goes to the kernel. It also answers reads of
 * the sysfs files that describe its PMUs (type, cpus, caps/num_counters,
 * caps/num_fixed_counters) and of /proc/sys/kernel/nmi_watchdog.
 *
 * What it models, per scheduling domain (each CPU, and one domain for
 * every task event with cpu -1, as if each counted task ran alone):
 *   - K general counters and F fixed ones (fixed 0: instructions, 1:
 *     cycles, 2: ref-cycles; those generic events also fit a general
 *     counter); a raw event's config bits 32..39, when non-zero, are the
 *     mask of general counters it may use (a constraint);
 *   - the NMI watchdog, when on, holding one general counter;
 *   - pinned groups first, then flexible groups in list order until one
 *     does not fit (as the kernel stops at the first); groups go on all
 *     or nothing; an exclusive group goes on only alone;
 *   - a pinned group that does not fit goes to error state: read(2)
 *     returns 0 bytes until PERF_EVENT_IOC_ENABLE brings it back;
 *   - every rotate_ms of model time, when some flexible group is off, the
 *     first flexible group moves to the list's tail;
 *   - time_enabled advancing while enabled, time_running while on a
 *     counter; the count rises by pmu_model_rate() per ns running;
 *   - hybrid: two PMUs, the first over the first CPUs ("cpu_core"), the
 *     second over the rest ("cpu_atom"). A generic event's config bits
 *     32..63 name the PMU type (Linux 6.0's extended type); a CPU event
 *     on a CPU of another PMU fails with ENOENT; without an extended type
 *     a CPU event goes to its CPU's PMU, a task event to the first PMU.
 *
 * The model is one per process, as the hardware is one per machine: two
 * contexts of a process compete for its counters.
 *
 * Details, as the kernel does unless said otherwise:
 *   - each change (open, close, ioctl, rotation) puts a domain's groups
 *     on again from scratch (ctx_resched), fixed counters preferred, an
 *     event moved to another counter where that lets the next one fit;
 *     in each pass (pinned, then flexible) no group goes on after one
 *     that did not fit, so a pinned group after a failed one fails too;
 *   - the watchdog holds the last general counter of every domain;
 *   - simplified: an exclusive group goes on only when no other group is
 *     on in its domain (pinned ones included), and then alone;
 *   - rotation moves the first flexible group that is on (none on: the
 *     first enabled one) to the tail, at each multiple of rotate_ms since
 *     configure, in every domain where an enabled flexible group is off;
 *   - a closed leader's members become groups of their own at the list's
 *     tail and go on counting (perf_group_detach);
 *   - a member's own PERF_EVENT_IOC_DISABLE keeps it off while its group
 *     runs; with PERF_IOC_FLAG_GROUP an ioctl reaches the leader and every
 *     member, from any member's fd; RESET zeroes the count, not the times;
 *   - errors: EINVAL for a CPU past the model's CPUs, pid -1 with cpu -1,
 *     unknown flags or read_format bits, a bad generic config, a group
 *     that could never fit an empty PMU, a member with pinned/exclusive,
 *     a group across domains, a model event joining a kernel (software)
 *     leader or the other way round; ENODEV for an offline CPU; ESRCH for
 *     a pid with no /proc entry; ENOENT for an extended type the model
 *     does not have or a CPU of the other PMU; ENOSPC for a read(2)
 *     buffer smaller than the layout;
 *   - model time is not CPU time: a task event counts while it is on a
 *     counter whether its task runs or sleeps, and a CPU event whatever
 *     runs there; PERF_FLAG_PID_CGROUP makes a CPU event that counts all
 *     the time (the model runs no cgroups); a task event with a CPU
 *     counts in the task domain (the CPU only picks the PMU); inherit
 *     and enable_on_exec are accepted and ignored;
 *   - ioctls: val's bits other than PERF_IOC_FLAG_GROUP are ignored (as
 *     the kernel's); sampling ones (REFRESH, PERIOD, SET_OUTPUT,
 *     SET_FILTER, SET_BPF, ...) give EINVAL, unknown ones ENOTTY;
 *   - E2BIG for attr.size under PERF_ATTR_SIZE_VER0; bytes past the
 *     struct this build knows are not looked at;
 *   - files: only absolute paths spelled exactly; a file opens read-only
 *     as a sealed memfd (a write open: EACCES); the PMU directories and
 *     caps/ answer fstatat/statx as directories, but opening or listing
 *     them goes to the kernel; "cpus" is served for the plain "cpu" PMU
 *     too;
 *   - an fd closed behind the table's back (a raw close(2)) stays a model
 *     event until the number is closed through the table.
 */
#ifndef SHPMU_PMU_MODEL_H
#define SHPMU_PMU_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct shpmu_sys_ops;

/* The model's PMU types: a plain model has one PMU ("cpu"), a hybrid one
 * two ("cpu_core", "cpu_atom"). */
#define PMU_MODEL_TYPE_FIRST   65536u
#define PMU_MODEL_MAX_PMUS     2
#define PMU_MODEL_MAX_COUNTERS 32
#define PMU_MODEL_MAX_FIXED    3

/* Events a model event counts per ns it runs: 1 + (config & 7) for a
 * generic, raw or model event (cycles 1, instructions 2, ...). */
static inline uint64_t pmu_model_rate(const struct perf_event_attr *attr)
{
	return 1 + (attr->config & 7);
}

/*
 * Configures the process's model from a spec, the same text as
 * SHPMU_PMU_MODEL:
 *   counters=K        general counters per CPU (1..32; default 4)
 *   fixed=F           fixed counters per CPU (0..3; default 3)
 *   rotate_ms=T       rotation period (default 4)
 *   watchdog=0|1      the NMI watchdog holds a counter (default 0)
 *   clock=real|manual model time follows CLOCK_MONOTONIC, or moves only
 *                     with shpmu__pmu_model_advance() (default real)
 *   hybrid=core:K1+atom:K2  two PMUs with K1 and K2 general counters
 *                     (1..32 each), the first over the first half of
 *                     the online CPUs (at least one), the second over the
 *                     rest; not with counters=
 * rotate_ms is 1..60000. Fields are separated by commas, in any order,
 * each at most once; "" is every default. Contexts made after this
 * call count hardware events on the model. 0, -EINVAL (a bad spec) or
 * -EBUSY (model events are open).
 */
int shpmu__pmu_model_configure(const char *spec);
/* Switches the model off for contexts made from now on; -EBUSY while
 * model events are open. */
int shpmu__pmu_model_off(void);
/* Moves a manual clock on by ns, rotating at each period's end. */
void shpmu__pmu_model_advance(uint64_t ns);

/* What the model knows of one of its fds. */
enum pmu_model_state {
	PMU_MODEL_OFF,	   /* disabled */
	PMU_MODEL_WAITING, /* enabled, not on a counter */
	PMU_MODEL_RUNNING, /* enabled, on a counter */
	PMU_MODEL_ERROR,   /* pinned, could not go on */
};

struct pmu_model_truth {
	uint64_t value, time_enabled, time_running;
	enum pmu_model_state state;
	uint32_t pmu_type; /* the model PMU it is on */
	int cpu;	   /* -1: the task domain */
};

/* 0, or -EBADF when fd is not a model event. */
int shpmu__pmu_model_truth(int fd, struct pmu_model_truth *t);
/* Counters in use on a CPU's domain (-1: the task domain) of a model PMU
 * type, the watchdog's included; -EINVAL for an unknown type or CPU. */
int shpmu__pmu_model_counters_in_use(uint32_t type, int cpu);
/* Model events open in the process. */
unsigned int shpmu__pmu_model_events_open(void);

/* For shpmu_new: the model's table when it is configured (by the calls
 * above, or by SHPMU_PMU_MODEL in the environment at the first
 * shpmu_new), else NULL. */
const struct shpmu_sys_ops *pmu_model_ops(void);

#endif
