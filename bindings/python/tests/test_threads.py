# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""8 threads open, read, read_many and close while the main thread closes
the context under them: they see counts that never go backwards, then
ClosedError, and nothing else."""

from __future__ import annotations

import threading
import time

import pytest

import shpmu

THREADS = 8


def hammer(
    ctx: shpmu.Context,
    seed: int,
    started: threading.Barrier,
    failures: list[str],
    counts: list[int],
) -> None:
    names = ("task-clock", "page-faults", "context-switches", "cpu-clock")
    mine: list[shpmu.Handle] = []
    last: dict[int, int] = {}
    out = shpmu.Counts(64)
    started.wait()
    i = seed
    try:
        while True:
            i += 1
            if len(mine) < 16 or i % 3 == 0:
                target = shpmu.Process() if i % 2 else shpmu.Task()
                mine.append(ctx.open(names[i % len(names)], target))
            h = mine[i % len(mine)]
            value = h.read().value
            if value < last.get(id(h), 0):
                failures.append(f"{h}: {value} after {last[id(h)]}")
            last[id(h)] = value
            batch = ctx.read_many(mine[:64], out)
            for j, c in enumerate(batch[: min(len(mine), 64)]):
                if c.value < last.get(id(mine[j]), 0):
                    failures.append(f"read_many {mine[j]} went back")
                last[id(mine[j])] = c.value
            if i % 5 == 0:
                victim = mine.pop((i * 7) % len(mine))
                victim.close()
                last.pop(id(victim), None)
            counts[seed] += 1
    except shpmu.ClosedError:
        return  # the context closed under us: the one error expected
    except BaseException as e:  # noqa: BLE001 - reported to the test
        failures.append(f"thread {seed}: {e!r}")


@pytest.mark.parametrize("round_", range(3))
def test_threads_and_a_close_under_them(round_: int) -> None:
    ctx = shpmu.Context()
    started = threading.Barrier(THREADS + 1)
    failures: list[str] = []
    counts = [0] * THREADS
    threads = [
        threading.Thread(target=hammer, args=(ctx, n, started, failures, counts))
        for n in range(THREADS)
    ]
    for t in threads:
        t.start()
    started.wait()
    # Let every thread get going before the close comes.
    deadline = time.monotonic() + 30
    while min(counts) < 20 and time.monotonic() < deadline:
        time.sleep(0.01)
    ctx.close()
    for t in threads:
        t.join(30)
        assert not t.is_alive(), "a thread did not see the close"
    assert not failures, failures[:5]
    assert min(counts) >= 20, counts
