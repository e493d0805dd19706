#!/bin/sh
# Builds the libFuzzer targets with clang, ASan and UBSan, and runs each for
# SECONDS (default 60) from the seeds in tests/fuzz/seeds. Any crash, leak
# or sanitizer report fails the run.
set -eu
cd "$(dirname "$0")/.."
seconds=${1:-60}
scripts/install-deps.sh
# The fuzz build carries the PMU model (for fuzz_pmu_model); it installs
# nothing.
[ -d build-fuzz ] || CC=clang meson setup build-fuzz -Dfuzz=true \
	-Dtests=disabled -Db_sanitize=address,undefined -Db_lundef=false \
	-Dpmu_model=true
meson introspect --buildoptions build-fuzz |
	grep -q '"name": "pmu_model", "value": true' ||
	meson configure build-fuzz -Dpmu_model=true
ninja -C build-fuzz tests/fuzz/fuzz_attr tests/fuzz/fuzz_names \
	tests/fuzz/fuzz_cgroup_path tests/fuzz/fuzz_books \
	tests/fuzz/fuzz_pmu_model
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for target in attr names cgroup_path books pmu_model; do
	corpus=$(mktemp -d)
	echo "== fuzz_$target for ${seconds}s"
	build-fuzz/tests/fuzz/fuzz_$target -max_total_time="$seconds" \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="build-fuzz/crash-$target-" \
		"$corpus" "tests/fuzz/seeds/$target" 2>&1 |
		grep -E "^(stat::number_of_executed_units|==[0-9]+==|SUMMARY|Done)|ERROR|crash" || true
	status=$(build-fuzz/tests/fuzz/fuzz_$target -runs=0 "$corpus" \
		"tests/fuzz/seeds/$target" >/dev/null 2>&1; echo $?)
	rm -rf "$corpus"
	ls build-fuzz/crash-$target-* >/dev/null 2>&1 && {
		echo "FAIL: fuzz_$target found a crash: build-fuzz/crash-$target-*"
		exit 1
	}
	[ "$status" = 0 ] || { echo "FAIL: fuzz_$target: replay failed"; exit 1; }
done
echo "fuzz: 5 passed, 0 failed"
