# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The gate every call on a context passes: calls run side by side, and
closing waits for those in flight and turns later ones away, so that no
call reaches a freed context."""

from __future__ import annotations

import threading

from .errors import ClosedError


class Gate:
    """enter() and leave() cost a list append and pop: those are atomic
    in CPython, so a call takes no lock. close's shut() sets closed and
    then waits, under the lock, until no call is inside; a call that
    leaves after closed was set wakes it."""

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

    def shut(self) -> bool:
        """Turns later calls away and waits for those in flight; False if
        it was shut already."""
        with self._lock:
            if self.closed:
                return False
            self.closed = True
            self._idle.wait_for(lambda: not self._inside)
            return True


# Set on a thread while it runs a callback of the library (the log, a
# list_events walk): the library holds its locks then, so closing the
# context from there would wait for itself.
in_callback = threading.local()


def inside_callback() -> bool:
    return getattr(in_callback, "depth", 0) > 0


class CallbackScope:
    """Marks the running thread as inside a library callback."""

    __slots__ = ()

    def __enter__(self) -> None:
        in_callback.depth = getattr(in_callback, "depth", 0) + 1

    def __exit__(self, *exc: object) -> None:
        in_callback.depth -= 1
