#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The includes among lib/ files form no circle, counting a .c and its .h
as one module (so a circle of calls shows as one of includes), and only
the public calls use their plumbing (api.h)."""
import pathlib
import re
import sys

lib = pathlib.Path(sys.argv[1])
# The files that implement the public calls, and may use api.h.
PUBLIC = {"api", "lifecycle", "open", "control", "read", "read_many",
          "names", "cgroup_api"}

edges = {}
api_users = []
for f in sorted(lib.glob("*.[ch]")):
    mod = f.stem
    for inc in re.findall(r'^#include "([^"/]+)\.h"', f.read_text(), re.M):
        if (lib / (inc + ".h")).exists() and inc != mod:
            edges.setdefault(mod, set()).add(inc)
            if inc == "api" and mod not in PUBLIC:
                api_users.append(f.name)

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


failed = False
for m in sorted(edges):
    if m not in state:
        cycle = visit(m)
        if cycle:
            print("circle of includes:", " -> ".join(cycle))
            failed = True
            break
if api_users:
    print("below the public calls, yet including api.h:", ", ".join(api_users))
    failed = True
print("1 passed, 0 failed" if not failed else "0 passed, 1 failed")
sys.exit(1 if failed else 0)
