# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What the Python-driven tests share: checks that print and are counted,
meson's skip, the cgroup2 mount, and a mount namespace of the test's own
with a BPF filesystem."""
import ctypes
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def cgroup2_mount():
    with open("/proc/self/mountinfo") as f:
        mounts = [line.split() for line in f]
    found = [m[4] for m in mounts if m[m.index("-") + 1] == "cgroup2"]
    for want in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        if want in found:
            return want
    return found[0] if found else None


def private_mounts(prefix="shpmu-bpffs-"):
    """A mount namespace of our own, with a BPF filesystem in it that
    goes with us: its directory."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x00020000):  # CLONE_NEWNS
        skip("unshare(CLONE_NEWNS): " + os.strerror(ctypes.get_errno()))
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    bpffs = tempfile.mkdtemp(prefix=prefix)
    subprocess.run(["mount", "-t", "bpf", "bpf", bpffs], check=True)
    return bpffs
