# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The examples run as a user runs them, and print what they say."""

from __future__ import annotations

import os
import subprocess
import sys

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


def test_compare() -> None:
    r = subprocess.run(
        [sys.executable, os.path.join(EXAMPLES, "compare.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("event"))
    rows = {line.split()[0]: line.split() for line in lines[header + 1 :]}
    assert {"task-clock", "page-faults", "context-switches"} <= set(rows)
    assert float(rows["task-clock"][2]) > 0 and float(rows["task-clock"][3]) > 0
