// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "host/pin_check.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "core/log.h"
#include "sys/sys.h"

int pin_get(struct shpmu *pmu, int dir_fd, const char *dir, const char *name,
	    uid_t owner)
{
	char self[64];
	struct stat st;
	int at, fd, err;

	/* The pin itself, not what a link there names: O_PATH opens it
	 * without reading it, O_NOFOLLOW refuses a symlink as the last
	 * component. */
	at = sys_openat(pmu, dir_fd, name, O_PATH | O_NOFOLLOW);
	if (at < 0) {
		err = at;
		pr_err(pmu, "host scope: cannot open %s/%s: %s", dir, name,
		       strerror(-err));
		return err;
	}
	err = sys_fstat(pmu, at, &st);
	if (err)
		goto out;
	if (!S_ISREG(st.st_mode) || st.st_uid != owner) {
		pr_err(pmu,
		       "host scope: %s/%s is not a pinned object of uid %u "
		       "(mode %o, uid %u): refused",
		       dir, name, (unsigned int)owner, (unsigned int)st.st_mode,
		       (unsigned int)st.st_uid);
		err = -EPROTO;
		goto out;
	}
	/* Through the descriptor: the object the checks above saw, even if
	 * the name is changed meanwhile. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", at);
	err = fd = sys_bpf_obj_get(pmu, self);
	if (fd < 0)
		pr_err(pmu, "host scope: cannot open %s/%s: %s%s", dir, name,
		       strerror(-err),
		       -err == ENOENT ? " (pins are opened through "
					"/proc/self/fd: is /proc mounted?)"
				      : "");
out:
	sys_close(pmu, at);
	return err;
}

static int not_a(struct shpmu *pmu, const char *dir, const char *name,
		 const char *kind)
{
	pr_err(pmu, "host scope: %s/%s is not a %s: refused", dir, name, kind);
	return -EPROTO;
}

static int refuse(struct shpmu *pmu, const char *dir, const char *name,
		  const char *what, uint32_t found, uint32_t want)
{
	pr_err(pmu,
	       "host scope: %s/%s is not what this build pins there: its %s "
	       "is %u, not %u (remove the domain with shpmu-host remove)",
	       dir, name, what, found, want);
	return -EPROTO;
}

/* The first of info's fields that differs from want: refused. */
static int compare_shape(struct shpmu *pmu, const char *dir, const char *name,
			 const struct bpf_map_info *info,
			 const struct map_shape *want)
{
	const struct {
		const char *what;
		uint32_t found, want;
	} fields[] = {
		{"map type", info->type, want->type},
		{"key size", info->key_size, want->key_size},
		{"value size", info->value_size, want->value_size},
		{"max_entries", info->max_entries, want->max_entries},
		{"map_flags", info->map_flags, want->flags},
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i].found != fields[i].want)
			return refuse(pmu, dir, name, fields[i].what,
				      fields[i].found, fields[i].want);
	return 0;
}

int pin_check_map(struct shpmu *pmu, const char *dir, const char *name, int fd,
		  const struct map_shape *want)
{
	struct bpf_map_info info;
	uint32_t len = sizeof(info);
	int err;

	memset(&info, 0, sizeof(info));
	err = sys_bpf_obj_info(pmu, fd, &info, &len);
	if (err)
		return err == -EINVAL ? not_a(pmu, dir, name, "map") : err;
	return compare_shape(pmu, dir, name, &info, want);
}

/* The id of the map behind fd, or -errno. */
static int64_t map_id(struct shpmu *pmu, int fd)
{
	struct bpf_map_info info;
	uint32_t len = sizeof(info);
	int err;

	memset(&info, 0, sizeof(info));
	err = sys_bpf_obj_info(pmu, fd, &info, &len);
	return err ? (int64_t)err : (int64_t)info.id;
}

/* Whether id is among ids[0 .. n). */
static bool has_id(const uint32_t *ids, uint32_t n, uint32_t id)
{
	for (uint32_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

int pin_check_prog(struct shpmu *pmu, const char *dir, const char *name, int fd,
		   uint32_t prog_type, const char *prog_name,
		   const int *map_fds, size_t nmaps)
{
	/* More than the program has: the kernel says how many it holds. */
	uint32_t ids[64], len, n;
	struct bpf_prog_info info;
	int err;

	/* Zeroed, ids too: the kernel fills them, but valgrind does not
	 * know that this call writes there. */
	memset(&info, 0, sizeof(info));
	memset(ids, 0, sizeof(ids));
	info.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	info.map_ids = (uint64_t)(uintptr_t)ids;
	len = sizeof(info);
	err = sys_bpf_obj_info(pmu, fd, &info, &len);
	if (err)
		return err == -EINVAL ? not_a(pmu, dir, name, "program") : err;
	if (info.type != prog_type)
		return refuse(pmu, dir, name, "program type", info.type,
			      prog_type);
	if (strncmp(info.name, prog_name, sizeof(info.name) - 1)) {
		pr_err(pmu,
		       "host scope: %s/%s is not what this build pins there: "
		       "program %.16s, not %s",
		       dir, name, info.name, prog_name);
		return -EPROTO;
	}
	n = info.nr_map_ids < 64 ? info.nr_map_ids : 64;
	for (size_t i = 0; i < nmaps; i++) {
		int64_t id = map_id(pmu, map_fds[i]);

		if (id < 0)
			return (int)id;
		if (!id || !has_id(ids, n, (uint32_t)id)) {
			pr_err(pmu,
			       "host scope: %s/%s is not what this build pins "
			       "there: the program does not use the domain's "
			       "pinned maps",
			       dir, name);
			return -EPROTO;
		}
	}
	return 0;
}

/* The id of the program behind fd, or -errno. */
static int64_t prog_id(struct shpmu *pmu, int fd)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	int err;

	memset(&info, 0, sizeof(info));
	err = sys_bpf_obj_info(pmu, fd, &info, &len);
	return err ? (int64_t)err : (int64_t)info.id;
}

int pin_check_link(struct shpmu *pmu, const char *dir, const char *name, int fd,
		   uint32_t link_type, int prog_fd)
{
	struct bpf_link_info info;
	uint32_t len = sizeof(info);
	int64_t want;
	int err;

	memset(&info, 0, sizeof(info));
	err = sys_bpf_obj_info(pmu, fd, &info, &len);
	if (err && err != -EINVAL)
		return err;
	if (err || !info.id)
		return not_a(pmu, dir, name, "link");
	if (info.type != link_type)
		return refuse(pmu, dir, name, "link type", info.type,
			      link_type);
	want = prog_fd < 0 ? info.prog_id : prog_id(pmu, prog_fd);
	if (want < 0)
		return (int)want;
	if (!want || info.prog_id != want) {
		pr_err(pmu,
		       "host scope: %s/%s is not what this build pins there: "
		       "the link runs another program than the domain's",
		       dir, name);
		return -EPROTO;
	}
	return 0;
}
