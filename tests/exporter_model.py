# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""shpmu-exporter on the PMU model (SHPMU_PMU_MODEL, a real clock): its
scaled values and its enabled and running seconds against the model's
truth, and no enabled or running seconds for a software event beside
them (it is never multiplexed). Run by test_exporter.py --pmu-model.

The model counts 1 + (config & 7) events per ns an event runs, so a
window's count is rate x running exactly, and its scaled value
value x enabled / running is rate x enabled."""
import os
import re
import signal
import subprocess
import threading
import time
import urllib.request

RATES = {"cycles": 1, "instructions": 2, "cache-misses": 4, "branches": 5}
COUNTERS = 2
SPEC = f"counters={COUNTERS},fixed=0,rotate_ms=4"


def samples(text, family):
    """{(cpu, event): value} of a per-CPU family."""
    out = {}
    pat = re.compile(rf'^shpmu_cpu_{family}_total\{{cpu="(\d+)",'
                     rf'event="([^"]+)"\}} (\S+)$', re.M)
    for cpu, event, value in pat.findall(text):
        out[(int(cpu), event)] = value
    return out


def run(exporter, check):
    env = dict(os.environ, SHPMU_PMU_MODEL=SPEC)
    proc = subprocess.Popen([exporter, "--web.listen-address=127.0.0.1:0",
                             "--no-cgroups", "-e",
                             ",".join(RATES) + ",task-clock"],
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        port = None
        for line in proc.stderr:
            print(line, end="")
            m = re.search(r"listening on .* \(port (\d+)\)", line)
            if m:
                port = int(m.group(1))
                break
        check(port is not None, "the exporter serves")
        if port is None:
            return
        # The rest of its log, so that it never blocks on a full pipe.
        threading.Thread(target=lambda: [print(line, end="") for line in
                                         proc.stderr], daemon=True).start()
        url = f"http://127.0.0.1:{port}/metrics"
        # Long enough for 250 rotations, each 4 ms: the share each event
        # ran is then within a rotation or two of counters / events.
        time.sleep(1.0)
        with urllib.request.urlopen(url, timeout=10) as r:
            text = r.read().decode()
        events = samples(text, "events")
        enabled = samples(text, "time_enabled_seconds")
        running = samples(text, "time_running_seconds")
        ncpus = os.cpu_count()
        check(len(events) == ncpus * len(RATES),
              f"a series per CPU and event: {sorted(events)}")
        check(set(enabled) == set(events) and set(running) == set(events),
              "enabled and running seconds for each hardware event, none "
              f"for task-clock: {sorted(set(enabled) | set(running))}")
        for key, value in sorted(events.items()):
            rate = RATES[key[1]]
            # The seconds are printed to the ns: exact integers.
            ena_ns = round(float(enabled[key]) * 1e9)
            run_ns = round(float(running[key]) * 1e9)
            want = rate * ena_ns
            # Exact but for the ns the seconds' 9 decimals may round
            # away in float parsing: rate counts per ns at most.
            check(abs(int(value) - want) <= rate,
                  f"{key}: scaled {value} = {rate} x {ena_ns} ns enabled")
            share = run_ns / ena_ns if ena_ns else 0
            # counters / events, within two rotations of 4 ms of the
            # second or so enabled (the rotation is cut at both ends).
            slack = 2 * 4e6 / ena_ns if ena_ns else 1
            check(abs(share - COUNTERS / len(RATES)) <= slack,
                  f"{key}: ran {share:.4f} of its enabled time, "
                  f"{COUNTERS}/{len(RATES)} expected (+-{slack:.4f})")
            check(ena_ns >= 1e9, f"{key}: enabled {ena_ns} ns >= 1 s")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
