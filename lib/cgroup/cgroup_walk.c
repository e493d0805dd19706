// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "cgroup/cgroup_walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/cgroup_id.h"
#include "core/log.h"
#include "sys/sys.h"

/* Deeper than any real hierarchy; bounds the fds a walk holds at once. */
#define WALK_MAX_DEPTH 64

static void free_entry(struct hash_node *n)
{
	free(hash_entry(n, struct cgroup_path_entry, node));
}

void cgroup_path_map_clear(struct cgroup_path_map *map)
{
	hashtab_drain(&map->ids, free_entry);
	hashtab_fini(&map->ids);
}

const char *cgroup_path_map_find(const struct cgroup_path_map *map, uint64_t id)
{
	struct hash_node *n = hashtab_first(&map->ids, id);

	return n ? hash_entry(n, struct cgroup_path_entry, node)->path : NULL;
}

static int add(struct cgroup_path_map *map, uint64_t id, const char *path)
{
	size_t len = strlen(path) + 1;
	struct cgroup_path_entry *e = malloc(sizeof(*e) + len);

	if (!e)
		return -ENOMEM;
	memcpy(e->path, path, len);
	if (hashtab_insert(&map->ids, &e->node, id)) {
		free(e);
		return -ENOMEM;
	}
	return 0;
}

/* Walks the directory open as dir_fd (named rel), which it takes over. */
static int walk_dir(struct shpmu *pmu, int dir_fd, const char *rel, int depth,
		    struct cgroup_path_map *map)
{
	struct sys_dir dir;
	unsigned char type;
	const char *name;
	int err = sys_dir_from_fd(pmu, &dir, dir_fd), more;

	while (!err && (more = sys_dir_next(pmu, &dir, &name, &type)) != 0) {
		char *child;
		uint64_t id;
		int fd;

		if (more < 0) {
			err = more;
			break;
		}
		if (type != DT_DIR || !strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		if (asprintf(&child, "%s%s%s", rel, *rel ? "/" : "", name) <
		    0) {
			err = -ENOMEM;
			break;
		}
		fd = sys_openat(pmu, dir.fd, name,
				O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		if (fd < 0) {
			/* Removed while we walked, or not ours to read:
			 * skip it rather than lose the rest. */
			if (fd != -ENOENT && fd != -EACCES && fd != -EPERM)
				err = fd;
			free(child);
			continue;
		}
		err = cgroup_fd_id(pmu, fd, &id);
		if (!err)
			err = add(map, id, child);
		if (!err && depth + 1 < WALK_MAX_DEPTH)
			err = walk_dir(pmu, fd, child, depth + 1, map);
		else
			sys_close(pmu, fd);
		free(child);
	}
	sys_dir_close(pmu, &dir);
	return err;
}

int cgroup_walk(struct shpmu *pmu, int root_fd, struct cgroup_path_map *map)
{
	struct cgroup_path_map fresh = {0};
	uint64_t id;
	int fd, err;

	fd = sys_openat(pmu, root_fd, ".", O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	err = cgroup_fd_id(pmu, fd, &id);
	if (!err)
		err = add(&fresh, id, "");
	if (err) {
		sys_close(pmu, fd);
		cgroup_path_map_clear(&fresh);
		return err;
	}
	err = walk_dir(pmu, fd, "", 0, &fresh);
	if (err) {
		/* Keep what the last full walk found. */
		pr_warn(pmu, "cgroup walk failed: %s", strerror(-err));
		cgroup_path_map_clear(&fresh);
		return err;
	}
	cgroup_path_map_clear(map);
	*map = fresh;
	return 0;
}
