#!/bin/sh
# Installs dependencies, builds, and runs the benchmark (as root: the
# cgroup figures make cgroups). --json prints one JSON object on stdout.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -d build ] || meson setup build
ninja -C build
exec build/shpmu-bench "$@"
