#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""shpmu-exporter scraped by promtool and by a real Prometheus.

usage: test_exporter.py SHPMU_EXPORTER CG_BURN [--pmu-model]

With --pmu-model (a build with the PMU model): only its multiplexed
values against the model's truth (exporter_model.py) and the counter
budget's families on the model.

In a mount namespace of its own (a BPF filesystem for host scope, nothing
left behind): cgroups made by the test (one named with a double quote, a
backslash, a space and UTF-8), known work run in them, and what Prometheus
stored read back through its HTTP API. Then abusive clients and names: a
trickled request, too many connections from one address, 150 slow ones
under RLIMIT_NOFILE 128, a name that is not UTF-8, a tree deeper than
PATH_MAX, and paths that only look like /metrics.
"""
import ctypes
import fcntl
import json
import os
import platform
import re
import resource
import select
import struct
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

from script_checks import (check, skip, failures,  # noqa: E402,F401
                           cgroup2_mount, private_mounts)

EXPORTER, BURN = sys.argv[1], sys.argv[2]
for tool in ("prometheus", "promtool"):
    if not shutil.which(tool):
        skip(f"no {tool} (Debian: prometheus)")
if os.geteuid() != 0:
    skip("needs root: cgroups, CPU-wide events, a BPF filesystem")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, accept=None, timeout=10):
    req = urllib.request.Request(url)
    if accept:
        req.add_header("Accept", accept)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.headers.get("Content-Type"), r.read().decode()


class Exporter:
    """The exporter on a free port of 127.0.0.1. Its stderr is read by a
    thread (echoed, and kept in self.log) so that a flood of log lines
    can never block it on a full pipe."""
    started = []  # killed at the end if a failed check left one running

    def __init__(self, *args, preexec_fn=None, env=None):
        self.proc = subprocess.Popen([EXPORTER, "--web.listen-address=127.0.0.1:0", *args],
                                     stderr=subprocess.PIPE, text=True,
                                     errors="replace", preexec_fn=preexec_fn,
                                     env=env)
        Exporter.started.append(self.proc)
        self.log = []
        self.port = self.limit = self.nofile = self.held = None
        ready = threading.Event()

        def read():
            for line in self.proc.stderr:
                sys.stderr.write(line)
                self.log.append(line)
                if "listening on" in line:
                    self.port = int(line.split("(port ")[1].split(")")[0])
                m = re.search(r"connections: at most (\d+) \(RLIMIT_NOFILE (\d+), (-?\d+) fds held\)", line)
                if m:
                    self.limit, self.nofile, self.held = map(int, m.groups())
                    ready.set()
            ready.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        # It says both lines once it serves; 60 s for BPF programs to
        # load on a busy machine.
        ready.wait(60)
        if not self.port or self.limit is None:
            self.proc.kill()
            sys.exit("the exporter did not start")
        self.url = f"http://127.0.0.1:{self.port}/metrics"

    def scrape(self, accept=None):
        return get(self.url, accept)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=20)
        self.reader.join(timeout=20)
        return rc

    def said(self, what):
        return [line for line in self.log if what in line]

    def said_soon(self, what, timeout=5):
        """said(what), once it holds a line or after timeout s: the
        reader thread may take a moment past the scrape that made it."""
        poll_until(lambda: self.said(what), timeout)
        return self.said(what)

    def fds(self):
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def sockets(self):
        n = 0
        for fd in os.listdir(f"/proc/{self.proc.pid}/fd"):
            try:
                n += os.readlink(f"/proc/{self.proc.pid}/fd/{fd}").startswith("socket:")
            except FileNotFoundError:
                pass  # closed since listed
        return n

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0


def series(text, name, **labels):
    """The values of the samples of name whose labels include these
    (label values compared as written, escapes and all)."""
    out = []
    for line in text.splitlines():
        if not line.startswith((name + "{", name + " ")):
            continue
        body, value = line.rsplit(" ", 1)
        if all(f'{k}="{v}"' in body for k, v in labels.items()):
            out.append(float(value))
    return out


from cgroup_twin import (CgroupTwin, PERF_COUNT_SW_CONTEXT_SWITCHES,  # noqa: E402
                         SYS_PERF_EVENT_OPEN)


def escape(s):
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def burn(cgroup_dir, ms):
    """CPU work inside the cgroup: its own task-clock there, in s."""
    out = subprocess.run([BURN, cgroup_dir, str(ms)], check=True,
                         capture_output=True, text=True).stdout
    return int(out) / 1e9


class Prometheus:
    def __init__(self, target_port, workdir):
        self.port = free_port()
        cfg = os.path.join(workdir, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n"
                    "scrape_configs:\n  - job_name: shpmu\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{target_port}']\n")
        self.proc = subprocess.Popen(
            ["prometheus", f"--config.file={cfg}",
             f"--storage.tsdb.path={os.path.join(workdir, 'data')}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(workdir, "prometheus.log"), "w"))
        self.api = f"http://127.0.0.1:{self.port}/api/v1/"
        # Polled until it answers, with a deadline.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                get(f"http://127.0.0.1:{self.port}/-/ready", timeout=1)
                return
            except OSError:
                time.sleep(0.1)  # between polls
        sys.exit("prometheus did not start in 30 s")

    def query(self, q):
        url = self.api + "query?" + urllib.parse.urlencode({"query": q})
        return json.loads(get(url)[1])["data"]["result"]

    def wait_for(self, q, cond, what, timeout=30):
        """Polls query q until cond holds of its answer, with a deadline."""
        deadline = time.monotonic() + timeout
        while True:
            r = self.query(q)
            if cond(r):
                check(True, what)
                return r
            if time.monotonic() >= deadline:
                break
            time.sleep(0.2)  # between polls (it scrapes every second)
        check(False, f"{what} (timed out; last answer {r})")
        return r

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def check_formats(exp, base_label, odd_label):
    ctype, text = exp.scrape()
    check(ctype.startswith("text/plain; version=0.0.4"), f"0.0.4 content type: {ctype}")
    p = subprocess.run(["promtool", "check", "metrics"], input=text,
                       capture_output=True, text=True)
    check(p.returncode == 0 and not (p.stdout + p.stderr).strip(),
          f"promtool check metrics (0.0.4): rc {p.returncode} {p.stdout}{p.stderr}")
    check(series(text, "shpmu_cgroup_clock_seconds_total", cgroup=escape(odd_label),
                 event="task-clock") == [0.0],
          "the odd cgroup's label is escaped (quote, backslash), and it ran nothing yet")
    ctype, om = exp.scrape("application/openmetrics-text; version=1.0.0")
    check(ctype.startswith("application/openmetrics-text; version=1.0.0"),
          f"OpenMetrics content type: {ctype}")
    check(om.endswith("# EOF\n"), "OpenMetrics ends with # EOF")
    check("# TYPE shpmu_cgroup_clock_seconds counter\n# UNIT shpmu_cgroup_clock_seconds seconds\n" in om,
          "OpenMetrics families: TYPE and UNIT without _total")
    for line in om.splitlines():
        if line.startswith("#") or not line:
            continue
        name = line.split("{")[0].split(" ")[0]
        if "_seconds" in name or "_events" in name:
            check(name.endswith("_total"), f"an OpenMetrics counter sample ends in _total: {name}")
            break
    # promtool (2.42) parses only the 0.0.4 format: what it says of
    # OpenMetrics, for the record.
    p = subprocess.run(["promtool", "check", "metrics"], input=om,
                       capture_output=True, text=True)
    print("promtool on OpenMetrics (it parses 0.0.4 only): rc", p.returncode,
          (p.stdout + p.stderr).strip().replace("\n", "; "))
    check(f'cgroup="{escape(base_label)}"' in text, "the root of the walk is counted")
    check_unattributed(text, om)
    ctype, page = get(f"http://127.0.0.1:{exp.port}/")
    check(ctype.startswith("text/html") and 'href="/metrics"' in page,
          "/ is a page linking to /metrics")


def samples(text, name):
    """{labels: value} of name's samples, labels as written."""
    out = {}
    for line in text.splitlines():
        m = re.match(rf"^{name}(?:\{{(.*)\}})? (\S+)$", line)
        if m:
            out[m.group(1) or ""] = float(m.group(2))
    return out


