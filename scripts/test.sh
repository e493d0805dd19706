#!/bin/sh
# Installs dependencies, then builds and runs the whole test suite: plain
# (with the fault-injection walk), under AddressSanitizer +
# UndefinedBehaviorSanitizer (LeakSanitizer included), the stress test under
# ThreadSanitizer, every unit suite under valgrind, the fuzz targets for a
# bounded time, the benchmark, a program built outside the tree against an
# installed libshpmu through pkg-config, the Debian packages built,
# linted, installed, used and purged, the exporter's container image built
# from them without a registry and run as the Kubernetes DaemonSet runs it
# (skipped, saying why, where podman cannot run a container), and the Go
# binding against that installed library under the race detector, the
# collectd plugin in a real collectd under a minute of cgroup churn with
# AddressSanitizer, and the Python binding's wheel in a private venv under
# pytest (its threads again on the ASan build). Each stage prints its
# duration.
#
# The flake hunter runs one suite many times instead:
#   scripts/test.sh --repeat N [--suite NAME] [--asan] [--beside SUITE]
# NAME is a meson test name (process, bpf, host, ...; every unit suite when
# left out), --asan uses the sanitizer build, --beside runs SUITE in a loop
# alongside for the whole time. It ends with "N passed, M failed".
set -eu
cd "$(dirname "$0")/.."

usage() {
	echo "usage: $0 [--repeat N [--suite NAME] [--asan] [--beside SUITE]]" >&2
	exit 2
}

repeat= suite= asan= beside=
while [ $# -gt 0 ]; do
	case $1 in
	--repeat) [ $# -ge 2 ] || usage; repeat=$2; shift 2 ;;
	--suite) [ $# -ge 2 ] || usage; suite=$2; shift 2 ;;
	--beside) [ $# -ge 2 ] || usage; beside=$2; shift 2 ;;
	--asan) asan=1; shift ;;
	*) usage ;;
	esac
done
case $repeat in
'') [ -z "$suite$asan$beside" ] || usage ;;
*[!0-9]* | 0) usage ;;
esac

scripts/install-deps.sh

export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

setup_build() {
	dir=$1
	shift
	[ -d "$dir" ] || meson setup "$dir" "$@"
	ninja -C "$dir"
}

plain_build() { setup_build build; }
# The ASan build carries the PMU model (and its suite): it is never
# installed (tests/external/run.sh installs from a build of its own).
asan_build() {
	if [ -d build-asan ] &&
		! meson introspect --buildoptions build-asan |
		grep -q '"name": "pmu_model", "value": true'; then
		meson configure build-asan -Dpmu_model=true
	fi
	setup_build build-asan -Db_sanitize=address,undefined -Db_lundef=false \
		-Dpmu_model=true
}

# ---- the flake hunter ----
if [ -n "$repeat" ]; then
	if [ -n "$asan" ]; then dir=build-asan; asan_build; else
		dir=build; plain_build; fi
	# A test name, or the whole unit suite.
	for name in $suite $beside; do
		meson test -C "$dir" --list 2>/dev/null |
			grep -q "/ $name\$" || {
			echo "$0: no test named '$name' (meson test -C $dir --list)" >&2
			exit 2
		}
	done
	if [ -n "$suite" ]; then what=$suite; else what="--suite unit"; fi
	stop=$(mktemp -u)
	if [ -n "$beside" ]; then
		# The suite beside finishes its current run once told to stop,
		# so it leaves no cgroup or mount behind.
		(while [ ! -e "$stop" ]; do
			meson test -C "$dir" --no-rebuild --logbase beside \
				"$beside" >/dev/null 2>&1 || true
		done) &
		beside_pid=$!
		echo "beside: $beside in a loop (pid $beside_pid)"
	fi
	passed=0 failed=0 i=0
	while [ "$i" -lt "$repeat" ]; do
		i=$((i + 1))
		start=$(date +%s)
		# shellcheck disable=SC2086
		if meson test -C "$dir" --no-rebuild --logbase repeat \
			--print-errorlogs $what >"$dir/repeat-$i.out" 2>&1; then
			passed=$((passed + 1))
			echo "run $i/$repeat: ok ($(($(date +%s) - start)) s)"
		else
			failed=$((failed + 1))
			echo "run $i/$repeat: FAILED ($(($(date +%s) - start)) s)"
			grep -E "Assertion Failed|^\[----\] +[^ ].*(not within|over|vs)|FAIL|ERROR|SUMMARY" \
				"$dir/repeat-$i.out" | head -20 || true
			echo "(whole output: $dir/repeat-$i.out)"
		fi
	done
	if [ -n "$beside" ]; then
		touch "$stop"
		wait "$beside_pid" || true
		rm -f "$stop"
	fi
	echo "${what#--suite } x $repeat${asan:+ (asan)}${beside:+ beside $beside}:"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
