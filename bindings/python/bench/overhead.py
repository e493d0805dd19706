# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What the binding adds to the C calls, against C loops over the same
handles in the same run (baseline.c, built by bench.sh): read() of one
handle, and read_many() of 1024 handles over 8 events of this thread.
The goal for read_many is at most 1.5 times C. The loops take turns for
21 rounds and each gives its median, so all see the same machine. The
figures are printed, not judged: a shared machine is noisy."""

from __future__ import annotations

import ctypes
import statistics
import sys
import threading
import time
from collections.abc import Callable

import shpmu
from shpmu import _clib

ROUNDS = 21


def rounds(n: int, *loops: Callable[[int], int]) -> list[float]:
    """Each loop's median ns per call over the rounds."""
    per_call: list[list[float]] = [[] for _ in loops]
    for _ in range(ROUNDS):
        for i, loop in enumerate(loops):
            per_call[i].append(loop(n) / n)
    return [statistics.median(x) for x in per_call]


def py_loop(call: Callable[[], object]) -> Callable[[int], int]:
    def loop(n: int) -> int:
        start = time.perf_counter_ns()
        for _ in range(n):
            call()
        return time.perf_counter_ns() - start

    return loop


def c_loop(ns: int) -> int:
    if ns < 0:
        raise RuntimeError("a C baseline call failed")
    return ns


def main(baseline_so: str) -> int:
    base = ctypes.CDLL(baseline_so)
    base.read_loop.restype = base.read_many_loop.restype = ctypes.c_longlong
    base.read_loop.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong]
    base.read_many_loop.argtypes = [
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_int),
        ctypes.c_size_t,
        ctypes.POINTER(_clib.CCount),
        ctypes.c_longlong,
    ]
    tid = threading.get_native_id()
    with shpmu.Context() as ctx:
        # One kernel fd on this thread: read without an interrupt to
        # another CPU.
        h = ctx.open("task-clock", shpmu.Task(tid))
        # 1024 handles over 8 software events (128 share each), as the
        # C and Go benchmarks' read_many.
        attrs = [shpmu.Attr(shpmu.Type.SOFTWARE, config) for config in range(8)]
        hs = [ctx.open(attrs[i % 8], shpmu.Task(tid)) for i in range(1024)]
        batch = ctx.batch(hs)
        out = shpmu.Counts(len(hs))
        pmu, hid = ctx._pmu, h._id
        bare_count = _clib.CCount()
        bare_read = _clib.lib.shpmu_read

        r_py, r_bare, r_c = rounds(
            20000,
            py_loop(h.read),
            py_loop(lambda: bare_read(pmu, hid, bare_count)),
            lambda n: c_loop(base.read_loop(pmu, hid, n)),
        )
        m_batch, m_list, m_c = rounds(
            200,
            py_loop(lambda: ctx.read_many(batch, out)),
            py_loop(lambda: ctx.read_many(hs, out)),
            lambda n: c_loop(base.read_many_loop(pmu, batch._ids, len(hs), out._array, n)),
        )
    print(
        f"read: Python {r_py:.0f} ns, a bare ctypes call {r_bare:.0f} ns, "
        f"C {r_c:.0f} ns: {r_py / r_c:.2f}x C; ctypes adds {r_bare - r_c:.0f} ns, "
        f"the binding's own share {r_py - r_bare:.0f} ns"
    )
    print(
        f"read_many of 1024 handles: Python with a batch {m_batch / 1e3:.1f} us, "
        f"from a list {m_list / 1e3:.1f} us, C {m_c / 1e3:.1f} us: "
        f"{m_batch / m_c:.2f}x C with a batch (goal <= 1.5), "
        f"{m_list / m_c:.2f}x from a list"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
