#!/bin/sh
# Installs dependencies, builds, and runs the demo agent (no arguments).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -d build ] || meson setup build
ninja -C build
exec build/shpmu-demo