def check_unattributed(text, om):
    """Host scope counts the CPUs and cgroups with the BPF backend: what
    it could not attribute, per CPU and event, on the CPUs of the per-CPU
    series; the switches it did not see and the time, in all. Their
    values depend on the kernel (0 where it runs the program at every
    switch), so only their form and what holds whatever they are."""
    cpus = {re.search(r'cpu="(\d+)"', k).group(1) for k in
            samples(text, "shpmu_cpu_clock_seconds_total")}
    clock = samples(text, "shpmu_unattributed_clock_seconds_total")
    want = {f'cpu="{c}",event="task-clock"' for c in cpus}
    check(cpus and set(clock) == want,
          f"unattributed task-clock per CPU: {sorted(clock)}, want {sorted(want)}")
    events = samples(text, "shpmu_unattributed_events_total")
    check({k.split(",")[0] for k in events} == {f'cpu="{c}"' for c in cpus} and
          all(v >= 0 and v == int(v) for v in events.values()),
          f"unattributed counts per CPU and event: {events}")
    unseen = samples(text, "shpmu_switches_unseen_total")
    seconds = samples(text, "shpmu_unattributed_seconds_total")
    check(len(unseen) == 1 and "" in unseen and unseen[""] >= 0,
          f"shpmu_switches_unseen_total: {unseen}")
    # A CPU's task-clock runs with its enabled time, and the time is each
    # unattributed delta's longest enabled time, read after the per-CPU
    # totals (0.1% and a us for the two reads of one perf event).
    check(len(seconds) == 1 and
          sum(clock.values()) <= seconds.get("", 0) * 1.001 + 1e-6,
          f"unattributed task-clock {sum(clock.values())} s within "
          f"shpmu_unattributed_seconds_total {seconds}")
    for family in ("# HELP shpmu_switches_unseen_total ",
                   "# HELP shpmu_unattributed_seconds_total ",
                   "# HELP shpmu_unattributed_clock_seconds_total ",
                   "# HELP shpmu_unattributed_events_total "):
        check(family in text, f"{family.strip()} has its HELP line")
    check("# TYPE shpmu_unattributed_seconds counter\n"
          "# UNIT shpmu_unattributed_seconds seconds\n" in om and
          "# TYPE shpmu_switches_unseen counter\n# HELP" in om,
          "OpenMetrics: the unattributed families with their units")


