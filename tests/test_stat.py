#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""shpmu-stat against perf stat on a fixed workload, its output formats, and
-p and --per-thread on a live multi-threaded process. With --pmu-model
(a build with the PMU model): only its lines for multiplexed events, events
that never ran and events the machine does not have, and --budget, on the
model. With --formats: only how it shows a count's bound and the switches
the BPF backend did not see, through its output code (STAT_FORMAT,
tests/stat_format.c) on rows made up.

usage: test_stat.py SHPMU_STAT WORKLOAD [--pmu-model | --formats STAT_FORMAT]
"""
import ctypes
import json
import os
import platform
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

STAT, WORKLOAD = sys.argv[1], sys.argv[2]
failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def without_model():
    """The environment without a model spec: the kernel's events."""
    env = dict(os.environ)
    env.pop("SHPMU_PMU_MODEL", None)
    return env


def budget_rows(text):
    """{(pmu, cpu): [general, fixed, watchdog, used, wanted, saved, mux]}"""
    rows = {}
    for line in text.splitlines()[1:]:
        f = line.split()
        rows[(f[0], f[1])] = f[2:]
    return rows


# Under the PMU model (a build with it): 4 general counters, one the
# watchdog's, 3 fixed. cycles twice (one kernel event, two handles) and
# instructions on fixed counters, three more on general ones: it fits;
# a fourth general one does not.
def budget_on_model():
    env = dict(os.environ, SHPMU_PMU_MODEL="counters=4,fixed=3,watchdog=1")
    events = "cycles,cycles,instructions,branches,branch-misses,cache-misses"
    out = subprocess.run([STAT, "--budget", "-a", "-e", events],
                         capture_output=True, text=True, env=env)
    rows = budget_rows(out.stdout)
    print(out.stdout)
    ncpu = os.cpu_count()
    check(out.returncode == 0 and len(rows) == ncpu + 1,
          f"--budget under the model: a row per CPU and the tasks': "
          f"{out.returncode} {out.stdout} {out.stderr}")
    for cpu in range(ncpu):
        check(rows.get(("cpu", str(cpu))) ==
              ["4", "3", "1", "5", "6", "1", "no"],
              f"cpu {cpu}: {rows.get(('cpu', str(cpu)))}")
    check(rows.get(("cpu", "task")) == ["4", "3", "1", "0", "0", "0", "no"],
          f"the tasks' row: {rows.get(('cpu', 'task'))}")
    out = subprocess.run([STAT, "--budget", "-a", "-e",
                          events + ",cache-references"],
                         capture_output=True, text=True, env=env)
    rows = budget_rows(out.stdout)
    check(rows.get(("cpu", "0"), [""])[-1] == "yes",
          f"one more general event multiplexes: {out.stdout}")
    # No event: the empty budget, on this process.
    out = subprocess.run([STAT, "--budget"], capture_output=True, text=True,
                         env=env)
    rows = budget_rows(out.stdout)
    check(out.returncode == 0 and len(rows) == ncpu + 1 and
          all(r[3:6] == ["0", "0", "0"] for r in rows.values()),
          f"the empty budget: {out.stdout}")


# A bound, in each format: a suffix in the human layout, perf's metric
# value and unit in CSV and JSON; nothing at all where it is 0.
BOUND_SUFFIX = re.compile(r"  \(up to \+(\d+(?:\.\d\d)?)( msec)? "
                          r"unattributed\)")
UNSEEN_NOTE = re.compile(r"^shpmu-stat: (\d+) context switch(?:es)? unseen by "
                         r"the BPF backend, (\d+\.\d\d) msec of CPU time "
                         r"unattributed: a count may fall short by the "
                         r"bound shown with it$", re.M)


def bound_fields(fields):
    """A CSV row's bound as perf's metric value and unit: (value, unit),
    ("", "") where there is none, None where they are neither."""
    value, unit = fields[-2], fields[-1]
    if (value, unit) == ("", ""):
        return value, unit
    if unit not in ("msec unattributed", "unattributed"):
        return None
    if not re.fullmatch(r"\d+\.\d\d" if unit.startswith("msec") else r"\d+",
                        value):
        return None
    return value, unit


