#!/bin/sh
# The Python binding's overhead against C (overhead.py), on the library
# and package of the tree: build/ (meson) and bindings/python/src.
#   bindings/python/bench/bench.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/../../.."
build=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -shared -fPIC -Iinclude -I"$build/include" \
	bindings/python/bench/baseline.c -o "$out/baseline.so" \
	-L"$build" -lshpmu
SHPMU_LIBRARY=$(pwd)/$build/libshpmu.so.0 LD_LIBRARY_PATH=$(pwd)/$build \
	PYTHONPATH=bindings/python/src PYTHONDONTWRITEBYTECODE=1 \
	/usr/bin/python3 bindings/python/bench/overhead.py "$out/baseline.so"
