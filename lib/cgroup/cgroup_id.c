// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "cgroup/cgroup_id.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "sys/sys.h"

int cgroup_fd_id(struct shpmu *pmu, int fd, uint64_t *id)
{
	struct cgroup_handle h = {.fh.handle_bytes = sizeof(h.id)};
	int mount_id, err;

	err = sys_name_to_handle_at(pmu, fd, "", &h.fh, &mount_id,
				    AT_EMPTY_PATH);
	if (err)
		return err;
	if (h.fh.handle_bytes != sizeof(h.id))
		return -EOPNOTSUPP;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}
