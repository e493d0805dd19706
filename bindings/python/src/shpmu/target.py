# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What a handle counts: a thread, a process, one CPU, every CPU or a
cgroup. Each is a small frozen value, checked when it is made."""

from __future__ import annotations

import dataclasses
import os

from . import _clib
from .errors import invalid

__all__ = ["Target", "Task", "Process", "CPU", "AllCPUs", "Cgroup"]

_TASK, _CPU, _CGROUP, _PROCESS = 0, 1, 2, 3
_BIND_CPU = 1
_PID_MAX = (1 << 31) - 1


def _check_int(what: str, value: object, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if not low <= value <= high:
        raise invalid("target", f"{what} {value} is out of range")
    return value


def _check_cpu(cpu: int | None) -> None:
    if cpu is not None:
        _check_int("cpu", cpu, 0, _PID_MAX)


@dataclasses.dataclass(frozen=True)
class Target:
    """Base of the targets. ``cpu`` None counts on every CPU; a number
    binds the target to that CPU: a task or process only while it runs
    there, a cgroup on that CPU alone."""

    def to_c(self) -> _clib.Target:
        raise NotImplementedError


@dataclasses.dataclass(frozen=True)
class Task(Target):
    """One thread; tid 0 is the calling thread.

    >>> shpmu.Task()
    Task(tid=0, cpu=None)
    """

    tid: int = 0
    cpu: int | None = None

    def __post_init__(self) -> None:
        _check_int("tid", self.tid, 0, _PID_MAX)
        _check_cpu(self.cpu)

    def to_c(self) -> _clib.Target:
        return _c_target(_TASK, pid=self.tid, cpu=self.cpu)


@dataclasses.dataclass(frozen=True)
class Process(Target):
    """Every thread of a process, present and future; pid 0 is this
    process. With ``Attr(inherit=True)`` its child processes forked from
    the open on count too."""

    pid: int = 0
    cpu: int | None = None

    def __post_init__(self) -> None:
        _check_int("pid", self.pid, 0, _PID_MAX)
        _check_cpu(self.cpu)

    def to_c(self) -> _clib.Target:
        return _c_target(_PROCESS, pid=self.pid, cpu=self.cpu)


@dataclasses.dataclass(frozen=True)
class CPU(Target):
    """Everything that runs on one CPU."""

    cpu: int

    def __post_init__(self) -> None:
        _check_int("cpu", self.cpu, 0, _PID_MAX)

    def to_c(self) -> _clib.Target:
        return _c_target(_CPU, cpu=self.cpu)


@dataclasses.dataclass(frozen=True)
class AllCPUs(Target):
    """Everything that runs on any online CPU."""

    def to_c(self) -> _clib.Target:
        return _c_target(_CPU)


@dataclasses.dataclass(frozen=True)
class Cgroup(Target):
    """A cgroup and its descendants, by path (absolute under the cgroup
    mount, or relative to it) or by ``id`` (its inode number on
    cgroup2).

    >>> with shpmu.Context() as ctx:
    ...     root = ctx.cgroup_root()
    ...     h = ctx.open("task-clock", shpmu.Cgroup(root))   # every task
    ...     same = ctx.open("task-clock", shpmu.Cgroup(""))  # relative
    ...     ctx.stats().kernel_events
    1
    >>> shpmu.Cgroup(id=1, cpu=0)
    Cgroup(path=None, id=1, cpu=0)
    """

    path: str | None = None
    id: int = 0
    cpu: int | None = None

    def __post_init__(self) -> None:
        path = self.path
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
            object.__setattr__(self, "path", path)
        if path is not None and not isinstance(path, str):
            raise TypeError(f"cgroup path must be a str, not {type(path).__name__}")
        _check_int("cgroup id", self.id, 0, (1 << 64) - 1)
        if (path is None) == (self.id == 0):
            raise invalid("target", "a cgroup needs a path or an id, not both")
        if path is not None and "\0" in path:
            raise invalid("target", "a NUL byte in the cgroup path")
        _check_cpu(self.cpu)

    def to_c(self) -> _clib.Target:
        path = None if self.path is None else os.fsencode(self.path)
        return _c_target(_CGROUP, cpu=self.cpu, cgroup_id=self.id, cgroup_path=path)


def _c_target(
    kind: int,
    pid: int = 0,
    cpu: int | None = None,
    cgroup_id: int = 0,
    cgroup_path: bytes | None = None,
) -> _clib.Target:
    t = _clib.Target(kind=kind, pid=pid, cgroup_id=cgroup_id)
    t.cgroup_path = cgroup_path
    if cpu is not None:
        t.cpu = cpu
        t.flags = _BIND_CPU
    return t
