# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A cgroup's twin for the Python-driven tests: raw classic perf events on
the cgroup, one per CPU (tests/README.md's rule, 1)."""
import ctypes
import os
import platform
import struct

PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK = 1, 1
PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES = 2, 3
PERF_FLAG_FD_CLOEXEC, PERF_FLAG_PID_CGROUP = 8, 4
SYS_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}.get(platform.machine())


class CgroupTwin:
    """The oracle for a cgroup's count (task-clock unless told): raw
    classic perf events on the cgroup, one per CPU, counting from
    construction until read()."""

    def __init__(self, cgroup_dir, config=PERF_COUNT_SW_TASK_CLOCK):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        # perf_event_attr (PERF_ATTR_SIZE_VER7, 128 bytes): type, size,
        # config; everything else 0: counting, enabled, value only.
        attr = ctypes.create_string_buffer(
            struct.pack("IIQ", PERF_TYPE_SOFTWARE, 128,
                        config).ljust(128, b"\0"), 128)
        cg = os.open(cgroup_dir, os.O_RDONLY | os.O_DIRECTORY)
        self.fds = []
        try:
            for cpu in range(os.cpu_count()):
                fd = libc.syscall(SYS_PERF_EVENT_OPEN, attr, cg, cpu, -1,
                                  PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC)
                if fd < 0:
                    raise OSError(ctypes.get_errno(), "perf_event_open on " +
                                  cgroup_dir + ": " +
                                  os.strerror(ctypes.get_errno()))
                self.fds.append(fd)
        finally:
            os.close(cg)

    def read(self):
        """The count in ns, summed over CPUs; the events are closed."""
        total = sum(struct.unpack("Q", os.read(fd, 8))[0] for fd in self.fds)
        for fd in self.fds:
            os.close(fd)
        return total
