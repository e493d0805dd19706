# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The binding's ctypes structs have the C header's layout: sizes and
every field's offset, from a program compiled against the installed
header."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import tempfile

import pytest

from shpmu import _clib

STRUCTS = {
    "shpmu_opts": _clib.Opts,
    "shpmu_target": _clib.Target,
    "shpmu_open_opts": _clib.OpenOpts,
    "shpmu_count": _clib.CCount,
    "shpmu_stats": _clib.Stats,
    "shpmu_pmu_budget": _clib.Budget,
}
# perf_event_attr: the fields the binding sets (its bit fields are
# checked by the encoding tests: ":u" sets exclude_kernel).
ATTR_FIELDS = [
    "type",
    "size",
    "config",
    "sample_period",
    "read_format",
    "wakeup_events",
    "config1",
    "config2",
    "clockid",
]


def c_layout() -> dict[str, int]:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or shutil.which("pkg-config") is None:
        pytest.skip("no C compiler or pkg-config to read the header's layout")
    cflags = subprocess.run(["pkg-config", "--cflags", "libshpmu"], capture_output=True, text=True)
    if cflags.returncode:
        pytest.skip("pkg-config does not know libshpmu (its -dev files)")
    lines = [
        "#include <stddef.h>",
        "#include <stdio.h>",
        "#include <shpmu/shpmu.h>",
        "int main(void) {",
    ]
    for name, st in STRUCTS.items():
        lines.append(f'printf("{name} %zu\\n", sizeof(struct {name}));')
        for field, *_ in st._fields_:
            lines.append(f'printf("{name}.{field} %zu\\n", offsetof(struct {name}, {field}));')
    lines.append('printf("perf_event_attr %zu\\n", sizeof(struct perf_event_attr));')
    for field in ATTR_FIELDS:
        lines.append(
            f'printf("perf_event_attr.{field} %zu\\n", offsetof(struct perf_event_attr, {field}));'
        )
    lines.append("return 0; }")
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "layout.c"), os.path.join(d, "layout")
        with open(src, "w") as f:
            f.write("\n".join(lines))
        subprocess.run([cc, *cflags.stdout.split(), src, "-o", exe], check=True)
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


def test_structs_match_the_header() -> None:
    c = c_layout()
    for name, st in STRUCTS.items():
        assert ctypes.sizeof(st) == c[name], name
        for field, *_ in st._fields_:
            assert getattr(st, field).offset == c[f"{name}.{field}"], f"{name}.{field}"
    for field in ATTR_FIELDS:
        assert getattr(_clib.PerfEventAttr, field).offset == c[f"perf_event_attr.{field}"], field
    # The binding's attr may be longer than the header's: the library
    # takes any size up to the one it knows, and groups are laid out at
    # the library's own stride (Context._attr_stride).
    assert _clib.ATTR_SIZE >= c["perf_event_attr"]


def test_modifiers_reach_the_bit_fields() -> None:
    import shpmu

    with shpmu.Context() as ctx:
        u, k = ctx.event_attr("task-clock:u"), ctx.event_attr("task-clock:k")
        assert (u.exclude_user, u.exclude_kernel) == (False, True)
        assert (k.exclude_user, k.exclude_kernel) == (True, False)
        raw = u.to_c("t")
        assert raw.exclude_kernel == 1 and raw.exclude_user == 0