def formats(formatter):
    def show(*args):
        out = subprocess.run([formatter] + [str(a) for a in args],
                             capture_output=True, text=True)
        check(out.returncode == 0, f"stat_format {args}: {out.stderr}")
        return out.stdout.rstrip("\n"), out.stderr

    # task-clock, 2 s enabled, half of it running: the value and its
    # bound (12345 ns) both scaled x2, the bound in msec rounded up.
    line, _ = show("human", "task-clock", 10**9, 2000, 1000, 12345, "/sys")
    check(re.fullmatch(r" +2000\.00 msec +task-clock +/sys  \(up to "
                       r"\+0\.03 msec unattributed\)  \(50\.00%\)", line),
          f"human: the bound before the running share: {line!r}")
    line, _ = show("human", "cs", 10, 2000, 2000, 3)
    check(BOUND_SUFFIX.search(line) and line.endswith("(up to +3 "
                                                      "unattributed)"),
          f"human: a count's bound in events: {line!r}")
    line, _ = show("human", "cs", 10, 2000, 2000, 0)
    check("unattributed" not in line and line.endswith("cs" + " " * 22),
          f"human: no bound, no suffix: {line!r}")
    # A bound that would round to 0.00 msec still shows.
    line, _ = show("human", "task-clock", 10**6, 10**6, 10**6, 1)
    check("(up to +0.01 msec unattributed)" in line,
          f"human: 1 ns is not shown as 0.00: {line!r}")

    line, _ = show("csv", "task-clock", 10**9, 2000, 1000, 12345, "/sys")
    fields = line.split(",")
    check(len(fields) == 8 and fields[3] == "/sys" and
          bound_fields(fields) == ("0.03", "msec unattributed"),
          f"CSV: the bound as metric value and unit: {fields}")
    line, _ = show("csv", "cs", 10, 2000, 2000, 3)
    fields = line.split(",")
    check(len(fields) == 7 and bound_fields(fields) == ("3", "unattributed"),
          f"CSV: a count's bound: {fields}")
    line, _ = show("csv", "cs", 10, 2000, 2000, 0)
    fields = line.split(",")
    check(len(fields) == 7 and bound_fields(fields) == ("", ""),
          f"CSV: no bound, empty metric fields: {fields}")
    # An event that never ran shows no bound: its value is no count.
    line, _ = show("csv", "cs", 0, 2000, 0, 5)
    fields = line.split(",")
    check(fields[0] == "<not counted>" and bound_fields(fields) == ("", ""),
          f"CSV: <not counted> has no bound: {fields}")

    line, _ = show("json", "task-clock", 10**9, 2000, 1000, 12345, "/sys")
    obj = json.loads(line)
    check(obj.get("metric-value") == "0.03" and
          obj.get("metric-unit") == "msec unattributed" and
          obj.get("counter-value") == "2000.00",
          f"JSON: the bound as metric-value and metric-unit: {obj}")
    obj = json.loads(show("json", "cs", 10, 2000, 2000, 0)[0])
    check("metric-value" not in obj and "metric-unit" not in obj,
          f"JSON: no bound, no metric keys: {obj}")

    out, err = show("footer", 5, 1234567)
    check(out == "" and UNSEEN_NOTE.fullmatch(err.rstrip("\n")) and
          UNSEEN_NOTE.search(err).groups() == ("5", "1.24"),
          f"the note on unseen switches, on stderr: {err!r}")
    out, err = show("footer", 1, 0)
    check(err.startswith("shpmu-stat: 1 context switch unseen by the BPF "
                         "backend, 0.00 msec"), f"one switch: {err!r}")
    out, err = show("footer", 0, 0)
    check(out == "" and err == "", f"no unseen switch, no note: {err!r}")


if sys.argv[3:4] == ["--formats"]:
    formats(sys.argv[4])
    print(f"{checks - len(failures)} of {checks} checks passed")
    sys.exit(1 if failures else 0)
