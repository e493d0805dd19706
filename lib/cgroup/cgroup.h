/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Cgroups by path and by id (cgroup_id.h says what an id is), under the
 * root a context counts on, with path safety and the walk cache for
 * contexts without CAP_DAC_READ_SEARCH.
 */
#ifndef SHPMU_CGROUP_H
#define SHPMU_CGROUP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/cgroup_walk.h"

struct shpmu;

struct cgroups {
	char *root; /* canonical absolute path; NULL: no cgroups here */
	size_t root_len;
	int root_fd;	 /* the root directory; -1 without one */
	int handle_type; /* the file system's file-handle type */
	bool v2;
	pthread_mutex_t lock; /* walked and by_walk */
	bool by_walk;	      /* open_by_handle_at was refused: walk instead */
	struct cgroup_path_map walked;
};

/* root: the caller's opts.cgroup_root, or NULL to discover one. Finding no
 * cgroup mount is not an error (cgroup calls then fail with -ENOENT); a
 * caller-given root that is not a cgroup directory is. */
int cgroups_init(struct shpmu *pmu, struct cgroups *cg, const char *root);
void cgroups_fini(struct shpmu *pmu, struct cgroups *cg);

/* Opens the cgroup directory named by path (absolute under the root, or
 * relative to it) for perf_event_open, and gives its id. -EINVAL for ".."
 * or a symlink, -EXDEV for an absolute path outside the root, -ENOENT,
 * -ENOTDIR (a cgroup's file), -ENAMETOOLONG. */
int cgroup_open_path(struct shpmu *pmu, struct cgroups *cg, const char *path,
		     int *fd, uint64_t *id);
/* Opens the cgroup directory with this id: -ENOENT if there is none. */
int cgroup_open_id(struct shpmu *pmu, struct cgroups *cg, uint64_t id, int *fd);

/* The absolute path of the cgroup directory open as fd into buf: -ENOENT
 * if it was removed or lies outside the root, -ERANGE. */
int cgroup_fd_path(struct shpmu *pmu, const struct cgroups *cg, int fd,
		   char *buf, size_t len);
/* The root into buf: -ENOENT without one, -ERANGE. */
int cgroup_root_copy(struct shpmu *pmu, const struct cgroups *cg, char *buf,
		     size_t len);

#endif
