#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Every system call the library makes goes through lib/sys/ (sys.h), where
tests can fail it: a file of lib/ outside lib/sys/ that calls a raw
syscall wrapper of libc or libbpf is reported, with its line.
BPF programs (*.bpf.c) run in the kernel and are not checked."""
import pathlib
import re
import sys

lib = pathlib.Path(sys.argv[1])

RAW = [
    # files, directories and their metadata
    "open", "openat", "openat2", "creat", "read", "write", "pread",
    "pwrite", "readv", "writev", "close", "close_range", "dup", "dup2",
    "dup3", "pipe", "pipe2", "ioctl", "fcntl", "flock", "lockf", "mmap",
    "munmap", "mprotect", "mkdir", "mkdirat", "rmdir", "unlink",
    "unlinkat", "rename", "renameat", "renameat2", "link", "linkat",
    "symlink", "symlinkat", "stat", "fstat", "lstat", "fstatat", "statx",
    "statfs", "fstatfs", "chmod", "fchmod", "fchmodat", "chown", "fchown",
    "fchownat", "truncate", "ftruncate", "fsync", "readlink", "readlinkat",
    "access", "faccessat", "opendir", "fdopendir", "readdir", "closedir",
    "getdents64", "fopen", "fdopen", "fclose", "fread", "fwrite",
    "name_to_handle_at", "open_by_handle_at", "mount", "umount",
    "umount2", "socket", "memfd_create", "eventfd",
    # processes, limits, the raw entry
    "pidfd_open", "pidfd_send_signal", "kill", "getrlimit", "setrlimit",
    "prlimit", "capget", "capset", "syscall", "perf_event_open", "bpf",
]
# libbpf's syscall wrappers (bpf/bpf.h) and loads.
LIBBPF = (r"bpf_(map|obj|prog|link|btf|enable_stats|iter|task_fd_query|"
          r"raw_tracepoint)_[a-z]\w*|\w+_get_info_by_fd|bpf_object__load\w*|"
          r"\w+__load|\w+__attach\w*|libbpf_num_possible_cpus")
CALL = re.compile(r"(?<![\w.>$])(" + "|".join(RAW) + "|" + LIBBPF +
                  r")\s*\(")


def strip(text):
    """Comments and string literals blanked, lines kept."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(\\.|[^"\\\n])*"|'
                  r"'(\\.|[^'\\\n])*'", blank, text, flags=re.S)


def is_definition(line, m):
    """A declaration or definition of the name, not a call: a type
    before it on the line."""
    before = line[:m.start()].strip()
    return bool(re.search(r"\b(int|void|ssize_t|bool|long|char|struct"
                          r"\s+\w+)\s*\**$", before))


failures = []
for f in sorted(lib.rglob("*.c")):
    rel = f.relative_to(lib).as_posix()
    if rel.startswith("sys/") or rel.endswith(".bpf.c"):
        continue
    for n, line in enumerate(strip(f.read_text()).split("\n"), 1):
        for m in CALL.finditer(line):
            if is_definition(line, m):
                continue
            where = f"lib/{rel}:{n}: {m.group(1)}()"
            failures.append(where)
for w in failures:
    print(f"{w}: a raw syscall outside lib/sys/: use its sys_* wrapper")
sys.exit(1 if failures else 0)
