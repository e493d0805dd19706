/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* CPU lists: the kernel's "0-3,8,10-11" format, and the online set. */
#ifndef SHPMU_CPUS_H
#define SHPMU_CPUS_H

struct shpmu;

/* More CPUs than any list may hold. */
#define CPUS_MAX 65536

/* Parses a CPU list into a sorted array of at most max CPUs. Returns the
 * number of CPUs, -EINVAL for malformed text, -E2BIG when it holds more. */
int cpus_parse(const char *text, int *cpus, int max);

/* The index of cpu in a sorted list of n CPUs, or -1. */
int cpus_index(const int *cpus, int n, int cpu);

/* 0 if cpu is online, else -EINVAL logged (or the error reading the
 * list). */
int cpus_check_online(struct shpmu *pmu, int cpu);

/* Reads /sys/devices/system/cpu/online into a malloc'd array. Returns the
 * number of CPUs or -errno. */
int cpus_online(struct shpmu *pmu, int **cpus);

/* Reads /sys/devices/system/cpu/possible into a malloc'd array: how many
 * CPUs, or -errno. */
int cpus_possible(struct shpmu *pmu, int **cpus);

/* How many CPUs /sys/devices/system/cpu/possible lists (what per-CPU BPF
 * maps hold, libbpf_num_possible_cpus), or -errno. */
int cpus_possible_count(struct shpmu *pmu);

#endif
