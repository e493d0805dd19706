#!/bin/sh
# Installs dependencies, then builds and runs the whole test suite: plain,
# under AddressSanitizer + UndefinedBehaviorSanitizer, and a program built
# outside the tree against an installed libshpmu through pkg-config.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh

run_suite() {
	dir=$1
	shift
	[ -d "$dir" ] || meson setup "$dir" "$@"
	ninja -C "$dir"
	meson test -C "$dir" --print-errorlogs
}

echo "== plain build"
run_suite build
echo "== address + undefined sanitizers"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	run_suite build-asan -Db_sanitize=address,undefined -Db_lundef=false
echo "== the benchmark runs (figures are not judged here; see README)"
meson test -C build --benchmark --print-errorlogs
echo "== installed library, used from outside the tree"
tests/external/run.sh