def check_classic_unattributed():
    """Process scope without cgroups: the CPUs' events are classic perf
    fds, which attribute everything, and no BPF program runs: no
    per-event family, and the totals are 0."""
    exp = Exporter("--no-cgroups", "-e", "task-clock,cs")
    text = exp.scrape()[1]
    check("shpmu_unattributed_clock_seconds_total" not in text and
          "shpmu_unattributed_events_total" not in text,
          "classic events: no unattributed family per event")
    check(series(text, "shpmu_switches_unseen_total") == [0.0] and
          series(text, "shpmu_unattributed_seconds_total") == [0.0],
          "classic events: no switch unseen, nothing unattributed")
    check(exp.stop() == 0, "the classic exporter stops cleanly")


def check_cap(bpffs, base_label):
    """--max-cgroups bounds the series and says how many it left out."""
    exp = Exporter("--scope=host", f"--bpffs={bpffs}/shpmu", "--no-cpu",
                   "-e", "task-clock", f"--cgroup.root={base_label}",
                   "--max-cgroups=1")
    text = exp.scrape()[1]
    check(series(text, "shpmu_cgroups") == [1.0] and
          series(text, "shpmu_cgroups_left_out") == [1.0] and
          len(series(text, "shpmu_cgroup_clock_seconds_total")) == 1,
          "--max-cgroups=1 of 2: one counted, one left out and said so")
    clock = samples(text, "shpmu_unattributed_clock_seconds_total")
    check(list(clock) == ['event="task-clock"'],
          f"--no-cpu: unattributed task-clock summed over CPUs: {clock}")
    check(exp.stop() == 0, "the capped exporter stops cleanly")


def check_against_prometheus(exp, prom, mount, base_label, odd_label):
    prom.wait_for('up{job="shpmu"}', lambda r: r and r[0]["value"][1] == "1", "up == 1")
    targets = json.loads(get(prom.api + "targets")[1])["data"]["activeTargets"]
    check(targets and targets[0]["lastError"] == "",
          f"Prometheus scrapes without error: {targets and targets[0]['lastError']}")
    sel = f'shpmu_cgroup_clock_seconds_total{{event="task-clock",cgroup="{escape(odd_label)}"}}'
    prom.wait_for(sel, lambda r: len(r) == 1, "the odd cgroup's series is in Prometheus")
    labels = {r["metric"]["cgroup"] for r in prom.query('shpmu_cgroup_clock_seconds_total{event="task-clock"}')}
    check(odd_label in labels and base_label in labels,
          f"cgroup labels equal the paths: {sorted(labels)}")

    # The work is all that runs in the cgroup: a raw classic event on it,
    # opened before the work and read after it (the burner gone), counts
    # what Prometheus's samples from before and after it must differ by.
    before = float(prom.query(sel)[0]["value"][1])
    switched = CgroupTwin(mount + odd_label, PERF_COUNT_SW_CONTEXT_SWITCHES)
    twin = CgroupTwin(mount + odd_label)
    spent = burn(mount + odd_label, 1500)
    ended = time.time()
    twin_s = twin.read() / 1e9
    switches = switched.read()
    # A sample scraped after the work ended (Prometheus stamps a sample
    # with the scrape's start, in ms) holds all of it.
    prom.wait_for(f"timestamp({sel})",
                  lambda r: r and float(r[0]["value"][1]) > ended,
                  "a sample scraped after the work is in Prometheus")
    samples = prom.query(f"{sel}[1m]")[0]["values"]
    after = next((float(v) for t, v in samples if float(t) > ended), None)
    if after is None:
        return
    got = after - before
    # The exporter counts through BPF (host scope), the twin with a
    # classic cgroup event: their clocks are read some us apart at each of
    # the burner's switches (test_host.c's PER_SWITCH_NS says how many, and
    # why). Within 1%, or 30 us a switch when that is more (a busy machine
    # preempts the burner hundreds of times).
    tolerance = max(0.01 * twin_s, 30e-6 * switches)
    check(abs(got - twin_s) <= tolerance,
          f"task-clock increase in Prometheus {got:.6f} s vs a raw cgroup "
          f"event's {twin_s:.6f} s ({100 * (got - twin_s) / twin_s:+.3f}%, "
          f"{switches} switches, {1e6 * abs(got - twin_s) / max(switches, 1):.1f} "
          f"us a switch; tolerance {tolerance * 1e3:.3f} ms)")
    # One-sided: the cgroup's time holds the burner's own task-clock,
    # counted from just after its move until its last burn (plus its
    # move's end and its exit); 0.5% for the classic cgroup event's share
    # of the time the kernel takes to reschedule it at cgroup switches.
    check(twin_s >= spent * 0.995,
          f"the raw cgroup event's {twin_s:.6f} s holds the burner's own "
          f"{spent:.6f} s ({100 * (twin_s - spent) / spent:+.3f}%)")


