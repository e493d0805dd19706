# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""shpmu-stat on the PMU model (SHPMU_PMU_MODEL, a real clock): the lines
perf stat prints for multiplexed events, events that never ran and events
the machine does not have. Run by test_stat.py --pmu-model.

The model counts 1 + (config & 7) events per ns an event runs, so an
event's scaled value is that rate times its enabled time: what the
checks below hold the tool to."""
import os
import re
import subprocess
import time

# Generic hardware events and their rates on the model.
RATES = {"cycles": 1, "instructions": 2, "cache-misses": 4, "branches": 5}
SLEEP = 0.3  # s: the window the tool counts CPU-wide around


def stat(spec, args):
    env = dict(os.environ, SHPMU_PMU_MODEL=spec)
    start = time.monotonic()
    out = subprocess.run(args, capture_output=True, text=True, env=env)
    return out, time.monotonic() - start


def csv_rows(text):
    return [line.split(",") for line in text.splitlines() if line]


def multiplexed(tool, check):
    """Four events on two counters rotating every 2 ms: each runs half of
    its enabled time, on every CPU."""
    spec = "counters=2,fixed=0,rotate_ms=2"
    events = ",".join(RATES)
    ncpus = os.cpu_count()
    out, wall = stat(spec, [tool, "-x,", "-a", "-e", events, "--", "sleep",
                            str(SLEEP)])
    rows = csv_rows(out.stdout)
    print(out.stdout, out.stderr)
    check(out.returncode == 0, f"exit status {out.returncode}")
    check([r[2] for r in rows] == list(RATES), f"one row an event: {rows}")
    for r in rows:
        if len(r) < 5 or not r[0].isdigit():
            check(False, f"a counted row: {r}")
            continue
        rate, run, pct = RATES[r[2]], int(r[3]), float(r[4])
        # perf's CSV percentage is its integer division: 49 or 50 for a
        # half; 45..55 leaves room for the rotations cut at the window's
        # edges (a 2 ms period against 300 ms and more).
        check(45 <= pct <= 55, f"{r[2]} ran about half: {r}")
        # The scaled value is rate x enabled exactly: the enabled time,
        # from which the running time and percentage must follow.
        enabled = int(r[0]) // rate
        check(int(r[0]) % rate == 0, f"{r[2]}: {r[0]} is {rate} x enabled")
        check(0 < run < enabled and run * 100 // enabled == pct,
              f"{r[2]}: {run} ns running of {enabled} enabled is {pct}%")
        # The window holds the sleep, on every CPU, and lies inside the
        # tool's lifetime.
        check(ncpus * SLEEP * 1e9 <= enabled <= ncpus * wall * 1e9,
              f"{r[2]}: enabled {enabled} ns, between {ncpus} x {SLEEP} s "
              f"and {ncpus} x {wall:.3f} s")
    out, _ = stat(spec, [tool, "-a", "-e", events, "--", "sleep", "0.1"])
    pcts = re.findall(r"^ +\d+ +\S+ .*\((\d+\.\d\d)%\)$", out.stdout, re.M)
    check(len(pcts) == 4 and all(40 <= float(p) <= 60 for p in pcts),
          f"human: each multiplexed line ends in (xx.xx%): {out.stdout}")


def never_ran(tool, check):
    """One counter and a rotation longer than the run: the first event has
    it throughout, the second never runs."""
    spec = "counters=1,fixed=0,rotate_ms=60000"
    out, _ = stat(spec, [tool, "-x,", "-a", "-e", "cycles,instructions",
                         "--", "sleep", "0.05"])
    rows = csv_rows(out.stdout)
    check(len(rows) == 2, f"two rows: {rows}")
    if len(rows) == 2:
        check(rows[0][0].isdigit() and rows[0][4] == "100.00",
              f"cycles ran all the time: {rows[0]}")
        check(rows[1][0] == "<not counted>" and rows[1][3] == "0" and
              rows[1][4] == "0.00", f"instructions never ran: {rows[1]}")
    out, _ = stat(spec, [tool, "-a", "-e", "cycles,instructions", "--",
                         "sleep", "0.05"])
    check(re.search(r"^ +<not counted> +instructions +\(0\.00%\)$",
                    out.stdout, re.M),
          f"human <not counted> line: {out.stdout}")
    check(not re.search(r"cycles.*%", out.stdout),
          f"no percentage for an event that ran throughout: {out.stdout}")
    check(out.returncode == 0, f"exit status {out.returncode}")


def not_supported(tool, check, spec, event):
    """An event the model refuses at open (EINVAL, which perf stat counts
    as not supported, as ENOENT and EOPNOTSUPP): shown, and the others
    counted; the exit status is the command's."""
    out, _ = stat(spec, [tool, "-x,", "-a", "-e", f"cycles,{event}", "--",
                         "sh", "-c", "exit 3"])
    rows = csv_rows(out.stdout)
    check(out.returncode == 3, f"the command's exit status: {out}")
    check(len(rows) == 2 and rows[0][0].isdigit(),
          f"cycles counted: {rows}")
    check(len(rows) == 2 and rows[1][:5] ==
          ["<not supported>", "", event, "0", "100.00"],
          f"{event} not supported: {rows}")
    out, _ = stat(spec, [tool, "-a", "-e", f"cycles,{event}", "--", "true"])
    check(re.search(rf"^ +<not supported> +{event} *$", out.stdout, re.M),
          f"human <not supported> line: {out.stdout}")


def run(tool, check):
    multiplexed(tool, check)
    never_ran(tool, check)
    # A raw event bound to general counter 7 (config bits 32..39, the
    # model's constraint) where there are two.
    not_supported(tool, check, "counters=2,fixed=0", "r8000000000")
