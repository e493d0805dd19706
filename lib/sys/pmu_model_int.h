/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Inside the PMU model (pmu_model*.c): its state and the parts' calls.
 *
 * pmu_model_api.c: the process's model, its configuration and the syscall
 * table; pmu_model_spec.c: the spec's parser; pmu_model_event.c: opening,
 * reading, ioctls and closing of model events; pmu_model_sched.c:
 * counters, scheduling, rotation and time; pmu_model_fs.c: the sysfs and
 * /proc files it serves.
 *
 * Every function here runs under the model's one mutex (pmu_model_api.c),
 * except the spec parser, which touches no state.
 */
#ifndef SHPMU_PMU_MODEL_INT_H
#define SHPMU_PMU_MODEL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "sys/pmu_model.h"

struct stat;
struct statx;

/* General counters first, then the fixed ones. */
#define PM_SLOTS (PMU_MODEL_MAX_COUNTERS + PMU_MODEL_MAX_FIXED)

struct pm_config {
	unsigned int npmus;
	unsigned int counters[PMU_MODEL_MAX_PMUS];
	unsigned int fixed;
	uint64_t rotate_ns;
	bool watchdog;
	bool manual;
};

/* An event's own state; whether it runs is pm_event.on. */
enum pm_st { PM_OFF, PM_ENABLED, PM_ERROR };

struct pm_domain;

struct pm_event {
	int fd;
	uint64_t id;
	struct perf_event_attr attr;
	struct pm_domain *dom;
	/* Itself for a leader. */
	struct pm_event *leader;
	/* A leader's members in the order they joined, and a member's next. */
	struct pm_event *sibs, *next_sib;
	uint32_t nr_sibs;
	/* A leader's place in its domain's list of groups. */
	struct pm_event *prev, *next;
	enum pm_st st;
	bool on;
	uint64_t value, time_enabled, time_running;
};

struct pm_domain {
	unsigned int pmu; /* index into the config's PMUs */
	int cpu;	  /* -1: the task domain */
	/* The groups (their leaders) in schedule order. */
	struct pm_event *head, *tail;
	/* Who holds each counter: NULL, an event, or &pm_watchdog. */
	struct pm_event *owner[PM_SLOTS];
};

struct pm_model {
	bool on;
	struct pm_config cfg;
	/* CPUs 0..ncpus-1 may exist; online[] says which do. */
	int ncpus;
	bool *online;
	/* The PMU index of each CPU (hybrid: the first half is core). */
	unsigned int *pmu_of_cpu;
	/* npmus * (ncpus + 1): per PMU, the task domain then each CPU. */
	struct pm_domain *domains;
	/* Model time (ns since configure), and the real clock's start. */
	uint64_t now, manual_now, epoch;
	uint64_t next_id;
	unsigned int nevents;
	/* fd -> event. */
	struct pm_event **by_fd;
	size_t by_fd_len;
};

extern struct pm_model pm;
/* The watchdog's mark in a domain's owner[]. */
extern struct pm_event pm_watchdog;

/* pmu_model_spec.c: 0 or -EINVAL. */
int pm_spec_parse(const char *spec, struct pm_config *cfg);

/* pmu_model_sched.c */
struct pm_domain *pm_domain_of(unsigned int pmu, int cpu);
/* Whether e may use counter slot on its PMU (general or fixed). */
bool pm_slot_fits(const struct pm_event *e, unsigned int slot);
/* Whether leader's group, with extra joining it (or NULL), fits an
 * empty PMU: what perf_event_open checks. */
bool pm_group_can_ever_fit(const struct pm_event *leader,
			   const struct pm_event *extra);
/* Puts a domain's groups on its counters again, from scratch. */
void pm_domain_schedule(struct pm_domain *d);
/* The clock's reading: model time as it should be now. */
uint64_t pm_clock_now(void);
/* Brings model time (and every count) up to the clock. */
void pm_catch_up(void);
/* Moves model time to t, rotating at each period's end. */
void pm_advance_to(uint64_t t);
/* Counters held in a domain. */
unsigned int pm_domain_in_use(const struct pm_domain *d);

/* pmu_model_event.c: the table's calls for model fds (-1, errno set). */
struct pm_event *pm_event_of_fd(int fd);
bool pm_is_model_type(uint32_t type);
int pm_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
		  int group_fd, unsigned long flags);
ssize_t pm_event_read(struct pm_event *e, void *buf, size_t len);
int pm_event_ioctl(struct pm_event *e, unsigned long request,
		   unsigned long val);
void pm_event_close(struct pm_event *e);
/* Bytes read(2) of e fills: the kernel's layouts. */
size_t pm_read_size(const struct pm_event *e);

/* pmu_model_fs.c: 1 with *fd (or *st) when the model serves path, 0 when
 * it does not (the kernel does), or -errno. */
int pm_fs_open(const char *path, int flags, int *fd);
int pm_fs_stat(const char *path, struct stat *st);
int pm_fs_statx(const char *path, unsigned int mask, struct statx *stx);
/* The sysfs directory name of a PMU index. */
const char *pm_pmu_name(unsigned int pmu);

#endif
