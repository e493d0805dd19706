# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The gate every call on a context passes: calls run side by side, and
closing waits for those in flight and turns later ones away, so that no
call reaches a freed context."""

from __future__ import annotations

import threading

from .errors import ClosedError


class Gate:
    """enter() and leave() cost a list append and pop: those are atomic
    in CPython, so a call takes no lock. shut() sets closed and then
    waits, under the lock, until no call is inside; a call that leaves
    after closed was set wakes it."""

    __slots__ = ("_lock", "_idle", "_inside", "closed")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._inside: list[None] = []
        self.closed = False

    def enter(self, op: str) -> None:
        """Lets a call in, or raises ClosedError; the caller calls
        leave() once it is done with the context."""
        self._inside.append(None)
        # Checked after the append: a shut() that set closed before it
        # either sees this call inside and waits, or this call backs out.
        if self.closed:
            self.leave()
            raise ClosedError(op, "context")

    def leave(self) -> None:
        self._inside.pop()
        if self.closed:
            with self._lock:
                self._idle.notify_all()

    def shut(self, timeout: float | None = None) -> bool:
        """Turns later calls away (for good) and waits for those in
        flight, at most timeout seconds (None: as long as they take);
        whether none is inside."""
        with self._lock:
            self.closed = True
            return self._idle.wait_for(lambda: not self._inside, timeout)


# The gates of the contexts whose callbacks (the log, a list_events walk)
# the running thread is inside: the library holds that context's locks
# then, and this thread's call is inside its gate, so closing it from
# there would wait for itself.
_in_callback = threading.local()


def inside_callback(gate: Gate) -> bool:
    return gate in getattr(_in_callback, "gates", ())


class CallbackScope:
    """Marks the running thread as inside a callback of gate's context."""

    __slots__ = ("_gate",)

    def __init__(self, gate: Gate) -> None:
        self._gate = gate

    def __enter__(self) -> None:
        gates = getattr(_in_callback, "gates", None)
        if gates is None:
            gates = _in_callback.gates = []
        gates.append(self._gate)

    def __exit__(self, *exc: object) -> None:
        _in_callback.gates.pop()
