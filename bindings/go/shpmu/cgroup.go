// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

/*
#include <limits.h>
#include <stdlib.h>
#include <shpmu/shpmu.h>
*/
import "C"

import "unsafe"

// CgroupRoot gives the cgroup mount the context uses. Errors: ENOENT (no
// cgroup hierarchy on this host).
func (c *Context) CgroupRoot() (string, error) {
	if err := c.lock("cgroup root"); err != nil {
		return "", err
	}
	defer c.mu.RUnlock()
	var buf [C.PATH_MAX]C.char
	if rc := C.shpmu_cgroup_root(c.pmu, &buf[0], C.size_t(len(buf))); rc < 0 {
		return "", c.fail("cgroup root", -1, rc)
	}
	return C.GoString(&buf[0]), nil
}

// CgroupID gives the id of the cgroup at path (absolute, or relative to
// the root). Errors: EINVAL (".." or a symlink), EXDEV (outside the
// root), ENOENT, ENOTDIR, ENAMETOOLONG.
func (c *Context) CgroupID(path string) (uint64, error) {
	op := "cgroup id of " + path
	if err := checkCString(op, "cgroup path", path, true); err != nil {
		return 0, err
	}
	if err := c.lock(op); err != nil {
		return 0, err
	}
	defer c.mu.RUnlock()
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var id C.uint64_t
	if rc := C.shpmu_cgroup_id(c.pmu, cpath, &id); rc < 0 {
		return 0, c.fail(op, -1, rc)
	}
	return uint64(id), nil
}

// CgroupPath gives the absolute path of the cgroup with this id. Errors:
// ENOENT (no such cgroup under the root).
func (c *Context) CgroupPath(id uint64) (string, error) {
	if err := c.lock("cgroup path"); err != nil {
		return "", err
	}
	defer c.mu.RUnlock()
	var buf [C.PATH_MAX]C.char
	if rc := C.shpmu_cgroup_path(c.pmu, C.uint64_t(id), &buf[0],
		C.size_t(len(buf))); rc < 0 {
		return "", c.fail("cgroup path", -1, rc)
	}
	return C.GoString(&buf[0]), nil
}
