/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A cgroup's id: what name_to_handle_at(2) puts in a cgroup directory's
 * file handle, which on cgroup2 is the directory's inode number, and what
 * BPF's bpf_get_current_cgroup_id() and PERF_SAMPLE_CGROUP report.
 */
#ifndef SHPMU_CGROUP_ID_H
#define SHPMU_CGROUP_ID_H

#include <fcntl.h>
#include <stdint.h>

struct shpmu;

/* kernfs file handles carry the 64-bit node id and nothing else. */
struct cgroup_handle {
	struct file_handle fh;
	uint64_t id;
};

/* The id of the cgroup directory open as fd: 0 or -errno. */
int cgroup_fd_id(struct shpmu *pmu, int fd, uint64_t *id);

#endif
