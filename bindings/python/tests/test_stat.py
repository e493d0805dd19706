# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""python3 -m shpmu stat against shpmu-stat itself ($SHPMU_STAT, or on
PATH): the same rows, columns and exit status for the same command
line; and its counts against a twin."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

STAT = os.environ.get("SHPMU_STAT") or shutil.which("shpmu-stat")


def py_stat(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shpmu", "stat", *args], capture_output=True, text=True, timeout=60
    )


def c_stat(*args: str) -> subprocess.CompletedProcess[str]:
    if STAT is None:
        pytest.skip("shpmu-stat is not installed (set SHPMU_STAT)")
    return subprocess.run([STAT, *args], capture_output=True, text=True, timeout=60)


def shape(out: str) -> list[str]:
    """The output with every number blanked: what must be the same."""
    return [
        re.sub(r"\s+", " ", re.sub(r"\d+(\.\d+)?", "N", line)).rstrip() for line in out.splitlines()
    ]


@pytest.mark.parametrize(
    "args",
    [
        ["-e", "task-clock,context-switches,page-faults", "--", "true"],
        ["-x", ",", "-e", "task-clock,{page-faults,context-switches}", "--", "true"],
        ["-j", "-e", "task-clock,page-faults", "--", "true"],
        ["-a", "-e", "cpu-clock,context-switches", "--", "true"],
        ["-C", "0", "-e", "cpu-clock", "--", "true"],
        ["-G", "/", "-e", "task-clock", "--", "true"],
        ["-x", ";", "-G", "/", "-e", "page-faults", "--", "true"],
        ["-e", "cycles,task-clock", "--", "true"],
        ["--", "true"],
        ["-v", "-a", "-e", "cpu-clock,task-clock", "--", "true"],
        ["-x", ",", "-j", "-e", "task-clock", "--", "true"],
        ["-j", "-x", ";", "-e", "task-clock", "--", "true"],
        ["-C", " 0,", "-e", "cpu-clock", "--", "true"],
        ["-x", ",", "-G", "/,", "-e", "page-faults", "--", "true"],
    ],
)
def test_same_output(args: list[str]) -> None:
    c, py = c_stat(*args), py_stat(*args)
    assert py.returncode == c.returncode, (py.stderr, c.stderr)
    assert shape(py.stdout) == shape(c.stdout), (py.stdout, c.stdout)
    assert shape(py.stderr) == shape(c.stderr), (py.stderr, c.stderr)


@pytest.mark.parametrize(
    "args",
    [
        ["-e", "task-clock", "--", "false"],
        ["-e", "task-clock", "--", "sh", "-c", "exit 7"],
        ["-e", "task-clock", "--", "/no/such/command"],
        ["-e", "no-such-event", "--", "true"],
        ["-p", "1", "-a"],
        ["-C", "9999", "-e", "cpu-clock", "--", "true"],
        ["-G", "/no/such", "--", "true"],
        ["-e", "{task-clock", "--", "true"],
        ["-I", "5", "--", "true"],
        ["-I", "0", "--", "true"],
        ["-C", "1-", "--", "true"],
        ["--cgroup-id", "0", "--", "true"],
        [],
    ],
)
def test_same_exit_status_and_messages(args: list[str]) -> None:
    c, py = c_stat(*args), py_stat(*args)
    assert py.returncode == c.returncode, (args, py.stderr, c.stderr)
    c_lines = [l for l in c.stderr.splitlines() if l.startswith("shpmu-stat:")]
    py_lines = [l for l in py.stderr.splitlines() if l.startswith("shpmu-stat:")]
    assert shape("\n".join(py_lines)) == shape("\n".join(c_lines)), (py.stderr, c.stderr)


def test_counts_a_command_from_its_exec() -> None:
    """A command that touches 4096 fresh pages: the count holds them,
    and JSON gives the same as the table."""
    cmd = [
        sys.executable,
        "-c",
        "import mmap; m = mmap.mmap(-1, 4096 * 4096); [m.__setitem__(i * 4096, 1) for i in range(4096)]",
    ]
    py = py_stat("-j", "-e", "page-faults,task-clock", "--", *cmd)
    assert py.returncode == 0, py.stderr
    rows = [json.loads(line) for line in py.stdout.splitlines()]
    assert [r["event"] for r in rows] == ["page-faults", "task-clock"]
    assert int(rows[0]["counter-value"]) >= 4096
    assert float(rows[1]["counter-value"]) > 0 and rows[1]["unit"] == "msec"


