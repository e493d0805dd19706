# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What each call does, on a worker whose counts only move when the test
steps it."""

from __future__ import annotations

import dataclasses
import errno
import threading
import warnings

import pytest
from kernel import CONTEXT_SWITCHES, PAGE_FAULTS, Twin, Worker

import shpmu


def test_identical_requests_share_one_event_and_keep_their_windows(ctx: shpmu.Context) -> None:
    """second is enabled over some of the worker's steps: it counts what
    first (always enabled) grew by over those steps, no more."""
    with Worker() as w:
        first = ctx.open("page-faults", shpmu.Task(w.pid))
        w.step()
        second = ctx.open("page-faults", shpmu.Task(w.pid))
        st = ctx.stats()
        assert (st.handles, st.kernel_events, st.shared_opens) == (2, 1, 1)
        edge = first.read().value
        w.step()
        window = first.read().value - edge
        assert second.read().value == window > 0
        second.disable()
        w.step()
        assert second.read().value == window  # disabled: nothing added
        second.reset()
        assert second.read() == shpmu.Count(0, 0, 0)
        second.enable()
        edge = first.read().value
        w.step()
        assert second.read().value == first.read().value - edge > 0


def test_names_and_attrs_reach_the_same_event(ctx: shpmu.Context) -> None:
    by_name = ctx.open("context-switches")
    attr = ctx.event_attr("context-switches")
    by_hand = shpmu.Attr(
        shpmu.Type.SOFTWARE,
        shpmu.Software.CONTEXT_SWITCHES,
        exclude_hv=attr.exclude_hv,
        exclude_guest=attr.exclude_guest,
    )
    by_attr = ctx.open(by_hand)
    assert ctx.stats().kernel_events == 1
    off = ctx.open(dataclasses.replace(attr, disabled=True))
    assert off.read().enabled == 0
    assert by_name.event == "context-switches" and by_attr.event == by_hand


def test_read_many_and_groups_give_what_single_reads_give(ctx: shpmu.Context) -> None:
    with Worker() as w:
        t = shpmu.Task(w.pid)
        hs = [ctx.open(n, t) for n in ("page-faults", "context-switches", "task-clock")] * 2
        g = ctx.open_group(["page-faults", "context-switches"], t)
        batch = ctx.batch(hs)
        out = shpmu.Counts(len(hs))
        w.step()
        singles = [h.read() for h in hs]
        assert ctx.read_many(hs, out) is out
        assert out[:] == singles
        assert batch.read()[:] == singles
        assert batch.read() is batch.read()  # its own buffer, reused
        assert out.values() == [c.value for c in singles]
        group = g.read_group()
        assert [c.value for c in group] == [singles[0].value, singles[1].value]
        assert g.members == 2 and g.read().value == group[0].value


def test_a_closed_handle_stops_its_batch_only(ctx: shpmu.Context) -> None:
    a, b = ctx.open("task-clock"), ctx.open("page-faults")
    both, alone = ctx.batch([a, b]), ctx.batch([b])
    a.close()
    with pytest.raises(shpmu.ClosedError):
        both.read()
    assert alone.read()[0].enabled > 0


def test_bpf_reads(cgroup: str) -> None:
    with shpmu.Context(backend="bpf") as ctx, Worker(cgroup) as w:
        h = ctx.open("context-switches", shpmu.Cgroup(cgroup))
        w.step()
        exact, bound = h.read_bound()
        cached = h.read_cached()
        # A cached read is as of each CPU's last settle; the exact read
        # settled every CPU, and the worker is blocked since.
        assert cached.value == exact.value > 0
        un = h.read_unattributed()
        assert un.value >= 0 and bound >= 0
        per_cpu = [h.read_unattributed(c) for c in range(len(shpmu_cpus()))]
        assert sum(c.value for c in per_cpu) == un.value
        st = ctx.stats()
        assert st.kernel_events >= 1


def shpmu_cpus() -> list[int]:
    from kernel import online_cpus

    return online_cpus()


def test_read_cpu_splits_a_cpu_wide_handle(ctx: shpmu.Context) -> None:
    h = ctx.open("cpu-clock", shpmu.AllCPUs())
    h.disable()
    parts = [h.read_cpu(c) for c in shpmu_cpus()]
    total = h.read()
    assert sum(p.value for p in parts) == total.value


def test_list_events_and_its_callback(ctx: shpmu.Context) -> None:
    events = ctx.list_events()
    assert any(
        "task-clock" in n.lower() or "TASK-CLOCK" in n or "TASK_CLOCK" in n for n, _ in events
    )
    seen: list[str] = []

    def first_three(name: str, desc: str) -> bool:
        seen.append(name)
        return len(seen) < 3

    assert ctx.list_events(first_three) == []
    assert len(seen) == 3

    def boom(name: str, desc: str) -> None:
        raise KeyError(name)

    with pytest.raises(KeyError):
        ctx.list_events(boom)
    assert ctx.open("task-clock").read().enabled > 0  # nothing stayed held


def test_the_log_callback() -> None:
    got: list[tuple[shpmu.LogLevel, str]] = []
    inner: list[shpmu.Error] = []
    made: list[shpmu.Context] = []

    def log(level: shpmu.LogLevel, msg: str) -> None:
        got.append((level, msg))
        for c in made:
            for call in (c.stats, c.close):
                try:
                    call()
                except shpmu.Error as e:
                    inner.append(e)

    with shpmu.Context(log=log) as c:
        made.append(c)
        with pytest.raises(shpmu.NotFoundError) as info:
            c.open("no-such-event")
        errors = [m for level, m in got if level is shpmu.LogLevel.ERROR]
        assert len(errors) == 1 and "no-such-event" in errors[0]
        # From inside the log, the library's locks are held: a call on the
        # context fails at once, and closing it is refused.
        assert inner and {e.errno for e in inner} == {errno.EDEADLK}
        assert info.value.explanation
        made.clear()
        assert c.open("task-clock").read().enabled > 0


def test_a_log_callback_that_raises() -> None:
    def log(level: shpmu.LogLevel, msg: str) -> None:
        raise RuntimeError("boom")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with shpmu.Context(log=log) as c:
            with pytest.raises(shpmu.NotFoundError):
                c.open("no-such-event")
            assert any("log callback raised" in str(w.message) for w in caught)
            assert c.open("task-clock").read().enabled > 0
            # From another thread too: the library's lock was released.
            result: list[int] = []
            t = threading.Thread(target=lambda: result.append(c.stats().handles))
            t.start()
            t.join(10)
            assert result == [1]


def test_measure_against_twins() -> None:
    with Twin(PAGE_FAULTS, pid=0) as faults, Twin(CONTEXT_SWITCHES, pid=0) as switches:
        with shpmu.measure("page-faults", "context-switches", "task-clock") as m:
            bytearray(8 << 20)
            for _ in range(3):
                threading.Event().wait(0.001)
        truth_faults, truth_switches = faults.read(), switches.read()
    # The block's window lies inside the twins'.
    assert 0 < m["page-faults"].value <= truth_faults
    assert 3 <= m["context-switches"].value <= truth_switches
    assert m["task-clock"].value > 0 and m.elapsed > 0.003
    assert set(m) == {"page-faults", "context-switches", "task-clock"}
    assert "page-faults" in str(m)


def test_measure_with_inherit_counts_new_threads() -> None:
    def work() -> None:
        bytearray(16 << 20)

    with shpmu.measure("page-faults", inherit=True) as with_threads:
        t = threading.Thread(target=work)
        t.start()
        t.join()
    with shpmu.measure("page-faults") as this_thread:
        t = threading.Thread(target=work)
        t.start()
        t.join()
    # 16 MiB touched: 4096 faults on 4 KiB pages (fewer with huge pages).
    assert with_threads["page-faults"].value > this_thread["page-faults"].value + 100


def test_measure_refuses_and_cleans_up(ctx: shpmu.Context) -> None:
    with pytest.raises(shpmu.NotFoundError):
        with shpmu.measure("task-clock", "no-such-event", context=ctx):
            pass
    assert ctx.stats().handles == 0
    with pytest.raises(ZeroDivisionError):
        with shpmu.measure("task-clock", context=ctx) as m:
            1 / 0
    assert m["task-clock"].enabled > 0 and ctx.stats().handles == 0


def test_errors_match_builtin_exceptions(ctx: shpmu.Context) -> None:
    with pytest.raises(FileNotFoundError) as info:
        ctx.open("task-clock", shpmu.Cgroup("no/such/cgroup"))
    e = info.value
    assert isinstance(e, shpmu.Error) and e.errno == errno.ENOENT
    assert e.op.startswith("open task-clock")
    assert isinstance(shpmu.ClosedError("read"), OSError)


def test_library_version() -> None:
    major, minor, _ = map(int, shpmu.library_version().split("."))
    assert (major, minor) >= (0, 4)


def test_budget_rows(ctx: shpmu.Context) -> None:
    ctx.open("task-clock")
    for row in ctx.budget():  # none on a machine without a core PMU
        assert row.pmu and row.used <= row.wanted and row.saved == row.wanted - row.used


def test_a_context_dropped_unclosed_is_freed() -> None:
    import gc
    import os

    before = len(os.listdir("/proc/self/fd"))
    ctx = shpmu.Context()
    hs = [ctx.open(e, shpmu.AllCPUs()) for e in ("cpu-clock", "context-switches")]
    assert len(os.listdir("/proc/self/fd")) > before
    del ctx, hs
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_log_callback_may_close_another_context() -> None:
    other = shpmu.Context()
    closed: list[bool] = []

    def log(level: shpmu.LogLevel, msg: str) -> None:
        if level is shpmu.LogLevel.ERROR and not closed:
            other.close()
            closed.append(other.closed)

    with shpmu.Context(log=log) as c:
        with pytest.raises(shpmu.NotFoundError):
            c.open("no-such-event")
    assert closed == [True]


def test_a_closed_handle_never_reaches_c(
    ctx: shpmu.Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shpmu.handle

    h = ctx.open("task-clock")
    h.close()
    calls: list[object] = []

    def recorded(*args: object) -> int:
        calls.append(args)
        return 0

    monkeypatch.setattr(shpmu.handle, "_read", recorded)
    with pytest.raises(shpmu.ClosedError):
        h.read()
    assert calls == []


def test_a_close_the_library_refuses_leaves_the_handle_open() -> None:
    handles: list[shpmu.Handle] = []
    refused: list[int] = []

    def log(level: shpmu.LogLevel, msg: str) -> None:
        if level is shpmu.LogLevel.ERROR and handles and not refused:
            try:
                handles[0].close()  # the library's lock is held: EDEADLK
            except shpmu.Error as e:
                refused.append(e.errno)

    with shpmu.Context(log=log) as c:
        handles.append(c.open("task-clock"))
        batch = c.batch(handles)
        # The library logs a missing cgroup holding its lock.
        with pytest.raises(shpmu.NotFoundError):
            c.open("task-clock", shpmu.Cgroup("no-such-cgroup-here"))
        assert refused == [errno.EDEADLK]
        assert not handles[0].closed and batch.read()[0].enabled > 0
        handles[0].close()
        assert c.stats().handles == 0


def test_encoded_attrs_are_checked(ctx: shpmu.Context) -> None:
    plain = ctx.open(shpmu.Attr(shpmu.Type.SOFTWARE, shpmu.Software.PAGE_FAULTS))
    short = ctx.open(shpmu.Attr(shpmu.Type.SOFTWARE, shpmu.Software.PAGE_FAULTS, encoded=b"\x01"))
    assert ctx.stats().kernel_events == 1  # nothing but the fields given
    with pytest.raises(shpmu.Error) as info:
        ctx.open(shpmu.Attr(encoded=bytes(200) + b"\x01"))
    assert info.value.errno == errno.E2BIG
    with pytest.raises(TypeError):
        ctx.open(shpmu.Attr(encoded="x"))  # type: ignore[arg-type]
    plain.close()
    short.close()


def test_a_log_function_that_holds_its_owner_lets_it_go() -> None:
    import gc
    import os

    class Agent:
        def __init__(self) -> None:
            self.ctx = shpmu.Context(log=self.log)
            self.h = self.ctx.open("cpu-clock", shpmu.AllCPUs())

        def log(self, level: shpmu.LogLevel, msg: str) -> None:
            pass

    before = len(os.listdir("/proc/self/fd"))
    agent = Agent()
    assert len(os.listdir("/proc/self/fd")) > before
    del agent
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == before


SIGNALS_DURING_READS = """
import errno, signal, time
import shpmu

