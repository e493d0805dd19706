# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Readings: :class:`Count`, one handle's, and :class:`Counts`, a
reusable buffer that :meth:`Context.read_many` fills."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from typing import NamedTuple, overload

from . import _clib
from .errors import invalid

__all__ = ["Count", "Counts"]

_U64_MAX = (1 << 64) - 1
# Names of the clocks, whose counts are ns (shown in msec), in the
# spellings the kernel, perf and libpfm4 give them.
_CLOCK_NAMES = ("task-clock", "cpu-clock", "TASK_CLOCK", "CPU_CLOCK", "TASK-CLOCK", "CPU-CLOCK")


def is_clock(event: str) -> bool:
    """Whether an event name is a clock's, as shpmu-stat tells."""
    return any(k in event for k in _CLOCK_NAMES)


class Count(NamedTuple):
    """One handle's reading.

    ``value`` is what it counted in its windows; ``enabled`` the ns its
    event was enabled in them, summed over the CPUs it spans (N CPUs:
    about N times the wall time); ``running`` the ns of that it was on
    the PMU, less than ``enabled`` when the kernel multiplexed it.

    >>> c = shpmu.Count(value=1000, enabled=200, running=100)
    >>> c.scaled
    2000
    >>> shpmu.Count(7, 0, 0).scaled
    0
    """

    value: int
    enabled: int
    running: int

    @property
    def scaled(self) -> int:
        """The count over the whole enabled time when the event was
        multiplexed: value × enabled / running, rounded down (at most
        2⁶⁴ - 1), as ``shpmu_scale()``; 0 when it never ran."""
        if self.running == 0:
            return 0
        if self.running >= self.enabled:
            return self.value
        return min(self.value * self.enabled // self.running, _U64_MAX)

    @property
    def multiplexed(self) -> bool:
        """Whether the event ran for less than it was enabled."""
        return self.running < self.enabled


def from_c(c: _clib.CCount) -> Count:
    return Count(c.value, c.time_enabled, c.time_running)


class Counts:
    """Room for n readings, filled in place by
    :meth:`Context.read_many` and :meth:`Handle.read_group`, and reused
    from one read to the next: a reading loop allocates nothing.

    >>> buf = shpmu.Counts(2)
    >>> len(buf), buf[0]
    (2, Count(value=0, enabled=0, running=0))
    """

    __slots__ = ("_array", "_n")

    def __init__(self, n: int) -> None:
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"Counts(n): n must be an int, not {type(n).__name__}")
        if n < 0:
            raise invalid("counts", f"{n} counts")
        self._n = n
        self._array = (_clib.CCount * max(n, 1))()

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> Count:
        ...

    @overload
    def __getitem__(self, i: slice) -> list[Count]:
        ...

    def __getitem__(self, i: int | slice) -> Count | list[Count]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("Counts index out of range")
        return from_c(self._array[i])

    def __iter__(self) -> Iterator[Count]:
        for i in range(self._n):
            yield from_c(self._array[i])

    def values(self) -> list[int]:
        """Every reading's value, in order."""
        return [self._array[i].value for i in range(self._n)]

    def __repr__(self) -> str:
        return f"Counts({self._n})"

    def pointer(self) -> ctypes._Pointer[_clib.CCount]:
        """The C array (for the binding's calls)."""
        return ctypes.cast(self._array, ctypes.POINTER(_clib.CCount))