def check_churn(exp, prom, mount, base_label):
    gone, new = base_label + "/gone", base_label + "/new"
    os.mkdir(mount + gone)
    sel = 'shpmu_cgroup_clock_seconds_total{{event="task-clock",cgroup="{}"}}'
    prom.wait_for(sel.format(gone), lambda r: len(r) == 1, "a cgroup made mid-run appears")
    os.rmdir(mount + gone)
    os.mkdir(mount + new)
    prom.wait_for(sel.format(gone), lambda r: not r, "a removed cgroup's series stops")
    prom.wait_for(sel.format(new), lambda r: len(r) == 1, "a second cgroup made mid-run appears")
    check(prom.query('up{job="shpmu"}')[0]["value"][1] == "1", "still up")
    os.rmdir(mount + new)


def check_endurance(exp):
    for _ in range(10):
        exp.scrape()
    fds, rss = exp.fds(), exp.rss_kib()
    for _ in range(1000):
        exp.scrape()
    # (Prometheus's own connection may come and go meanwhile.)
    check(exp.fds() <= fds + 1, f"fds after 1000 scrapes: {exp.fds()} (after 10: {fds})")
    if "libasan" in subprocess.run(["ldd", EXPORTER], capture_output=True,
                                   text=True).stdout:
        # AddressSanitizer holds freed memory in quarantine: RSS grows
        # by design there; LeakSanitizer checks leaks at exit instead.
        print(f"RSS not judged under AddressSanitizer ({rss} -> "
              f"{exp.rss_kib()} KiB)")
        return
    check(exp.rss_kib() <= rss + 256,
          f"RSS after 1000 scrapes: {exp.rss_kib()} KiB (after 10: {rss} KiB)")


def check_bad_clients(exp):
    port = exp.port
    junk = socket.create_connection(("127.0.0.1", port))
    junk.sendall(b"GARBAGE\r\n\r\n")
    junk.settimeout(5)
    answer = junk.recv(100)
    check(answer == b"" or answer.startswith(b"HTTP/1.1 4"),
          f"a malformed request gets a 4xx or a close at once: {answer[:40]!r}")
    # Binary junk, a request line that never ends, and 1000 connections
    # left open: each waits for its timeout (10 s) without holding up
    # anybody else.
    binary = socket.create_connection(("127.0.0.1", port))
    binary.sendall(b"\x00\xff\xfe NOT HTTP\r\n\r\n")
    slow = socket.create_connection(("127.0.0.1", port))
    slow.sendall(b"GET /metr")
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(1000)]
    start = time.time()
    ctype, text = exp.scrape()
    took = time.time() - start
    check("shpmu_handles" in text and took < 5,
          f"served beside junk, a never-ending request and 1000 idle "
          f"connections ({took:.3f} s)")
    for s in idle + [slow, binary, junk]:
        s.close()


def raw_request(port, request, source="127.0.0.1"):
    """Sends request as it is; reads until the exporter closes (it answers
    every request with Connection: close): (status, head, body)."""
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10,
                                  source_address=(source, 0)) as s:
        try:
            s.sendall(request)
            while chunk := s.recv(65536):
                data += chunk
        except ConnectionError:
            pass  # closed with our request unread (414, 431): answer kept
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split()[1]) if head.startswith(b"HTTP/") else None
    return status, head.decode("latin-1"), body


def closed(sock, wait=0.0):
    """Whether the exporter closed sock, waiting up to wait s for it."""
    p = select.poll()
    p.register(sock, select.POLLIN)
    if not p.poll(wait * 1000):
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def poll_until(cond, timeout, pace=0.05):
    """cond()'s first true value, or its last one after timeout s."""
    deadline = time.monotonic() + timeout
    while not (v := cond()) and time.monotonic() < deadline:
        time.sleep(pace)  # between polls
    return v


