#!/bin/sh
# The demo (the README's main job) exits 0, counts every plugin including
# the containers it makes, prints its sharing summary, and its per-interval
# cpu-clock on all CPUs is what that many CPUs give in the wall time it
# prints for the interval.
set -eu
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: the demo makes cgroups and counts every CPU: run as root"
	exit 77
fi
out=$("$1")
printf '%s\n' "$out"
status=0
for want in "sharing summary" "without sharing" "container        task-clock" \
	"self-profiler-2" "interval 3"; do
	printf '%s\n' "$out" | grep -q "$want" || {
		echo "FAIL: demo output lacks '$want'"
		status=1
	}
done
if printf '%s\n' "$out" | grep -q "skipped"; then
	echo "FAIL: the demo skipped something on this machine"
	status=1
fi
cpus=$(getconf _NPROCESSORS_ONLN)
printf '%s\n' "$out" | awk -v cpus="$cpus" '
	/^interval [0-9]+ \(/ { wall = $3; sub(/\(/, "", wall) }
	/cpu +cpu-clock +all CPUs/ {
		n++
		want = cpus * wall
		if ($5 < want * 0.97 || $5 > want * 1.03) {
			printf "FAIL: cpu-clock %s ms on %d CPUs in %s ms\n", $5, cpus, wall
			bad = 1
		}
	}
	END { if (n != 3) { print "FAIL: expected 3 cpu-clock lines"; bad = 1 }
	      exit bad }' || status=1
exit $status
