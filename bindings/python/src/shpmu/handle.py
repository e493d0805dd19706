# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Handles: one consumer's counter each, and batches of them read with
one call."""

from __future__ import annotations

import ctypes
import errno
import struct
import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import _clib
from .attr import Attr
from .count import Count, Counts
from .errors import ClosedError, Error, invalid

if TYPE_CHECKING:
    from .context import Context
    from .target import Target

__all__ = ["Handle", "Batch"]

_lib = _clib.lib
_read = _lib.shpmu_read
_read_many = _lib.shpmu_read_many
_CCount = _clib.CCount
_EBADF = -errno.EBADF
_get_ident = threading.get_ident
_new_tuple = tuple.__new__
_unpack_count = struct.Struct("=QQQ").unpack_from


class Handle:
    """One consumer's counter: it reports only what happened while it was
    enabled, however many handles share its kernel event. A context
    manager that closes it; its context closes it too.

    >>> with shpmu.Context() as ctx, ctx.open("context-switches") as h:
    ...     h.disable()
    ...     before = h.read().value
    ...     time.sleep(0.01)       # a switch, but the handle is disabled
    ...     h.read().value == before
    True
    """

    __slots__ = (
        "_ctx",
        "_id",
        "_closed",
        "_batches",
        "event",
        "target",
        "members",
        "__weakref__",
    )

    _ctx: Context
    _id: int
    _closed: bool
    _batches: weakref.WeakSet[Batch] | None
    event: str | Attr | list[str | Attr]
    target: Target
    members: int

    def __init__(self) -> None:
        raise TypeError("handles are made by Context.open()")

    @classmethod
    def _opened(
        cls,
        ctx: Context,
        h: int,
        event: str | Attr | list[str | Attr],
        target: Target,
        members: int,
    ) -> Handle:
        self = object.__new__(cls)
        self._ctx = ctx
        self._id = h
        self._closed = False
        self._batches = None
        self.event = event  # what was opened: a name, an Attr, a group's
        self.target = target
        self.members = members  # events of a group, else 1
        return self

    @property
    def context(self) -> Context:
        return self._ctx

    @property
    def closed(self) -> bool:
        return self._closed or self._ctx.closed

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"#{self._id}"
        return f"<shpmu.Handle {self.event!r} on {self.target!r} {state}>"

    def __enter__(self) -> Handle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- calls ----------------------------------------------------------

    def _failed(self, op: str, rc: int) -> Error:
        """The error of rc; inside the gate."""
        if rc == _EBADF and self._closed:
            return ClosedError(op, "handle")
        return self._ctx._fail(op, self._id, rc)

    def _call(self, op: str, fn: object, *args: object) -> None:
        gate = self._ctx._gate
        me = _get_ident()
        try:
            gate.inside.append(me)  # the gate's lines, inline (_gate.py)
            if gate.closed:
                raise ClosedError(op, "context")
            if self._closed:
                raise ClosedError(op, "handle")
            rc = fn(self._ctx._pmu, self._id, *args)  # type: ignore[operator]
            if rc < 0:
                raise self._failed(op, rc)
        finally:
            try:
                gate.inside.remove(me)
            except ValueError:
                pass
            if gate.closed:
                gate.wake()

    def enable(self) -> None:
        """Starts counting (a no-op on a handle that counts, except that
        it brings a pinned event back from error state)."""
        self._call("enable", _lib.shpmu_enable)

    def disable(self) -> None:
        """Stops counting, keeping what the handle counted."""
        self._call("disable", _lib.shpmu_disable)

    def reset(self) -> None:
        """Zeroes the handle's count and times; other handles on the same
        kernel event are untouched."""
        self._call("reset", _lib.shpmu_reset)

    def close(self) -> None:
        """Closes the handle; its kernel event closes with its last
        handle. Closing again, or after the context, does nothing."""
        ctx = self._ctx
        gate = ctx._gate
        me = _get_ident()
        try:
            gate.inside.append(me)
            if gate.closed:
                return  # the context closed it
            # Under the lock that Batch() registers under: a batch made
            # at the same time is either marked here or sees the close.
            with ctx._close_lock:
                if self._closed:
                    return
                self._closed = True
                self._mark_batches()
            rc = _lib.shpmu_close(ctx._pmu, self._id)
            if rc < 0 and rc != _EBADF:
                # Still open (EDEADLK from a log callback): say so, and
                # let it be used and closed again.
                with ctx._close_lock:
                    self._closed = False
                    self._mark_batches()
                raise ctx._fail("close", -1, rc)
        finally:
            try:
                gate.inside.remove(me)
            except ValueError:
                pass
            if gate.closed:
                gate.wake()

    def _mark_batches(self) -> None:
        """A batch is stale while any of its handles is closed."""
        for batch in list(self._batches or ()):
            batch._stale = any(h._closed for h in batch.handles)

    def read(self) -> Count:
        """The handle's count and times, summed over the CPUs it spans.
        Raises Error(ENODATA) for a pinned event that could not get a
        counter (its explanation says what holds them)."""
        # The hot path: locals, one struct for the C call, the tuple
        # made from its bytes (half the cost of Count(a, b, c)).
        ctx = self._ctx
        gate = ctx._gate
        me = _get_ident()
        try:
            gate.inside.append(me)
            if gate.closed:
                raise ClosedError("read", "context")
            if self._closed:
                raise ClosedError("read", "handle")
            c = _CCount()
            rc = _read(ctx._pmu, self._id, c)
            if rc < 0:
                raise self._failed("read", rc)
        finally:
            try:
                gate.inside.remove(me)
            except ValueError:
                pass
            if gate.closed:
                gate.wake()
        return _new_tuple(Count, _unpack_count(c))

    def _read_into(self, op: str, fn: object, *args: object) -> Count:
        c = _CCount()
        self._call(op, fn, *args, c)
        return Count(c.value, c.time_enabled, c.time_running)

    def read_cached(self) -> Count:
        """A BPF-counted handle's count without a system call, as of each
        CPU's last settle; Error(EOPNOTSUPP) for classic perf events."""
        return self._read_into("read cached", _lib.shpmu_read_cached)

    def read_bound(self) -> tuple[Count, int]:
        """The reading, and how far below the truth its value may be:
        0 for classic events; for the BPF backend, what went
        unattributed on its CPUs, of its event, while it was enabled,
        because the kernel switched tasks without running the program.
        The truth lies between value and value + bound."""
        c = _CCount()
        bound = ctypes.c_uint64()
        self._call("read bound", _lib.shpmu_read_bound, c, bound)
        return Count(c.value, c.time_enabled, c.time_running), bound.value

    def read_unattributed(self, cpu: int = -1) -> Count:
        """What the BPF backend left unattributed of this handle's event
        (every handle of it) on one CPU, or on all (-1)."""
        _check_cpu_arg(cpu, -1)
        return self._read_into("read unattributed", _lib.shpmu_read_unattributed, cpu)

    def read_cpu(self, cpu: int) -> Count:
        """One CPU's share (-1 for a handle on one fd)."""
        _check_cpu_arg(cpu, -1)
        return self._read_into(f"read cpu {cpu}", _lib.shpmu_read_cpu, cpu)

    def read_pmu(self, pmu: str) -> Count:
        """The share on one core PMU ("cpu", "cpu_core", "cpu_atom")."""
        if not isinstance(pmu, str):
            raise TypeError("pmu must be a str")
        if not pmu or "\0" in pmu:
            raise invalid("read pmu", "an empty PMU name or a NUL byte in it")
        return self._read_into(f"read pmu {pmu}", _lib.shpmu_read_pmu, pmu.encode())

    def read_group(self, out: Counts | None = None) -> Counts:
        """Every member of a group handle, in open order, with one
        read(2) per CPU, into ``out`` (reused; None: a new one)."""
        if out is None:
            out = Counts(self.members)
        elif not isinstance(out, Counts):
            raise TypeError("out must be a Counts")
        if len(out) < self.members:
            raise invalid("read group", f"room for {len(out)} counts, {self.members} members")
        self._call("read group", _lib.shpmu_read_group, out._array, len(out))
        return out


