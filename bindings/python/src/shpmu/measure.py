# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""``with shpmu.measure(...)``: the common case in one block."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Mapping
from types import TracebackType

from .context import Context
from .count import Count, is_clock
from .errors import invalid
from .handle import Handle
from .target import Process, Task

__all__ = ["measure", "Measurement"]


class Measurement(Mapping[str, Count]):
    """The counts of a :func:`measure` block, by event name, once the
    block has ended (KeyError before). ``elapsed`` is its wall time in
    seconds; ``str()`` gives a table like shpmu-stat's."""

    def __init__(self, events: tuple[str, ...]) -> None:
        self.events = events
        self.elapsed = 0.0
        self._counts: dict[str, Count] = {}

    def __getitem__(self, event: str) -> Count:
        return self._counts[event]

    def __iter__(self) -> Iterator[str]:
        return iter(self._counts)

    def __len__(self) -> int:
        return len(self._counts)

    def __repr__(self) -> str:
        return f"Measurement({self._counts!r}, elapsed={self.elapsed:.6f})"

    def __str__(self) -> str:
        lines = []
        for event, c in self._counts.items():
            if c.running == 0:
                value = "<not counted>"
            elif is_clock(event):
                value = f"{c.scaled / 1e6:.2f} msec"
            else:
                value = f"{c.scaled}"
            mux = f"  ({100.0 * c.running / c.enabled:.2f}%)" if c.multiplexed else ""
            lines.append(f"{value:>24}  {event}{mux}")
        lines.append(f"{self.elapsed:>24.9f}  seconds time elapsed")
        return "\n".join(lines)


@dataclasses.dataclass
class _Block:
    events: tuple[str, ...]
    inherit: bool
    context: Context | None
    result: Measurement
    _own: Context | None = None
    _handles: list[Handle] = dataclasses.field(default_factory=list)
    _start: float = 0.0

    def __enter__(self) -> Measurement:
        ctx = self.context
        if ctx is None:
            ctx = self._own = Context()
        target = Process() if self.inherit else Task()
        try:
            for name in self.events:
                attr = dataclasses.replace(
                    ctx.event_attr(name), disabled=True, inherit=self.inherit
                )
                self._handles.append(ctx.open(attr, target))
            self._start = time.perf_counter()
            for h in self._handles:
                h.enable()
        except BaseException:
            self._close()
            raise
        return self.result

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            for h in reversed(self._handles):
                h.disable()
            self.result.elapsed = time.perf_counter() - self._start
            for name, h in zip(self.events, self._handles):
                self.result._counts[name] = h.read()
        finally:
            self._close()

    def _close(self) -> None:
        for h in self._handles:
            h.close()
        self._handles.clear()
        if self._own is not None:
            self._own.close()
            self._own = None


def measure(*events: str, inherit: bool = False, context: Context | None = None) -> _Block:
    """Counts events over a ``with`` block: on the calling thread, or
    with ``inherit`` on every thread of this process and the processes it
    forks in the block. The events are opened before the block and
    enabled one after the other at its start (disabled in reverse at its
    end), on ``context`` or on a context of their own.

    >>> with shpmu.measure("task-clock", "page-faults") as m:
    ...     pages = bytearray(4 << 20)
    >>> m["page-faults"].value > 0, m["task-clock"].value > 0
    (True, True)
    """
    if not events:
        raise invalid("measure", "no events")
    for e in events:
        if not isinstance(e, str):
            raise TypeError(f"events are names, not {type(e).__name__}")
    if len(set(events)) != len(events):
        raise invalid("measure", "an event named twice")
    return _Block(tuple(events), bool(inherit), context, Measurement(tuple(events)))
