# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Bad input raises the right exception and changes nothing: no handle
or kernel event appears, and what was open still reads."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable

import pytest

import shpmu


def unchanged(
    ctx: shpmu.Context, call: Callable[[], object], exc: type[BaseException], err: int | None = None
) -> BaseException:
    before = ctx.stats()
    with pytest.raises(exc) as info:
        call()
    after = ctx.stats()
    assert (after.handles, after.kernel_events, after.kernel_fds, after.opens) == (
        before.handles,
        before.kernel_events,
        before.kernel_fds,
        before.opens,
    )
    if err is not None:
        assert isinstance(info.value, shpmu.Error), repr(info.value)
        assert info.value.errno == err, repr(info.value)
        assert str(info.value).startswith("shpmu: ")
    return info.value


def test_unknown_event_names(ctx: shpmu.Context) -> None:
    e = unchanged(ctx, lambda: ctx.open("no-such-event"), FileNotFoundError, errno.ENOENT)
    assert isinstance(e, shpmu.NotFoundError) and e.explanation
    unchanged(ctx, lambda: ctx.event_attr("no-such-event"), shpmu.NotFoundError, errno.ENOENT)
    unchanged(ctx, lambda: ctx.open(""), shpmu.Error, errno.EINVAL)
    unchanged(ctx, lambda: ctx.open("task\0clock"), shpmu.Error, errno.EINVAL)
    unchanged(ctx, lambda: ctx.open("task-clock:zz"), shpmu.Error)
    unchanged(ctx, lambda: ctx.open_group(["task-clock", "nope"]), shpmu.NotFoundError)


def test_wrong_types(ctx: shpmu.Context) -> None:
    for call in (
        lambda: ctx.open(42),  # type: ignore[arg-type]
        lambda: ctx.open(b"task-clock"),  # type: ignore[arg-type]
        lambda: ctx.open("task-clock", target=0),  # type: ignore[arg-type]
        lambda: ctx.open("task-clock", target=shpmu.Target()),
        lambda: ctx.open("task-clock", no_multiplex=1),  # type: ignore[arg-type]
        lambda: ctx.open_group("task-clock"),
        lambda: ctx.open_group([shpmu.Attr(1, 1), 7]),  # type: ignore[list-item]
        lambda: ctx.open(shpmu.Attr(type="1")),  # type: ignore[arg-type]
        lambda: ctx.read_many([1, 2]),  # type: ignore[list-item]
        lambda: ctx.read_many("ab"),  # type: ignore[arg-type]
        lambda: ctx.cgroup_id(3),  # type: ignore[arg-type]
        lambda: ctx.cgroup_path("3"),  # type: ignore[arg-type]
        lambda: ctx.list_events(callback=3),  # type: ignore[arg-type]
        lambda: shpmu.Task("1"),  # type: ignore[arg-type]
        lambda: shpmu.Task(True),
        lambda: shpmu.CPU(1.5),  # type: ignore[arg-type]
        lambda: shpmu.Cgroup(5),  # type: ignore[arg-type]
        lambda: shpmu.Counts("4"),  # type: ignore[arg-type]
        lambda: shpmu.Context(scope=1),  # type: ignore[arg-type]
        lambda: shpmu.Context(log=5),  # type: ignore[arg-type]
        lambda: shpmu.Context(lock_timeout="1"),  # type: ignore[arg-type]
    ):
        unchanged(ctx, call, TypeError)


def test_bad_values(ctx: shpmu.Context) -> None:
    for call in (
        lambda: shpmu.Task(-1),
        lambda: shpmu.Process(1 << 40),
        lambda: shpmu.CPU(-2),
        lambda: shpmu.Cgroup(),
        lambda: shpmu.Cgroup("/x", id=5),
        lambda: shpmu.Cgroup("a\0b"),
        lambda: shpmu.Counts(-1),
        lambda: ctx.open(shpmu.Attr(type=1 << 32)),
        lambda: ctx.open(shpmu.Attr(config=-1)),
        lambda: ctx.open_group([]),
        lambda: ctx.open_group(["task-clock"] * (shpmu.GROUP_MAX + 1)),
        lambda: shpmu.Context(scope="galaxy"),
        lambda: shpmu.Context(domain="a\0b"),
        lambda: shpmu.Context(lock_timeout=-1),
        lambda: ctx.open(shpmu.Attr(config1=1 << 70)),
    ):
        unchanged(ctx, call, shpmu.Error, errno.EINVAL)
    # The library's own refusals.
    offline = max(os.sched_getaffinity(0)) + 4096
    unchanged(ctx, lambda: ctx.open("task-clock", shpmu.CPU(offline)), shpmu.Error, errno.EINVAL)
    unchanged(ctx, lambda: shpmu.Context(domain="../x"), shpmu.Error, errno.EINVAL)
    unchanged(ctx, lambda: shpmu.Context(scope="host", backend="perf"), shpmu.Error, errno.EINVAL)
    sampling = shpmu.Attr(shpmu.Type.SOFTWARE, shpmu.Software.TASK_CLOCK)
    sampling.encoded = bytes(16) + (1000).to_bytes(8, "little") + bytes(112)
    unchanged(ctx, lambda: ctx.open(sampling), shpmu.Error, errno.EOPNOTSUPP)


