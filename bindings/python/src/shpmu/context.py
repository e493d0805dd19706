# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The context: it owns every kernel event and the handles on them
(libshpmu's ``struct shpmu``)."""

from __future__ import annotations

import ctypes
import dataclasses
import enum
import errno
import functools
import os
import threading
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from . import _clib
from ._gate import Gate, get_ident
from .attr import Attr
from .count import Counts
from .errors import ClosedError, Error, invalid, make_error
from .target import Target, Task

if TYPE_CHECKING:
    from .handle import Batch, Handle

__all__ = [
    "Backend",
    "Context",
    "LogLevel",
    "PMUBudget",
    "Scope",
    "Stats",
    "GROUP_MAX",
]

_lib = _clib.lib
GROUP_MAX = 64  # SHPMU_GROUP_MAX
_NO_SHARING = 1
_NO_MULTIPLEX = 1
_DOMAIN_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


class Backend(enum.IntEnum):
    """How cgroup targets are counted (libshpmu(7), BACKENDS)."""

    AUTO = 0  # classic events below a crossover in fds, BPF from it on
    PERF = 1  # one classic cgroup event per cgroup per CPU
    BPF = 2  # one event per CPU for all cgroups, and a program at switches


class Scope(enum.IntEnum):
    """Who shares kernel events."""

    PROCESS = 0  # the handles of one context
    HOST = 1  # every process whose context joins the same domain


class LogLevel(enum.IntEnum):
    """The level of a message passed to the log callback."""

    ERROR = 0  # a call failed; the message says why
    WARN = 1  # something degraded, or a choice made for the caller
    INFO = 2  # a decision worth knowing about
    DEBUG = 3  # per-call detail


@dataclasses.dataclass(frozen=True)
class Stats:
    """A context's sharing statistics."""

    handles: int  # open handles
    kernel_events: int  # distinct kernel events behind them
    kernel_fds: int  # perf_event fds held
    opens: int  # successful opens since the context was made
    shared_opens: int  # of those, served by an existing kernel event
    # switches the kernel made without running the BPF backend's
    # program, and the CPU time (ns) whose counts it could not
    # attribute because of them (see Handle.read_bound)
    switches_unseen: int
    unattributed_ns: int


@dataclasses.dataclass(frozen=True)
class PMUBudget:
    """The counter budget of one core PMU on one CPU (cpu -1: the events
    that follow a task, as if they all ran on one CPU)."""

    pmu: str
    type: int
    cpu: int
    general: int  # general-purpose counters; 0: unknown
    fixed: int
    watchdog: int  # general counters the NMI watchdog holds
    used: int  # counters this context's distinct events need
    used_fixed: int
    multiplexing: bool  # used does not fit: counts are scaled
    wanted: int  # counters the handles would need without sharing
    saved: int  # wanted - used


LogFunction = Callable[[LogLevel, str], object]


def _enum(kind: type[enum.IntEnum], value: object, what: str) -> int:
    """An enum member given as itself or by name ("host", "bpf")."""
    if isinstance(value, str):
        try:
            return kind[value.upper()]
        except KeyError:
            pass
        raise invalid("new", f"unknown {what} {value!r}")
    if isinstance(value, kind):
        return int(value)
    raise TypeError(f"{what} must be a {kind.__name__} or its name")


def _text(value: object, what: str) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if "\0" in value:
        raise invalid("new", f"a NUL byte in {what}")
    return os.fsencode(value)


def _free(pmu: int, gate: Gate, keep: object) -> None:
    """Frees the context once no call is inside it: from close(), which
    has waited already, from the garbage collector, when no call can be
    inside (each holds the context), or at the interpreter's exit, where
    a daemon thread may be stuck inside one for good: the process is
    going, and its fds with it. keep: the log callback, which C holds a
    pointer to, alive until here."""
    if gate.shut(timeout=5.0):
        _lib.shpmu_free(pmu)


class _LogSink:
    """What the library's log reaches: the caller's function, and the
    last error it logged (the explanation of a failed new). C holds the
    thunk, which reaches the sink through a weak reference: a log
    function that holds its context's owner would otherwise keep the
    context alive through its own finalizer."""

    def __init__(self, fn: LogFunction | None) -> None:
        self.fn = fn
        self.last_error = ""
        self.thunk = _clib.LogFn(functools.partial(_log_thunk, weakref.ref(self)))

    def say(self, level: int, text: str) -> None:
        if level == LogLevel.ERROR:
            self.last_error = text
        if self.fn is None:
            return
        try:
            self.fn(LogLevel(min(max(level, 0), 3)), text)
        except Exception as exc:  # noqa: BLE001 - must not reach C
            # An exception cannot unwind through the library's frames
            # (it holds its locks): the message is dropped, and said.
            try:
                warnings.warn(
                    f"shpmu: the log callback raised {exc!r}; its message was dropped",
                    RuntimeWarning,
                    stacklevel=1,
                )
            except Exception:  # noqa: BLE001 - warnings made errors
                pass


def _log_thunk(
    sink_ref: Callable[[], _LogSink | None], level: int, msg: bytes | None, arg: object
) -> None:
    sink = sink_ref()
    if sink is not None:
        sink.say(level, (msg or b"").decode("utf-8", "replace"))


class Context:
    """A libshpmu context: it owns every kernel event and the handles on
    them. Use it as a context manager, or close() it. Its methods and its
    handles' may be called from any thread at once.

    ``scope``: :class:`Scope` (or "process", "host"). ``backend``:
    :class:`Backend` (or "auto", "perf", "bpf"). ``domain`` and
    ``bpffs_dir``: the host-scope domain to join and the directory on a
    BPF filesystem it lives in (defaults "default" and /sys/fs/bpf/shpmu).
    ``cgroup_root``: the cgroup mount to use (default: found).
    ``no_sharing``: every open gets its own kernel event (a baseline).
    ``lock_timeout``: host scope's longest wait for the domain's lock, in
    seconds (default 5). ``log``: called with (LogLevel, message) for
    every message of the library, from inside the call that logs, while
    the library holds its locks: it must not call the context.

    >>> with shpmu.Context() as ctx:
    ...     h = ctx.open("page-faults")
    ...     pages = bytearray(1 << 20)
    ...     h.read().value > 0
    True
    """

    def __init__(
        self,
        scope: Scope | str = Scope.PROCESS,
        backend: Backend | str = Backend.AUTO,
        domain: str | None = None,
        bpffs_dir: str | os.PathLike[str] | None = None,
        cgroup_root: str | os.PathLike[str] | None = None,
        no_sharing: bool = False,
        lock_timeout: float | None = None,
        log: LogFunction | None = None,
    ) -> None:
        self._gate = Gate()
        # How long close waits for calls in flight: the longest a call
        # takes is a host-scope wait for the domain's lock.
        self._close_wait = 30.0
        self._close_lock = threading.Lock()
        self._pmu: int = 0
        opts = _clib.Opts(sz=ctypes.sizeof(_clib.Opts))
        opts.scope = _enum(Scope, scope, "scope")
        opts.cgroup_backend = _enum(Backend, backend, "backend")
        opts.flags = _NO_SHARING if no_sharing else 0
        opts.domain = _text(domain, "domain")
        opts.bpffs_dir = _text(bpffs_dir, "bpffs_dir")
        opts.cgroup_root = _text(cgroup_root, "cgroup_root")
        if lock_timeout is not None:
            if not isinstance(lock_timeout, (int, float)) or isinstance(lock_timeout, bool):
                raise TypeError("lock_timeout must be a number of seconds")
            ms = -int(-lock_timeout * 1000 // 1)  # rounded up
            if not 0 < ms < 1 << 32:
                raise invalid("new", f"lock_timeout {lock_timeout} s out of range")
            opts.lock_timeout_ms = ms
            self._close_wait = max(30.0, 2 * ms / 1000)
        if log is not None and not callable(log):
            raise TypeError("log must be callable")
        self._sink = _LogSink(log)
        opts.log = self._sink.thunk
        pmu = _lib.shpmu_new(ctypes.byref(opts))
        if not pmu:
            err = ctypes.get_errno() or errno.ENOMEM
            raise make_error(err, "new", self._sink.last_error)
        self._pmu = pmu
        self._finalizer = weakref.finalize(self, _free, pmu, self._gate, self._sink.thunk)

    # -- lifetime -------------------------------------------------------

    def close(self) -> None:
        """Closes every handle and kernel event and frees the context,
        once the calls in flight on it are done. Later calls raise
        :class:`ClosedError`; closing again does nothing. From a thread
        that is inside a call on this context (a log or list_events
        callback, a signal handler) it raises Error(EDEADLK): that call
        could not end while close waited for it."""
        if self._gate.holds(get_ident()):
            raise Error(
                errno.EDEADLK,
                "close context",
                "called while this thread is inside a call on it (a callback or a signal handler)",
            )
        if not self._gate.shut(timeout=self._close_wait):
            warnings.warn(
                f"shpmu: calls still inside the context after {self._close_wait:.0f} s: "
                "it is left unfreed (its fds close with the process)",
                RuntimeWarning,
                stacklevel=2,
            )
            self._finalizer.detach()
            return
        self._finalizer()  # once: a second close finds it done

    @property
    def closed(self) -> bool:
        return self._gate.closed

    def __enter__(self) -> Context:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<shpmu.Context {'closed' if self.closed else 'open'}>"

    # -- errors ---------------------------------------------------------

    def _explain(self, h: int, rc: int) -> str:
        """The library's words on error rc of a call on h (-1: none). The
        caller is inside the gate."""
        size = 2048
        while size <= 1 << 16:
            buf = ctypes.create_string_buffer(size)
            got = _lib.shpmu_explain(self._pmu, h, rc, buf, size)
            if got == -errno.EBADF and h >= 0:
                h = -1
                continue
            if got == -errno.ERANGE:
                size *= 4
                continue
            return buf.value.decode("utf-8", "replace") if got == 0 else ""
        return ""

    def _fail(self, op: str, h: int, rc: int) -> Error:
        return make_error(-rc, op, self._explain(h, rc))

    # -- opening --------------------------------------------------------

    def open(
        self,
        event: str | Attr,
        target: Target | None = None,
        *,
        no_multiplex: bool = False,
    ) -> Handle:
        """Opens a handle counting ``event`` (a name, as
        :meth:`event_attr` takes it, or an :class:`Attr`) on ``target``
        (default: the calling thread), sharing a kernel event with any
        open handle on the same event and target. A name counts from
        now; an Attr from now unless ``disabled``. ``no_multiplex``
        refuses (EBUSY) a new hardware event that would not fit in the
        counters of a CPU it counts on.

        Raises :class:`NotFoundError` (no such event or cgroup),
        :class:`Error` with EINVAL (a bad target, a CPU not online),
        EXDEV (a cgroup path outside the cgroup mount), EMFILE, ENOSPC,
        EBUSY, EOPNOTSUPP, or the kernel's errno; TypeError for
        arguments of the wrong type.
        """
        from .handle import Handle

        target = self._target(target)
        if not isinstance(no_multiplex, bool):
            raise TypeError("no_multiplex must be a bool")
        op = f"open {event if isinstance(event, str) else _describe(event)}"
        if isinstance(event, str):
            _check_name(op, event)
            if no_multiplex:
                event = self.event_attr(event)
        ct = target.to_c()
        if isinstance(event, str):
            name = event.encode()
            call: tuple[Any, ...] = (_lib.shpmu_open_name, name, ct)
        elif isinstance(event, Attr):
            ca = event.to_c(op)
            oo = _clib.OpenOpts(sz=ctypes.sizeof(_clib.OpenOpts))
            oo.flags = _NO_MULTIPLEX if no_multiplex else 0
            call = (_lib.shpmu_open_opts, ca, ct, oo)
        else:
            raise TypeError(f"event must be a name or an Attr, not {type(event).__name__}")
        return Handle._opened(self, self._open(op, *call), event, target, 1)

    def open_group(self, events: Sequence[str | Attr], target: Target | None = None) -> Handle:
        """Opens events as one kernel group per CPU, scheduled all or
        nothing, leader first; the first event's ``disabled`` says
        whether the group counts from now. 1 to GROUP_MAX events.
        :meth:`Handle.read_group` reads every member at once."""
        from .handle import Handle

        if isinstance(events, (str, bytes)) or not isinstance(events, Sequence):
            raise TypeError("events must be a sequence of names or Attrs")
        op = f"open group of {len(events)}"
        if not 1 <= len(events) <= GROUP_MAX:
            raise invalid(op, f"a group has 1 to {GROUP_MAX} events")
        target = self._target(target)
        attrs = [self.event_attr(e) if isinstance(e, str) else e for e in events]
        for i, a in enumerate(attrs):
            if not isinstance(a, Attr):
                raise TypeError(f"events[{i}] is not a name or an Attr")
        array = _attr_array(op, [a.to_c(op) for a in attrs], self._attr_stride())
        ct = target.to_c()
        h = self._open(op, _lib.shpmu_open_group, array, len(attrs), ct)
        return Handle._opened(self, h, list(events), target, len(attrs))

    def _attr_stride(self) -> int:
        """sizeof(struct perf_event_attr) where the library was built:
        the stride of open_group's array. Its encoding writes that many
        bytes, and says so in attr.size."""
        global _stride
        if _stride is None:
            room = (ctypes.c_char * _ATTR_ROOM)()
            attr = ctypes.cast(room, ctypes.POINTER(_clib.PerfEventAttr))
            self._call(
                "event attr",
                _lib.shpmu_event_attr,
                b"task-clock",
                attr,
            )
            _stride = int(attr.contents.size)
        return _stride

    def _target(self, target: Target | None) -> Target:
        if target is None:
            return Task()
        if not isinstance(target, Target) or type(target) is Target:
            raise TypeError(
                "target must be a Task, Process, CPU, AllCPUs or Cgroup, "
                f"not {type(target).__name__}"
            )
        return target

    def _open(self, op: str, fn: Any, *args: object) -> int:
        """fn(pmu, *args), a call that makes a handle: its number, or its
        error raised."""
        me, gate = get_ident(), self._gate
        try:
            gate.inside.append(me)  # the gate's lines, inline (_gate.py)
            if gate.closed:
                raise ClosedError(op, "context")
            h = int(fn(self._pmu, *args))
            if h < 0:
                raise self._fail(op, -1, h)
            return h
        finally:
            try:
                gate.inside.remove(me)
            except ValueError:
                pass
            if gate.closed:
                gate.wake()

    _call = _open  # a call that makes no handle: its return, or its error

    # -- reading many ---------------------------------------------------

    def batch(self, handles: Sequence[Handle]) -> Batch:
        """A fixed list of this context's handles, to read with one call
        again and again (:meth:`read_many`): it checks the handles once,
        and keeps their numbers and a buffer for their counts."""
        from .handle import Batch

        return Batch(self, handles)

    def read_many(self, handles: Sequence[Handle] | Batch, out: Counts | None = None) -> Counts:
        """Reads every handle with one read(2) per kernel event involved,
        however many handles share it; ``out[i]`` is exactly what
        ``handles[i].read()`` would give. ``handles`` is a sequence of
        this context's handles, or a :meth:`batch` of them, which reads
        with no work per handle in Python. ``out`` is a :class:`Counts`
        with room for them, reused from call to call; None: a new one
        (a batch's own). On error nothing is written.

        >>> with shpmu.Context() as ctx:
        ...     hs = [ctx.open(e) for e in ("task-clock", "page-faults")]
        ...     out = shpmu.Counts(len(hs))
        ...     ctx.read_many(hs, out) is out
        True
        """
        from .handle import Batch

        if isinstance(handles, Batch):
            if handles.context is not self:
                raise invalid("read many", "a batch of another context")
            return handles.read(out)
        return Batch(self, handles, register=False).read(out)

    # -- events and the machine ------------------------------------------

    def event_attr(self, name: str) -> Attr:
        """Encodes an event name into an Attr (counting, enabled):
        libpfm4's names ("INST_RETIRED.ANY"), the kernel's generic ones
        ("cycles", "task-clock", "cs"), with ":u" or ":k".

        >>> with shpmu.Context() as ctx:
        ...     a = ctx.event_attr("task-clock:u")
        >>> a.type == shpmu.Type.SOFTWARE, a.exclude_kernel
        (True, True)
        """
        op = f"event attr {name}"
        _check_name(op, name)
        # The library writes its own sizeof(struct perf_event_attr),
        # which newer kernel headers make longer than PerfEventAttr.
        room = (ctypes.c_char * _ATTR_ROOM)()
        out = ctypes.cast(room, ctypes.POINTER(_clib.PerfEventAttr))
        self._call(op, _lib.shpmu_event_attr, name.encode(), out)
        size = min(max(int(out.contents.size), _clib.ATTR_SIZE), _ATTR_ROOM)
        return Attr.from_c(out.contents, room.raw[:size])

    def list_events(
        self, callback: Callable[[str, str], object] | None = None
    ) -> list[tuple[str, str]]:
        """Every event this machine's PMUs have, as (name, description).
        With ``callback``, calls it with each instead (and returns []):
        returning False stops the walk; an exception it raises stops the
        walk and is raised here."""
        if callback is not None and not callable(callback):
            raise TypeError("callback must be callable")
        found: list[tuple[str, str]] = []
        raised: list[BaseException] = []

        def each(name: bytes | None, desc: bytes | None, arg: object) -> int:
            n = (name or b"").decode("utf-8", "replace")
            d = (desc or b"").decode("utf-8", "replace")
            if callback is None:
                found.append((n, d))
                return 0
            try:
                return 1 if callback(n, d) is False else 0
            except BaseException as exc:  # noqa: BLE001 - raised below
                raised.append(exc)
                return 1

        # The walk gives the callback's 1 where it stopped: not an error.
        self._call("list events", _lib.shpmu_list_events, _clib.EventFn(each), None)
        if raised:
            raise raised[0]
        return found

    def stats(self) -> Stats:
        """A consistent snapshot of the sharing statistics."""
        s = _clib.Stats()
        self._call("stats", _lib.shpmu_get_stats, s)
        return Stats(
            s.handles,
            s.kernel_events,
            s.kernel_fds,
            s.opens,
            s.shared_opens,
            s.switches_unseen,
            s.unattributed_ns,
        )

    def budget(self) -> list[PMUBudget]:
        """Each core PMU's counters on each CPU (then cpu -1 for task
        events) and what this context's hardware events need of them;
        [] where the machine has no core PMU."""
        for _ in range(8):
            n = self._call("budget", _lib.shpmu_pmu_budget, None, 0)
            rows = (_clib.Budget * max(n, 1))()
            got = self._call("budget", _lib.shpmu_pmu_budget, rows, n)
            if got <= n:  # none came online in between
                return [_budget(rows[i]) for i in range(got)]
        raise make_error(errno.EAGAIN, "budget", "the CPUs kept changing")

    # -- cgroups ----------------------------------------------------------

    def cgroup_root(self) -> str:
        """The cgroup mount in use (cgroup2 first, else a v1 perf_event
        hierarchy); NotFoundError where the host has none."""
        buf = ctypes.create_string_buffer(4096)
        self._call("cgroup root", _lib.shpmu_cgroup_root, buf, 4096)
        return os.fsdecode(buf.value)

    def cgroup_id(self, path: str | os.PathLike[str]) -> int:
        """The id of the cgroup at path (absolute under the mount, or
        relative to it)."""
        encoded = _text(path, "cgroup path")
        if encoded is None:
            raise TypeError("cgroup path must be a str")
        out = ctypes.c_uint64()
        op = f"cgroup id {os.fsdecode(encoded)}"
        self._call(op, _lib.shpmu_cgroup_id, encoded, out)
        return out.value

    def cgroup_path(self, cgroup_id: int) -> str:
        """The absolute path of the cgroup with this id."""
        if not isinstance(cgroup_id, int) or isinstance(cgroup_id, bool):
            raise TypeError("cgroup id must be an int")
        if not 0 <= cgroup_id < 1 << 64:
            raise invalid("cgroup path", f"cgroup id {cgroup_id} out of range")
        buf = ctypes.create_string_buffer(4096)
        self._call(
            f"cgroup path {cgroup_id}",
            _lib.shpmu_cgroup_path,
            cgroup_id,
            buf,
            4096,
        )
        return os.fsdecode(buf.value)


_stride: int | None = None
# Room for an attr the library writes: a page, the most it ever takes.
_ATTR_ROOM = 4096


def _attr_array(
    op: str, attrs: list[_clib.PerfEventAttr], stride: int
) -> ctypes._Pointer[_clib.PerfEventAttr]:
    """attrs laid out stride bytes apart, as the library indexes them.
    A library built with older kernel headers knows fewer fields: a
    field it does not know must be zero (E2BIG otherwise)."""
    room = ctypes.create_string_buffer(stride * len(attrs))
    for i, a in enumerate(attrs):
        raw = bytes(a)
        if any(raw[stride:]):
            raise Error(errno.E2BIG, op, "an Attr field this libshpmu build does not know")
        a.size = min(stride, _clib.ATTR_SIZE)
        ctypes.memmove(
            ctypes.addressof(room) + i * stride,
            ctypes.addressof(a),
            min(stride, _clib.ATTR_SIZE),
        )
    return ctypes.cast(room, ctypes.POINTER(_clib.PerfEventAttr))


def _check_name(op: str, name: object) -> None:
    if not isinstance(name, str):
        raise TypeError(f"an event name must be a str, not {type(name).__name__}")
    if not name:
        raise invalid(op, "an empty event name")
    if "\0" in name:
        raise invalid(op, "a NUL byte in the event name")


def _describe(attr: object) -> str:
    if isinstance(attr, Attr):
        return f"type {attr.type} config {attr.config:#x}"
    return type(attr).__name__


def _budget(b: _clib.Budget) -> PMUBudget:
    return PMUBudget(
        b.pmu.decode("utf-8", "replace"),
        b.type,
        b.cpu,
        b.general,
        b.fixed,
        b.watchdog,
        b.used,
        b.used_fixed,
        bool(b.multiplexing),
        b.wanted,
        b.saved,
    )
