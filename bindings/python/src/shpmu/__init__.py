# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""shpmu: Linux performance counters shared through libshpmu.

Identical counting requests (the same event on the same target) are
served by one kernel event; each handle reports only what happened while
it was enabled. This package calls the installed ``libshpmu.so.0``
through ctypes: nothing is compiled.

>>> import shpmu, time
>>> with shpmu.measure("task-clock", "context-switches") as m:
...     time.sleep(0.01)
>>> m["context-switches"].value >= 1
True

See libshpmu(3) and libshpmu(7) for the library's own words.
"""

from __future__ import annotations

from . import _clib
from .attr import Attr, Hardware, Software, Type
from .context import GROUP_MAX, Backend, Context, LogLevel, PMUBudget, Scope, Stats
from .count import Count, Counts
from .errors import (
    ClosedError,
    Error,
    NoProcessError,
    NotFoundError,
    PermissionDeniedError,
    TimedOutError,
)
from .handle import Batch, Handle
from .measure import Measurement, measure
from .target import CPU, AllCPUs, Cgroup, Process, Target, Task

__version__ = "0.4.0"


def library_version() -> str:
    """The version of the libshpmu running, "major.minor.patch"."""
    return "%d.%d.%d" % _clib.version()


__all__ = [
    "AllCPUs",
    "Attr",
    "Backend",
    "Batch",
    "CPU",
    "Cgroup",
    "ClosedError",
    "Context",
    "Count",
    "Counts",
    "Error",
    "GROUP_MAX",
    "Handle",
    "Hardware",
    "LogLevel",
    "Measurement",
    "NoProcessError",
    "NotFoundError",
    "PMUBudget",
    "PermissionDeniedError",
    "Process",
    "Scope",
    "Software",
    "Stats",
    "Target",
    "Task",
    "TimedOutError",
    "Type",
    "library_version",
    "measure",
]
