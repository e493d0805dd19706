#!/bin/sh
# Installs dependencies, then builds and runs the whole test suite: plain
# (with the fault-injection walk), under AddressSanitizer +
# UndefinedBehaviorSanitizer (LeakSanitizer included), the stress test under
# ThreadSanitizer, every unit suite under valgrind, the fuzz targets for a
# bounded time, the benchmark, and a program built outside the tree against
# an installed libshpmu through pkg-config.
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
echo "== the stress test under ThreadSanitizer (Criterion cannot run there)"
[ -d build-tsan ] || meson setup build-tsan -Db_sanitize=thread -Db_lundef=false
ninja -C build-tsan tests/stress
TSAN_OPTIONS=halt_on_error=1:exitcode=66 build-tsan/tests/stress 20 8
echo "== every unit suite under valgrind memcheck"
meson test -C build --setup valgrind --suite unit --print-errorlogs
echo "== fuzz targets, 60 s each"
scripts/fuzz.sh 60
echo "== the benchmark runs (figures are not judged here; see README)"
meson test -C build --benchmark --print-errorlogs
echo "== installed library, used from outside the tree"
tests/external/run.sh