def slow_client(port, source="127.0.0.1"):
    """A connection with half a request sent: it waits for the rest."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10,
                                 source_address=(source, 0))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    return s


def cuts(text):
    return {r: series(text, "shpmu_http_connections_cut_total", reason=r)[0]
            for r in ("deadline", "address", "limit")}


def check_paths():
    """The page at /metrics exactly (a query aside), HEAD without a
    scrape, and the answers that were already right kept."""
    exp = Exporter("--no-cgroups", "-e", "task-clock")
    port = exp.port
    for path in (b"/metrics%00x", b"/metricsx", b"/metrics/", b"/%6detrics", b"/index.html"):
        status, _, _ = raw_request(port, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        check(status == 404, f"GET {path.decode()}: 404 ({status})")
    status, _, body = raw_request(port, b"GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n")
    check(status == 200 and b"shpmu_handles" in body, f"GET /metrics?x=1: the page ({status})")
    status, _, _ = raw_request(port, b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx")
    check(status == 405, f"POST /metrics: 405 ({status})")
    status, _, _ = raw_request(port, b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    check(status == 414, f"a 70 kB URI: 414 ({status})")
    status, _, _ = raw_request(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 70000 + b"\r\n\r\n")
    check(status == 431, f"a 70 kB header: 431 ({status})")

    before = series(exp.scrape()[1], "shpmu_scrapes_total")
    for accept, ctype in ((b"", "text/plain; version=0.0.4"),
                          (b"Accept: application/openmetrics-text; version=1.0.0\r\n",
                           "application/openmetrics-text; version=1.0.0")):
        for version in (b"HTTP/1.1", b"HTTP/1.0"):
            status, head, body = raw_request(
                port, b"HEAD /metrics " + version + b"\r\nHost: x\r\n" + accept + b"\r\n")
            check(status == 200 and f"Content-Type: {ctype}" in head and body == b"" and
                  "Content-Length: 0" not in head,
                  f"HEAD /metrics {version.decode()} {ctype}: 200, headers only "
                  f"({status}, {len(body)} bytes of body)")
    after = series(exp.scrape()[1], "shpmu_scrapes_total")
    check(len(before) == 1 and after == [before[0] + 1],
          f"four HEADs scraped nothing: shpmu_scrapes_total {before} then {after}")
    check(exp.stop() == 0, "the paths' exporter stops cleanly")


def check_deadline():
    """A request trickled in a byte every 0.25 s resets libmicrohttpd's
    idle timeout at each byte; the exporter's deadline still cuts it."""
    timeout = 2
    exp = Exporter("--no-cgroups", "-e", "task-clock",
                   f"--web.request-timeout={timeout}")
    s = slow_client(exp.port)
    start = time.monotonic()
    sent = 0
    # Ends at the cut, or 10 s past the deadline.
    while not closed(s, 0.25) and time.monotonic() - start < timeout + 10:
        try:
            s.send(b"a")
            sent += 1
        except OSError:
            break
    took = time.monotonic() - start
    s.close()
    # The exporter's clock starts at its accept, which may come before
    # create_connection returns here: 50 ms below the deadline allowed.
    # Above it, 1 s for a loaded 2-CPU machine (ASan): the guard wakes at
    # the deadline itself.
    check(timeout - 0.05 <= took <= timeout + 1 and sent >= 4,
          f"a trickled request is cut at the {timeout} s deadline: after "
          f"{took:.3f} s, {sent} bytes sent 0.25 s apart")
    check(cuts(exp.scrape()[1])["deadline"] == 1, "it is counted: reason=\"deadline\"")
    check(exp.stop() == 0, "the deadline's exporter stops cleanly")


def check_per_address():
    """Past N connections from one address, its oldest one still waiting
    for a request is closed: others' addresses are not touched, and a
    scraper sharing the address still gets in."""
    n = 4
    # The deadline (60 s) stays out of the way of these few seconds.
    exp = Exporter("--no-cgroups", "-e", "task-clock",
                   f"--web.max-connections-per-address={n}",
                   "--web.request-timeout=60")
    held = [slow_client(exp.port, "127.0.0.2") for _ in range(n + 1)]
    # The exporter accepts them in the order they connected.
    gone = poll_until(lambda: [i for i, s in enumerate(held) if closed(s)], 10)
    check(gone == [0], f"the {n + 1}th connection from 127.0.0.2 closes its "
          f"oldest, the others stay: closed {gone}")
    status, _, body = raw_request(exp.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
                                  source="127.0.0.3")
    check(status == 200 and b"shpmu_handles" in body, f"127.0.0.3 is served meanwhile ({status})")
    status, _, body = raw_request(exp.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
                                  source="127.0.0.2")
    check(status == 200 and b"shpmu_handles" in body,
          f"127.0.0.2, at its limit, is served too ({status})")
    gone = poll_until(lambda: [i for i, s in enumerate(held) if closed(s)] != [0] and
                      [i for i, s in enumerate(held) if closed(s)], 10)
    check(gone == [0, 1], f"in place of its next oldest waiting: closed {gone}")
    c = cuts(exp.scrape()[1])
    check(c == {"deadline": 0, "address": 2, "limit": 0}, f"counted: {c}")
    for s in held:
        s.close()
    check(exp.stop() == 0, "the per-address exporter stops cleanly")


class Flood:
    """count slow connections from sources, each trickling a byte of a
    header every 0.2 s; one the exporter closes is opened again at once."""

    def __init__(self, port, sources, count):
        self.port = port
        self.sources = [sources[i % len(sources)] for i in range(count)]
        self.socks = [None] * count
        self.opened = self.refused = self.cycles = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done.is_set():
            for i, src in enumerate(self.sources):
                s = self.socks[i]
                if s is not None and closed(s):
                    s.close()
                    s = None
                if s is None:
                    try:
                        s = slow_client(self.port, src)
                        s.setblocking(False)
                        self.opened += 1
                    except OSError:
                        self.refused += 1
                else:
                    try:
                        s.send(b"a")
                    except BlockingIOError:
                        pass
                    except OSError:
                        s.close()
                        s = None
                self.socks[i] = s
            self.cycles += 1
            self.done.wait(0.2)  # the trickle's pace

    def stop(self):
        self.done.set()
        self.thread.join()
        for s in self.socks:
            if s is not None:
                s.close()


