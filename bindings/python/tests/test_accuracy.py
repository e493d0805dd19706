# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Each target kind, classic and BPF, process and host scope, against a
raw twin of the same window (tests/README.md's rule 1): a worker that
is blocked whenever the test opens or reads, so that both see exactly
its steps."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from kernel import (
    CONTEXT_SWITCHES,
    CPU_CLOCK,
    PAGE_FAULTS,
    TASK_CLOCK,
    Twin,
    Worker,
    online_cpus,
)

import shpmu

EVENTS = {
    "task-clock": TASK_CLOCK,
    "page-faults": PAGE_FAULTS,
    "context-switches": CONTEXT_SWITCHES,
}


# What a BPF count may differ from its twin by besides its bound, as the
# C suites hold it (tests/test_process.c, tests/cgroup_helpers.h):
# - a clock, half a per cent either way (the backend cuts each switch at
#   another point of the kernel's switch path than the twin's event);
# - a cgroup clock, or 3 us for each switch where that is more
#   (cg_bpf_clock_pct);
# - a task or process clock, up to 100 us more for each switch (the
#   switch path between the tracepoint and perf's switch of the task's
#   events goes to the task coming in: 6 to 80 us measured on a loaded
#   machine);
# - a thread that exits: its last switch, after perf_event_exit_task()
#   stopped the twin's events, is counted by the program only: one
#   context switch more for each, its time within the 100 us a switch.
# Classic handles count the same events at the same points: exact.
BPF_PCT = 0.5
CGROUP_SWITCH_NS = 3_000
TASK_SWITCH_NS = 100_000


def tolerance(name: str, truth: int, switches: int, cgroup: bool, exits: int) -> tuple[int, int]:
    """(below, above): how far a BPF count may be below its twin besides
    its bound, and above it."""
    if name == "context-switches":
        return 0, exits
    if name != "task-clock":
        return 0, 0
    pct = int(truth * BPF_PCT / 100)
    if cgroup:
        either = max(pct, CGROUP_SWITCH_NS * switches)
        return either, either
    return pct, pct + TASK_SWITCH_NS * switches


def expect_twin(
    name: str,
    h: shpmu.Handle,
    twin: Twin,
    bpf: bool,
    switches: int,
    cgroup: bool = False,
    exits: int = 0,
) -> None:
    count, bound = h.read_bound()
    truth = twin.read()
    assert truth > 0, f"{name}: the worker's steps counted nothing"
    if not bpf:
        assert (count.value, bound) == (truth, 0), f"{name}: classic {count} against twin {truth}"
        return
    below, above = tolerance(name, truth, switches, cgroup, exits)
    # Never above the truth (but for the above); below it by at most
    # the bound.
    assert count.value <= truth + above, f"{name}: {count} above twin {truth} + {above}"
    assert (
        count.value + bound + below >= truth
    ), f"{name}: {count} + bound {bound} + {below} below twin {truth}"


def run_windows(
    ctx: shpmu.Context,
    worker: Worker,
    target: shpmu.Target,
    twin_of: Callable[[int], Twin],
    bpf: bool,
    threads: bool = False,
    cgroup: bool = False,
) -> None:
    """Opens a twin and a handle per event while the worker is blocked,
    runs two steps (each on a new thread with threads), and compares
    after each."""
    twins = {n: twin_of(cfg) for n, cfg in EVENTS.items()}
    switches_twin = twin_of(CONTEXT_SWITCHES)
    try:
        handles = {n: ctx.open(n, target) for n in EVENTS}
        for step in range(1, 3):
            worker.step(threads=threads)
            switches = switches_twin.read()
            exits = step if threads else 0
            for n in EVENTS:
                expect_twin(n, handles[n], twins[n], bpf, switches, cgroup, exits)
    finally:
        for t in [*twins.values(), switches_twin]:
            t.close()


@pytest.mark.parametrize("backend", ["perf", "bpf"])
def test_task(backend: str) -> None:
    with shpmu.Context(backend=backend) as ctx, Worker() as w:
        run_windows(ctx, w, shpmu.Task(w.pid), lambda cfg: Twin(cfg, pid=w.pid), backend == "bpf")


@pytest.mark.parametrize("backend", ["perf", "bpf"])
def test_process_and_its_new_threads(backend: str) -> None:
    with shpmu.Context(backend=backend) as ctx, Worker() as w:
        run_windows(
            ctx,
            w,
            shpmu.Process(w.pid),
            lambda cfg: Twin(cfg, pid=w.pid, inherit=True),
            backend == "bpf",
            threads=True,
        )


@pytest.mark.parametrize("backend", ["perf", "bpf"])
def test_cgroup(backend: str, cgroup: str) -> None:
    with shpmu.Context(backend=backend) as ctx, Worker(cgroup) as w:
        run_windows(
            ctx,
            w,
            shpmu.Cgroup(cgroup),
            lambda cfg: Twin(cfg, cgroup=cgroup),
            backend == "bpf",
            cgroup=True,
        )


def test_cgroup_by_id_shares_the_path_handles_event(ctx: shpmu.Context, cgroup: str) -> None:
    with Worker(cgroup) as w:
        by_path = ctx.open("page-faults", shpmu.Cgroup(cgroup))
        by_id = ctx.open("page-faults", shpmu.Cgroup(id=ctx.cgroup_id(cgroup)))
        w.step()
        assert ctx.stats().kernel_events == 1
        assert by_path.read() == by_id.read()


def test_host_scope_task_and_cgroup(bpffs: str, cgroup: str) -> None:
    with shpmu.Context(scope="host", bpffs_dir=bpffs, domain="pytest") as ctx:
        with Worker() as w:
            run_windows(ctx, w, shpmu.Task(w.pid), lambda cfg: Twin(cfg, pid=w.pid), True)
        with Worker(cgroup) as w:
            run_windows(
                ctx,
                w,
                shpmu.Cgroup(cgroup),
                lambda cfg: Twin(cfg, cgroup=cgroup),
                True,
                cgroup=True,
            )


def cpu_window(ctx: shpmu.Context, target: shpmu.Target, cpus: list[int]) -> None:
    """A CPU target counts everything, so its window is not the twin's:
    the handle is read just outside the twin's reads, and the clock
    between them is held between 0 and the wall time of the reads' gaps
    on each CPU (a CPU's cpu-clock runs at wall speed)."""
    with Twin(CPU_CLOCK, cpus=cpus) as twin:
        h = ctx.open("cpu-clock", target)
        t0 = time.monotonic_ns()
        h1 = h.read().value
        w1 = twin.read()
        t1 = time.monotonic_ns()
        time.sleep(0.05)
        t2 = time.monotonic_ns()
        w2 = twin.read()
        h2 = h.read().value
        t3 = time.monotonic_ns()
        extra = (h2 - h1) - (w2 - w1)
        assert w2 - w1 >= 50_000_000 * len(cpus) * 0.9, "the twin ran slow"
        assert 0 <= extra <= ((t1 - t0) + (t3 - t2)) * len(cpus), (h1, h2, w1, w2)


def test_one_cpu(ctx: shpmu.Context) -> None:
    cpu = online_cpus()[-1]
    cpu_window(ctx, shpmu.CPU(cpu), [cpu])


def test_all_cpus(ctx: shpmu.Context) -> None:
    cpu_window(ctx, shpmu.AllCPUs(), online_cpus())


def test_host_scope_cpus(bpffs: str) -> None:
    with shpmu.Context(scope="host", bpffs_dir=bpffs, domain="pytest") as ctx:
        cpu_window(ctx, shpmu.AllCPUs(), online_cpus())
