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
# The printed wall time is give or take how long the read and the reset
# around the window took (an IPI to a busy CPU can take milliseconds).
# Below: a CPU-wide cpu-clock stops while the kernel reschedules a CPU's
# events at a switch between cgroups that have perf events, anybody's:
# with a second test suite's thousands of cgroup events beside the demo
# it loses up to 3% here. Above, nothing can add time: 1%.
printf '%s\n' "$out" | awk -v cpus="$cpus" '
	/^interval [0-9]+ \(/ {
		wall = $3; sub(/\(/, "", wall)
		slack = $9
	}
	/cpu +cpu-clock +all CPUs/ {
		n++
		lo = cpus * (wall - slack) * 0.95
		hi = cpus * (wall + slack) * 1.01
		if ($5 < lo || $5 > hi) {
			printf "FAIL: cpu-clock %s ms on %d CPUs in %s +- %s ms\n",
			       $5, cpus, wall, slack
			bad = 1
		}
	}
	END { if (n != 3) { print "FAIL: expected 3 cpu-clock lines"; bad = 1 }
	      exit bad }' || status=1
exit $status
