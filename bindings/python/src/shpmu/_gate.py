# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The gate every call on a context passes: calls run side by side, and
closing waits for those in flight and turns later ones away, so that no
call reaches a freed context."""

from __future__ import annotations

import threading
import time

from .errors import ClosedError

get_ident = threading.get_ident


class Gate:
    """A call is an entry in a list, its thread's id: a list append and
    remove are atomic in CPython, so a call takes no lock.

    Each call site writes the same lines, not a helper's: a signal
    handler runs when a Python function starts, so an exception from
    one could come between a helper's start and its remove and leave an
    entry behind for good. Inline, the append is the first thing in the
    caller's try and the remove the first in its finally::

        me = get_ident()
        try:
            gate.inside.append(me)
            if gate.closed:
                raise ClosedError(op, "context")
            ...  # the C call
        finally:
            try:
                gate.inside.remove(me)
            except ValueError:  # an exception came before the append
                pass
            if gate.closed:
                gate.wake()

    shut() sets closed and then waits, under the lock, until no call is
    inside; a call that leaves after closed was set wakes it."""

    __slots__ = ("_lock", "_idle", "inside", "closed")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self.inside: list[int] = []
        self.closed = False

    def wake(self) -> None:
        with self._lock:
            self._idle.notify_all()

    def holds(self, me: int) -> bool:
        """Whether thread me is inside a call: from a callback of the
        library or a signal handler, which a close would wait for."""
        return me in self.inside

    def shut(self, timeout: float | None = None) -> bool:
        """Turns later calls away (for good) and waits for those in
        flight, at most timeout seconds (None: as long as they take);
        whether none is inside."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            self.closed = True
            # Waits in steps and looks again: a signal handler's
            # exception between a call's remove and its wake() would
            # lose the wake-up.
            while self.inside:
                left = 0.05 if deadline is None else deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(min(left, 0.05))
            return True
