// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The public cgroup calls: the root in use, path -> id, id -> path. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "core/api.h"
#include "core/log.h"
#include "sys/sys.h"

static int cgroup_root_checked(struct shpmu *pmu, char *buf, size_t len)
{
	int err = api_check(pmu, buf, "shpmu_cgroup_root", "buf");

	if (!err)
		err = cgroup_root_copy(pmu, &pmu->cgroups, buf, len);
	if (err == -ERANGE)
		pr_err(pmu, "shpmu_cgroup_root: needs %zu bytes",
		       pmu->cgroups.root_len + 1);
	return shpmu_err(err);
}

int shpmu_cgroup_root(struct shpmu *pmu, char *buf, size_t len)
{
	API_CALL(pmu, cgroup_root_checked(pmu, buf, len));
}

static int cgroup_id_checked(struct shpmu *pmu, const char *path, uint64_t *id)
{
	uint64_t found;
	int fd, err;

	err = api_check(pmu, path, "shpmu_cgroup_id", "path");
	if (!err)
		err = api_check(pmu, id, "shpmu_cgroup_id", "id");
	if (!err)
		err = cgroup_open_path(pmu, &pmu->cgroups, path, &fd, &found);
	if (err)
		return shpmu_err(err);
	sys_close(pmu, fd);
	*id = found;
	return 0;
}

int shpmu_cgroup_id(struct shpmu *pmu, const char *path, uint64_t *id)
{
	API_CALL(pmu, cgroup_id_checked(pmu, path, id));
}

static int cgroup_path_checked(struct shpmu *pmu, uint64_t id, char *buf,
			       size_t len)
{
	int fd, err;

	err = api_check(pmu, buf, "shpmu_cgroup_path", "buf");
	if (!err)
		err = cgroup_open_id(pmu, &pmu->cgroups, id, &fd);
	if (err)
		return shpmu_err(err);
	err = cgroup_fd_path(pmu, &pmu->cgroups, fd, buf, len);
	sys_close(pmu, fd);
	if (err == -ERANGE)
		pr_err(pmu,
		       "shpmu_cgroup_path: buffer of %zu byte%s is too "
		       "small",
		       len, plural(len, "s"));
	return shpmu_err(err);
}

int shpmu_cgroup_path(struct shpmu *pmu, uint64_t id, char *buf, size_t len)
{
	API_CALL(pmu, cgroup_path_checked(pmu, id, buf, len));
}
