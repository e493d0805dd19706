#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The library's layers, checked from its includes:

- no circle of includes, counting a .c and its .h as one module (so that a
  circle of calls shows as one of includes);
- the core (lib/core/) includes no backend and no host scope: it reaches
  them through core/backend.h, which lib/backend_choice.c implements;
- only the public calls use their plumbing (core/api.h)."""
import pathlib
import re
import sys

lib = pathlib.Path(sys.argv[1])
# The files that implement the public calls, and may use core/api.h.
PUBLIC = {"core/api", "core/lifecycle", "core/open", "core/control",
          "core/read", "core/read_bound", "core/read_many", "core/compat",
          "core/explain_api",
          "names/names",
          "cgroup/cgroup_api", "core/budget_api", "core/read_pmu"}
# What the core may include besides itself.
CORE_MAY_USE = {"cgroup", "names", "sys"}

edges = {}
problems = []
for f in sorted(lib.rglob("*.[ch]")):
    rel = f.relative_to(lib)
    mod = str(rel.with_suffix(""))
    folder = rel.parts[0] if len(rel.parts) > 1 else "."
    for inc in re.findall(r'^#include "([^"]+)\.h"', f.read_text(), re.M):
        if not (lib / (inc + ".h")).exists():
            if "/" not in inc and (f.parent / (inc + ".h")).exists():
                problems.append(f"{rel}: includes {inc}.h by a bare "
                                f"name: write its folder")
            continue
        if inc == mod:
            continue
        edges.setdefault(mod, set()).add(inc)
        to = inc.split("/")[0] if "/" in inc else "."
        if folder == "core" and to not in CORE_MAY_USE | {"core"}:
            problems.append(f"{rel}: the core includes {inc}.h")
        if inc == "core/api" and mod not in PUBLIC:
            problems.append(f"{rel}: below the public calls, yet "
                            f"includes core/api.h")

# Depth-first search for a cycle, reported as its path.
state, stack = {}, []


def visit(m):
    state[m] = "open"
    stack.append(m)
    for n in sorted(edges.get(m, ())):
        if state.get(n) == "open":
            return stack[stack.index(n):] + [n]
        if n not in state:
            cycle = visit(n)
            if cycle:
                return cycle
    stack.pop()
    state[m] = "done"
    return None


for m in sorted(edges):
    if m not in state:
        cycle = visit(m)
        if cycle:
            problems.append("circle of includes: " + " -> ".join(cycle))
            break
for p in problems:
    print(p)
print("1 passed, 0 failed" if not problems else "0 passed, 1 failed")
sys.exit(1 if problems else 0)
