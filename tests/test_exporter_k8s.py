#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""shpmu-exporter on a node shaped like a Kubernetes node, a container host
and a systemd host: its labels, its names and --cgroup.kind.

usage: test_exporter_k8s.py SHPMU_EXPORTER CG_BURN

Real cgroups, made below a root of the test's own on the cgroup2 mount and
named as the kubelet (systemd and cgroupfs drivers, guaranteed and static
pods), containerd, CRI-O (and its conmon, and crun's sub-cgroup), Docker
(both forms), Podman (its conmon, its cgroupfs form, rootless) and systemd
(a service, a session, a user's manager and a unit of it) name them, and
the kubelet's log directories faked in a temporary directory. For each
layout: work in the "container" read through the exporter against a raw
cgroup event (a classic twin), and the labels and their values. The page
through promtool, and as OpenMetrics through a real Prometheus. Then the
names as hostile input (entries of the wrong type or name, a restarted
container, a link that comes late, the directories changed and removed
while scrapes run, a symlink, FIFO, file or unreadable directory where a
directory should be), --cgroup.kind, and pods that come and go over 1000
scrapes.
"""
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# Skips (77) here where the tools or root are missing.
import test_exporter as te  # noqa: E402
from test_exporter import check  # noqa: E402

CLOCK = "shpmu_cgroup_clock_seconds_total"


def hexid():
    return secrets.token_hex(32)


def pod_uid():
    return str(uuid.uuid4())


def labelsets(text):
    """{cgroup: (labels, task-clock s)} of the page's per-cgroup clocks,
    labels without cgroup and event."""
    out = {}
    for line in text.splitlines():
        if not line.startswith(CLOCK + "{"):
            continue
        body, value = line[len(CLOCK) + 1:].rsplit("} ", 1)
        labels = dict(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', body))
        if labels.pop("event", None) == "task-clock":
            out[labels.pop("cgroup")] = (labels, float(value))
    return out


def gauge(text, name):
    v = te.series(text, name)
    return v[0] if len(v) == 1 else None


def promtool(text):
    p = subprocess.run(["promtool", "check", "metrics"], input=text,
                       capture_output=True, text=True)
    return p.returncode == 0 and not (p.stdout + p.stderr).strip(), \
        f"rc {p.returncode} {(p.stdout + p.stderr)[:300]}"


class Node:
    """Cgroups below a root of the test's own, the kubelet's log
    directories in a temporary one, and what each cgroup's series should
    say: its labels and its kind (for --cgroup.kind)."""

    def __init__(self, mount, name, tmp):
        self.mount, self.root = mount, f"/{name}"
        self.pods_dir = os.path.join(tmp, name, "pods")
        self.ctr_dir = os.path.join(tmp, name, "containers")
        os.makedirs(self.pods_dir)
        os.makedirs(self.ctr_dir)
        self.made = []
        self.labels, self.kind = {}, {}
        os.mkdir(mount + self.root)
        self.made.append(self.root)
        self.labels[self.root] = {}

    def cgroup(self, rel, labels=None, kind=None):
        """Makes root/rel and what is above it; its label."""
        parts = rel.split("/")
        for i in range(1, len(parts) + 1):
            label = self.root + "/" + "/".join(parts[:i])
            if label not in self.made:
                os.mkdir(self.mount + label)
                self.made.append(label)
                self.labels.setdefault(label, {})
        if labels is not None:
            self.labels[label] = labels
        if kind:
            self.kind[label] = kind
        return label

    def remove(self, label):
        """label's cgroup and what is below it."""
        for lab in sorted((m for m in self.made if m == label or
                           m.startswith(label + "/")), key=len, reverse=True):
            os.rmdir(self.mount + lab)
            self.made.remove(lab)
            self.labels.pop(lab, None)
            self.kind.pop(lab, None)

    def pod(self, driver, qos, uid, ns=None, name=None, log_dir=True):
        """A pod's cgroup, and its log directory where it is named; its
        label, and the labels its containers share."""
        if driver == "systemd":
            esc = uid.replace("-", "_")
            rel = (f"kubepods.slice/kubepods-pod{esc}.slice"
                   if qos == "guaranteed" else
                   f"kubepods.slice/kubepods-{qos}.slice/"
                   f"kubepods-{qos}-pod{esc}.slice")
        else:
            rel = (f"kubepods/pod{uid}" if qos == "guaranteed" else
                   f"kubepods/{qos}/pod{uid}")
        shared = {"pod_uid": uid, "qos_class": qos}
        if ns:
            shared.update(namespace=ns, pod=name)
            if log_dir:
                os.mkdir(os.path.join(self.pods_dir, f"{ns}_{name}_{uid}"))
        return self.cgroup(rel, dict(shared), "pod"), shared

    def container(self, pod_label, shared, child, cid, runtime=None,
                  name=None, pod_name=None, kind="container"):
        """A container (or a sandbox, or a monitor) in a pod; a log link
        where it has a name."""
        labels = dict(shared)
        if kind != "conmon":
            labels["container_id"] = cid
        if runtime:
            labels["runtime"] = runtime
        if name:
            labels["container"] = name
            self.link(pod_name or shared["pod"], shared["namespace"], name,
                      cid)
        rel = pod_label[len(self.root) + 1:] + "/" + child
        return self.cgroup(rel, labels, kind)

    def link(self, pod, ns, name, cid):
        # Where it points is never looked at: dangling, as on a node
        # whose logs were rotated.
        os.symlink(f"/var/log/pods/{ns}_{pod}/{name}/0.log",
                   os.path.join(self.ctr_dir, f"{pod}_{ns}_{name}-{cid}.log"))

    def of_kinds(self, *kinds):
        return {lab for lab, k in self.kind.items() if k in kinds}

    def cleanup(self):
        for lab in sorted(self.made, key=len, reverse=True):
            try:
                os.rmdir(self.mount + lab)
            except OSError as e:
                check(False, f"rmdir {lab}: {e}")
        self.made = []


def build(node):
    """Every layout; the cgroups to burn in, each with the labelled one
    whose count holds it: [(what, burn in, counted)]."""
    work = []
    # The kubelet, systemd driver: containerd with a sandbox, a pod name
    # with dots and dashes.
    pod, shared = node.pod("systemd", "burstable", pod_uid(), "shop",
                           "web-0.front-v2")
    sandbox = hexid()
    node.container(pod, shared, f"cri-containerd-{sandbox}.scope", sandbox,
                   "containerd", kind="sandbox")
    cid = hexid()
    c = node.container(pod, shared, f"cri-containerd-{cid}.scope", cid,
                       "containerd", "nginx")
    node.web = (pod, shared, c, cid)
    work.append(("systemd driver, containerd", c, c))
    # CRI-O with its conmon, and crun's sub-cgroup (where the processes
    # are; unlabelled: the scope's count holds it).
    pod, shared = node.pod("systemd", "besteffort", pod_uid(), "default",
                           "batch-7")
    cid = hexid()
    c = node.container(pod, shared, f"crio-{cid}.scope", cid, "cri-o",
                       "worker")
    node.container(pod, shared, f"crio-conmon-{cid}.scope", cid, "cri-o",
                   kind="conmon")
    sub = node.cgroup(c[len(node.root) + 1:] + "/container", {})
    work.append(("systemd driver, CRI-O (crun's sub-cgroup)", sub, c))
    # A guaranteed pod, Docker through cri-dockerd.
    pod, shared = node.pod("systemd", "guaranteed", pod_uid(), "kube-system",
                           "coredns-5d78c9869d-abcde")
    cid = hexid()
    c = node.container(pod, shared, f"docker-{cid}.scope", cid, "docker",
                       "coredns")
    work.append(("systemd driver, guaranteed, Docker", c, c))
    # The kubelet, cgroupfs driver: the runtime is not in the path.
    pod, shared = node.pod("cgroupfs", "burstable", pod_uid(), "shop",
                           "api-6f7d")
    sandbox = hexid()
    node.container(pod, shared, sandbox, sandbox, kind="sandbox")
    cid = hexid()
    c = node.container(pod, shared, cid, cid, None, "app")
    work.append(("cgroupfs driver, burstable", c, c))
    pod, shared = node.pod("cgroupfs", "guaranteed", pod_uid(), "monitoring",
                           "node-exporter-x7k2p")
    cid = hexid()
    c = node.container(pod, shared, f"crio-{cid}", cid, "cri-o",
                       "node-exporter")
    node.container(pod, shared, f"crio-conmon-{cid}", cid, "cri-o",
                   kind="conmon")
    work.append(("cgroupfs driver, guaranteed, CRI-O", c, c))
    # A static pod: its uid is 32 hex digits.
    pod, shared = node.pod("cgroupfs", "besteffort", secrets.token_hex(16),
                           "kube-system", "etcd-node1")
    cid = hexid()
    c = node.container(pod, shared, cid, cid, None, "etcd")
    work.append(("cgroupfs driver, a static pod", c, c))
    # A pod whose log directory's name does not parse: no name guessed,
    # and, the pod not known, a container without a link is not taken
    # for its sandbox.
    uid = pod_uid()
    os.mkdir(os.path.join(node.pods_dir, f"Shop_web_{uid}"))
    pod, shared = node.pod("systemd", "burstable", uid)
    cid = hexid()
    node.container(pod, shared, f"cri-containerd-{cid}.scope", cid,
                   "containerd")
    # Docker, Podman, systemd.
    for what, rel, runtime, kind in (
            ("Docker, cgroupfs", "docker/{}", "docker", "container"),
            ("Docker, systemd", "system.slice/docker-{}.scope", "docker",
             "container"),
            ("Podman, systemd", "machine.slice/libpod-{}.scope", "podman",
             "container"),
            ("Podman, cgroupfs", "libpod_parent/libpod-{}", "podman",
             "container"),
            ("Podman, rootless", "user.slice/user-1000.slice/user@1000.service/"
             "user.slice/libpod-{}.scope", "podman", "container")):
        cid = hexid()
        c = node.cgroup(rel.format(cid),
                        {"container_id": cid, "runtime": runtime}, kind)
        work.append((what, c, c))
        if what == "Podman, systemd":
            node.cgroup(f"machine.slice/libpod-conmon-{cid}.scope",
                        {"runtime": "podman"}, "conmon")
    for what, rel in (("a systemd service", "system.slice/nginx.service"),
                      ("a user's session", "user.slice/user-1000.slice/"
                       "session-3.scope"),
                      ("a unit of a user's manager",
                       "user.slice/user-1000.slice/user@1000.service/"
                       "app.slice/dbus.service")):
        c = node.cgroup(rel, {"unit": rel.split("/")[-1]}, "unit")
        work.append((what, c, c))
    node.cgroup("user.slice/user-1000.slice/user@1000.service",
                {"unit": "user@1000.service"}, "unit")
    # Entries the kubelet would not make: refused, said once.
    os.mkdir(os.path.join(node.pods_dir, "not-a-pod"))
    os.mkfifo(os.path.join(node.pods_dir, f"default_fifo_{pod_uid()}"))
    open(os.path.join(node.pods_dir, f"default_file_{pod_uid()}"), "w").close()
    os.symlink("/", os.path.join(node.pods_dir, f"default_link_{pod_uid()}"))
    open(os.path.join(node.ctr_dir, f"p_default_c-{hexid()}.log"), "w").close()
    os.mkdir(os.path.join(node.ctr_dir, f"p_default_d-{hexid()}.log"))
    os.symlink("/", os.path.join(node.ctr_dir, f"p_default_c-{hexid()[:63]}.log"))
    os.symlink("/", os.path.join(node.ctr_dir, "p_default_c-" +
                                 hexid().upper() + ".log"))
    return work


def logs_args(node):
    return [f"--kubernetes.logs-dir={node.pods_dir}",
            f"--kubernetes.container-logs-dir={node.ctr_dir}"]


def check_labels(exp, node, what):
    """Every cgroup of the node with exactly the labels it should have."""
    got = labelsets(exp.scrape()[1])
    want = {lab: node.labels[lab] for lab in node.made}
    wrong = {lab: (got.get(lab, (None,))[0], want[lab]) for lab in want
             if got.get(lab, (None,))[0] != want[lab]}
    check(not wrong, f"{what}: {len(want)} cgroups, each with its labels; "
          f"wrong: {list(wrong.items())[:3]}")


def unattributed(text):
    return sum(te.series(text, "shpmu_unattributed_clock_seconds_total",
                         event="task-clock"))


def check_counts(exp, node, work):
    """Work in each layout's container against a raw cgroup event."""
    for what, burn_in, counted in work:
        before = exp.scrape()[1]
        switched = te.CgroupTwin(node.mount + counted,
                                 te.PERF_COUNT_SW_CONTEXT_SWITCHES)
        twin = te.CgroupTwin(node.mount + counted)
        te.burn(node.mount + burn_in, 150)
        twin_s = twin.read() / 1e9
        switches = switched.read()
        after = exp.scrape()[1]
        got = labelsets(after)[counted][1] - labelsets(before)[counted][1]
        lost = unattributed(after) - unattributed(before)
        # As test_exporter.py allows a BPF count against its twin (1%, or
        # 30 us for each of the cgroup's switches on a busy machine), and
        # below that what the BPF backend left unattributed meanwhile (its
        # bound: it never guesses).
        tol = max(0.01 * twin_s, 30e-6 * switches)
        check(got <= twin_s + tol and got + lost + tol >= twin_s,
              f"{what}: {got:.6f} s counted, the raw cgroup event's "
              f"{twin_s:.6f} s ({switches} switches, tolerance "
              f"{tol * 1e3:.3f} ms, {lost * 1e3:.3f} ms unattributed)")
    # A pod's count holds its containers' (the one that ran).
    pod, _, ctr, _ = node.web
    before = labelsets(exp.scrape()[1])
    te.burn(node.mount + ctr, 150)
    after = labelsets(exp.scrape()[1])
    in_pod = after[pod][1] - before[pod][1]
    in_ctr = after[ctr][1] - before[ctr][1]
    check(abs(in_pod - in_ctr) <= max(0.01 * in_ctr, 1e-3),
          f"the pod's count holds its container's: {in_pod:.6f} s, "
          f"{in_ctr:.6f} s")


def check_formats(exp, node, workdir):
    text = exp.scrape()[1]
    ok, why = promtool(text)
    check(ok, f"promtool check metrics on the labelled page: {why}")
    om = exp.scrape("application/openmetrics-text; version=1.0.0")[1]
    check(om.endswith("# EOF\n") and 'namespace="shop"' in om,
          "OpenMetrics: the same labels, and # EOF")
    # Prometheus (it asks for OpenMetrics) takes the page whole.
    prom = te.Prometheus(exp.port, workdir)
    try:
        pod, shared, ctr, cid = node.web
        sel = (f'{CLOCK}{{event="task-clock",namespace="shop",'
               f'pod="web-0.front-v2",container="nginx"}}')
        r = prom.wait_for(sel, lambda r: len(r) == 1,
                          "Prometheus has the container's series by "
                          "namespace, pod and container")
        m = r[0]["metric"] if len(r) == 1 else {}
        check(m.get("cgroup") == ctr and m.get("container_id") == cid and
              m.get("pod_uid") == shared["pod_uid"] and
              m.get("qos_class") == "burstable" and
              m.get("runtime") == "containerd",
              f"and its other labels: {m}")
        targets = te.json.loads(te.get(prom.api + "targets")[1])
        targets = targets["data"]["activeTargets"]
        check(targets and targets[0]["lastError"] == "",
              f"Prometheus scrapes it without error: "
              f"{targets and targets[0]['lastError']}")
    finally:
        prom.stop()


def check_names(exp, node):
    """A restarted container, a link that comes after its cgroup, and
    the entries refused said once."""
    pod, shared, old, _ = node.web
    node.remove(old)
    cid = hexid()
    new = node.container(pod, shared, f"cri-containerd-{cid}.scope", cid,
                         "containerd", "nginx")
    node.web = (pod, shared, new, cid)
    got = labelsets(exp.scrape()[1])
    check(old not in got and got.get(new, ({},))[0] == node.labels[new],
          f"a restarted container (new id, same name): its new series "
          f"named, the old one gone: {got.get(new)}")
    cid = hexid()
    late = node.container(pod, shared, f"cri-containerd-{cid}.scope", cid,
                          "containerd", kind="container")
    got = labelsets(exp.scrape()[1]).get(late, ({},))[0]
    check("container" not in got and got.get("container_id") == cid,
          f"a container whose link is not there yet: no name ({got})")
    node.link(shared["pod"], shared["namespace"], "sidecar", cid)
    node.labels[late]["container"] = "sidecar"
    got = labelsets(exp.scrape()[1]).get(late, ({},))[0]
    check(got == node.labels[late],
          f"once its link is there, its series is named: {got}")
    # build() made 5 entries the kubelet would not make in one, 4 in the
    # other; they were read again since, and are said once.
    for flag, n in (("--kubernetes.logs-dir", 5),
                    ("--kubernetes.container-logs-dir", 4)):
        said = [line.strip() for line in exp.said_soon(f"{flag} ")]
        refused = [line for line in said if "refused" in line]
        check(len(refused) == 1 and f": {n} entries refused" in refused[0],
              f"{flag}: the {n} entries it refused said once: {said}")


def check_changing_dirs(exp, node):
    """Scrapes while a thread adds and removes pods' log directories and
    links and takes the containers' directory away and back."""
    stop = threading.Event()
    moved = node.ctr_dir + ".away"
    flips = [0]

    def churn():
        i = 0
        while not stop.is_set():
            uid = pod_uid()
            d = os.path.join(node.pods_dir, f"tmp_p{i}_{uid}")
            os.mkdir(d)
            try:
                node.link(f"p{i}", "tmp", "c", hexid())
            except FileNotFoundError:
                pass  # the directory is away
            os.rmdir(d)
            for f in os.listdir(node.ctr_dir) if os.path.isdir(
                    node.ctr_dir) else []:
                if f.startswith("p") and "_tmp_" in f:
                    os.unlink(os.path.join(node.ctr_dir, f))
            if i % 50 == 25 and flips[0] < 3:
                os.rename(node.ctr_dir, moved)
                time.sleep(0.02)  # the work: away for some scrapes
                os.rename(moved, node.ctr_dir)
                flips[0] += 1
            i += 1

    fds = exp.fds()
    t = threading.Thread(target=churn, daemon=True)
    t.start()
    failed = []
    try:
        for _ in range(150):
            try:
                text = exp.scrape()[1]
                if "shpmu_scrapes_total" not in text:
                    failed.append("no page")
            except OSError as e:
                failed.append(str(e))
    finally:
        stop.set()
        t.join()
    check(not failed and flips[0] >= 1,
          f"150 scrapes while the log directories change and go: "
          f"{len(failed)} failed {failed[:2]}; the containers' directory "
          f"taken away {flips[0]} times")
    check_labels(exp, node, "after them")
    check(exp.fds() <= fds + 1, f"no fd kept: {exp.fds()} (before {fds})")


def check_bad_dirs(node, tmp):
    """A symlink, a FIFO, a file, a missing and an unreadable directory
    where a log directory should be: a line each, once; the scrapes and
    the labels from the path go on."""
    link, fifo, plain = (os.path.join(tmp, n) for n in ("link", "fifo",
                                                         "file"))
    os.symlink(node.pods_dir, link)
    os.mkfifo(fifo)
    open(plain, "w").close()
    pods = node.of_kinds("pod")
    for pods_dir, ctr_dir, said in (
            (link, fifo, ("Too many levels of symbolic links",
                          "Not a directory")),
            (plain, os.path.join(tmp, "missing"),
             ("Not a directory", "No such file or directory"))):
        exp = te.Exporter("--no-cpu", "-e", "task-clock",
                          f"--cgroup.root={node.root}", "--cgroup.kind=pod",
                          f"--kubernetes.logs-dir={pods_dir}",
                          f"--kubernetes.container-logs-dir={ctr_dir}")
        for _ in range(3):
            got = labelsets(exp.scrape()[1])
        lines = [exp.said_soon(f"{pods_dir}: {said[0]}"),
                 exp.said_soon(f"{ctr_dir}: {said[1]}")]
        check(set(got) == pods and
              all("namespace" not in got[p][0] and "pod_uid" in got[p][0]
                  for p in pods) and [len(x) for x in lines] == [1, 1],
              f"--kubernetes.logs-dir a {os.path.basename(pods_dir)}, "
              f"--kubernetes.container-logs-dir a "
              f"{os.path.basename(ctr_dir)}: said once each "
              f"({[x[0].strip() if x else None for x in lines]}), the pods "
              f"counted without names")
        check(exp.stop() == 0, "that exporter stops cleanly")
    check_unreadable(node, tmp, pods)


def check_unreadable(node, tmp, pods):
    """An unreadable directory: the exporter without root's
    CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, which would read it."""
    setpriv = shutil.which("setpriv")
    if not setpriv:
        print("SKIP (a check): no setpriv to run the exporter without "
              "CAP_DAC_OVERRIDE, so no directory is unreadable to it")
        return
    wrapper = os.path.join(tmp, "exporter-without-dac")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\nexec {setpriv} "
                "--inh-caps=-dac_override,-dac_read_search "
                "--bounding-set=-dac_override,-dac_read_search -- "
                f"{te.EXPORTER} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    closed = os.path.join(tmp, "closed")
    os.mkdir(closed)
    for name in os.listdir(node.pods_dir):
        if os.path.isdir(os.path.join(node.pods_dir, name)) and \
                not os.path.islink(os.path.join(node.pods_dir, name)):
            os.mkdir(os.path.join(closed, name))
    os.chmod(closed, 0)
    real, te.EXPORTER = te.EXPORTER, wrapper
    try:
        exp = te.Exporter("--no-cpu", "-e", "task-clock",
                          f"--cgroup.root={node.root}", "--cgroup.kind=pod",
                          f"--kubernetes.logs-dir={closed}",
                          "--kubernetes.container-logs-dir=")
    finally:
        te.EXPORTER = real
    for _ in range(3):
        got = labelsets(exp.scrape()[1])
    said = exp.said_soon(f"{closed}: Permission denied")
    check(len(said) == 1 and set(got) == pods and
          all("namespace" not in got[p][0] for p in pods),
          f"an unreadable --kubernetes.logs-dir: said once "
          f"({[s.strip() for s in said]}), the pods counted unnamed")
    os.chmod(closed, 0o755)
    got = labelsets(exp.scrape()[1])
    again = exp.said_soon(f"{closed}: read again")
    unnamed = [p for p in pods if got.get(p, ({},))[0] != node.labels[p]]
    check(len(again) == 1 and not unnamed,
          f"readable again: said ({len(again)} times), and the pods named "
          f"(unnamed: {unnamed[:2]}, e.g. {[got.get(p) for p in unnamed[:1]]})")
    check(exp.stop() == 0, "that exporter stops cleanly")


def check_kinds(node):
    """--cgroup.kind counts those kinds only, as deep as they are."""
    for kinds, extra, want in (
            ("pod,container", [], node.of_kinds("pod", "container")),
            ("sandbox,conmon", [], node.of_kinds("sandbox", "conmon")),
            ("unit", [], node.of_kinds("unit")),
            # Nothing tells a sandbox apart: it counts as a container.
            ("container", ["--kubernetes.container-logs-dir="],
             node.of_kinds("container", "sandbox"))):
        exp = te.Exporter("--no-cpu", "-e", "task-clock",
                          f"--cgroup.root={node.root}",
                          f"--cgroup.kind={kinds}", *logs_args(node), *extra)
        text = exp.scrape()[1]
        got = labelsets(text)
        names = node.labels
        if extra:
            # Without the links, no container is named.
            names = {lab: {k: v for k, v in lbs.items() if k != "container"}
                     for lab, lbs in names.items()}
        check(set(got) == want and
              all(got[lab][0] == names[lab] for lab in want) and
              gauge(text, "shpmu_cgroups") == len(want) and
              gauge(text, "shpmu_cgroups_left_out") == 0,
              f"--cgroup.kind={kinds} {' '.join(extra)}: the {len(want)} "
              f"cgroups of those kinds, labelled; missing "
              f"{sorted(want - set(got))[:2]}, more {sorted(set(got) - want)[:2]}")
        if extra:
            check(len(exp.said_soon("cannot be told from its containers"))
                  == 1,
                  "and it says that a sandbox counts as a container")
        check(exp.stop() == 0, "that exporter stops cleanly")
    # Without the pods' directory the links alone tell a sandbox (and a
    # container of a pod that directory would not list is one too).
    exp = te.Exporter("--no-cpu", "-e", "task-clock",
                      f"--cgroup.root={node.root}", "--cgroup.kind=sandbox",
                      *logs_args(node), "--kubernetes.logs-dir=")
    got = set(labelsets(exp.scrape()[1]))
    check(node.of_kinds("sandbox") <= got <=
          node.of_kinds("sandbox", "container"),
          f"--cgroup.kind=sandbox --kubernetes.logs-dir=: the sandboxes "
          f"told by the links alone; missing "
          f"{sorted(node.of_kinds('sandbox') - got)[:2]}")
    check(exp.stop() == 0, "that exporter stops cleanly")
    want = node.of_kinds("pod", "container")
    exp = te.Exporter("--no-cpu", "-e", "task-clock",
                      f"--cgroup.root={node.root}",
                      "--cgroup.kind=pod,container", "--max-cgroups=3",
                      *logs_args(node))
    text = exp.scrape()[1]
    check(len(labelsets(text)) == 3 and gauge(text, "shpmu_cgroups") == 3 and
          gauge(text, "shpmu_cgroups_left_out") == len(want) - 3,
          f"--max-cgroups=3 with --cgroup.kind: 3 counted, "
          f"{len(want) - 3} left out: "
          f"{gauge(text, 'shpmu_cgroups_left_out')}")
    check(exp.stop() == 0, "that exporter stops cleanly")


def check_hostile_links(node, tmp):
    """What anyone who can write the log directories may put there does
    not hide a container: a link giving its id other names, a directory
    full of junk or of links, a pod whose uid is not known."""
    named = sorted(lab for lab in node.of_kinds("container")
                   if "container" in node.labels[lab])
    want = node.of_kinds("container")

    def run(what, ctr_dir, pods_dir=node.pods_dir, expect=want,
            unnamed=(), said=None, loose=False):
        exp = te.Exporter("--no-cpu", "-e", "task-clock",
                          f"--cgroup.root={node.root}",
                          "--cgroup.kind=container",
                          f"--kubernetes.logs-dir={pods_dir}",
                          f"--kubernetes.container-logs-dir={ctr_dir}")
        for _ in range(2):
            text = exp.scrape()[1]
        got = labelsets(text)
        for lab in set(unnamed) & set(got) if loose else ():
            # Named or not, as the listing's order falls.
            got[lab] = ({k: v for k, v in got[lab][0].items()
                         if k != "container"},)

        def label(lab):
            lbs = dict(node.labels[lab])
            if lab in unnamed:
                lbs.pop("container", None)
            if pods_dir != node.pods_dir:
                # The names then come from the links alone.
                lbs = {k: v for k, v in lbs.items()
                       if k not in ("namespace", "pod") or
                       "container" in lbs}
            return lbs
        lines = exp.said_soon(said) if said else [None]
        wrong = [(got[x][0], label(x)) for x in expect
                 if x in got and got[x][0] != label(x)]
        check(set(got) == expect and
              gauge(text, "shpmu_cgroups") == len(expect) and
              all(got[lab][0] == label(lab) for lab in expect) and
              len(lines) == 1,
              f"{what}: the {len(expect)} containers counted; missing "
              f"{sorted(expect - set(got))[:2]}, more "
              f"{sorted(set(got) - expect)[:2]}, wrong "
              f"{wrong[:1]}"
              f"; said {[x.strip() for x in lines if x]}")
        check(exp.stop() == 0, "that exporter stops cleanly")

    # A second link for a container's id, with names of its own.
    victim = named[0]
    cid = node.labels[victim]["container_id"]
    evil = os.path.join(node.ctr_dir, f"evil_evil_x-{cid}.log")
    os.symlink("/", evil)
    try:
        run("a second link for a container's id", node.ctr_dir,
            unnamed={victim}, said=f"'evil_evil_x-{cid[:40]}")
    finally:
        os.unlink(evil)

    # Junk past LOG_ENTRIES_MAX: refused, it takes no link's place.
    junk = os.path.join(tmp, "junk-containers")
    os.mkdir(junk)
    for name in os.listdir(node.ctr_dir):
        if os.path.islink(os.path.join(node.ctr_dir, name)):
            os.symlink(os.readlink(os.path.join(node.ctr_dir, name)),
                       os.path.join(junk, name))
    for i in range(8200):
        open(os.path.join(junk, f"junk{i}"), "w").close()
    run("8200 junk files among the links", junk,
        said="entries refused (not a link")

    # Links past LOG_ENTRIES_MAX: the table is cut, so no link's absence
    # says sandbox: sandboxes count as containers, and it says so.
    for i in range(8200):
        os.symlink("/", os.path.join(junk, f"p_default_c-{hexid()}.log"))
    run("8200 more links than are kept", junk,
        expect=node.of_kinds("container", "sandbox"),
        unnamed=set(node.of_kinds("container", "sandbox")),
        said="is not taken for a sandbox", loose=True)
    shutil.rmtree(junk)

    # No pod known (its uid not in --kubernetes.logs-dir): a container
    # without a link is not called a sandbox.
    empty = os.path.join(tmp, "no-pods")
    os.mkdir(empty)
    run("no pod known", node.ctr_dir, pods_dir=empty,
        expect=node.of_kinds("container", "sandbox"))
    os.rmdir(empty)


def check_kind_options(node):
    """--cgroup.kind given twice adds up; with --no-cgroups it is
    refused; argv, as ps shows it, is left as given."""
    want = node.of_kinds("pod", "container")
    exp = te.Exporter("--no-cpu", "-e", "task-clock,context-switches",
                      f"--cgroup.root={node.root}", "--cgroup.kind=pod",
                      "--cgroup.kind=container,conmon", *logs_args(node))
    want |= node.of_kinds("conmon")
    got = set(labelsets(exp.scrape()[1]))
    with open(f"/proc/{exp.proc.pid}/cmdline", "rb") as f:
        argv = f.read().split(b"\0")
    check(got == want and b"--cgroup.kind=container,conmon" in argv and
          b"task-clock,context-switches" in argv,
          f"--cgroup.kind=pod --cgroup.kind=container,conmon: the "
          f"{len(want)} pods, containers and monitors (got {len(got)}); "
          f"argv as given "
          f"({[a for a in argv if b',' in a or b'kind' in a]})")
    check(exp.stop() == 0, "that exporter stops cleanly")
    p = subprocess.run([te.EXPORTER, "--no-cgroups", "--cgroup.kind=pod"],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode != 0 and "--no-cgroups" in p.stderr,
          f"--cgroup.kind with --no-cgroups refused: rc {p.returncode} "
          f"{p.stderr.strip()[:120]}")


def check_default_dirs(node):
    """The default directories, missing at start (the exporter before the
    kubelet): said once, read once they appear."""
    pods_dir = "/var/log/pods"
    if os.path.lexists(pods_dir) or os.path.lexists("/var/log/containers") \
            or not os.access("/var/log", os.W_OK):
        print("SKIP (a check): /var/log/pods or /var/log/containers is "
              "there, or /var/log is not writable: the default directories "
              "cannot be made to appear")
        return
    pods = node.of_kinds("pod")
    made = []
    exp = te.Exporter("--no-cpu", "-e", "task-clock",
                      f"--cgroup.root={node.root}", "--cgroup.kind=pod")
    try:
        for _ in range(3):
            got = labelsets(exp.scrape()[1])
        said = exp.said_soon(f"{pods_dir}: No such file or directory")
        check(set(got) == pods and len(said) == 1 and
              all("namespace" not in got[p][0] for p in pods),
              f"no {pods_dir} at start: said once "
              f"({[x.strip() for x in said]}), the pods counted unnamed")
        # The mkdir is the test that nobody else has it now; only what
        # this test made is removed (a kubelet or another run may add).
        try:
            os.mkdir(pods_dir)
        except FileExistsError:
            print(f"SKIP (a check): {pods_dir} appeared meanwhile")
            return
        made.append(pods_dir)
        for name in os.listdir(node.pods_dir):
            full = os.path.join(node.pods_dir, name)
            if os.path.isdir(full) and not os.path.islink(full):
                os.mkdir(os.path.join(pods_dir, name))
                made.append(os.path.join(pods_dir, name))
        got = labelsets(exp.scrape()[1])
        check(len(exp.said_soon(f"{pods_dir}: read again")) == 1 and
              all(got[p][0] == node.labels[p] for p in pods),
              f"{pods_dir} made: said, and the pods named")
    finally:
        for d in reversed(made):
            try:
                os.rmdir(d)
            except OSError as e:
                check(False, f"rmdir {d}: {e}")
    check(exp.stop() == 0, "that exporter stops cleanly")


def check_root_in_kubepods(mount, tmp):
    """--cgroup.root at the kubelet's kubepods slice (system.slice left
    out): the layouts are still read, from the top of the hierarchy, as
    the kubelet made them below its --cgroup-root's slices."""
    top = f"shpmuk8s{os.getpid()}"
    uid = pod_uid()
    cid = hexid()
    kubepods = f"/{top}.slice/{top}-kubepods.slice"
    qos = f"{kubepods}/{top}-kubepods-burstable.slice"
    pod = f"{qos}/{top}-kubepods-burstable-pod{uid.replace('-', '_')}.slice"
    ctr = f"{pod}/cri-containerd-{cid}.scope"
    made = [f"/{top}.slice", kubepods, qos, pod, ctr]
    pods_dir = os.path.join(tmp, top, "pods")
    ctr_dir = os.path.join(tmp, top, "containers")
    os.makedirs(os.path.join(pods_dir, f"shop_cart-0_{uid}"))
    os.makedirs(ctr_dir)
    os.symlink(f"/var/log/pods/shop_cart-0_{uid}/api/0.log",
               os.path.join(ctr_dir, f"cart-0_shop_api-{cid}.log"))
    try:
        for label in made:
            os.mkdir(mount + label)
        exp = te.Exporter("--no-cpu", "-e", "task-clock",
                          f"--cgroup.root={kubepods}",
                          "--cgroup.kind=pod,container",
                          f"--kubernetes.logs-dir={pods_dir}",
                          f"--kubernetes.container-logs-dir={ctr_dir}")
        got = labelsets(exp.scrape()[1])
        shared = {"namespace": "shop", "pod": "cart-0", "pod_uid": uid,
                  "qos_class": "burstable"}
        want = {pod: shared,
                ctr: dict(shared, container="api", container_id=cid,
                          runtime="containerd")}
        check({k: v[0] for k, v in got.items()} == want,
              f"--cgroup.root={kubepods}: the pod and its container named "
              f"(got {got})")
        check(exp.stop() == 0, "that exporter stops cleanly")
    finally:
        for label in reversed(made):
            if os.path.isdir(mount + label):
                os.rmdir(mount + label)


def check_churn(mount, tmp):
    """Pods (cgroups and log directories) that come and go over 1000
    scrapes: their series come and go with them, no fd is kept, and a
    scrape costs what it did without them."""
    node = Node(mount, f"shpmu-exporter-k8s-churn-{os.getpid()}", tmp)
    pods = []
    made = [0]

    def add_pod():
        made[0] += 1
        pod, shared = node.pod("systemd", "burstable", pod_uid(), "churn",
                               f"p-{made[0]}")
        sandbox = hexid()
        node.container(pod, shared, f"cri-containerd-{sandbox}.scope",
                       sandbox, "containerd", kind="sandbox")
        cid = hexid()
        ctr = node.container(pod, shared, f"cri-containerd-{cid}.scope",
                             cid, "containerd", "app")
        pods.append((pod, ctr, shared))

    def drop_pod():
        pod, ctr, shared = pods.pop(0)
        node.remove(pod)
        os.rmdir(os.path.join(node.pods_dir, f"churn_{shared['pod']}_"
                              f"{shared['pod_uid']}"))
        for f in os.listdir(node.ctr_dir):
            if f.startswith(shared["pod"] + "_"):
                os.unlink(os.path.join(node.ctr_dir, f))
        return pod, ctr

    try:
        for _ in range(15):
            add_pod()
        exp = te.Exporter("--no-cpu", "-e", "task-clock",
                          f"--cgroup.root={node.root}",
                          "--cgroup.kind=pod,container", *logs_args(node))
        # The exporter in a cgroup of its own, its task-clock counted
        # there: the CPU time a scrape costs it, which what runs beside
        # the test on a loaded machine changes much less than the time a
        # scrape takes.
        meter = node.cgroup("meter", {})
        with open(node.mount + meter + "/cgroup.procs", "w") as f:
            f.write(str(exp.proc.pid))
        clock = te.CgroupTwin(node.mount + meter)
        took = {"steady": [], "churn": []}
        cpu = {"steady": [], "churn": []}
        wrong = []

        def cpu_ns():
            return sum(te.struct.unpack("Q", os.read(fd, 8))[0]
                       for fd in clock.fds)

        def scrape(phase):
            before = cpu_ns()
            text = exp.scrape()[1]
            cpu[phase].append(cpu_ns() - before)
            took[phase].append(gauge(text, "shpmu_scrape_duration_seconds"))
            return labelsets(text)

        for _ in range(10):
            scrape("steady")
        took["steady"].clear()
        cpu["steady"].clear()
        fds = exp.fds()
        for _ in range(150):
            scrape("steady")
        for i in range(1000):
            # A pod goes and another comes every 10th scrape: as many
            # pods as in the steady phases.
            gone = drop_pod() if i % 10 == 0 else ()
            if i % 10 == 0:
                add_pod()
            got = scrape("churn")
            if i == 99:
                # Past the first pods' allocations, the arenas warm.
                rss = exp.rss_kib()
            if gone and (gone[0] in got or gone[1] in got):
                wrong.append(f"scrape {i}: {gone[1]} still there")
            if gone and got.get(pods[-1][1], ({},))[0] != \
                    node.labels[pods[-1][1]]:
                wrong.append(f"scrape {i}: {pods[-1][1]}: "
                             f"{got.get(pods[-1][1])}")
        want = node.of_kinds("pod", "container")
        for _ in range(150):
            got = scrape("steady")
        check(not wrong and set(got) == want,
              f"100 pods came and went over 1000 scrapes: each named at "
              f"the scrape after it came, gone at the one after it went "
              f"({len(wrong)} wrong: {wrong[:2]}); {len(want)} counted at "
              f"the end")
        check(exp.fds() <= fds + 1,
              f"no fd kept: {exp.fds()} fds (before the churn {fds})")
        if "libasan" not in subprocess.run(["ldd", te.EXPORTER],
                                           capture_output=True,
                                           text=True).stdout:
            # 90 pods came and went since rss was taken (a log directory
            # read, 2 label sets, 2 cgroups opened and closed each): a
            # leak of a table read would pass 256 KiB; one of a label set
            # would not, and is LeakSanitizer's to find (the ASan stage
            # runs this test).
            check(exp.rss_kib() <= rss + 256,
                  f"RSS after the churn {exp.rss_kib()} KiB (after its "
                  f"first 100 scrapes {rss} KiB)")
        clock.read()
        steady = statistics.median(cpu["steady"])
        churn = statistics.median(cpu["churn"])
        check(churn <= 1.2 * steady,
              f"a scrape's CPU time: median {churn / 1e3:.0f} us with the "
              f"churn, {steady / 1e3:.0f} us without (300 scrapes before and "
              f"after it), within 20% (its duration: median "
              f"{statistics.median(took['churn']) * 1e3:.3f} ms, "
              f"{statistics.median(took['steady']) * 1e3:.3f} ms)")
        check(exp.stop() == 0, "the churned exporter stops cleanly")
    finally:
        node.cleanup()


def main():
    # meson's timeout sends SIGTERM: the finally blocks below still
    # remove what the test made (cgroups, /var/log/pods).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("SIGTERM"))
    mount = te.cgroup2_mount()
    if not mount:
        te.skip("no cgroup2 mount")
    if te.SYS_PERF_EVENT_OPEN is None:
        te.skip("perf_event_open's number here is unknown")
    # Held shared, as test_exporter.py holds it: the raw cgroup events
    # need perf_event on cgroup2.
    lock = open("/tmp/shpmu-tests-perf_event.lock", "a")
    te.fcntl.flock(lock, te.fcntl.LOCK_SH)
    tmp = tempfile.mkdtemp(prefix="shpmu-exporter-k8s-")
    node = None
    try:
        node = Node(mount, f"shpmu-exporter-k8s-{os.getpid()}", tmp)
        work = build(node)
        exp = te.Exporter(f"--cgroup.root={node.root}", "--cgroup.depth=6",
                          "-e", "task-clock,context-switches",
                          *logs_args(node))
        check_labels(exp, node, "every layout")
        check_counts(exp, node, work)
        check_formats(exp, node, tmp)
        check_names(exp, node)
        check_changing_dirs(exp, node)
        check(exp.stop() == 0, "the labelled exporter stops cleanly")
        check_kinds(node)
        check_bad_dirs(node, tmp)
        check_hostile_links(node, tmp)
        check_kind_options(node)
        check_default_dirs(node)
        check_root_in_kubepods(mount, tmp)
        check_churn(mount, tmp)
    finally:
        for proc in te.Exporter.started:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if node:
            node.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    if te.failures:
        sys.exit(f"{len(te.failures)} checks failed")


main()
