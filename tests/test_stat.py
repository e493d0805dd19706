#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""shpmu-stat against perf stat on a fixed workload, its output formats, and
-p and --per-thread on a live multi-threaded process.

usage: test_stat.py SHPMU_STAT WORKLOAD
"""
import json
import os
import re
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

# -p and --per-thread count a live process: TARGET, a Python process whose
# threads burn CPU in hashlib, which lets go of the GIL, so that they burn
# side by side. It talks on stdin and stdout: "ready" once it is set up,
# then on "go" it burns, reports, and says "done"; on the next line it
# exits. Each report is measured by the target itself, with the clocks the
# kernel keeps from the same runtime task-clock counts (time.thread_time()
# for a thread, time.process_time() for the process, dead threads
# included), over a window that lies inside shpmu-stat's: outside it the
# target sleeps in a read. /proc/PID/stat's utime and stime would be
# sampled on ticks, and over a window we do not control.
#   later N S: on "go", starts N threads burning S s each, joins them.
#   present: threads burn-0 (idle), burn-1 (burns 0.2 s, then starts a
#     helper thread that burns 0.2 s) and burn-2 (burns 0.3 s, exits)
#     are there before "ready".
TARGET = r"""
import ctypes, hashlib, sys, threading, time

data = b"x" * (1 << 20)
go = threading.Event()
end = threading.Event()
burnt = threading.Semaphore(0)
named = threading.Semaphore(0)
lock = threading.Lock()


def say(*words):
    with lock:
        print(*words, flush=True)


def burn(seconds):
    t = time.thread_time()
    while time.thread_time() - t < seconds:
        hashlib.sha256(data).digest()
    return time.thread_time() - t


def helper(seconds, cpu):
    cpu.append(burn(seconds))


def worker(name, seconds, with_helper, stay):
    ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME
    named.release()
    go.wait()
    cpu = [burn(seconds)]
    if with_helper:
        h = threading.Thread(target=helper, args=(0.2, cpu))
        h.start()
        h.join()
    say("thread", threading.get_native_id(), sum(cpu))
    burnt.release()
    if stay:
        end.wait()


if sys.argv[1] == "later":
    n, seconds = int(sys.argv[2]), float(sys.argv[3])
    say("ready")
    sys.stdin.readline()
    p0 = time.process_time()
    threads = [threading.Thread(target=burn, args=(seconds,))
               for _ in range(n)]
else:
    threads = [threading.Thread(target=worker, args=a)
               for a in (("burn-0", 0, False, True),
                         ("burn-1", 0.2, True, True),
                         ("burn-2", 0.3, False, False))]
    n = len(threads)
for t in threads:
    t.start()
if sys.argv[1] == "present":
    for _ in threads:
        named.acquire()
    say("ready")
    sys.stdin.readline()
    p0 = time.process_time()
    go.set()
    for _ in threads:
        burnt.acquire()
else:
    for t in threads:
        t.join()