if sys.argv[3:] == ["--pmu-model"]:
    import stat_model
    stat_model.run(STAT, check)
    budget_on_model()
    print(f"{checks - len(failures)} of {checks} checks passed")
    sys.exit(1 if failures else 0)
if not shutil.which("perf"):
    print("SKIP: no perf binary to compare with (Debian: linux-perf)")
    sys.exit(77)
if os.geteuid() != 0:
    print("SKIP: -a needs CPU-wide counting: run as root")
    sys.exit(77)
if {"x86_64": 298, "aarch64": 241}.get(os.uname().machine) is None:
    print("SKIP: perf_event_open's number on this machine is unknown here")
    sys.exit(77)
EVENTS = "task-clock,context-switches,page-faults"
WORK = [WORKLOAD, "200", "100", "3000"]


def csv_counts(text):
    """{event: value} of perf-stat-like -x, output ("<not counted>": 0)."""
    counts = {}
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) >= 5 and fields[2] in EVENTS.split(","):
            counts[fields[2]] = (0.0 if fields[0] == "<not counted>"
                                 else float(fields[0]))
    return counts


# The oracle (tests/README.md): raw perf events the test opens itself on
# the target, counting the same window as the tools under test.
PERF_TYPE_SOFTWARE = 1
CONFIGS = {"task-clock": 1, "page-faults": 2, "context-switches": 3}
SYS_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}.get(platform.machine())
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


class Twin:
    """A raw event on thread tid, inherited by the threads it starts
    (their counts fold into its reading), counting from now on."""

    def __init__(self, event, tid):
        # perf_event_attr (PERF_ATTR_SIZE_VER7, 128 bytes): type, size,
        # config, and inherit (bit 1 of the flags at offset 40).
        raw = bytearray(struct.pack("IIQ", PERF_TYPE_SOFTWARE, 128,
                                    CONFIGS[event]).ljust(128, b"\0"))
        struct.pack_into("Q", raw, 40, 1 << 1)
        attr = ctypes.create_string_buffer(bytes(raw), 128)
        self.fd = libc.syscall(SYS_PERF_EVENT_OPEN, attr, tid, -1, -1, 8)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), f"perf_event_open {event} on "
                          f"{tid}: {os.strerror(ctypes.get_errno())}")

    def read(self):
        """Its count (task-clock in ms, as the tools print it); closes it."""
        value = struct.unpack("Q", os.read(self.fd, 8))[0]
        os.close(self.fd)
        return value


def value_of(event, twin_count):
    return twin_count / 1e6 if event == "task-clock" else twin_count


def wait_blocked(pid):
    """Polls /proc, with a deadline, until no thread of pid is running:
    before it a window's edge would cut its work."""
    deadline = time.monotonic() + 30
    while True:
        running = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue  # gone
            if state == "R":
                running.append(tid)
        if not running:
            return
        if time.monotonic() >= deadline:
            raise RuntimeError(f"threads {running} of {pid} still run")
        time.sleep(0.001)  # between polls


def same_window(got, want, event, what):
    """A tool's count against the twin's over the same window, with the
    target blocked at both edges. Clocks within 0.5% or 0.1 ms: the
    edges are found from /proc, which shows a thread asleep a moment
    before the switch away from it ends, and the tools print msec to two
    decimals. Counts within 1: the same moment may hold one switch or
    fault that one reading sees and the other not yet."""
    if event == "task-clock":
        ok = abs(got - want) <= max(0.005 * want, 0.1)
    else:
        ok = abs(got - want) <= 1
    print(f"{what}, {event}: {got} against the twin's {want} "
          f"({got - want:+.3f})")
    check(ok, f"{what}, {event}: {got} is not {want} (the same window)")

