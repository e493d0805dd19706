# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A notebook-style comparison: two ways to do the same work, each
measured over the same number of runs, as a table of medians and their
ratio. Hardware events are used where the machine has them; a VM
without a PMU gets the software events only, and says so.

    python3 compare.py
"""

from __future__ import annotations

import json
import pickle
import statistics
from collections.abc import Callable

import shpmu

WANTED = ["instructions", "task-clock", "page-faults", "context-switches"]
DATA = [{"id": i, "name": f"item-{i}", "tags": ["a", "b", str(i)]} for i in range(20_000)]


def with_json() -> object:
    return json.loads(json.dumps(DATA))


def with_pickle() -> object:
    return pickle.loads(pickle.dumps(DATA))


def events_here() -> list[str]:
    """The wanted events this machine can count."""
    found = []
    with shpmu.Context() as ctx:
        for name in WANTED:
            try:
                ctx.open(name).close()
                found.append(name)
            except shpmu.NotFoundError:
                print(f"({name}: not on this machine)")
    return found


def medians(work: Callable[[], object], events: list[str], runs: int = 7) -> dict[str, float]:
    per_event: dict[str, list[int]] = {e: [] for e in events}
    for _ in range(runs):
        with shpmu.measure(*events) as m:
            work()
        for e in events:
            per_event[e].append(m[e].scaled)
    return {e: statistics.median(v) for e, v in per_event.items()}


def main() -> None:
    events = events_here()
    a, b = medians(with_json, events), medians(with_pickle, events)
    print(f"{'event':<18}{'json':>14}{'pickle':>14}{'pickle/json':>13}")
    for e in events:
        clock = "clock" in e
        label, unit, digits = (f"{e} (ms)", 1e6, 2) if clock else (e, 1, 0)
        ratio = f"{b[e] / a[e]:.2f}" if a[e] else "-"
        print(f"{label:<18}{a[e] / unit:>14.{digits}f}{b[e] / unit:>14.{digits}f}{ratio:>13}")


if __name__ == "__main__":
    main()
