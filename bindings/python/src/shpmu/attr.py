# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Events as perf_event_attr fields: :class:`Attr` and the kernel's
generic event numbers."""

from __future__ import annotations

import ctypes
import dataclasses
import enum
import errno

from . import _clib

__all__ = ["Attr", "Type", "Hardware", "Software"]


class Type(enum.IntEnum):
    """perf_event_attr.type of the kernel's generic PMUs."""

    HARDWARE = 0
    SOFTWARE = 1
    TRACEPOINT = 2
    HW_CACHE = 3
    RAW = 4


class Hardware(enum.IntEnum):
    """Configs of :attr:`Type.HARDWARE`."""

    CPU_CYCLES = 0
    INSTRUCTIONS = 1
    CACHE_REFERENCES = 2
    CACHE_MISSES = 3
    BRANCH_INSTRUCTIONS = 4
    BRANCH_MISSES = 5
    BUS_CYCLES = 6
    REF_CPU_CYCLES = 9


class Software(enum.IntEnum):
    """Configs of :attr:`Type.SOFTWARE`."""

    CPU_CLOCK = 0
    TASK_CLOCK = 1
    PAGE_FAULTS = 2
    CONTEXT_SWITCHES = 3
    CPU_MIGRATIONS = 4
    PAGE_FAULTS_MIN = 5
    PAGE_FAULTS_MAJ = 6
    CGROUP_SWITCHES = 11


_U32 = (1 << 32) - 1
_U64 = (1 << 64) - 1
_NUMBERS = {"type": _U32, "config": _U64, "config1": _U64, "config2": _U64}
_FLAGS = (
    "disabled",
    "inherit",
    "pinned",
    "exclusive",
    "exclude_user",
    "exclude_kernel",
    "exclude_hv",
    "exclude_idle",
    "enable_on_exec",
    "exclude_host",
    "exclude_guest",
)


@dataclasses.dataclass
class Attr:
    """A counting event: the fields of ``perf_event_attr`` that counting
    uses. An Attr from :meth:`Context.event_attr` also keeps every other
    field its encoding set.

    >>> shpmu.Attr(shpmu.Type.SOFTWARE, shpmu.Software.PAGE_FAULTS)
    Attr(type=1, config=2, ...)
    """

    type: int = 0
    config: int = 0
    config1: int = 0
    config2: int = 0
    disabled: bool = False  # counts nothing until enable()
    inherit: bool = False  # child tasks and threads count too
    pinned: bool = False  # always on a counter, or in error state
    exclusive: bool = False  # alone on the PMU while it runs
    exclude_user: bool = False
    exclude_kernel: bool = False
    exclude_hv: bool = False
    exclude_idle: bool = False
    enable_on_exec: bool = False
    exclude_host: bool = False
    exclude_guest: bool = False
    encoded: bytes | None = dataclasses.field(
        default=None, repr=False, compare=False
    )  # the whole attr an encoding made, under the fields above

    def __post_init__(self) -> None:
        # Enum members as the plain numbers they stand for.
        for name in _NUMBERS:
            value = getattr(self, name)
            if isinstance(value, int) and not isinstance(value, bool):
                setattr(self, name, int(value))

    def to_c(self, op: str) -> _clib.PerfEventAttr:
        """The attr in the library's form; TypeError or Error(EINVAL)
        for a field that is not a number of its width."""
        from .errors import Error, invalid

        out = _clib.PerfEventAttr()
        if self.encoded is not None:
            encoded = self.encoded
            if not isinstance(encoded, bytes):
                raise TypeError(f"{op}: Attr.encoded must be bytes")
            # What a library built with newer headers wrote past the
            # fields this binding knows must be zero (E2BIG otherwise).
            if any(encoded[_clib.ATTR_SIZE :]):
                raise Error(errno.E2BIG, op, "Attr.encoded sets fields this binding does not know")
            ctypes.memmove(ctypes.addressof(out), encoded, min(len(encoded), _clib.ATTR_SIZE))
        for name, limit in _NUMBERS.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{op}: Attr.{name} must be an int")
            if not 0 <= value <= limit:
                raise invalid(op, f"Attr.{name} {value} out of range")
            setattr(out, name, value)
        for name in _FLAGS:
            setattr(out, name, 1 if getattr(self, name) else 0)
        out.size = _clib.ATTR_SIZE
        return out

    @classmethod
    def from_c(cls, c: _clib.PerfEventAttr, raw: bytes | None = None) -> Attr:
        """The Attr of c; raw: the whole attr the library wrote, which
        may be longer than c."""
        attr = cls(encoded=raw if raw is not None else bytes(c))
        for name in _NUMBERS:
            setattr(attr, name, int(getattr(c, name)))
        for name in _FLAGS:
            setattr(attr, name, bool(getattr(c, name)))
        return attr