# A command is counted from its exec to its end, which no other counter
# can share (nothing can open one on it before shpmu-stat's child execs):
# its counts are bounded by what the workload does exactly, one-sided,
# the loader's faults and switches coming on top. The same counts against
# perf stat and raw twins over one window are checked with -p below.
def command_counts(work):
    start = time.monotonic()
    out = subprocess.run([STAT, "-x,", "-e", EVENTS, "--"] + work,
                         capture_output=True, text=True, check=True)
    return csv_counts(out.stdout), (time.monotonic() - start) * 1e3


counts, wall_ms = command_counts([WORKLOAD, "200", "0", "3000"])
print(f"a command: {counts}, {wall_ms:.2f} ms of wall time")
check(counts.get("page-faults", 0) >= 3000,
      f"the 3000 pages touched were counted: {counts}")
# The workload burns until its CPU clock reaches 200 ms: an order of
# magnitude only, as at_least_own says.
check(counts.get("task-clock", 0) >= 100,
      f"the 200 ms of CPU burnt were counted: {counts}")
check(counts.get("task-clock", 0) <= wall_ms,
      f"a single thread ran no longer than it lived: {counts}, "
      f"{wall_ms:.2f} ms")
# The sleeps' switches against the kernel's count of them: the workload's
# own raw context-switches event over its sleep loop, a window inside the
# command's. Not against 200: a 100 us sleep may end before the switch
# away (a CI run counted 194 of 200, raw event and shpmu-stat alike).
out = subprocess.run([STAT, "-x,", "-e", EVENTS, "--", WORKLOAD, "0", "200",
                      "10"], capture_output=True, text=True, check=True,
                     env=dict(os.environ, WORKLOAD_COUNT_SLEEPS="1"))
counts = csv_counts(out.stdout)
own = int(re.search(r"sleep switches: (\d+)", out.stderr).group(1))
print(f"200 sleeps: {counts}, the workload's own count of them {own}")
# One-sided: the loader's and exit's switches come on top, and preemptions
# too (a run beside a loaded suite counted 339 for 200 sleeps).
check(counts.get("context-switches", 0) >= own,
      f"the sleeps' {own} switches were counted: {counts}")
check(own >= 100, f"most of 200 sleeps switched away: {own}")

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
# A task's events are classic perf fds, exact: no bound in the metric
# fields.
check(all(bound_fields(r) == ("", "") for r in rows),
      f"classic counting: empty metric fields, no bound: {rows}")

# JSON: one object per line.
out = subprocess.run([STAT, "--json", "-e", EVENTS, "--"] + WORK,
                     capture_output=True, text=True, check=True)
objs = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
check([o["event"] for o in objs] == EVENTS.split(","), "JSON events")
check(all({"counter-value", "unit", "event-runtime", "pcnt-running"} <= set(o)
          for o in objs), "JSON keys")
check(all("metric-value" not in o and "metric-unit" not in o for o in objs),
      f"classic counting: no bound in JSON: {objs}")
out = subprocess.run([STAT, "-e", EVENTS, "--"] + WORK, capture_output=True,
                     text=True, check=True)
check("unattributed" not in out.stdout and not UNSEEN_NOTE.search(out.stderr),
      f"classic counting: no bound, no note: {out.stdout} {out.stderr}")

# -G counts cgroups with the BPF backend where it can: a count there may
# fall short by a bound (on a kernel that hides switches from BPF), shown
# as perf's metric value and unit in CSV and as a suffix in the human
# layout, with a note on stderr when switches went unseen. The root
# cgroup holds everything, so it ran during the window.
with open("/proc/self/mountinfo") as f:
    has_cgroups = any(" - cgroup2 " in l or
                      (" - cgroup " in l and "perf_event" in l) for l in f)
if not has_cgroups:
    print("no cgroup2 or perf_event mount: -G's bound is not checked")