fi

# ---- the whole suite, stage by stage ----
durations= stages=0
stage() {
	name=$1
	shift
	echo "== $name"
	start=$(date +%s)
	"$@"
	took=$(($(date +%s) - start))
	echo "-- $name: ${took} s"
	stages=$((stages + 1))
	durations="$durations$(printf '%6d s  %s' "$took" "$name")
"
}
# meson shows the last 100 lines of a failing test's log: its failed
# assertions may lie above them.
failed_assertions() {
	echo "== the failed assertions, from $1"
	grep -E -B1 -A3 "Assertion Failed|^\[FAIL\]" "$1" | head -120 || true
	return 1
}
run_plain() {
	plain_build && { meson test -C build --print-errorlogs ||
		failed_assertions build/meson-logs/testlog.txt; }
}
run_asan() {
	asan_build && { meson test -C build-asan --no-suite slow \
		--print-errorlogs ||
		failed_assertions build-asan/meson-logs/testlog.txt; }
}
run_tsan() {
	[ -d build-tsan ] ||
		meson setup build-tsan -Db_sanitize=thread -Db_lundef=false
	ninja -C build-tsan tests/stress
	TSAN_OPTIONS=halt_on_error=1:exitcode=66 build-tsan/tests/stress 20 8
}
run_valgrind() {
	meson test -C build --setup valgrind --suite unit --print-errorlogs ||
		failed_assertions build/meson-logs/testlog-valgrind.txt
}
# The C benchmarks, then the Python binding's overhead against C.
run_bench() {
	meson test -C build --benchmark --print-errorlogs
	bindings/python/bench/bench.sh build
}
# A minute of cgroups made and removed each second under collectd's four
# read threads, the plugin and library built with ASan (build-asan).
run_collectd_stress() {
	if [ ! -e build-asan/plugins/collectd/shpmu.so ]; then
		echo "collectd: skipped: no plugin built (collectd-dev missing)"
		return 0
	fi
	SHPMU_ASAN=1 python3 tests/test_collectd.py \
		build-asan/plugins/collectd/shpmu.so build-asan --stress 60
}

all_start=$(date +%s)
stage "plain build and tests" run_plain
stage "address + undefined sanitizers" run_asan
stage "the stress test under ThreadSanitizer (Criterion cannot run there)" \
	run_tsan
stage "every unit suite under valgrind memcheck" run_valgrind
stage "fuzz targets, 60 s each" scripts/fuzz.sh 60
stage "the benchmark runs (figures are not judged here; see README)" run_bench
stage "installed library, used from outside the tree" tests/external/run.sh
# The container stage builds its image from the .debs the packaging
# stage keeps in build-debs/.
stage "Debian packages: build, lintian, install, use" \
	tests/packaging/run.sh build-debs
stage "the exporter's image without a registry, run as the DaemonSet" \
	tests/container/run.sh build-debs
stage "the Go binding against the installed library (go test -race)" \
	bindings/go/test.sh
stage "the collectd plugin under stress in collectd, built with ASan" \
	run_collectd_stress
stage "the Python binding: its wheel in a venv, pytest, mypy" \
	bindings/python/test.sh
echo "== durations"
printf '%s' "$durations"
printf '%6d s  all\n' "$(($(date +%s) - all_start))"
# (set -e ended the run at the first stage that failed)
echo "stages: $stages passed, 0 failed"
