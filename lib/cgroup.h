/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Cgroups by path and by id. An id is the kernel's: what
 * name_to_handle_at(2) puts in a cgroup directory's file handle, which on
 * cgroup2 is the directory's inode number, and what BPF's
 * bpf_get_current_cgroup_id() and PERF_SAMPLE_CGROUP report.
 */
#ifndef SHPMU_CGROUP_H
#define SHPMU_CGROUP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cgroup_walk.h"

struct shpmu;

struct cgroups {
	char *root;	  /* canonical absolute path; NULL: no cgroups here */
	size_t root_len;
	int root_fd;	  /* the root directory; -1 without one */
	int handle_type;  /* the file system's file-handle type */
	bool v2;
	pthread_mutex_t lock; /* walked and by_walk */
	bool by_walk;	  /* open_by_handle_at was refused: walk instead */
	struct cgroup_path_map walked;
};

/* root: the caller's opts.cgroup_root, or NULL to discover one. Finding no
 * cgroup mount is not an error (cgroup calls then fail with -ENOENT); a
 * caller-given root that is not a cgroup directory is. */
int cgroups_init(struct shpmu *pmu, struct cgroups *cg, const char *root);
void cgroups_fini(struct shpmu *pmu, struct cgroups *cg);

/* The id of the cgroup directory open as fd. */
int cgroup_fd_id(struct shpmu *pmu, int fd, uint64_t *id);

/* Opens the cgroup directory named by path (absolute under the root, or
 * relative to it) for perf_event_open, and gives its id. -EINVAL for ".."
 * or a symlink, -EXDEV for an absolute path outside the root, -ENOENT. */
int cgroup_open_path(struct shpmu *pmu, const char *path, int *fd,
		     uint64_t *id);
/* Opens the cgroup directory with this id: -ENOENT if there is none. */
int cgroup_open_id(struct shpmu *pmu, uint64_t id, int *fd);

#endif