def check_flood(bpffs, base_label):
    """150 slow connections kept open against an exporter whose
    RLIMIT_NOFILE is 128, soft and hard: its scrapes go on."""
    raised = Exporter("--no-cgroups", "-e", "task-clock", preexec_fn=lambda:
                      resource.setrlimit(resource.RLIMIT_NOFILE, (128, 4096)))
    check(raised.nofile == 4096, f"RLIMIT_NOFILE raised to the hard limit: {raised.nofile}")
    check(raised.stop() == 0, "that exporter stops cleanly")

    exp = Exporter("--scope=host", f"--bpffs={bpffs}/shpmu", f"--cgroup.root={base_label}",
                   "--cgroup.depth=2", preexec_fn=lambda:
                   resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128)))
    # 64: the headroom http.c keeps for the scrape (FD_HEADROOM).
    check(exp.nofile == 128 and exp.held > 0 and exp.limit + exp.held + 64 <= 128,
          f"connections within RLIMIT_NOFILE 128: {exp.limit}, beside "
          f"{exp.held} fds held")
    before = cuts(exp.scrape()[1])
    for what, sources in (("10 other addresses", [f"127.0.0.{i}" for i in range(2, 12)]),
                          ("the scraper's own address", ["127.0.0.1"])):
        flood = Flood(exp.port, sources, 150)
        # Two rounds: every one of the 150 opened, and those closed
        # opened again.
        poll_until(lambda: flood.cycles >= 2, 60)
        took, sockets, failed = [], 0, []
        for _ in range(20):
            sockets = max(sockets, exp.sockets())
            start = time.monotonic()
            try:
                if "shpmu_handles" not in exp.scrape()[1]:
                    failed.append("no page")
            except OSError as e:
                failed.append(str(e))
            took.append(time.monotonic() - start)
        flood.stop()
        took.sort()
        # A scrape alone takes some ms; 1 s allows for a loaded 2-CPU
        # machine (ASan) and is far below the 10 s deadline after which
        # a held slot would free itself.
        check(not failed and took[-1] < 1,
              f"20 scrapes beside 150 slow connections from {what}: "
              f"{len(failed)} failed {failed[:3]}; median {took[10] * 1e3:.1f} ms, "
              f"max {took[-1] * 1e3:.1f} ms ({flood.opened} opened, "
              f"{flood.refused} refused)")
        # The flood did fill what the guard lets it: half the slots at
        # least (it keeps 3/4 or more of them for the flood to take).
        want = min(exp.limit, 16) if len(sources) == 1 else exp.limit // 2
        check(sockets >= want, f"the flood held the exporter's connections: "
              f"{sockets} sockets open (at most {exp.limit} connections)")
    text = exp.scrape()[1]
    after = cuts(text)
    check(after["limit"] > before["limit"] and after["address"] > before["address"],
          f"the guard cut connections past the limit and past one address's: {after}")
    check(series(text, "shpmu_target_errors_total") == [0.0] and
          not exp.said("Too many open files") and not exp.said("resource limit"),
          "no fd ran out: no target error, no EMFILE said")
    check(exp.stop() == 0, "the flooded exporter stops cleanly")


def check_bad_utf8(exp, mount, base_label):
    """A cgroup named with bytes that are not UTF-8 keeps the page valid:
    each such byte written as the text \\xNN."""
    bad = os.fsencode(mount + base_label) + b"/bad\xff\xfe"
    os.mkdir(bad)
    try:
        raw = urllib.request.urlopen(exp.url, timeout=10).read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            check(False, f"the page is UTF-8: {e}")
            return
        label = escape(base_label + "/bad\\xff\\xfe")
        check(series(text, "shpmu_cgroup_clock_seconds_total", cgroup=label,
                     event="task-clock") == [0.0],
              f"the cgroup b'bad\\xff\\xfe' is there as {label}")
        p = subprocess.run(["promtool", "check", "metrics"], input=text,
                           capture_output=True, text=True)
        check(p.returncode == 0 and not (p.stdout + p.stderr).strip(),
              f"promtool check metrics with it: rc {p.returncode} {p.stdout}{p.stderr}")
    finally:
        os.rmdir(bad)


def check_remade(exp, mount, base_label):
    """A cgroup removed and made again under the same name between two
    scrapes is a new cgroup: its series starts again from 0, not the
    first one's count carried on."""
    label = base_label + "/remade"
    os.mkdir(mount + label)
    try:
        clock = lambda: series(exp.scrape()[1], "shpmu_cgroup_clock_seconds_total",
                               cgroup=label, event="task-clock")
        check(clock() == [0.0], "a new cgroup's series starts at 0")
        spent = burn(mount + label, 200)
        first = clock()
        check(len(first) == 1 and first[0] >= spent * 0.5,
              f"it counts the work run in it: {first}, {spent:.6f} s run")
        os.rmdir(mount + label)
        os.mkdir(mount + label)
        check(clock() == [0.0],
              "removed and made again under its name: a new series from 0")
    finally:
        os.rmdir(mount + label)


