# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The C library through ctypes: where it is found, its structs and the
prototypes of its calls. Nothing here is public."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import subprocess
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_int,
    c_int32,
    c_size_t,
    c_uint,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)

SONAME = "libshpmu.so.0"
# read_bound and read_unattributed came in 0.4.
MIN_VERSION = (0, 4, 0)


class PerfEventAttr(Structure):
    """struct perf_event_attr as of PERF_ATTR_SIZE_VER8 (136 bytes): the
    library takes any size up to the one it knows."""

    _fields_ = [
        ("type", c_uint32),
        ("size", c_uint32),
        ("config", c_uint64),
        ("sample_period", c_uint64),
        ("sample_type", c_uint64),
        ("read_format", c_uint64),
        ("disabled", c_uint64, 1),
        ("inherit", c_uint64, 1),
        ("pinned", c_uint64, 1),
        ("exclusive", c_uint64, 1),
        ("exclude_user", c_uint64, 1),
        ("exclude_kernel", c_uint64, 1),
        ("exclude_hv", c_uint64, 1),
        ("exclude_idle", c_uint64, 1),
        ("mmap", c_uint64, 1),
        ("comm", c_uint64, 1),
        ("freq", c_uint64, 1),
        ("inherit_stat", c_uint64, 1),
        ("enable_on_exec", c_uint64, 1),
        ("task", c_uint64, 1),
        ("watermark", c_uint64, 1),
        ("precise_ip", c_uint64, 2),
        ("mmap_data", c_uint64, 1),
        ("sample_id_all", c_uint64, 1),
        ("exclude_host", c_uint64, 1),
        ("exclude_guest", c_uint64, 1),
        ("flags_rest", c_uint64, 43),
        ("wakeup_events", c_uint32),
        ("bp_type", c_uint32),
        ("config1", c_uint64),
        ("config2", c_uint64),
        ("branch_sample_type", c_uint64),
        ("sample_regs_user", c_uint64),
        ("sample_stack_user", c_uint32),
        ("clockid", c_int32),
        ("sample_regs_intr", c_uint64),
        ("aux_watermark", c_uint32),
        ("sample_max_stack", c_uint16),
        ("reserved_2", c_uint16),
        ("aux_sample_size", c_uint32),
        ("reserved_3", c_uint32),
        ("sig_data", c_uint64),
        ("config3", c_uint64),
    ]


ATTR_SIZE = ctypes.sizeof(PerfEventAttr)
assert ATTR_SIZE == 136, ATTR_SIZE

LogFn = CFUNCTYPE(None, c_int, c_char_p, c_void_p)
EventFn = CFUNCTYPE(c_int, c_char_p, c_char_p, c_void_p)


class Opts(Structure):
    _fields_ = [
        ("sz", c_size_t),
        ("flags", c_uint),
        ("cgroup_root", c_char_p),
        ("cgroup_backend", c_int),
        ("log", LogFn),
        ("log_arg", c_void_p),
        ("scope", c_int),
        ("domain", c_char_p),
        ("bpffs_dir", c_char_p),
        ("lock_timeout_ms", c_uint),
    ]


class Target(Structure):
    _fields_ = [
        ("kind", c_int),
        ("pid", c_int),
        ("cpu", c_int),
        ("cgroup_id", c_uint64),
        ("cgroup_path", c_char_p),
        ("flags", c_uint32),
        ("reserved32", c_uint32),
        ("reserved", c_uint64 * 3),
    ]


class OpenOpts(Structure):
    _fields_ = [
        ("sz", c_size_t),
        ("flags", c_uint),
        ("pad", c_uint),
        ("reserved", c_uint64 * 6),
    ]


class CCount(Structure):
    _fields_ = [
        ("value", c_uint64),
        ("time_enabled", c_uint64),
        ("time_running", c_uint64),
    ]


class Stats(Structure):
    _fields_ = [
        ("handles", c_uint64),
        ("kernel_events", c_uint64),
        ("kernel_fds", c_uint64),
        ("opens", c_uint64),
        ("shared_opens", c_uint64),
        ("switches_unseen", c_uint64),
        ("unattributed_ns", c_uint64),
        ("reserved", c_uint64 * 6),
    ]


class Budget(Structure):
    _fields_ = [
        ("pmu", c_char * 32),
        ("type", c_uint32),
        ("cpu", c_int32),
        ("general", c_uint32),
        ("fixed", c_uint32),
        ("watchdog", c_uint32),
        ("used", c_uint32),
        ("used_fixed", c_uint32),
        ("multiplexing", c_uint32),
        ("wanted", c_uint64),
        ("saved", c_uint64),
        ("reserved", c_uint64 * 8),
    ]


