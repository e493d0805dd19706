#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Runs shpmu-bench --json: prints its table, checks that the JSON object
has exactly the documented keys, each a number, and prints each goal's
verdict as the table does (a missed goal does not fail the check:
docs/performance.md says which goals are missed and why)."""
import json
import os
import subprocess
import sys

KEYS = {"open_dup_speedup", "open_dup_vs_read", "read_overhead_ratio", "read_many_speedup",
        "fds_raw", "fds_shared", "bytes_per_handle", "op_cost_growth",
        "papi_read_ratio", "cgroup_switch_overhead_0",
        "cgroup_switch_overhead_200", "cgroup_switch_overhead_1000",
        "bpf_cgroup_switch_overhead_200", "bpf_cgroup_switch_overhead_1000",
        "bpf_fds_1000_cgroups", "tax_uncounted_same_cgroup",
        "tax_counted_same_cgroup", "tax_uncounted_cross_cgroup",
        "exporter_scrape_ms_1000_cgroups",
        "exporter_fds_1000_cgroups", "host_events_16_procs",
        "local_events_16_procs", "host_read_many_ratio",
        "host_cached_read_ratio", "host_switch_overhead_16_procs",
        "host_open_close_ratio",
        "bpf_task_switch_overhead_1000", "bpf_same_set_switch_overhead",
        "bpf_empty_trigger_floor_context", "bpf_empty_trigger_floor_cgroup",
        "bpf_task_switch_overhead_1000_over_floor",
        "bpf_same_set_switch_overhead_over_floor",
        "switches_missed_by_perf_hook_program",
        "switches_missed_by_tracepoint_program",
        "switches_unseen_per_1000", "unattributed_ms_per_cpu_s_quiet",
        "unattributed_ms_per_cpu_s_busy", "bound_share_busy",
        "process_fds_1000",
        "bytes_per_task_target", "switch_crossover_cgroups",
        "bpf_backend_own_fds", "fd_crossover_cgroups"}
# The crossover ladder (bench/crossover.c): the switch overhead of 1, 2, 4
# ... 64 counted cgroups by each backend.
KEYS |= {f"ladder_{b}_switch_overhead_{n}" for b in ("classic", "bpf")
         for n in (1, 2, 4, 8, 16, 32, 64)}
# The figures of a BPF program: the JSON has key_ns_per_run too.
PER_RUN = {"bpf_cgroup_switch_overhead_200", "bpf_cgroup_switch_overhead_1000",
           "tax_uncounted_same_cgroup", "tax_counted_same_cgroup",
           "tax_uncounted_cross_cgroup", "bpf_task_switch_overhead_1000",
           "bpf_same_set_switch_overhead", "bpf_empty_trigger_floor_context",
           "bpf_empty_trigger_floor_cgroup"}
KEYS |= {k + "_ns_per_run" for k in PER_RUN}

CPUS = os.sysconf("SC_NPROCESSORS_ONLN")
# The goals of bench/main.c's rows: (">=" | "<=" | "=", target), or
# ("half", ref): at most 1 + (ref - 1) / 2, ref a figure of the same run.
GOALS = {"open_dup_speedup": (">=", 30), "open_dup_vs_read": ("<=", 1.3),
         "read_overhead_ratio": ("<=", 1.10), "read_many_speedup": (">=", 100),
         "fds_shared": ("=", 8 * CPUS), "bytes_per_handle": ("<=", 128),
         "op_cost_growth": ("<=", 1.5), "papi_read_ratio": (">=", 1),
         "bpf_cgroup_switch_overhead_200":
             ("half", "cgroup_switch_overhead_200"),
         "bpf_cgroup_switch_overhead_1000": ("<=", 1.05),
         # The program's own run time at a switch between cgroups.
         "bpf_cgroup_switch_overhead_200_ns_per_run": ("<=", 250),
         "bpf_cgroup_switch_overhead_1000_ns_per_run": ("<=", 250),
         "bpf_fds_1000_cgroups": ("=", 8 * CPUS),
         "tax_uncounted_same_cgroup": ("<=", 1.01),
         "tax_counted_same_cgroup": ("<=", 1.01),
         "tax_uncounted_cross_cgroup": ("<=", 1.03),
         "host_events_16_procs": ("=", 8 * CPUS),
         "host_read_many_ratio": ("<=", 1.5),
         "host_cached_read_ratio": ("<=", 0.3),
         "host_switch_overhead_16_procs": ("<=", 1.05),
         "bpf_task_switch_overhead_1000": ("<=", 1.05),
         "bpf_same_set_switch_overhead": ("<=", 1.02),
         "process_fds_1000": ("=", 4 * CPUS),
         "bytes_per_task_target": ("<=", 256),
         "exporter_scrape_ms_1000_cgroups": ("<=", 5),
         "exporter_fds_1000_cgroups": ("=", 8 * CPUS)}


def verdict(figures, key):
    """The goal as the table writes it and met/MISSED; None where a figure
    it needs is 0 (skipped)."""
    op, target = GOALS[key]
    value = figures[key]
    if op == "half":
        if not figures[target]:
            return None
        op, target = "<=", 1 + (figures[target] - 1) / 2
    if not value:
        return None
    met = {">=": value >= target, "<=": value <= target,
           "=": value == target}[op]
    return f"{op} {target:.5g}", "met" if met else "MISSED"


out = subprocess.run([sys.argv[1], "--json"], capture_output=True, text=True)
sys.stdout.write(out.stderr)
if out.returncode != 0:
    sys.exit(f"shpmu-bench failed: {out.returncode}")
figures = json.loads(out.stdout)
bad = [k for k, v in figures.items() if not isinstance(v, (int, float))]
if set(figures) != KEYS or bad:
    sys.exit(f"JSON keys differ: extra {set(figures) - KEYS}, missing "
             f"{KEYS - set(figures)}, not numbers {bad}")
for key in GOALS:
    v = verdict(figures, key)
    print(f"goal {key}: {figures[key]:.5g} " +
          (f"{v[0]} {v[1]}" if v else "skipped"))
print(json.dumps(figures))
