#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Runs shpmu-bench --json: prints its table, and checks that the JSON
object has exactly the documented keys, each a number."""
import json
import subprocess
import sys

KEYS = {"open_dup_speedup", "open_dup_vs_read", "read_overhead_ratio", "read_many_speedup",
        "fds_raw", "fds_shared", "bytes_per_handle", "op_cost_growth",
        "papi_read_ratio", "cgroup_switch_overhead_0",
        "cgroup_switch_overhead_200", "cgroup_switch_overhead_1000",
        "bpf_cgroup_switch_overhead_200", "bpf_cgroup_switch_overhead_1000",
        "bpf_fds_1000_cgroups", "exporter_scrape_ms_1000_cgroups",
        "exporter_fds_1000_cgroups", "host_events_16_procs",
        "local_events_16_procs", "host_read_many_ratio",
        "host_cached_read_ratio", "host_switch_overhead_16_procs",
        "bpf_task_switch_overhead_1000", "bpf_same_set_switch_overhead",
        "bpf_empty_switch_floor", "process_fds_1000",
        "bytes_per_task_target"}

out = subprocess.run([sys.argv[1], "--json"], capture_output=True, text=True)
sys.stdout.write(out.stderr)
if out.returncode != 0:
    sys.exit(f"shpmu-bench failed: {out.returncode}")
figures = json.loads(out.stdout)
bad = [k for k, v in figures.items() if not isinstance(v, (int, float))]
if set(figures) != KEYS or bad:
    sys.exit(f"JSON keys differ: extra {set(figures) - KEYS}, missing "
             f"{KEYS - set(figures)}, not numbers {bad}")
print(json.dumps(figures))
