# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""``python3 -m shpmu stat``: shpmu-stat through the binding, with its
options, its output (perf stat's layout, CSV field order and JSON) and
its exit status (the command's)."""

from __future__ import annotations

import argparse
import dataclasses
import errno
import json
import os
import signal
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from .attr import Attr
from .context import Context, LogLevel
from .count import Count, Counts, is_clock
from .errors import Error
from .handle import Handle
from .target import CPU, AllCPUs, Cgroup, Process, Target, Task

PROG = "shpmu-stat"
MAX_CPUS = 4096  # shpmu-stat's limits
MAX_EVENTS = 64
MAX_CGROUPS = 256
MAX_THREADS = 1024
DEFAULT_EVENTS = ["task-clock", "context-switches", "cpu-migrations", "page-faults"]
# perf stat's "not supported": no such event here, or not this way.
NOT_SUPPORTED = {
    errno.ENOENT,
    errno.EOPNOTSUPP,
    errno.EINVAL,
    errno.ENOSYS,
    errno.ENXIO,
}


class UsageError(Exception):
    pass


@dataclasses.dataclass
class Options:
    units: list[list[str]]  # each a single event or a group
    all_cpus: bool = False
    cpus: list[int] = dataclasses.field(default_factory=list)
    cpu_list: str = ""
    pid: int = 0
    cgroups: list[str] = dataclasses.field(default_factory=list)
    cgroup_ids: list[int] = dataclasses.field(default_factory=list)
    interval_ms: int = 0
    sep: str | None = None
    json_out: bool = False
    verbose: bool = False
    per_thread: bool = False
    budget: bool = False
    list_events: bool = False
    command: list[str] = dataclasses.field(default_factory=list)

    @property
    def events(self) -> list[str]:
        return [e for u in self.units for e in u]


def parse_events(text: str) -> list[list[str]]:
    """Splits a -e list at commas outside braces: {a,b} is a group."""
    units: list[list[str]] = []
    p = 0
    while p < len(text):
        group = text[p] == "{"
        if group:
            end = text.find("}", p)
            if end < 0:
                raise UsageError("missing '}'")
            members = text[p + 1 : end].split(",")
            p = end + 1
            if p < len(text) and text[p] != ",":
                raise UsageError(
                    f"modifiers after a group ('}}{text[p:]}') are not "
                    "supported: put them on each member"
                )
        else:
            end = text.find(",", p)
            end = len(text) if end < 0 else end
            members = [text[p:end]]
            p = end
        if any(not m for m in members):
            raise UsageError(f"bad event list near '{text[p:]}'")
        units.append(members)
        p += text[p : p + 1] == ","
    return units


def _strtol(text: str, at: int) -> tuple[int | None, int]:
    """C's strtol at text[at:]: blanks, a sign, digits; (None, at) where
    no digit follows."""
    i = at
    while i < len(text) and text[i] in " \t\n\v\f\r":
        i += 1
    j = i + (i < len(text) and text[i] in "+-")
    k = j
    while k < len(text) and text[k].isdigit():
        k += 1
    if k == j:
        return None, at
    return int(text[i:k]), k


def _atoi(text: str) -> int:
    value, _ = _strtol(text, 0)
    return value or 0


def parse_cpus(text: str) -> list[int]:
    """ "0,2-3": each CPU once, in range, or the whole list is refused,
    as shpmu-stat parses it."""
    cpus: list[int] = []
    p = 0
    while p < len(text):
        lo, end = _strtol(text, p)
        if lo is None or not 0 <= lo < MAX_CPUS:
            raise UsageError("bad CPU list")
        hi: int | None = lo
        if end < len(text) and text[end] == "-":
            hi, end = _strtol(text, end + 1)
            if hi is None or hi < lo or hi >= MAX_CPUS:
                raise UsageError("bad CPU list")
        assert hi is not None
        cpus += [c for c in range(lo, hi + 1) if c not in cpus]
        if end < len(text) and text[end] == ",":
            end += 1
        elif end < len(text):
            raise UsageError("bad CPU list")
        p = end
    if not cpus:
        raise UsageError("bad CPU list")
    return cpus


def parse_args(argv: Sequence[str]) -> Options:
    ap = argparse.ArgumentParser(prog=PROG, add_help=True)
    ap.add_argument("-e", "--event", action="append", default=[])
    ap.add_argument("-a", "--all-cpus", action="store_true")
    ap.add_argument("-C", "--cpu")
    ap.add_argument("-p", "--pid")
    ap.add_argument("-G", "--cgroup", action="append", default=[])
    ap.add_argument("--cgroup-id", action="append", default=[])
    ap.add_argument("--per-thread", action="store_true")
    ap.add_argument("--budget", action="store_true")
    ap.add_argument("-I", "--interval-print")
    # The last of -x and -j says the format, as in shpmu-stat.
    ap.add_argument("-x", "--field-separator", dest="format", type=lambda v: ("csv", v))
    ap.add_argument("-j", "--json", dest="format", action="store_const", const=("json", None))
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("-l", "--list", action="store_true")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    o = Options(units=[u for e in a.event for u in parse_events(e)])
    o.all_cpus, o.verbose, o.list_events = a.all_cpus, a.verbose, a.list
    kind, sep = a.format or ("human", None)
    o.json_out, o.sep = kind == "json", sep
    o.per_thread, o.budget = a.per_thread, a.budget
    o.command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if o.list_events:
        return o
    if a.cpu is not None:
        o.cpus, o.cpu_list = parse_cpus(a.cpu), a.cpu
    if a.pid is not None:
        o.pid = int(a.pid) if a.pid.isdigit() else 0
        if o.pid <= 0:  # 0 would name this process to the library
            raise UsageError(f"bad process id '{a.pid}'")
    for g in [g for g in ",".join(a.cgroup).split(",") if g]:  # as strtok
        o.cgroups.append("" if g == "/" else g)  # perf's root cgroup
        o.cgroup_ids.append(0)
    for g in [g for g in ",".join(a.cgroup_id).split(",") if g]:
        try:
            cid = int(g, 0)
        except ValueError:
            cid = 0
        if cid <= 0:
            raise UsageError(f"'{g}' is not a cgroup id")
        o.cgroups.append(g)
        o.cgroup_ids.append(cid)
    if a.interval_print is not None:
        o.interval_ms = _atoi(a.interval_print)
        if o.interval_ms < 10:
            raise UsageError("-I needs at least 10 ms")
    if o.budget and o.command:
        raise UsageError("--budget runs no command: it opens the events and prints the budget")
    if not (o.command or o.pid or o.all_cpus or o.cpus or o.cgroups or o.budget):
        raise UsageError("say what to count: a command, -p, -a, -C or -G")
    if o.pid and (o.all_cpus or o.cpus or o.cgroups):
        raise UsageError("-p counts one process; it does not mix with -a, -C or -G")
    if o.per_thread and not o.pid:
        raise UsageError("--per-thread splits a process by thread: it needs -p")
    if len(o.events) > MAX_EVENTS:
        raise UsageError(f"more than {MAX_EVENTS} events")
    if len(o.cgroups) > MAX_CGROUPS:
        raise UsageError(f"more than {MAX_CGROUPS} cgroups")
    if not o.units and not o.budget:
        o.units = [[e] for e in DEFAULT_EVENTS]
    return o


@dataclasses.dataclass
class Row:
    event: str
    count: Count
    bound: int = 0
    cgroup: str | None = None
    unsupported: bool = False
    thread: str | None = None  # --per-thread: perf's comm-tid


def _msec_up(ns: int) -> str:
    """ns as msec to two decimals, rounded up: a bound never reads
    smaller than it is."""
    hundredths = -(-ns // 10000)
    return f"{hundredths // 100}.{hundredths % 100:02d}"


class Printer:
    """perf stat's layouts, as shpmu-stat prints them."""

    def __init__(self, o: Options, out: TextIO) -> None:
        self.o, self.out = o, out
        self.format = "csv" if o.sep is not None else "json" if o.json_out else "human"

    def header(self, command: Sequence[str]) -> None:
        o = self.o
        if self.format != "human" or o.interval_ms:
            return
        if o.pid:
            what = f"process id '{o.pid}'"
        elif o.cpus:
            what = f"'CPU(s) {o.cpu_list}'"
        elif o.all_cpus or o.cgroups or not command:
            what = "'system wide'"
        else:
            what = "'" + " ".join(command) + "'"
        self.out.write(f"\n Performance counter stats for {what}:\n\n")

    def row(self, r: Row, ts: float) -> None:
        o, c, clock = self.o, r.count, is_clock(r.event)
        unit = "msec" if clock else ""
        whole = self.format != "human"
        if c.running == c.enabled:
            pct = 100.0
        elif whole:
            pct = float(c.running * 100 // c.enabled)
        else:
            pct = 100.0 * c.running / c.enabled
        not_counted = not c.running or not c.enabled
        if r.unsupported:
            value = "<not supported>"
        elif not_counted:
            value = "<not counted>"
        elif clock:
            value = f"{c.scaled / 1e6:.2f}"
        else:
            value = str(c.scaled)
        bound = ""
        if r.bound and not r.unsupported and not not_counted:
            b = Count(r.bound, c.enabled, c.running).scaled
            bound = _msec_up(b) if clock else str(b)
        bound_unit = ("msec unattributed" if clock else "unattributed") if bound else ""
        w = self.out.write
        if self.format == "csv":
            sep = o.sep or ""
            if o.interval_ms:
                w(f"{ts:.9f}{sep}")
            if r.thread is not None:
                w(f"{r.thread}{sep}")
            w(f"{value}{sep}{unit}{sep}{r.event}{sep}")
            if r.cgroup is not None:
                w(f"{r.cgroup}{sep}")
            w(f"{c.running}{sep}{pct:.2f}{sep}{bound}{sep}{bound_unit}\n")
        elif self.format == "json":
            # Built as shpmu-stat prints it: perf's spacing, and numbers
            # with its decimals.
            if o.interval_ms:
                w("{" + f'"interval" : {ts:.9f}, ')
            else:
                w("{")
            if r.thread is not None:
                w(f'"thread" : {json.dumps(r.thread, ensure_ascii=False)}, ')
            w(f'"counter-value" : {json.dumps(value, ensure_ascii=False)}, "unit" : "{unit}", ')
            w(f'"event" : {json.dumps(r.event, ensure_ascii=False)}')
            if r.cgroup is not None:
                w(f', "cgroup" : {json.dumps(r.cgroup, ensure_ascii=False)}')
            w(f', "event-runtime" : {c.running}, "pcnt-running" : {pct:.2f}')
            if bound:
                w(f', "metric-value" : "{bound}", "metric-unit" : "{bound_unit}"')
            w("}\n")
        else:
            if o.interval_ms:
                w(f"{ts:14.9f} ")
            if r.thread is not None:  # aligned on the dash, as perf does
                comm, _, tid = r.thread.rpartition("-")
                w(f"{comm:>16}-{tid:<8} ")
            w(f"{value:>18} {unit:<5} {r.event:<24}")
            if r.cgroup is not None:
                w(f" {r.cgroup}")
            if bound:
                w(f"  (up to +{bound}{' msec' if clock else ''} unattributed)")
            if c.running != c.enabled:
                w(f"  ({pct:.2f}%)")
            w("\n")

    def footer(self, elapsed: float) -> None:
        if self.format == "human" and not self.o.interval_ms:
            self.out.write(f"\n {elapsed:17.9f} seconds time elapsed\n\n")
        self.out.flush()


class Stat:
    """One run: targets, a handle per unit and target, the rows."""

    def __init__(self, o: Options) -> None:
        self.o = o
        self.quiet = False
        self.ctx = Context(log=self._log)
        self.targets: list[tuple[Target, int]] = []  # (target, row)
        self.threads: list[str] = []  # --per-thread: each row's comm-tid
        self.handles: list[list[Handle | None]] = []  # [unit][target]
        self.unsupported = [False] * len(o.units)
        self.cgroup_names: list[str] = []
        self.previous: dict[tuple[int, int], tuple[Count, int]] = {}
        self.fds_unshared = 0  # what the opens would take without sharing

    def _log(self, level: LogLevel, msg: str) -> None:
        if level <= LogLevel.ERROR and not self.quiet:
            print(f"{PROG}: {msg}", file=sys.stderr)

    def check_cpus(self) -> None:
        try:
            with open("/sys/devices/system/cpu/online") as f:
                online = f.read().strip()
        except OSError:
            return  # unknown: the library will tell
        listed = set(parse_cpus(online)) if online else set()
        for cpu in self.o.cpus:
            if online and cpu not in listed:
                raise UsageError(f"cpu {cpu} is not online (online: {online})")

    def check_cgroups(self) -> None:
        """Every -G names a cgroup; one given by id is shown by its path."""
        o, ctx = self.o, self.ctx
        self.quiet = True
        try:
            for given, cid in zip(o.cgroups, o.cgroup_ids):
                shown = given or "/"
                try:
                    if cid:
                        path, root = ctx.cgroup_path(cid), ctx.cgroup_root()
                        if path == root or path.startswith(root + "/"):
                            path = path[len(root) :] or "/"
                        shown = path
                    else:
                        ctx.cgroup_id(given)
                except Error as e:
                    raise UsageError(self._no_cgroup(f"id {given}" if cid else given, e))
                self.cgroup_names.append(shown)
        finally:
            self.quiet = False

    def _no_cgroup(self, given: str, e: Error) -> str:
        try:
            root = self.ctx.cgroup_root()
        except Error:
            return f"cgroup {given}: no cgroup hierarchy on this host"
        if e.errno == errno.ENOENT:
            return f"cgroup {given}: no such cgroup under {root}"
        if e.errno == errno.EXDEV:
            return f"cgroup {given}: outside the cgroup mount {root}"
        return f"cgroup {given}: {e.strerror}"

    def build_targets(self, child: int) -> None:
        o = self.o
        cpus: list[int | None] = list(o.cpus) or [None]
        if o.cgroups:
            for g, (given, cid) in enumerate(zip(o.cgroups, o.cgroup_ids)):
                for cpu in cpus:
                    t = Cgroup(id=cid, cpu=cpu) if cid else Cgroup(given, cpu=cpu)
                    self.targets.append((t, g))
        elif o.all_cpus or o.cpus:
            for cpu in cpus:
                self.targets.append((AllCPUs() if cpu is None else CPU(cpu), -1))
        elif o.pid:
            self.check_process(o.pid)
            if o.per_thread:
                self.add_threads(o.pid)
            else:
                self.targets.append((Process(o.pid), -1))
        else:
            self.targets.append((Task(child), -1))

    def add_threads(self, pid: int) -> None:
        """A task target for each thread there now, each its own row, in
        /proc's order; threads started later count in their starter's."""
        try:
            tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            raise UsageError(f"no such process: {pid}") from None
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/comm", "rb") as f:
                    comm = f.read().rstrip(b"\n").decode("utf-8", "replace")
            except OSError:
                continue  # exited since: no row
            if len(self.threads) == MAX_THREADS:
                raise UsageError(f"more than {MAX_THREADS} threads to show apart")
            self.targets.append((Task(tid), len(self.threads)))
            self.threads.append(f"{comm}-{tid}")
        if not self.threads:
            raise UsageError(f"no such process: {pid}")

    @staticmethod
    def check_process(pid: int) -> None:
        try:
            with open(f"/proc/{pid}/status", "rb") as f:
                tgid = next(int(l.split()[1]) for l in f if l.startswith(b"Tgid:"))
        except (OSError, StopIteration, ValueError):
            raise UsageError(f"no such process: {pid}") from None
        if tgid != pid:
            raise UsageError(f"{pid} is a thread of process {tgid}: -p takes a process id")

    def open_all(self, on_exec: bool) -> None:
        o, ctx = self.o, self.ctx
        for u, unit in enumerate(o.units):
            attrs: list[Attr] = []
            for i, name in enumerate(unit):
                first = on_exec and i == 0
                attrs.append(
                    dataclasses.replace(
                        ctx.event_attr(name),
                        inherit=on_exec or bool(o.pid),
                        enable_on_exec=first,
                        disabled=first,
                    )
                )
            row: list[Handle | None] = []
            for t, (target, _) in enumerate(self.targets):
                try:
                    if len(attrs) == 1:
                        row.append(ctx.open(attrs[0], target))
                    else:
                        row.append(ctx.open_group(list(attrs), target))
                except Error as e:
                    if e.errno == errno.ESRCH and o.per_thread:
                        row.append(None)  # listed, then gone: not counted
                        continue
                    if e.errno not in NOT_SUPPORTED:
                        raise UsageError(f"cannot count {unit[0]}: {e.strerror}") from None
                    row.append(None)
                    self.unsupported[u] = t == 0 or self.unsupported[u]
                    continue
                self.unsupported[u] = False
                self.fds_unshared += len(unit) * _fds_alone(target)
            self.handles.append(row)

    def rows(self, per_interval: bool) -> list[Row]:
        o = self.o
        nrows = len(o.cgroups) or len(self.threads) or 1
        events = o.events
        sums = [[[0, 0, 0] for _ in events] for _ in range(nrows)]
        bounds = [[0] * len(events) for _ in range(nrows)]
        first = 0
        for u, unit in enumerate(o.units):
            for t, (_, row) in enumerate(self.targets):
                h = self.handles[u][t]
                if h is None:
                    continue
                r = max(row, 0)
                try:
                    if len(unit) == 1:
                        c, bound = h.read_bound()
                        counts = [c]
                        bounds[r][first] += bound
                    else:
                        counts = list(h.read_group(Counts(len(unit))))
                except Error as e:
                    if e.errno == errno.ENODATA:
                        continue  # pinned without a counter: not counted
                    raise
                for i, c in enumerate(counts):
                    s = sums[r][first + i]
                    s[0], s[1], s[2] = (
                        s[0] + c.value,
                        s[1] + c.enabled,
                        s[2] + c.running,
                    )
            first += len(unit)
        unsupported = [self.unsupported[u] for u, unit in enumerate(o.units) for _ in unit]
        out: list[Row] = []
        # Cgroups row by row; threads event by event, in perf stat
        # --per-thread's order.
        order = [(r, ev) for r in range(nrows) for ev in range(len(events))]
        if o.per_thread:
            order = [(r, ev) for ev in range(len(events)) for r in range(nrows)]
        for r, ev in order:
            count, bound = Count(*sums[r][ev]), bounds[r][ev]
            if per_interval:
                before, before_bound = self.previous.get((r, ev), (Count(0, 0, 0), 0))
                self.previous[(r, ev)] = (count, bound)
                count = Count(*(a - b for a, b in zip(count, before)))
                bound -= before_bound
            cgroup = self.cgroup_names[r] if o.cgroups else None
            thread = self.threads[r] if o.per_thread else None
            out.append(Row(events[ev], count, bound, cgroup, unsupported[ev], thread))
        return out


def _fds_alone(t: Target) -> int:
    """The fds a target's event takes without sharing: one per CPU it
    spans, or for a process one per thread, as perf stat -p opens them."""
    if isinstance(t, Process):
        try:
            with open(f"/proc/{t.pid}/status", "rb") as f:
                return max(1, next(int(l.split()[1]) for l in f if l.startswith(b"Threads:")))
        except (OSError, StopIteration, ValueError):
            return 1
    if isinstance(t, (Task, CPU)) or getattr(t, "cpu", None) is not None:
        return 1
    return os.sysconf("SC_NPROCESSORS_ONLN")


def _budget(stat: Stat, out: TextIO) -> int:
    """--budget: the events opened (on -a, -C, -G, -p or this thread) and
    each core PMU's counters per CPU printed; where there is no core PMU,
    one line saying so."""
    if not stat.ctx.budget():
        out.write(f"{PROG}: this machine has no hardware PMU: there is no counter budget\n")
        return 0
    stat.build_targets(0)
    stat.open_all(False)
    out.write(
        f"{'pmu':<12} {'cpu':>5} {'general':>8} {'fixed':>6} {'watchdog':>9} "
        f"{'used':>5} {'wanted':>7} {'saved':>6} multiplexing\n"
    )
    for b in stat.ctx.budget():
        cpu = "task" if b.cpu < 0 else str(b.cpu)
        out.write(
            f"{b.pmu:<12} {cpu:>5} {b.general:>8} {b.fixed:>6} {b.watchdog:>9} "
            f"{b.used:>5} {b.wanted:>7} {b.saved:>6} {'yes' if b.multiplexing else 'no'}\n"
        )
    return 0


def _start_command(argv: list[str]) -> tuple[int, int]:
    """Forks the command, held before its exec until the parent writes
    to the pipe it returns, so counting starts at the exec."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(w)
            if os.read(r, 1) != b"g":
                os._exit(127)
            os.execvp(argv[0], argv)
        except OSError as e:
            os.write(2, f"{PROG}: cannot run {argv[0]}: {e.strerror}\n".encode())
        finally:
            os._exit(127)
    os.close(r)
    return pid, w


def run(argv: Sequence[str], out: TextIO = sys.stdout) -> int:
    try:
        o = parse_args(argv)
    except UsageError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except SystemExit as e:  # argparse's usage error or --help
        return int(e.code or 0)
    try:
        stat = Stat(o)
    except Error as e:
        print(f"{PROG}: {e.strerror}", file=sys.stderr)
        return 1
    with stat.ctx:
        if o.list_events:
            for name, desc in stat.ctx.list_events():
                out.write(f"{name:<50} {desc}\n")
            return 0
        return _count(stat, o, out)


_stopped = False


def _on_signal(signum: int, frame: object) -> None:
    """SIGINT, SIGTERM: as shpmu-stat, stop at the next point that looks
    (a command is still waited for: ^C reaches it too)."""
    global _stopped
    _stopped = True


def _count(stat: Stat, o: Options, out: TextIO) -> int:
    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return _count_until_done(stat, o, out)
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _count_until_done(stat: Stat, o: Options, out: TextIO) -> int:
    child, go = 0, -1
    status = 0
    try:
        stat.check_cpus()
        stat.check_cgroups()
        if o.budget:
            return _budget(stat, out)
        if o.command:
            child, go = _start_command(o.command)
        stat.build_targets(child)
        stat.open_all(bool(o.command) and not (o.pid or o.all_cpus or o.cpus or o.cgroups))
    except (UsageError, Error) as e:
        if isinstance(e, UsageError):
            print(f"{PROG}: {e}", file=sys.stderr)
        _kill(child, go)
        return 1
    printer = Printer(o, out)
    printer.header(o.command)
    start = time.monotonic()
    try:
        if go >= 0:
            os.write(go, b"g")
            os.close(go)
            go = -1
        reaped = _wait(stat, printer, o, child, start)
        if reaped is not None:
            status, child = reaped, 0
        if not o.interval_ms:
            ts = time.monotonic() - start
            for r in stat.rows(False):
                printer.row(r, ts)
    except (Error, OSError) as e:
        # A failed read (or the command gone before its go): as
        # shpmu-stat, the command is killed and reaped, and 1 returned.
        print(f"{PROG}: {e.strerror}", file=sys.stderr)
        _kill(child, go)
        return 1
    printer.footer(time.monotonic() - start)
    st = stat.ctx.stats()
    if st.switches_unseen:
        print(
            f"{PROG}: {st.switches_unseen} context "
            f"{'switch' if st.switches_unseen == 1 else 'switches'} unseen by the "
            f"BPF backend, {_msec_up(st.unattributed_ns)} msec of CPU time "
            "unattributed: a count may fall short by the bound shown with it",
            file=sys.stderr,
        )
    if o.verbose:
        print(
            f"{PROG}: {st.handles} handle{'s' * (st.handles != 1)} on "
            f"{st.kernel_events} kernel event{'s' * (st.kernel_events != 1)}, "
            f"{st.kernel_fds} fd{'s' * (st.kernel_fds != 1)} (without sharing: "
            f"{stat.fds_unshared} fd{'s' * (stat.fds_unshared != 1)})",
            file=sys.stderr,
        )
    return os.waitstatus_to_exitcode(status) if status and os.WIFEXITED(status) else 0


def _wait(stat: Stat, printer: Printer, o: Options, child: int, start: float) -> int | None:
    """Waits for the command (or with none, a signal), printing every
    interval; gives the command's wait status once it is reaped, None
    where it was not (none, or a signal stopped the intervals)."""
    deadline = time.monotonic()
    while True:
        if child > 0:
            # Retried after a signal's handler (PEP 475), as
            # shpmu-stat's SA_RESTART waitpid is.
            pid, status = os.waitpid(child, os.WNOHANG if o.interval_ms else 0)
            if pid == child:
                return status
        if _stopped:
            return None
        if not o.interval_ms:
            signal.pause()
            continue
        deadline += o.interval_ms / 1000
        time.sleep(max(0.0, deadline - time.monotonic()))
        ts = time.monotonic() - start
        for r in stat.rows(True):
            printer.row(r, ts)
        printer.out.flush()


def _kill(child: int, go: int) -> None:
    if go >= 0:
        os.close(go)
    if child > 0:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)


def main(argv: Sequence[str] | None = None) -> int:
    return run(sys.argv[1:] if argv is None else argv)