def test_interval_rows_add_up() -> None:
    start = time.monotonic()
    py = py_stat("-I", "50", "-x", ",", "-e", "cpu-clock", "-C", "0", "--", "sleep", "0.22")
    wall_ms = (time.monotonic() - start) * 1000
    assert py.returncode == 0, py.stderr
    rows = [line.split(",") for line in py.stdout.splitlines()]
    assert len(rows) >= 4, rows
    stamps = [float(r[0]) for r in rows]
    assert stamps == sorted(stamps)
    # One CPU's clock runs at wall speed: the intervals, which do not
    # overlap, hold no more than the run's wall time.
    assert all(float(r[1]) > 0 for r in rows)
    assert sum(float(r[1]) for r in rows) <= wall_ms, rows


def test_a_process_for_as_long_as_a_command() -> None:
    """-p counts another process; the command only says how long."""
    target = subprocess.Popen(["sleep", "30"])
    try:
        args = ["-p", str(target.pid), "-e", "task-clock,context-switches", "--", "sleep", "0.05"]
        c, py = c_stat(*args), py_stat(*args)
        assert py.returncode == c.returncode == 0, (py.stderr, c.stderr)
        assert f"process id '{target.pid}'" in py.stdout
        assert shape(py.stdout) == shape(c.stdout), (py.stdout, c.stdout)
    finally:
        target.kill()
        target.wait()


def test_per_thread_rows() -> None:
    """--per-thread: a row per thread of the process, event by event,
    comm-tid first; the same rows as shpmu-stat's."""
    target = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import threading, time; "
            "[threading.Thread(target=time.sleep, args=(30,), daemon=True).start() "
            "for _ in range(2)]; time.sleep(30)",
        ]
    )
    try:
        deadline = time.monotonic() + 10
        while len(os.listdir(f"/proc/{target.pid}/task")) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        args = [
            "-x",
            ",",
            "--per-thread",
            "-p",
            str(target.pid),
            "-e",
            "task-clock,context-switches",
            "--",
            "sleep",
            "0.05",
        ]
        c, py = c_stat(*args), py_stat(*args)
        assert py.returncode == c.returncode == 0, (py.stderr, c.stderr)
        rows = [line.split(",") for line in py.stdout.splitlines()]
        tids = sorted(int(t) for t in os.listdir(f"/proc/{target.pid}/task"))
        assert [r[3] for r in rows] == ["task-clock"] * 3 + ["context-switches"] * 3
        assert sorted(int(r[0].rpartition("-")[2]) for r in rows[:3]) == tids
        assert shape(py.stdout) == shape(c.stdout), (py.stdout, c.stdout)
    finally:
        target.kill()
        target.wait()


@pytest.mark.parametrize(
    "args",
    [
        ["--budget"],
        ["--budget", "-e", "task-clock", "-a"],
        ["--budget", "--", "true"],
        ["--per-thread", "-a"],
    ],
)
def test_budget_and_per_thread_usage(args: list[str]) -> None:
    c, py = c_stat(*args), py_stat(*args)
    assert py.returncode == c.returncode, (py.stderr, c.stderr)
    assert shape(py.stdout) == shape(c.stdout), (py.stdout, c.stdout)
    assert shape(py.stderr) == shape(c.stderr), (py.stderr, c.stderr)


def test_interval_rows_share_their_stamp() -> None:
    py = py_stat(
        "-I", "50", "-x", ",", "-e", "cpu-clock,context-switches", "-a", "--", "sleep", "0.2"
    )
    assert py.returncode == 0, py.stderr
    stamps = [line.split(",")[0] for line in py.stdout.splitlines()]
    assert len(stamps) >= 6 and stamps[0::2] == stamps[1::2], stamps


def test_cgroup_by_id() -> None:
    root_id = str(os.stat(_cgroup2()).st_ino)
    args = ["-x", ",", "--cgroup-id", root_id, "-e", "page-faults", "--", "true"]
    c, py = c_stat(*args), py_stat(*args)
    assert py.returncode == c.returncode == 0, (py.stderr, c.stderr)
    assert shape(py.stdout) == shape(c.stdout), (py.stdout, c.stdout)


def _cgroup2() -> str:
    from kernel import cgroup2_mount

    mount = cgroup2_mount()
    if mount is None:
        pytest.skip("no cgroup2 mount")
    return mount


def test_a_signal_waits_for_the_command_as_shpmu_stat_does() -> None:
    """SIGTERM to the counter alone: shpmu-stat keeps waiting for its
    command and exits with its status; so must this."""
    import signal

    if STAT is None:
        pytest.skip("shpmu-stat is not installed (set SHPMU_STAT)")
    results = []
    for cmd in ([STAT], [sys.executable, "-m", "shpmu", "stat"]):
        p = subprocess.Popen(
            [*cmd, "-e", "task-clock", "--", "sh", "-c", "sleep 0.5; exit 7"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(0.2)  # the work being measured: the command is running
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=30)
        results.append((p.returncode, shape(out)))
    assert results[0] == results[1] and results[0][0] == 7, results