def check_too_long(mount, base_label):
    """Cgroups deeper than PATH_MAX: skipped, said and counted, never
    opened by a truncated path; those above them counted."""
    top = base_label + "/deep"
    made = []  # (parent fd, name), to remove deepest first
    fds = [os.open(mount + base_label, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        os.mkdir("deep", dir_fd=fds[-1])
        made.append((fds[-1], "deep"))
        fds.append(os.open("deep", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        labels, label = [top], top
        # 255-byte names (NAME_MAX) until two levels past 4095 bytes.
        while len(mount + label) <= 4095 + 2 * 256:
            name = f"{len(labels):02d}".ljust(255, "x")
            os.mkdir(name, dir_fd=fds[-1])
            made.append((fds[-1], name))
            fds.append(os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
            label += "/" + name
            labels.append(label)
        fit = {lab for lab in labels if len(mount + lab) <= 4095}
        exp = Exporter("--no-cpu", "-e", "task-clock", f"--cgroup.root={top}",
                       f"--cgroup.depth={len(labels)}")
        text = exp.scrape()[1]
        got = set()
        for line in text.splitlines():
            if line.startswith("shpmu_cgroup_clock_seconds_total{"):
                got.add(line.split('cgroup="')[1].split('"')[0])
        check(got == fit and len(fit) < len(labels),
              f"the {len(fit)} cgroups of {len(labels)} whose paths fit PATH_MAX "
              f"are counted, no other: {len(got)} counted")
        said = exp.said("cgroup skipped, its path past 4095 bytes (File name too long)")
        check(len(said) == 1 and said[0].startswith("shpmu-exporter: 1 cgroup skipped"),
              f"the one below the deepest that fits is said skipped: {[s[:90] for s in said]}")
        check(series(text, "shpmu_cgroups_left_out") == [1.0],
              "and counted in shpmu_cgroups_left_out")
        exp.scrape()
        check(len(exp.said("cgroup skipped")) == 1, "said once, not at each scrape")
        p = subprocess.run(["promtool", "check", "metrics"], input=text,
                           capture_output=True, text=True)
        check(p.returncode == 0, f"promtool check metrics: rc {p.returncode} {p.stderr[:200]}")
        check(exp.stop() == 0, "the deep walk's exporter stops cleanly")
    finally:
        for parent, name in reversed(made):
            os.rmdir(name, dir_fd=parent)
        for fd in fds:
            os.close(fd)


def has_core_pmu():
    devices = "/sys/bus/event_source/devices"
    return any(os.path.exists(f"{devices}/{d}/type")
               for d in ("cpu", "cpu_core", "cpu_atom")) or any(
        os.path.exists(f"{devices}/{d}/cpus") for d in os.listdir(devices))


def check_words(exp):
    """What issue 41's new user read (exp runs with the default events):
    plain HELP lines, the root cgroup's clocks marked as holding idle
    time, the library's explanation where an event is left out, and the
    exporter's own flag where the library names its C option."""
    _, text = exp.scrape()
    helps = {l.split()[2]: l for l in text.splitlines()
             if l.startswith("# HELP ")}
    running = helps.get("shpmu_cgroup_time_running_seconds_total", "")
    if has_core_pmu():
        check("Time the event was counting on the PMU" in running and
              "Time of that" not in running, f"time_running's HELP: {running}")
    else:
        # Software events alone: never multiplexed, no times to show.
        check(not running and
              "shpmu_cgroup_time_enabled_seconds_total" not in helps,
              "no hardware event: no enabled or running family")
    check(not series(text, "shpmu_cgroup_time_enabled_seconds_total",
                     event="task-clock") and
          not series(text, "shpmu_cpu_time_running_seconds_total",
                     event="context-switches"),
          "a software event has no enabled or running series")
    clock = helps.get("shpmu_cgroup_clock_seconds_total", "")
    check("root cgroup (label /)" in clock and "idle" in clock,
          f"the cgroup clock's HELP says the root holds idle time: {clock}")
    check("idle" not in helps.get("shpmu_cpu_clock_seconds_total", "idle"),
          "the per-CPU clock's HELP has no note on the root cgroup")
    left_out = exp.said("leaving out ")
    if not has_core_pmu():
        check(len(left_out) == 3, f"no PMU: three events left out: {left_out}")
    # The library's own line, as shpmu-stat shows it for the same event.
    check(all(": this machine has no hardware PMU" in l or has_core_pmu()
              for l in left_out) and
          all("perf_event_open(" in l and " (cpu " not in l
              for l in left_out),
          f"an event left out, in the library's words: {left_out}")
    not_bpf = tempfile.mkdtemp(prefix="shpmu-exporter-not-bpffs-")
    try:
        p = subprocess.run([EXPORTER, "--web.listen-address=127.0.0.1:0",
                            "--scope=host", f"--bpffs={not_bpf}"],
                           capture_output=True, text=True, timeout=60)
    finally:
        os.rmdir(not_bpf)
    check(p.returncode == 1 and "--bpffs" in p.stderr and
          "opts.bpffs_dir" not in p.stderr,
          f"--bpffs on no BPF filesystem: the flag named: {p.returncode} "
          f"{p.stderr}")


def check_budget(exp):
    """The counter budget's families: none without a core PMU."""
    _, text = exp.scrape()
    if not has_core_pmu():
        check("shpmu_pmu_counters" not in text,
              "no core PMU here: no shpmu_pmu_counters family")


def budget_on_model():
    """Under the PMU model: the model's counters and what the exporter's
    per-CPU events need of them."""
    env = dict(os.environ, SHPMU_PMU_MODEL="counters=4,fixed=3,watchdog=1")
    model = Exporter("--no-cgroups", "-e", "cycles,instructions,branches",
                     env=env)
    try:
        _, text = model.scrape()
        p = subprocess.run(["promtool", "check", "metrics"], input=text,
                           capture_output=True, text=True)
        check(p.returncode == 0 and not (p.stdout + p.stderr).strip(),
              f"promtool on the budget: rc {p.returncode} {p.stdout}{p.stderr}")
        for cpu in range(os.cpu_count()):
            c = str(cpu)
            check(series(text, "shpmu_pmu_counters", pmu="cpu", cpu=c,
                         kind="general") == [4.0], f"cpu {c}: 4 general")
            check(series(text, "shpmu_pmu_counters", pmu="cpu", cpu=c,
                         kind="fixed") == [3.0], f"cpu {c}: 3 fixed")
            # cycles and instructions on fixed counters, branches on a
            # general one; one handle each.
            check(series(text, "shpmu_pmu_counters_used", pmu="cpu",
                         cpu=c) == [3.0], f"cpu {c}: 3 counters used")
            check(series(text, "shpmu_pmu_counters_wanted", pmu="cpu",
                         cpu=c) == [3.0], f"cpu {c}: 3 wanted")
            check(series(text, "shpmu_pmu_multiplexing", pmu="cpu",
                         cpu=c) == [0.0], f"cpu {c}: no multiplexing")
        check(series(text, "shpmu_pmu_counters_wanted", pmu="cpu",
                     cpu="task") == [0.0], "no task event")
    finally:
        check(model.stop() == 0, "the model's exporter stops cleanly")


def main():
    mount = cgroup2_mount()
    if not mount:
        skip("no cgroup2 mount")
    if SYS_PERF_EVENT_OPEN is None:
        skip(f"perf_event_open's number on {platform.machine()} is unknown here")
    # Held shared for the run, as the C suites hold it (cg_perf_event_lock
    # in cgroup_helpers.h): no suite beside this one moves perf_event off
    # cgroup2, which the twin's cgroup events need, meanwhile.
    lock = open("/tmp/shpmu-tests-perf_event.lock", "a")
    fcntl.flock(lock, fcntl.LOCK_SH)
    bpffs = private_mounts("shpmu-exporter-bpffs-")
    base_label = f"/shpmu-exporter-test-{os.getpid()}"
    odd_label = base_label + '/we"ird\\ näme'
    made = [base_label, odd_label]
    for label in made:
        os.mkdir(mount + label)
    workdir = tempfile.mkdtemp(prefix="shpmu-exporter-test-")
    exp = prom = None
    try:
        exp = Exporter("--scope=host", f"--bpffs={bpffs}/shpmu",
                       f"--cgroup.root={base_label}", "--cgroup.depth=2")
        check_formats(exp, base_label, odd_label)
        check_words(exp)
        check_budget(exp)
        check_bad_utf8(exp, mount, base_label)
        check_remade(exp, mount, base_label)
        check_cap(bpffs, base_label)
        check_classic_unattributed()
        check_too_long(mount, base_label)
        check_paths()
        check_deadline()
        check_per_address()
        check_flood(bpffs, base_label)
        prom = Prometheus(exp.port, workdir)
        check_against_prometheus(exp, prom, mount, base_label, odd_label)
        check_churn(exp, prom, mount, base_label)
        check_endurance(exp)
        check_bad_clients(exp)
        prom.stop()
        prom = None
        rc = exp.stop()
        exp = None
        check(rc == 0, f"SIGTERM: the exporter exits 0 ({rc})")
        left = os.listdir(os.path.join(bpffs, "shpmu")) if os.path.isdir(
            os.path.join(bpffs, "shpmu")) else []
        check(left == [], f"nothing left in the BPF filesystem: {left}")
    finally:
        # Waited for: one still running keeps the BPF filesystem busy.
        for proc in Exporter.started + ([prom.proc] if prom else []):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for label in reversed(made):
            try:
                os.rmdir(mount + label)
            except OSError as e:
                check(False, f"rmdir {label}: {e}")
        subprocess.run(["umount", bpffs])
        os.rmdir(bpffs)
        shutil.rmtree(workdir)
    if failures:
        sys.exit(f"{len(failures)} checks failed")


# test_exporter_k8s.py imports this file for its helpers.
if __name__ == "__main__":
    if sys.argv[3:] == ["--pmu-model"]:
        import exporter_model
        exporter_model.run(EXPORTER, check)
        budget_on_model()
        sys.exit(f"{len(failures)} checks failed" if failures else 0)
    main()