def test_bad_cgroup_paths(ctx: shpmu.Context) -> None:
    root = ctx.cgroup_root()
    unchanged(
        ctx,
        lambda: ctx.open("task-clock", shpmu.Cgroup(root + "/no-such-cgroup")),
        shpmu.NotFoundError,
        errno.ENOENT,
    )
    unchanged(ctx, lambda: ctx.open("task-clock", shpmu.Cgroup("/etc")), shpmu.Error, errno.EXDEV)
    unchanged(ctx, lambda: ctx.open("task-clock", shpmu.Cgroup("../x")), shpmu.Error, errno.EINVAL)
    unchanged(
        ctx,
        lambda: ctx.open("task-clock", shpmu.Cgroup("cgroup.procs")),
        shpmu.Error,
        errno.ENOTDIR,
    )
    unchanged(
        ctx,
        lambda: ctx.open("task-clock", shpmu.Cgroup("a" * 5000)),
        shpmu.Error,
        errno.ENAMETOOLONG,
    )
    unchanged(ctx, lambda: ctx.cgroup_path(1 << 63), shpmu.NotFoundError, errno.ENOENT)
    unchanged(ctx, lambda: ctx.cgroup_id("/nope"), shpmu.Error, errno.EXDEV)


def test_no_such_task(ctx: shpmu.Context) -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    unchanged(
        ctx, lambda: ctx.open("task-clock", shpmu.Task(pid)), shpmu.NoProcessError, errno.ESRCH
    )
    with pytest.raises(ProcessLookupError):
        ctx.open("task-clock", shpmu.Process(pid))


def test_closed_handles_and_contexts(ctx: shpmu.Context) -> None:
    h = ctx.open("task-clock")
    g = ctx.open_group(["task-clock", "page-faults"])
    batch = ctx.batch([h, g])
    h.close()
    h.close()  # a second close does nothing
    # A new handle may get the closed one's number: the closed Handle
    # must not reach it.
    other = ctx.open("page-faults")
    calls: list[Callable[[], object]] = [
        h.read,
        h.read_cached,
        h.read_bound,
        h.read_unattributed,
        lambda: h.read_cpu(-1),
        lambda: h.read_pmu("cpu"),
        h.read_group,
        h.enable,
        h.disable,
        h.reset,
        batch.read,
        lambda: ctx.read_many([other, h]),
        lambda: ctx.batch([other, h]),
    ]
    for call in calls:
        e = unchanged(ctx, call, shpmu.ClosedError, errno.EBADF)
        assert "closed" in str(e)
    assert other.read().enabled > 0
    assert ctx.read_many([other, g])[0].enabled > 0

    ctx.close()
    ctx.close()
    after: list[Callable[[], object]] = [
        other.read,
        g.read_group,
        lambda: ctx.open("task-clock"),
        ctx.stats,
        lambda: ctx.read_many([other]),
    ]
    for call in after:
        with pytest.raises(shpmu.ClosedError):
            call()
    other.close()  # closed with its context: nothing to do


def test_handles_of_another_context(ctx: shpmu.Context) -> None:
    with shpmu.Context() as other:
        foreign = other.open("task-clock")
        mine = ctx.open("task-clock")
        unchanged(ctx, lambda: ctx.read_many([mine, foreign]), shpmu.Error, errno.EINVAL)
        unchanged(ctx, lambda: ctx.batch([foreign]), shpmu.Error, errno.EINVAL)
        unchanged(ctx, lambda: ctx.read_many(other.batch([foreign])), shpmu.Error, errno.EINVAL)
        assert foreign.read().enabled > 0


def test_read_many_buffers(ctx: shpmu.Context) -> None:
    hs = [ctx.open("task-clock") for _ in range(4)]
    short = shpmu.Counts(3)
    unchanged(ctx, lambda: ctx.read_many(hs, short), shpmu.Error, errno.EINVAL)
    assert short[:] == [shpmu.Count(0, 0, 0)] * 3  # not written
    unchanged(ctx, lambda: ctx.read_many(hs, [None] * 4), TypeError)  # type: ignore[arg-type]
    unchanged(ctx, lambda: hs[0].read_group(shpmu.Counts(0)), shpmu.Error, errno.EINVAL)
    g = ctx.open_group(["task-clock", "page-faults"])
    unchanged(ctx, lambda: g.read_group(shpmu.Counts(1)), shpmu.Error, errno.EINVAL)
    assert len(ctx.read_many([], shpmu.Counts(0))) == 0


def test_bad_calls_on_good_handles(ctx: shpmu.Context) -> None:
    h = ctx.open("task-clock")
    unchanged(ctx, lambda: h.read_cpu(4096 * 64), shpmu.NotFoundError, errno.ENOENT)
    unchanged(ctx, lambda: h.read_cpu(-5), shpmu.Error, errno.EINVAL)
    unchanged(ctx, lambda: h.read_pmu(""), shpmu.Error, errno.EINVAL)
    unchanged(ctx, lambda: h.read_pmu("no_such_pmu"), shpmu.NotFoundError, errno.ENOENT)
    # A classic handle has no cached reading: the library says so.
    e = unchanged(ctx, h.read_cached, shpmu.Error, errno.EOPNOTSUPP)
    assert isinstance(e, shpmu.Error) and e.explanation
    assert h.read().enabled > 0
