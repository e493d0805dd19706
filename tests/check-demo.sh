#!/bin/sh
# The demo (the README's main job) exits 0, counts every plugin including
# the containers it makes, and prints its sharing summary.
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
exit $status