ctx = shpmu.Context()
h = ctx.open("task-clock")
state = {"armed": False, "raised": 0, "closes": []}

class Tick(Exception):
    pass

def tick(signum, frame):
    # Raises only inside the try below, where a read may be anywhere
    # between its enter and its leave.
    if not state["armed"]:
        return
    state["raised"] += 1
    if state["raised"] % 50 == 0:
        try:
            ctx.close()  # refused while this thread is inside a call
            state["closes"].append(0)
        except shpmu.Error as e:
            state["closes"].append(e.errno)
    raise Tick

signal.signal(signal.SIGALRM, tick)
signal.setitimer(signal.ITIMER_REAL, 0.0001, 0.0001)
end = time.monotonic() + 2
while time.monotonic() < end:  # on after a close: reads then raise ClosedError
    try:
        state["armed"] = True
        h.read()
        state["armed"] = False
    except (Tick, shpmu.ClosedError):
        state["armed"] = False
signal.setitimer(signal.ITIMER_REAL, 0)
ctx.close()
assert state["raised"] > 100, state
assert set(state["closes"]) <= {0, errno.EDEADLK}, state
print("ok", state["raised"], state["closes"][:5])
"""


def test_exceptions_from_signal_handlers_leave_close_working() -> None:
    """A signal handler that raises between a call's enter and leave, and
    one that closes the context: close neither hangs nor frees under a
    call."""
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-c", SIGNALS_DURING_READS], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0 and r.stdout.startswith("ok"), (r.stdout, r.stderr)