say("cpu", time.process_time() - p0)
say("done")
sys.stdin.readline()
end.set()
"""

# The command after -p is only a timer: shpmu-stat starts it once it
# counts, so its first word says when to go.
GATE = [sys.executable, "-c", "import sys; print('counting', file=sys.stderr,"
        " flush=True); sys.stdin.readline()"]


class Run:
    """shpmu-stat ARGS -- GATE, counting until finish()."""

    def __init__(self, args):
        self.p = subprocess.Popen([STAT] + args + ["--"] + GATE,
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.err = ""
        for line in self.p.stderr:
            if line.strip() == "counting":
                break
            self.err += line

    def finish(self):
        out, err = self.p.communicate("\n", timeout=60)
        self.err += err
        check(self.p.returncode == 0, f"shpmu-stat ran: {self.err}")
        return out


class Target:
    def __init__(self, *args):
        self.p = subprocess.Popen([sys.executable, "-c", TARGET] + list(args),
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        self.pid = self.p.pid
        self.until("ready")

    def until(self, word):
        lines = []
        for line in self.p.stdout:
            if line.strip() == word:
                return lines
            lines.append(line.split())
        raise RuntimeError(f"target ended before '{word}': {lines}")

    def say(self):
        self.p.stdin.write("\n")
        self.p.stdin.flush()

    def burn(self):
        """Goes, and returns (process CPU s, {tid: thread CPU s})."""
        self.say()
        lines = self.until("done")
        return (float(next(l[1] for l in lines if l[0] == "cpu")),
                {int(l[1]): float(l[2]) for l in lines if l[0] == "thread"})

    def close(self):
        self.say()
        self.p.wait(timeout=30)


def msec(value):
    return 0.0 if value == "<not counted>" else float(value)


def near(a, b, what):
    print(f"{what}: shpmu-stat {a:.2f} ms, the target's own {b:.2f} ms")
    check(abs(a - b) <= 0.1 * b, f"{what}: {a} ms not within 10% of {b} ms")


# -p: threads started after shpmu-stat are counted too.
target = Target("later", "3", "0.4")
try:
    run = Run(["-x,", "-e", "task-clock", "-p", str(target.pid)])
    cpu, _ = target.burn()
    out = run.finish()
finally:
    target.close()
rows = [l.split(",") for l in out.splitlines() if l]
check(len(rows) == 1 and rows[0][2] == "task-clock", f"-p rows: {rows}")
check(cpu >= 1.1, f"the target burnt 3 x 0.4 s: {cpu} s")
near(msec(rows[0][0]), cpu * 1e3, "-p, 3 threads started later")

# --per-thread: a row per thread there at the start, named as /proc names
# it, in /proc's order, beside a -p run of the same window.
target = Target("present")
try:
    # listdir keeps readdir's order.
    tids = [int(t) for t in os.listdir(f"/proc/{target.pid}/task")]
    comms = {}
    for t in tids:
        with open(f"/proc/{target.pid}/task/{t}/comm") as f:
            comms[t] = f.read().strip()
    csv_run = Run(["--per-thread", "-x,", "-e", "task-clock", "-p",
                   str(target.pid)])
    human_run = Run(["--per-thread", "-e", "task-clock", "-p",
                     str(target.pid)])
    total_run = Run(["-x,", "-e", "task-clock", "-p", str(target.pid)])
    cpu, threads = target.burn()
    csv_out, human_out = csv_run.finish(), human_run.finish()
    total = msec(total_run.finish().split(",")[0])
    idle = next(t for t in tids if comms[t] == "burn-0")
    out = subprocess.run([STAT, "-p", str(idle), "--", "true"],
                         capture_output=True, text=True)
    check(out.returncode == 1 and
          f"is a thread of process {target.pid}" in out.stderr,
          f"-p with a thread's id: {out.returncode} {out.stderr}")
finally:
    target.close()
check(sorted(comms.values()) == sorted(
    [comms[target.pid], "burn-0", "burn-1", "burn-2"]),
      f"the target's threads: {comms}")
rows = [l.split(",") for l in csv_out.splitlines() if l]
check([r[0] for r in rows] == [f"{comms[t]}-{t}" for t in tids],
      f"--per-thread rows {[r[0] for r in rows]}, /proc has {comms}")
counted = {t: msec(r[1]) for t, r in zip(tids, rows)}
print(f"--per-thread: {counted} ms; the threads' own: {threads} s")
for t in tids:
    if comms[t] in ("burn-1", "burn-2"):
        near(counted[t], threads[t] * 1e3, f"{comms[t]}'s row")
    else:
        check(counted[t] < 20, f"{comms[t]} was idle: {counted[t]} ms")
near(sum(counted.values()), cpu * 1e3, "--per-thread, the rows' sum")
near(total, cpu * 1e3, "-p beside it")
human = re.findall(r"^ +(\S+)-(\d+) +([\d.]+|<not counted>) msec +task-clock",
                   human_out, re.M)
check([(c, int(t)) for c, t, _ in human] == [(comms[t], t) for t in tids],
      f"human --per-thread rows: {human_out}")
check(f"Performance counter stats for process id '{target.pid}'"
      in human_out, f"human header: {human_out}")

# --per-thread splits a process (-p), nothing else.
for args in (["--", "true"], ["-a"]):
    out = subprocess.run([STAT, "--per-thread", "-e", "task-clock"] + args,
                         capture_output=True, text=True)
    check(out.returncode == 2 and "needs -p" in out.stderr,
          f"--per-thread {args}: {out.returncode} {out.stderr}")

print(f"{checks - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
