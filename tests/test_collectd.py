#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The collectd plugin inside Debian's real collectd.

usage: test_collectd.py PLUGIN LIBDIR [--stress SECONDS]
       test_collectd.py PLUGIN LIBDIR --host SHPMU_HOST SHPMU_EXPORTER

collectd runs in the foreground (-f) with a private config, writing what
it was dispatched with its csv plugin into a temporary directory; nothing
system-wide is touched. PLUGIN is the plugin (shpmu.so), LIBDIR where
the libshpmu it was built against is.

- Accuracy: four instances on a cgroup made here (two identical, one the
  same events in another order, one every CPU), known work run in the
  cgroup; each final value against a raw twin on the cgroup opened before
  collectd, and the identical instances against each other. The sharing
  gauges: one kernel event per distinct request.
- Targets that come and go: a cgroup and a named process missing at
  init, made, gone, and the process started again: each said once, no
  error each interval, each counted while there.
- Bad configs: each refused by a log line naming the option; collectd
  goes on with its other plugin (load).
- With --host: in a mount namespace of its own with a BPF filesystem,
  collectd in host scope and shpmu-exporter in the same domain count
  task-clock on one cgroup: shpmu-host shows both as the domain's users,
  and the one kernel event with refs from both.
- With --stress: ReadThreads 4, 2 s intervals, cgroups made and removed
  every second; the daemon's fds the same after as before, and no value
  going down but where a cgroup came back.

SHPMU_ASAN=1 (a plugin built with AddressSanitizer): collectd runs with
its runtime preloaded, and its stderr must hold no sanitizer report.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from script_checks import check, skip, failures, cgroup2_mount, \
    private_mounts
from cgroup_twin import (CgroupTwin, PERF_COUNT_SW_TASK_CLOCK,
                         PERF_COUNT_SW_CONTEXT_SWITCHES,
                         PERF_COUNT_SW_PAGE_FAULTS)

COLLECTD = "/usr/sbin/collectd"
PLUGIN = LIBDIR = ""  # main() sets them
PRELOAD = None  # the ASan runtime, for a plugin built with it
STOCK = "/usr/lib/collectd"
EVENTS = {"task-clock": PERF_COUNT_SW_TASK_CLOCK,
          "context-switches": PERF_COUNT_SW_CONTEXT_SWITCHES,
          "page-faults": PERF_COUNT_SW_PAGE_FAULTS}