else:
    out = subprocess.run([STAT, "-x,", "-a", "-G", "/", "-e", "task-clock,cs",
                          "--", "sleep", "0.2"], capture_output=True,
                         text=True)
    rows = [l.split(",") for l in out.stdout.splitlines() if l]
    print("-G / as CSV:", rows, out.stderr)
    check(out.returncode == 0 and [r[2:4] for r in rows] ==
          [["task-clock", "/"], ["cs", "/"]],
          f"-G / as CSV: {out.returncode} {rows} {out.stderr}")
    check(all(len(r) == 8 and bound_fields(r) is not None for r in rows),
          f"-G /: a bound, if any, as metric value and unit: {rows}")
    check(all(UNSEEN_NOTE.fullmatch(l) for l in out.stderr.splitlines()
              if "unseen" in l), f"-G /: the note's form: {out.stderr}")
    out = subprocess.run([STAT, "-a", "-G", "/", "-e", "task-clock,cs", "--",
                          "sleep", "0.2"], capture_output=True, text=True)
    lines = [l for l in out.stdout.splitlines() if l.endswith("/") or
             "unattributed" in l]
    print("-G / human:", lines)
    check(len(lines) == 2 and all(re.fullmatch(
        r" +\d+(\.\d\d)? +(msec)? +(task-clock|cs) +/"
        r"(  \(up to \+\d+(\.\d\d)?( msec)? unattributed\))?", l)
        for l in lines), f"-G / human: {out.stdout}")

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
# An event the machine does not have is <not supported>, as perf stat
# shows it: the others are counted, and the exit status is the command's.
if not os.path.exists("/sys/bus/event_source/devices/cpu"):
    out = subprocess.run([STAT, "-x,", "-e", "cycles,task-clock", "--",
                          "false"], capture_output=True, text=True,
                         env=without_model())
    rows = [l.split(",") for l in out.stdout.splitlines() if l]
    check(out.returncode == 1, f"the command's exit status: {out}")
    check(rows and rows[0][:5] == ["<not supported>", "", "cycles", "0",
                                   "100.00"], f"cycles unsupported: {rows}")
    check(len(rows) == 2 and rows[1][2] == "task-clock" and
          float(rows[1][0]) > 0, f"task-clock still counted: {rows}")
    check("no hardware PMU" in out.stderr,
          f"the reason, on stderr: {out.stderr}")

# What a new user trips over (issue 41): each mistake said once, in the
# command line's terms, before the command runs and with no table, and the
# exit status says so. The command would print "ran" if it were run.
def stat(*args):
    return subprocess.run([STAT, *args], capture_output=True, text=True)


def online_cpus():
    """The online CPUs, from sysfs ("0-3,5")."""
    with open("/sys/devices/system/cpu/online") as f:
        spans = [s.split("-") for s in f.read().strip().split(",")]
    return [c for s in spans for c in range(int(s[0]), int(s[-1]) + 1)]


offline = max(online_cpus()) + 1
for cpus in (str(offline), f"0-{offline}"):
    out = stat("-C", cpus, "--", "echo", "ran")
    check(out.returncode == 1 and out.stdout == "" and
          out.stderr.count("\n") == 1 and
          f"cpu {offline} is not online" in out.stderr,
          f"-C {cpus} with cpu {offline} offline: exit 1, one line, no "
          f"table: {out.returncode} {out.stdout!r} {out.stderr!r}")
out = stat("-G", "no/such/cgroup", "--", "echo", "ran")
check(out.returncode == 1 and out.stdout == "" and
      out.stderr.count("\n") == 1 and "no/such/cgroup" in out.stderr,
      f"-G no/such/cgroup: exit 1, said once: {out.returncode} "
      f"{out.stdout!r} {out.stderr!r}")
out = stat("--help")
check(out.returncode == 0 and out.stdout.startswith("usage: shpmu-stat") and
      out.stderr == "", f"--help: exit 0, the usage on stdout: "
      f"{out.returncode} {out.stderr!r}")
out = stat("--no-such-option", "--", "true")
check(out.returncode == 2 and "usage: shpmu-stat" in out.stderr,
      f"a bad option: exit 2, the usage on stderr: {out.returncode} "
      f"{out.stderr!r}")
