/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the BPF cgroup counter and its userspace side agree on. */
#ifndef SHPMU_CGROUP_COUNTER_H
#define SHPMU_CGROUP_COUNTER_H

#define MAX_EVENTS 8 /* distinct counting attrs */
#define MAX_CPUS   1024
#define MAX_SLOTS  16384 /* counted cgroups */
/* How deep the walk up a task's cgroups may go: far below any real
 * hierarchy; bpf_loop makes the depth cost nothing to verify. */
#define MAX_LEVELS	    65536
#define COUNTED_FILTER_SIZE 65536 /* a power of two */
#define CACHED_LEAVES	    8	  /* per CPU; a power of two */
#define CACHED_SLOTS                                                           \
	8 /* counted ancestors a cached leaf holds; a power of two */

/* How the program takes an event's count at a switch. */
enum counter_kind {
	KIND_READ = 0,		   /* the counter's delta */
	KIND_CONTEXT_SWITCHES = 1, /* 1 per switch */
	KIND_CGROUP_SWITCHES = 2,  /* 1 per switch to another cgroup */
};

#endif
