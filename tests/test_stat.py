#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""shpmu-stat against perf stat on a fixed workload, and its output formats.

usage: test_stat.py SHPMU_STAT WORKLOAD
"""
import json
import os
import shutil
import statistics
import subprocess
import sys

STAT, WORKLOAD = sys.argv[1], sys.argv[2]
if not shutil.which("perf"):
    print("SKIP: no perf binary to compare with (Debian: linux-perf)")
    sys.exit(77)
if os.geteuid() != 0:
    print("SKIP: -a needs CPU-wide counting: run as root")
    sys.exit(77)
EVENTS = "task-clock,context-switches,page-faults"
WORK = [WORKLOAD, "200", "100", "3000"]
failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def csv_counts(cmd):
    """Runs a perf-stat-like command with -x, and returns {event: value}."""
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    text = out.stderr if cmd[0] == "perf" else out.stdout
    counts = {}
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) >= 5 and fields[2] in EVENTS.split(","):
            counts[fields[2]] = float(fields[0])
    return counts


def compare(work, events, runs=5):
    """Medians of both tools on one workload, runs interleaved so that
    whatever else the machine does falls on both alike."""
    ours, perfs = [], []
    for _ in range(runs):
        ours.append(csv_counts([STAT, "-x,", "-e", EVENTS, "--"] + work))
        perfs.append(csv_counts(["perf", "stat", "-x,", "-e", EVENTS, "--"]
                                + work))
    for event in events:
        a = statistics.median(s[event] for s in ours)
        b = statistics.median(s[event] for s in perfs)
        print(f"{event}: shpmu-stat {a}, perf stat {b}")
        check(abs(a - b) <= 0.05 * b,
              f"{event}: {a} is not within 5% of perf's {b}")
    return statistics.median(s[events[-1]] for s in ours)


# CPU time and faults on a burning workload; switches on one that only
# sleeps, where a busy machine's preemptions cannot add a random number.
faults = compare([WORKLOAD, "200", "0", "3000"], ["task-clock", "page-faults"])
check(faults >= 3000, "the page faults were counted")
switches = compare([WORKLOAD, "0", "200", "10"], ["context-switches"])
check(switches >= 200, "the sleeps were counted")

# CSV: perf's field order, with a cgroup column only when per cgroup.
out = subprocess.run([STAT, "-x;", "-e", "cs,{task-clock,page-faults}", "--"]
                     + WORK, capture_output=True, text=True, check=True)
rows = [l.split(";") for l in out.stdout.splitlines() if l]
check(len(rows) == 3, f"three CSV rows: {rows}")
check(all(len(r) == 7 for r in rows), "seven CSV fields per row")
check([r[2] for r in rows] == ["cs", "task-clock", "page-faults"],
      "events in command-line order")
check(rows[1][1] == "msec", "task-clock in msec")
check(all(float(r[4]) == 100.0 for r in rows), "nothing multiplexed")

# JSON: one object per line.
out = subprocess.run([STAT, "--json", "-e", EVENTS, "--"] + WORK,
                     capture_output=True, text=True, check=True)
objs = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
check([o["event"] for o in objs] == EVENTS.split(","), "JSON events")
check(all({"counter-value", "unit", "event-runtime", "pcnt-running"} <= set(o)
          for o in objs), "JSON keys")

# Intervals: a timestamp first, every interval.
out = subprocess.run([STAT, "-x,", "-I", "100", "-a", "-e", "cpu-clock",
                      "--", "sleep", "0.35"],
                     capture_output=True, text=True, check=True)
stamps = [float(l.split(",")[0]) for l in out.stdout.splitlines() if l]
check(len(stamps) >= 3, f"at least 3 intervals: {stamps}")
check(stamps == sorted(stamps), "timestamps increase")

# -v: the sharing summary; an event named twice shares its kernel event.
out = subprocess.run([STAT, "-v", "-x,", "-a", "-e", "cs,cs,task-clock", "--",
                      "true"], capture_output=True, text=True, check=True)
check("3 handles on 2 kernel events" in out.stderr, f"summary: {out.stderr}")

# Errors in plain words.
out = subprocess.run([STAT, "-e", "no-such-event", "--", "true"],
                     capture_output=True, text=True)
check(out.returncode != 0 and "event not found" in out.stderr,
      f"unknown event: {out.stderr}")
if not os.path.exists("/sys/bus/event_source/devices/cpu"):
    out = subprocess.run([STAT, "-e", "cycles", "--", "true"],
                         capture_output=True, text=True)
    check(out.returncode != 0 and "no hardware PMU" in out.stderr,
          f"hardware event here: {out.stderr}")

print(f"{checks - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