class Collectd:
    """collectd -f on a config of ours: a plugin dir holding ours and the
    stock csv, logfile and load plugins, csv files and the log in work."""

    def __init__(self, work, blocks, interval=1, threads=5):
        self.work = work
        self.csv = os.path.join(work, "csv")
        self.log = os.path.join(work, "collectd.log")
        plugins = os.path.join(work, "plugins")
        os.makedirs(plugins, exist_ok=True)
        for name in ("csv", "logfile", "load"):
            shutil.copy(os.path.join(STOCK, name + ".so"), plugins)
        shutil.copy(PLUGIN, plugins)
        env = dict(os.environ, LD_LIBRARY_PATH=LIBDIR)
        if PRELOAD:
            env["LD_PRELOAD"] = PRELOAD
        conf = os.path.join(work, "collectd.conf")
        with open(conf, "w") as f:
            f.write(f'''Hostname "test"
FQDNLookup false
Interval {interval}
ReadThreads {threads}
PluginDir "{plugins}"
TypesDB "/usr/share/collectd/types.db"
BaseDir "{work}"
PIDFile "{work}/collectd.pid"
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File "{self.log}"
  Timestamp true
  PrintSeverity true
</Plugin>
LoadPlugin csv
<Plugin csv>
  DataDir "{self.csv}"
</Plugin>
LoadPlugin load
LoadPlugin shpmu
<Plugin shpmu>
{blocks}
</Plugin>
''')
        # Its stderr: where a sanitizer in the plugin reports.
        self.stderr = os.path.join(work, "stderr")
        with open(self.stderr, "w") as err:
            self.proc = subprocess.Popen([COLLECTD, "-f", "-C", conf],
                                         stdout=err, stderr=err, env=env)

    def said(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def wait_said(self, what, timeout=10):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if what in self.said():
                return True
            time.sleep(0.1)
        return False

    def values(self, instance, type_, type_instance):
        """Every (time, value) collectd wrote for one series."""
        pattern = os.path.join(self.csv, "test",
                               "shpmu" + ("-" + instance if instance else ""),
                               f"{type_}-{type_instance}-*")
        rows = []
        for path in sorted(glob.glob(pattern)):
            with open(path) as f:
                for line in f.read().splitlines()[1:]:
                    t, v = line.split(",")
                    rows.append((float(t), float(v)))
        return rows

    def last(self, instance, type_, type_instance):
        rows = self.values(instance, type_, type_instance)
        return rows[-1][1] if rows else None

    def stderr_text(self):
        with open(self.stderr, errors="replace") as f:
            return f.read()

    def mapped(self, name):
        """Whether a library whose name holds name is loaded in it."""
        with open(f"/proc/{self.proc.pid}/maps") as f:
            return name in f.read()

    def fds(self):
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def stop(self):
        self.proc.terminate()
        try:
            return self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def run_in_cgroup(cgroup, code):
    """A Python child that moves itself into cgroup, then runs code."""
    return subprocess.Popen([sys.executable, "-c", f'''
import os
with open({os.path.join(cgroup, "cgroup.procs")!r}, "w") as f:
    f.write(str(os.getpid()))
{code}
'''])


WORK = '''
import time
pages = []
for i in range(200):
    end = time.thread_time() + 0.002
    while time.thread_time() < end:
        pass
    pages.append(bytearray(64 * 4096))
    time.sleep(0.001)
'''


# A cgroup's life in the stress: a little work every few ms.
BUSY = '''
import time
while True:
    end = time.thread_time() + 0.001
    while time.thread_time() < end:
        pass
    time.sleep(0.004)
'''


def check_accuracy(cgroup, relative):
    events = '"task-clock" "context-switches" "page-faults"'
    reordered = '"page-faults" "task-clock" "context-switches"'
    blocks = f'''  CgroupBackend "perf"
  <Instance "web">
    Events {events}
    Cgroup "{relative}"
  </Instance>
  <Instance "web2">
    Events {events}
    Cgroup "{relative}"
  </Instance>
  <Instance "db">
    Events {reordered}
    Cgroup "{relative}"
  </Instance>
  <Instance "host">
    Events "task-clock"
    CPUs "all"
  </Instance>'''
    twins = {name: CgroupTwin(cgroup, config)
             for name, config in EVENTS.items()}
    with tempfile.TemporaryDirectory(prefix="shpmu-collectd-") as work:
        cd = Collectd(work, blocks)
        check(cd.wait_said("Initialization complete"), "collectd started")
        # The plugin counts from its init: the work starts after it.
        time.sleep(1.5)
        work_start = time.time()
        child = run_in_cgroup(cgroup, WORK)
        check(child.wait() == 0, "the work in the cgroup ran")
        work_end = time.time()
        # Two more intervals: the cgroup idle, its counts final.
        time.sleep(3.5)
        truth = {name: twin.read() for name, twin in twins.items()}
        print("twin:", truth)
        for inst in ("web", "web2", "db"):
            for name in EVENTS:
                got = cd.last(inst, "derive", name)
                if name == "task-clock":
                    # Two kernel events cut each switch at its own
                    # clock reads: half a per cent (tests/README.md).
                    ok = got is not None and \
                        abs(got - truth[name]) <= truth[name] * 0.005
                else:
                    ok = got == truth[name]
                check(ok, f"{inst} {name}: {got} against the twin's "
                          f"{truth[name]}")
            # Each instance reads at its own moment: while the work runs
            # their values differ, and outside it they are the same.
            for name in EVENTS if inst != "web" else ():
                def idle(i):
                    return [v for t, v in cd.values(i, "derive", name)
                            if t < work_start or t > work_end + 1]
                check(len(idle(inst)) >= 2 and len(idle("web")) >= 2 and
                      idle(inst)[-2:] == idle("web")[-2:],
                      f"{inst} dispatched the same {name} values as web "
                      "while the cgroup was idle")
        check(cd.last("host", "derive", "task-clock") is not None,
              "the every-CPU instance dispatched task-clock")
        gauges = {g: cd.last("", "gauge", g)
                  for g in ("handles", "kernel_events", "kernel_fds")}
        print("sharing gauges:", gauges)
        ncpu = os.cpu_count()
        check(gauges["handles"] == 10, "10 handles (3 instances x 3 "
              "events, and the host's 1)")
        check(gauges["kernel_events"] == 4, "4 kernel events: one per "
              "distinct request (3 on the cgroup, 1 on every CPU)")
        check(gauges["kernel_fds"] == 4 * ncpu, f"{4 * ncpu} fds: 4 "
              "events on each CPU")
        check(cd.stop() == 0, "collectd stopped cleanly")
        said = cd.said()
        check(not re.search(r"\[(emergency|alert|critical|error)\] "
                            r"shpmu", said), "no shpmu line is an error")
        for inst in ("web", "db"):
            rows = cd.values(inst, "derive", "task-clock")
            print(f"collectd's csv, shpmu-{inst}/derive-task-clock:",
                  rows[-3:])


BAD = [
    ('<Instance "a">\n Events "no-such-event"\n CPUs "all"\n</Instance>',
     'Events "no-such-event"'),
    ('<Instance "a">\n Events "task-clock"\n Cgroup "../../etc"\n'
     '</Instance>', 'Cgroup "../../etc"'),
    ('<Instance "a">\n Events "task-clock"\n CPUs "zero"\n</Instance>',
     'CPUs takes'),
    ('<Instance "a">\n Events "task-clock"\n Process -4\n</Instance>',
     'Process takes'),
    ('<Instance "a">\n Events "task-clock"\n</Instance>',
     'nothing to count'),
    ('<Instance "a">\n CPUs "all"\n</Instance>', 'no Events'),
    ('<Instance "a/b">\n Events "task-clock"\n CPUs "all"\n</Instance>',
     'Instance takes'),
    ('Colour "blue"\n<Instance "a">\n Events "task-clock"\n CPUs "all"\n'
     '</Instance>', 'unknown option Colour'),
    ('Domain "x"\n<Instance "a">\n Events "task-clock"\n CPUs "all"\n'
     '</Instance>', 'Domain is for Scope "host" only'),
    ('<Instance "a">\n Events "task-clock"\n Cgroup "/x"\n Cgroup "/x"\n'
     '</Instance>', 'would be named'),
    # One cgroup written two ways is one target.
    ('<Instance "a">\n Events "task-clock"\n Cgroup "/x/./y"\n'
     ' Cgroup "x//y"\n</Instance>', 'would be named'),
    ('Scope "host"\nScope "process"\n<Instance "a">\n Events "task-clock"'
     '\n CPUs "all"\n</Instance>', 'Scope is given twice'),
    # A pid names one process, which does not come back.
    ('<Instance "a">\n Events "task-clock"\n Process 3999999\n'
     '</Instance>', 'Process 3999999'),
]


def check_comings_and_goings(mount):
    """A cgroup and a named process missing at init, then made, then gone:
    each said once, no libshpmu error each interval, counted once there,
    and a process started again under its name counted again. The
    instance is named "sharing", as the gauges' read callback once was."""
    cgroup = os.path.join(mount, f"shpmu-collectd-later-{os.getpid()}")
    rel = "/" + os.path.relpath(cgroup, mount)
    comm = f"shpmuproc{os.getpid() % 100000}"
    fixed = subprocess.Popen(["sleep", "60"])  # a Process by pid
    blocks = f'''  <Instance "sharing">
    Events "task-clock" "context-switches"
    Cgroup "{rel}"
    ProcessName "{comm}"
  </Instance>
  <Instance "pid">
    Events "task-clock"
    Process {fixed.pid}
  </Instance>'''
    cg_said = f'Cgroup "{rel}"'
    proc_said = f'ProcessName "{comm}"'
    with tempfile.TemporaryDirectory(prefix="shpmu-collectd-") as work:
        program = os.path.join(work, comm)
        shutil.copy("/bin/sleep", program)
        cd = Collectd(work, blocks)
        procs = []
        try:
            check(cd.wait_said("Initialization complete"),
                  "later: collectd started")
            time.sleep(3.5)  # three intervals with both missing
            log = cd.said()
            check(log.count(f"{cg_said} is not there") == 2 and
                  log.count(f"{proc_said} is not there") == 2,
                  "later: each missing target said once an event")
            check(not re.search(r"\[error\]", log),
                  "later: no error logged for targets that may come")
            os.mkdir(cgroup)
            procs.append(subprocess.Popen([program, "60"]))
            check(cd.wait_said(f"{cg_said} is back") and
                  cd.wait_said(f"{proc_said} is back"),
                  "later: both counted once there")
            time.sleep(2.5)
            label = rel.strip("/").replace("/", "_")
            check(cd.last("sharing", "derive",
                          f"task-clock-{label}") is not None and
                  cd.last("sharing", "derive",
                          f"context-switches-{comm}") is not None,
                  "later: the instance named sharing dispatched both")
            check(cd.last("", "gauge", "handles") is not None,
                  "later: and the sharing gauges were dispatched")
            procs[0].kill()
            procs[0].wait()
            check(cd.wait_said(f"{proc_said} is gone"),
                  "later: the process's end was seen")
            procs.append(subprocess.Popen([program, "60"]))
            end = time.monotonic() + 10
            while cd.said().count(f"{proc_said} is back") < 4 and \
                    time.monotonic() < end:
                time.sleep(0.1)
            check(cd.said().count(f"{proc_said} is back") == 4,
                  "later: the process started again is counted again")
            os.rmdir(cgroup)
            check(cd.wait_said(f"{cg_said} is gone"),
                  "later: the cgroup's removal was seen")
            check(cd.last("pid", "derive", "task-clock") is not None,
                  "later: the Process by pid was counted")
            fixed.kill()
            fixed.wait()
            check(cd.wait_said(f'Process {fixed.pid} is gone: task-clock '
                               'dropped\n'),
                  "later: the Process's end was seen, and it is not "
                  "waited for")
        finally:
            for p in procs + [fixed]:
                p.kill()
                p.wait()
            if os.path.isdir(cgroup):
                os.rmdir(cgroup)
            rc = cd.stop()
        check(rc == 0, "later: collectd stopped cleanly")
        check(not re.search(r"\[(emergency|alert|critical|error)\]",
                            cd.said()), "later: nothing logged as an error")


def check_bad_configs():
    for block, said in BAD:
        with tempfile.TemporaryDirectory(prefix="shpmu-collectd-") as work:
            cd = Collectd(work, block)
            started = cd.wait_said("Initialization complete")
            # Its other plugin goes on: load's values get written.
            time.sleep(2.2)
            load = started and bool(
                glob.glob(os.path.join(cd.csv, "test", "load", "*")))
            alive = cd.proc.poll() is None
            log = cd.said()
            cd.stop()
            what = block.splitlines()[0] + " ..."
            check(started and alive, f"{what}: collectd runs on")
            check(said in log, f"{what}: the log says {said!r}")
            # libshpmu's own errors at collectd's level for an error, not
            # as syslog's 0 (an emergency), which libshpmu's 0 is not.
            check(not re.search(r"\[(emergency|alert|critical)\]", log),
                  f"{what}: nothing logged above an error")
            check("shpmu: the config has errors" in log or
                  "shpmu: instance" in log,
                  f"{what}: the plugin refused to start")
            check("Plugin will be unloaded" in log,
                  f"{what}: collectd unloaded the plugin")
            check(load, f"{what}: collectd's load plugin wrote values")
            check(not glob.glob(os.path.join(cd.csv, "test", "shpmu*")),
                  f"{what}: nothing dispatched for shpmu")


def check_stress(mount, seconds):
    base = os.path.join(mount, f"shpmu-collectd-stress-{os.getpid()}")
    os.mkdir(base)
    names = [f"c{i}" for i in range(4)]
    rel = "/" + os.path.relpath(base, mount)
    blocks = "\n".join(f'''  <Instance "s{i}">
    Events "task-clock" "context-switches"
    Cgroup "{rel}/{names[i]}"
    Cgroup "{rel}/{names[(i + 1) % 4]}"
  </Instance>''' for i in range(4))
    workers = {}

    def make(n):
        os.mkdir(os.path.join(base, n))
        workers[n] = run_in_cgroup(os.path.join(base, n), BUSY)

    def remove(n):
        workers[n].kill()
        workers.pop(n).wait()
        os.rmdir(os.path.join(base, n))

    for n in names:
        make(n)
    try:
        with tempfile.TemporaryDirectory(prefix="shpmu-collectd-") as work:
            cd = Collectd(work, blocks, interval=2, threads=4)
            check(cd.wait_said("Initialization complete", 30),
                  "stress: collectd started")
            time.sleep(4.5)
            before = cd.fds()
            if PRELOAD:
                check(cd.mapped("libasan"), "stress: ASan runs in collectd")
            end = time.monotonic() + seconds
            i = 0
            while time.monotonic() < end and cd.proc.poll() is None:
                if names[i % 4] in workers:
                    remove(names[i % 4])
                else:
                    make(names[i % 4])
                i += 1
                time.sleep(1)
            for n in names:
                if n not in workers:
                    make(n)
            time.sleep(4.5)
            after = cd.fds()
            alive = cd.proc.poll() is None
            rc = cd.stop()
            log = cd.said()
            check(alive, "stress: collectd ran throughout")
            check(after == before, f"stress: collectd's fds {before} "
                  f"before, {after} after")
            check(rc == 0, f"stress: collectd exited with {rc}")
            errors = cd.stderr_text()
            check("Sanitizer" not in errors and "runtime error" not in
                  errors, "stress: no sanitizer report" +
                  ("" if "Sanitizer" not in errors else ":\n" + errors[:3000]))
            backs = log.count("is back")
            drops = 0
            wrong = []
            for s in range(4):
                for n in names:
                    for ev in ("task-clock", "context-switches"):
                        rows = cd.values(f"s{s}", "derive", f"{ev}-"
                                         f"{rel.strip('/').replace('/', '_')}"
                                         f"_{n}")
                        down = sum(b[1] < a[1]
                                   for a, b in zip(rows, rows[1:]))
                        # Each restart from a lower value is one of this
                        # series' comebacks, said in the log.
                        back = log.count(f'instance "s{s}": Cgroup '
                                         f'"{rel}/{n}" is back: counting '
                                         f'{ev} again')
                        drops += down
                        if down > back:
                            wrong.append(f"s{s} {ev} {n}: {down} drops, "
                                         f"{back} comebacks")
            print(f"stress: {i} cgroup changes, {backs} series back, "
                  f"{drops} restarts from a lower value")
            check(i >= seconds - 2, "stress: the cgroups changed each second")
            check(backs > 0, "stress: series came back with their cgroups")
            check(not wrong, "stress: a value went down only where its "
                  "cgroup came back: " + "; ".join(wrong[:4]))
    finally:
        for n in list(workers):
            remove(n)
        os.rmdir(base)


def check_host_scope(mount, shpmu_host, exporter):
    bpffs = os.path.join(private_mounts("shpmu-collectd-bpffs-"), "shpmu")
    cgroup = os.path.join(mount, f"shpmu-collectd-host-{os.getpid()}")
    relative = "/" + os.path.relpath(cgroup, mount)
    os.mkdir(cgroup)
    blocks = f'''  Scope "host"
  BPFFS "{bpffs}"
  Domain "collectd"
  <Instance "web">
    Events "task-clock"
    Cgroup "{relative}"
  </Instance>'''
    exp = None
    try:
        with tempfile.TemporaryDirectory(prefix="shpmu-collectd-") as work:
            cd = Collectd(work, blocks)
            check(cd.wait_said("Initialization complete"),
                  "host scope: collectd started")
            time.sleep(1.5)
            exp = subprocess.Popen(
                [exporter, "--scope=host", f"--bpffs={bpffs}",
                 "--domain=collectd", "--events=task-clock",
                 f"--cgroup.match={relative}",
                 "--web.listen-address=127.0.0.1:0"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env=dict(os.environ, LD_LIBRARY_PATH=LIBDIR))
            time.sleep(3)
            show = subprocess.run(
                [shpmu_host, "--bpffs", bpffs, "show", "collectd"],
                capture_output=True, text=True,
                env=dict(os.environ, LD_LIBRARY_PATH=LIBDIR)).stdout
            print(show, end="")
            users = [line for line in show.splitlines()
                     if line.strip().startswith("user ")]
            check(any("(collectd)" in u and u.endswith("alive")
                      for u in users) and
                  any("(shpmu-exporter)" in u and u.endswith("alive")
                      for u in users),
                  "host scope: collectd and shpmu-exporter are the "
                  "domain's users")
            clocks = [line for line in show.splitlines()
                      if line.strip().startswith("event ") and
                      "task-clock" in line]
            check(len(clocks) == 1, "host scope: one task-clock event "
                  "in the domain")
            refs = int(clocks[0].split(",")[1].split()[0]) if clocks else 0
            check(refs >= 2, f"host scope: its {refs} refs are from both")
            check(cd.last("web", "derive", "task-clock") is not None,
                  "host scope: collectd dispatched task-clock")
            check(cd.stop() == 0, "host scope: collectd stopped cleanly")
    finally:
        if exp:
            exp.terminate()
            exp.wait()
        os.rmdir(cgroup)


def main():
    global PLUGIN, LIBDIR, PRELOAD
    args = sys.argv[1:]
    if len(args) < 2 or args[2:3] not in ([], ["--stress"], ["--host"]) or \
            len(args) != {None: 2, "--stress": 4, "--host": 5}[
                (args[2:3] or [None])[0]]:
        sys.exit(__doc__)
    PLUGIN, LIBDIR = os.path.abspath(args[0]), os.path.abspath(args[1])
    if not os.path.exists(COLLECTD):
        skip("no collectd (Debian: collectd-core; "
             "scripts/install-deps.sh installs it)")
    if os.geteuid() != 0:
        skip("needs root: cgroups and CPU-wide events")
    mount = cgroup2_mount()
    if not mount:
        skip("no cgroup2 mount")
    if os.environ.get("SHPMU_ASAN"):
        # An ASan-built plugin in a daemon built without it: the runtime
        # goes in first.
        PRELOAD = subprocess.run(["gcc", "-print-file-name=libasan.so"],
                                 capture_output=True, text=True,
                                 check=True).stdout.strip()
    if args[2:3] == ["--stress"]:
        check_stress(mount, int(args[3]))
    elif args[2:3] == ["--host"]:
        check_host_scope(mount, args[3], args[4])
    else:
        cgroup = os.path.join(mount, f"shpmu-collectd-{os.getpid()}")
        os.mkdir(cgroup)
        try:
            check_accuracy(cgroup, "/" + os.path.relpath(cgroup, mount))
        finally:
            os.rmdir(cgroup)
        check_comings_and_goings(mount)
        check_bad_configs()
    sys.exit(f"{len(failures)} checks failed" if failures else 0)


if __name__ == "__main__":
    main()