# The header names what was counted, as perf stat names it: with -a the
# command only says for how long.
for args, named in ((["-a"], "'system wide'"), (["-C", "0"], "'CPU(s) 0'"),
                    (["-e", "cs"], "'sleep 0.1'")):
    out = stat(*args, "--", "sleep", "0.1")
    check(out.returncode == 0 and
          f"Performance counter stats for {named}:" in out.stdout,
          f"{args}: headed {named}: {out.stdout!r}")
# A cgroup given by id is shown by its path, as -G shows it.
mount = next((l.split()[4] for l in open("/proc/self/mountinfo")
              if " - cgroup2 " in l), None)
if not mount:
    print("no cgroup2 mount: --cgroup-id's rows are not checked")
else:
    made = f"/shpmu-stat-test-{os.getpid()}"
    os.mkdir(mount + made)
    try:
        ids = f"{os.stat(mount).st_ino},{os.stat(mount + made).st_ino}"
        out = stat("-x,", "--cgroup-id", ids, "-e", "cs", "--", "true")
    finally:
        os.rmdir(mount + made)
    rows = [l.split(",") for l in out.stdout.splitlines() if l]
    check(out.returncode == 0 and [r[3] for r in rows] == ["/", made],
          f"--cgroup-id {ids}: rows by path: {rows} {out.stderr!r}")

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


if sys.argv[1] == "work":
    # work S N P: on "go", burns S s of its CPU, sleeps N times (a
    # switch each) and touches P fresh pages (a fault each).
    seconds, sleeps, pages = float(sys.argv[2]), int(sys.argv[3]), \
        int(sys.argv[4])
    say("ready")
    sys.stdin.readline()
    burn(seconds)
    for _ in range(sleeps):
        time.sleep(0.0001)
    import mmap
    m = mmap.mmap(-1, pages * mmap.PAGESIZE)
    m.madvise(mmap.MADV_NOHUGEPAGE)
    for i in range(pages):
        m[i * mmap.PAGESIZE] = 1
    say("done")
    sys.stdin.readline()
    sys.exit(0)
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


def at_least_own(a, b, what):
    """Only an order of magnitude (the twins are the oracle): the target's
    own CPU clocks over its work, inside the window, say the work was done.
    Half of it: task-clock, the twins' and the tools' alike, has been seen
    14% short of those clocks on this 2-CPU machine under a load of 100
    (and over them where a paravirtual host steals)."""
    print(f"{what}: shpmu-stat {a:.2f} ms, the target's own {b:.2f} ms")
    check(a >= 0.5 * b, f"{what}: {a} ms is not even half the target's "
          f"own {b} ms")


# The same window three ways: shpmu-stat -p, perf stat -p (started with
# its events off, turned on and off through its control fd, each step
# acknowledged) and raw twins, on a target that works only between "go"
# and "done" and sleeps in a read at both edges.
target = Target("work", "0.2", "200", "3000")
perf = None
try:
    wait_blocked(target.pid)
    twins = {e: Twin(e, target.pid) for e in EVENTS.split(",")}
    run = Run(["-x,", "-e", EVENTS, "-p", str(target.pid)])
    ctl_r, ctl_w = os.pipe()
    ack_r, ack_w = os.pipe()
    perf = subprocess.Popen(["perf", "stat", "-x,", "-e", EVENTS, "-p",
                             str(target.pid), "-D", "-1", "--control",
                             f"fd:{ctl_r},{ack_w}"],
                            pass_fds=(ctl_r, ack_w), stderr=subprocess.PIPE,
                            text=True)
    os.close(ctl_r)
    os.close(ack_w)

    def perf_control(cmd):
        os.write(ctl_w, cmd)
        check(os.read(ack_r, 16).startswith(b"ack"), f"perf stat: {cmd}")

    perf_control(b"enable\n")
    target.say()
    target.until("done")
    wait_blocked(target.pid)
    perf_control(b"disable\n")
    perf.send_signal(signal.SIGINT)
    perf_counts = csv_counts(perf.communicate(timeout=60)[1])
    perf = None
    ours = csv_counts(run.finish())
    want = {e: value_of(e, t.read()) for e, t in twins.items()}
