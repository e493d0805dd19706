# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import kernel  # noqa: E402

import shpmu  # noqa: E402

_names = itertools.count()


@pytest.fixture
def ctx() -> Iterator[shpmu.Context]:
    with shpmu.Context() as c:
        yield c


@pytest.fixture
def cgroup() -> Iterator[str]:
    """A cgroup2 cgroup of the test's own, removed after it (its tasks
    have exited by then: each test closes its workers)."""
    root = kernel.cgroup2_mount()
    if root is None:
        pytest.skip("no cgroup2 mount on this host")
    path = os.path.join(root, f"shpmu-py-{os.getpid()}-{next(_names)}")
    os.mkdir(path)
    yield path
    deadline = time.monotonic() + 10
    while True:
        try:
            os.rmdir(path)
            return
        except OSError:
            # A reaped task leaves cgroup.procs a moment later.
            if time.monotonic() > deadline:
                raise
            time.sleep(0.001)


@pytest.fixture(scope="session")
def bpffs() -> Iterator[str]:
    """A BPF filesystem of the session's own, for host scope."""
    if os.geteuid() != 0:
        pytest.skip("host scope needs root (CAP_BPF, CAP_PERFMON, a mount)")
    path = tempfile.mkdtemp(prefix="shpmu-py-bpffs-")
    r = subprocess.run(["mount", "-t", "bpf", "bpf", path], capture_output=True, text=True)
    if r.returncode:
        os.rmdir(path)
        pytest.skip(f"cannot mount a BPF filesystem: {r.stderr.strip()}")
    yield path
    subprocess.run(["umount", path], check=True)
    os.rmdir(path)
