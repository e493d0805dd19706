# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The tests' own view of the kernel, independent of the binding: raw
perf_event_open twins made with ctypes (tests/README.md's rule 1), a
worker process the test drives step by step, and cgroup2."""

from __future__ import annotations

import ctypes
import mmap
import os
import platform
import struct
import threading
import time

PERF_TYPE_SOFTWARE = 1
CPU_CLOCK, TASK_CLOCK, PAGE_FAULTS, CONTEXT_SWITCHES = 0, 1, 2, 3
_FLAG_PID_CGROUP, _FLAG_FD_CLOEXEC = 4, 8
_READ_TIMES = 1 | 2  # TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING
_SYS_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}[platform.machine()]
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class Twin:
    """Raw software events counting one thing: a task (with inherit, the
    threads and processes it starts from now on), every CPU of a cgroup,
    or CPUs. read() gives the value summed over its fds."""

    def __init__(
        self,
        config: int,
        pid: int = -1,
        cpus: list[int] | None = None,
        cgroup: str | None = None,
        inherit: bool = False,
    ) -> None:
        # perf_event_attr, PERF_ATTR_SIZE_VER0 (64 bytes): type, size,
        # config, sample_period, sample_type, read_format, flags.
        flags = 2 if inherit else 0
        attr = struct.pack("<IIQQQQQ", PERF_TYPE_SOFTWARE, 64, config, 0, 0, _READ_TIMES, flags)
        buf = ctypes.create_string_buffer(attr.ljust(64, b"\0"), 64)
        self.fds: list[int] = []
        target, extra = pid, _FLAG_FD_CLOEXEC
        cg = -1
        if cgroup is not None:
            cg = os.open(cgroup, os.O_RDONLY | os.O_DIRECTORY)
            target, extra = cg, extra | _FLAG_PID_CGROUP
            cpus = cpus if cpus is not None else online_cpus()
        try:
            for cpu in cpus if cpus is not None else [-1]:
                fd = _libc.syscall(_SYS_PERF_EVENT_OPEN, buf, target, cpu, -1, extra)
                if fd < 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"perf_event_open: {os.strerror(err)}")
                self.fds.append(fd)
        except BaseException:
            self.close()
            raise
        finally:
            if cg >= 0:
                os.close(cg)

    def read(self) -> int:
        return sum(struct.unpack("<QQQ", os.read(fd, 24))[0] for fd in self.fds)

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []

    def __enter__(self) -> Twin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def online_cpus() -> list[int]:
    with open("/sys/devices/system/cpu/online") as f:
        text = f.read().strip()
    cpus: list[int] = []
    for item in text.split(","):
        lo, _, hi = item.partition("-")
        cpus += range(int(lo), int(hi or lo) + 1)
    return cpus


def _burn(ms: float) -> None:
    end = time.thread_time() + ms / 1000
    while time.thread_time() < end:
        pass


def _fault(pages: int) -> None:
    m = mmap.mmap(-1, pages * mmap.PAGESIZE)
    for i in range(pages):
        m[i * mmap.PAGESIZE] = 1
    m.close()


def _work() -> None:
    """What each step runs: CPU time, page faults, context switches."""
    _burn(20)
    _fault(256)
    for _ in range(5):
        time.sleep(0.001)


class Worker:
    """A forked child that does nothing until told: step() runs one
    round of work (on a new thread with threads=True) and returns once
    the child is blocked again, so that everything counted of it is
    frozen until the next step."""

    def __init__(self, cgroup: str | None = None) -> None:
        self._cmd_r, self._cmd_w = os.pipe()
        self._ack_r, self._ack_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - the child
            self._serve()
        os.close(self._cmd_r)
        os.close(self._ack_w)
        if cgroup is not None:
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write(str(self.pid))
        self._wait_blocked()

    def _serve(self) -> None:
        code = 0
        try:
            os.close(self._cmd_w)
            os.close(self._ack_r)
            while True:
                cmd = os.read(self._cmd_r, 1)
                if cmd in (b"", b"q"):
                    break
                if cmd == b"t":
                    t = threading.Thread(target=_work)
                    t.start()
                    t.join()
                else:
                    _work()
                os.write(self._ack_w, b"k")
        except BaseException:
            code = 1
        os._exit(code)

    def step(self, threads: bool = False) -> None:
        os.write(self._cmd_w, b"t" if threads else b"w")
        if os.read(self._ack_r, 1) != b"k":
            raise RuntimeError("the worker died")
        self._wait_blocked()

    def _wait_blocked(self, timeout: float = 10.0) -> None:
        """Polls /proc until the child sleeps in its read of the pipe."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(f"/proc/{self.pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            try:
                with open(f"/proc/{self.pid}/wchan") as f:
                    wchan = f.read()
            except OSError:
                wchan = "pipe_read"
            # "0" where kallsyms is hidden from this user.
            if state == "S" and (wchan.endswith("pipe_read") or wchan == "0"):
                return
            time.sleep(0.0005)
        raise TimeoutError(f"worker {self.pid} did not block")

    def close(self) -> None:
        if self.pid:
            os.write(self._cmd_w, b"q")
            os.waitpid(self.pid, 0)
            os.close(self._cmd_w)
            os.close(self._ack_r)
            self.pid = 0

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def cgroup2_mount() -> str | None:
    with open("/proc/self/mountinfo") as f:
        mounts = [line.split() for line in f]
    found = [m[4] for m in mounts if m[m.index("-") + 1] == "cgroup2"]
    for want in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        if want in found:
            return want
    return found[0] if found else None