def _check_cpu_arg(cpu: object, low: int) -> None:
    if not isinstance(cpu, int) or isinstance(cpu, bool):
        raise TypeError("cpu must be an int")
    if not low <= cpu < 1 << 31:
        raise invalid("read", f"cpu {cpu} out of range")


class Batch:
    """Handles of one context read together by :meth:`Context.read_many`
    (or :meth:`read`): their numbers and a buffer for their counts are
    kept, so a read does no work per handle in Python. Closing one of its
    handles makes the batch refuse to read (ClosedError).

    >>> with shpmu.Context() as ctx:
    ...     hs = [ctx.open("task-clock") for _ in range(3)]
    ...     batch = ctx.batch(hs)
    ...     counts = batch.read()          # the batch's own buffer
    ...     len(counts), ctx.stats().kernel_events
    (3, 1)
    """

    __slots__ = ("context", "handles", "_ids", "_n", "_out", "_stale", "__weakref__")

    def __init__(self, ctx: Context, handles: Sequence[Handle], register: bool = True) -> None:
        if isinstance(handles, (str, bytes)) or not isinstance(handles, Sequence):
            raise TypeError("handles must be a sequence of Handles")
        self.context = ctx
        self.handles = tuple(handles)
        self._n = len(self.handles)
        ids = (ctypes.c_int * max(self._n, 1))()
        for i, h in enumerate(self.handles):
            if not isinstance(h, Handle):
                raise TypeError(f"handles[{i}] is a {type(h).__name__}, not a Handle")
            if h._ctx is not ctx:
                raise invalid("read many", f"handles[{i}] is of another context")
            ids[i] = h._id
        self._ids = ids
        self._out: Counts | None = None
        self._stale = False
        with ctx._close_lock:
            for i, h in enumerate(self.handles):
                if h.closed:
                    raise ClosedError(f"read many (handles[{i}])", "handle")
            for h in self.handles if register else ():
                if h._batches is None:
                    h._batches = weakref.WeakSet()
                h._batches.add(self)

    def __len__(self) -> int:
        return self._n

    def read(self, out: Counts | None = None) -> Counts:
        """Reads every handle into ``out`` (None: the batch's own buffer,
        overwritten by its next read)."""
        if out is None:
            out = self._out
            if out is None:
                out = self._out = Counts(self._n)
        elif not isinstance(out, Counts):
            raise TypeError(f"out must be a Counts, not {type(out).__name__}")
        if len(out) < self._n:
            raise invalid("read many", f"{self._n} handles and room for {len(out)} counts")
        if not self._n:
            return out
        ctx = self.context
        gate = ctx._gate
        me = _get_ident()
        try:
            gate.inside.append(me)
            if gate.closed:
                raise ClosedError("read many", "context")
            if self._stale:
                raise self._closed_error()
            rc = _read_many(ctx._pmu, self._ids, self._n, out._array)
            if rc < 0:
                if rc == _EBADF and any(h._closed for h in self.handles):
                    raise self._closed_error()
                raise ctx._fail("read many", -1, rc)
        finally:
            try:
                gate.inside.remove(me)
            except ValueError:
                pass
            if gate.closed:
                gate.wake()
        return out

    def _closed_error(self) -> ClosedError:
        i = next(i for i, h in enumerate(self.handles) if h._closed)
        return ClosedError(f"read many (handles[{i}])", "handle")