# name: (restype, argtypes); every int-returning call gives -errno.
_PMU = c_void_p
_CALLS: dict[str, tuple[object, list[object]]] = {
    "shpmu_version": (c_uint, []),
    "shpmu_new": (_PMU, [POINTER(Opts)]),
    "shpmu_free": (None, [_PMU]),
    "shpmu_open_opts": (
        c_int,
        [_PMU, POINTER(PerfEventAttr), POINTER(Target), POINTER(OpenOpts)],
    ),
    "shpmu_open_name": (c_int, [_PMU, c_char_p, POINTER(Target)]),
    "shpmu_open_group": (
        c_int,
        [_PMU, POINTER(PerfEventAttr), c_size_t, POINTER(Target)],
    ),
    "shpmu_event_attr": (c_int, [_PMU, c_char_p, POINTER(PerfEventAttr)]),
    "shpmu_list_events": (c_int, [_PMU, EventFn, c_void_p]),
    "shpmu_enable": (c_int, [_PMU, c_int]),
    "shpmu_disable": (c_int, [_PMU, c_int]),
    "shpmu_reset": (c_int, [_PMU, c_int]),
    "shpmu_close": (c_int, [_PMU, c_int]),
    "shpmu_read": (c_int, [_PMU, c_int, POINTER(CCount)]),
    "shpmu_read_cached": (c_int, [_PMU, c_int, POINTER(CCount)]),
    "shpmu_read_bound": (
        c_int,
        [_PMU, c_int, POINTER(CCount), POINTER(c_uint64)],
    ),
    "shpmu_read_unattributed": (c_int, [_PMU, c_int, c_int, POINTER(CCount)]),
    "shpmu_read_cpu": (c_int, [_PMU, c_int, c_int, POINTER(CCount)]),
    "shpmu_read_pmu": (c_int, [_PMU, c_int, c_char_p, POINTER(CCount)]),
    "shpmu_read_group": (c_int, [_PMU, c_int, POINTER(CCount), c_size_t]),
    "shpmu_read_many": (
        c_int,
        [_PMU, POINTER(c_int), c_size_t, POINTER(CCount)],
    ),
    "shpmu_pmu_budget": (c_int, [_PMU, POINTER(Budget), c_size_t]),
    "shpmu_explain": (c_int, [_PMU, c_int, c_int, c_char_p, c_size_t]),
    "shpmu_get_stats": (c_int, [_PMU, POINTER(Stats)]),
    "shpmu_cgroup_root": (c_int, [_PMU, c_char_p, c_size_t]),
    "shpmu_cgroup_id": (c_int, [_PMU, c_char_p, POINTER(c_uint64)]),
    "shpmu_cgroup_path": (c_int, [_PMU, c_uint64, c_char_p, c_size_t]),
}


def _candidates() -> list[str]:
    """Where to look, most explicit first: $SHPMU_LIBRARY, pkg-config's
    libdir, then the dynamic linker's own search (LD_LIBRARY_PATH, the
    ld.so cache)."""
    found = []
    explicit = os.environ.get("SHPMU_LIBRARY")
    if explicit:
        return [explicit]
    if shutil.which("pkg-config"):
        try:
            libdir = subprocess.run(
                ["pkg-config", "--variable=libdir", "libshpmu"],
                capture_output=True,
                text=True,
                check=True,
                timeout=10,
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            libdir = ""
        if libdir and os.path.exists(os.path.join(libdir, SONAME)):
            found.append(os.path.join(libdir, SONAME))
    found.append(SONAME)
    name = ctypes.util.find_library("shpmu")
    if name:
        found.append(name)
    return found


def _load() -> ctypes.CDLL:
    errors = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path, use_errno=True)
        except OSError as e:
            errors.append(f"{path}: {e}")
            continue
        for name, (restype, argtypes) in _CALLS.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        return lib
    raise ImportError(
        "shpmu: cannot load libshpmu ("
        + "; ".join(errors)
        + "): install libshpmu0, or set SHPMU_LIBRARY to its path"
    )


lib = _load()


def version() -> tuple[int, int, int]:
    v = int(lib.shpmu_version())
    return (v >> 16, (v >> 8) & 0xFF, v & 0xFF)


if version() < MIN_VERSION:
    raise ImportError(
        "shpmu: libshpmu %d.%d.%d is older than this binding needs (%d.%d.%d)"
        % (version() + MIN_VERSION)
    )