finally:
    if perf:
        perf.kill()
    target.close()
for event in EVENTS.split(","):
    same_window(ours.get(event, -1), want[event], event, "shpmu-stat -p")
    same_window(perf_counts.get(event, -1), want[event], event,
                "perf stat -p")
# Exactly what the target did, and Python's own on top.
check(want["page-faults"] >= 3000, f"3000 pages touched: {want}")
# An order of magnitude only (see the sleeps above).
check(want["context-switches"] >= 100, f"200 sleeps: {want}")
check(want["task-clock"] >= 100, f"0.2 s burnt (see at_least_own): {want}")

# -p: threads started after shpmu-stat are counted too.
target = Target("later", "3", "0.4")
try:
    wait_blocked(target.pid)
    twin = Twin("task-clock", target.pid)
    run = Run(["-x,", "-e", "task-clock", "-p", str(target.pid)])
    cpu, _ = target.burn()
    wait_blocked(target.pid)
    out = run.finish()
    twin_ms = value_of("task-clock", twin.read())
finally:
    target.close()
rows = [l.split(",") for l in out.splitlines() if l]
check(len(rows) == 1 and rows[0][2] == "task-clock", f"-p rows: {rows}")
check(cpu >= 1.1, f"the target burnt 3 x 0.4 s: {cpu} s")
same_window(msec(rows[0][0]), twin_ms, "task-clock",
            "-p, 3 threads started later")
at_least_own(msec(rows[0][0]), cpu * 1e3, "-p, 3 threads started later")

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
    wait_blocked(target.pid)
    # Each thread's twin inherits what it starts (burn-1's helper), as
    # its --per-thread row does.
    twins = {t: Twin("task-clock", t) for t in tids}
    csv_run = Run(["--per-thread", "-x,", "-e", "task-clock", "-p",
                   str(target.pid)])
    human_run = Run(["--per-thread", "-e", "task-clock", "-p",
                     str(target.pid)])
    total_run = Run(["-x,", "-e", "task-clock", "-p", str(target.pid)])
    cpu, threads = target.burn()
    wait_blocked(target.pid)
    csv_out, human_out = csv_run.finish(), human_run.finish()
    total = msec(total_run.finish().split(",")[0])
    twin_ms = {t: value_of("task-clock", tw.read()) for t, tw in twins.items()}
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
    same_window(counted.get(t, -1), twin_ms[t], "task-clock",
                f"{comms[t]}'s row")
    if comms[t] in ("burn-1", "burn-2"):
        at_least_own(counted.get(t, 0), threads[t] * 1e3, f"{comms[t]}'s row")
    else:
        check(counted.get(t, 0) < 20,
              f"{comms[t]} was idle: {counted.get(t)} ms")
same_window(sum(counted.values()), sum(twin_ms.values()), "task-clock",
            "--per-thread, the rows' sum")
same_window(total, sum(twin_ms.values()), "task-clock", "-p beside it")
at_least_own(total, cpu * 1e3, "-p beside it")
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

# --budget: the core PMUs' counters and what the events need of them.
# No core PMU here: one line, exit 0.
devices = "/sys/bus/event_source/devices"
has_pmu = any(os.path.exists(f"{devices}/{d}/type")
              for d in ("cpu", "cpu_core", "cpu_atom")) or any(
    os.path.exists(f"{devices}/{d}/cpus") for d in os.listdir(devices))
if not has_pmu:
    for args in (["--budget"], ["--budget", "-a", "-e", "cycles"]):
        out = subprocess.run([STAT] + args, capture_output=True, text=True)
        check(out.returncode == 0 and out.stdout.count("\n") == 1 and
              "no hardware PMU" in out.stdout,
              f"{args} without a PMU: {out.returncode} {out.stdout!r}")
out = subprocess.run([STAT, "--budget", "--", "true"], capture_output=True,
                     text=True)
check(out.returncode == 2 and "runs no command" in out.stderr,
      f"--budget with a command: {out.returncode} {out.stderr}")


print(f"{checks - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
