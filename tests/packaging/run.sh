#!/bin/sh
# Builds the Debian packages from a copy of the tree (dpkg-buildpackage),
# checks them with lintian (errors fail, warnings are printed), installs
# them and uses them from /usr: a program built with pkg-config, shpmu-stat,
# the man pages, the exporter unit's hardening score and the exporter as
# its own user with only its capabilities. Then it purges them (and the
# user, where this run created it), leaving the machine as it was. Root.
#   tests/packaging/run.sh [KEEP_DIR]
# KEEP_DIR (made if missing, emptied of .debs) keeps the .debs built, for
# the container stage (tests/container/run.sh) to use rather than build
# them again.
set -eu
cd "$(dirname "$0")/../.."
keep=${1:-}
pkgs="libshpmu0 libshpmu-dev shpmu-tools shpmu-exporter collectd-shpmu python3-shpmu"
user=shpmu-exporter
port=9817

for p in $pkgs; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q installed; then
		echo "FAIL: $p is installed already; this test would purge it" >&2
		exit 1
	fi
done
had_user=
getent passwd "$user" >/dev/null && had_user=1

work=$(mktemp -d)
exporter_pid=
cleanup() {
	[ -z "$exporter_pid" ] || kill "$exporter_pid" 2>/dev/null || true
	# shellcheck disable=SC2086
	dpkg --purge $pkgs >/dev/null 2>&1 || true
	if [ -z "$had_user" ] && getent passwd "$user" >/dev/null; then
		userdel "$user" 2>/dev/null || true
		groupdel "$user" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

status=0 checks=0
fail() {
	echo "FAIL: $*"
	status=1
}
ok() { checks=$((checks + 1)); }

tests/packaging/build-debs.sh "$work"
# DPKG_GENSYMBOLS_CHECK_LEVEL=4 (debian/rules) fails on a change; this
# also catches a warning.
if grep -A20 'dpkg-gensymbols' "$work/build.log"; then
	fail "dpkg-gensymbols reported changes"
fi
ok

changes=$(ls "$work"/libshpmu_*.changes)
echo "lintian:"
if ! lintian --fail-on error --display-info "$changes" >"$work/lintian.log" 2>&1; then
	fail "lintian reported errors"
fi
grep -v 'running with root privileges' "$work/lintian.log" |
	sed 's/^/  /' || true
ok

debs=
for p in $pkgs; do
	debs="$debs $(ls "$work/${p}_"*.deb)"
done
if [ -n "$keep" ]; then
	mkdir -p "$keep"
	rm -f "$keep"/*.deb
	# shellcheck disable=SC2086
	cp $debs "$keep/"
fi
# shellcheck disable=SC2086
dpkg -i $debs >"$work/install.log" 2>&1 ||
	DEBIAN_FRONTEND=noninteractive apt-get install -f -y -q \
		>>"$work/install.log" 2>&1 || {
	cat "$work/install.log"
	echo "FAIL: installing the packages"
	exit 1
}
ok

# A program built against the -dev package as any other would be.
env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH sh -c '
	cc -Wall -Werror "$1" -o "$2" $(pkg-config --cflags --libs libshpmu)' \
	sh tests/external/consumer.c "$work/consumer" || fail "building consumer.c"
if [ -x "$work/consumer" ]; then
	env -u LD_LIBRARY_PATH "$work/consumer" || fail "consumer"
	env -u LD_LIBRARY_PATH ldd "$work/consumer" |
		grep -Eq '=> (/usr)?/lib/[^ ]*/libshpmu\.so\.0 ' ||
		fail "consumer does not load /usr/lib/.../libshpmu.so.0"
fi
ok

out=$(/usr/bin/shpmu-stat -e task-clock -- true 2>&1) ||
	fail "shpmu-stat -e task-clock -- true"
echo "$out" | grep -q 'task-clock' || fail "shpmu-stat printed: $out"
ok

# The Python package from Debian's python3, on the library in /usr/lib.
out=$(cd / && env -u LD_LIBRARY_PATH -u SHPMU_LIBRARY -u PYTHONPATH \
	/usr/bin/python3 -c 'import shpmu
with shpmu.measure("page-faults") as m:
    bytearray(1 << 20)
maps = [l.split()[-1] for l in open("/proc/self/maps") if "libshpmu" in l]
print(shpmu.__file__, maps[0], m["page-faults"].value > 0)' 2>&1) ||
	fail "python3-shpmu: $out"
echo "$out" | grep -Eq '^/usr/lib/python3/dist-packages/shpmu/__init__.py (/usr)?/lib/[^ ]*/libshpmu\.so\.0[.0-9]* True$' ||
	fail "python3-shpmu printed: $out"
out=$(cd / && env -u LD_LIBRARY_PATH /usr/bin/python3 -m shpmu stat \
	-e task-clock -- true 2>&1) || fail "python3 -m shpmu stat: $out"
echo "$out" | grep -q 'task-clock' || fail "python3 -m shpmu stat printed: $out"
ok

# The installed plugin in collectd, from collectd's own plugin directory:
# -T runs init and one read of each plugin, then exits.
mkdir "$work/collectd"
cat >"$work/collectd/collectd.conf" <<EOF
Hostname "test"
FQDNLookup false
BaseDir "$work/collectd"
PIDFile "$work/collectd/pid"
TypesDB "/usr/share/collectd/types.db"
LoadPlugin csv
<Plugin csv>
  DataDir "$work/collectd/csv"
</Plugin>
LoadPlugin shpmu
<Plugin shpmu>
  <Instance "node">
    Events "task-clock"
    CPUs "all"
  </Instance>
</Plugin>
EOF
env -u LD_LIBRARY_PATH /usr/sbin/collectd -T -C "$work/collectd/collectd.conf" \
	>"$work/collectd/log" 2>&1 || fail "collectd -T with the plugin"
ls "$work"/collectd/csv/test/shpmu-node/derive-task-clock-* >/dev/null 2>&1 ||
	fail "collectd wrote no value of the installed plugin: $(cat "$work/collectd/log")"
ok

# The man pages, once the tree has them.
if [ -d man ]; then
	for page in shpmu-stat shpmu-host shpmu-exporter libshpmu collectd-shpmu; do
		man -w "$page" >/dev/null 2>&1 || fail "man -w $page"
	done
	ok
fi

unit=/lib/systemd/system/shpmu-exporter.service
score=$(systemd-analyze security --offline=true "$unit" 2>&1 |
	sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
echo "systemd-analyze security: exposure $score"
case $score in
[0-3].*) ok ;;
*) fail "$unit: exposure '$score' (4 or more, or none)" ;;
esac
grep -q '^ExecStart=/usr/bin/shpmu-exporter ' "$unit" ||
	fail "$unit does not start /usr/bin/shpmu-exporter"

# The exporter as its user with the unit's capabilities only: under
# systemd its own unit, elsewhere setpriv.
getent passwd "$user" >/dev/null || fail "no user $user"
if [ "$(ps -p 1 -o comm=)" = systemd ]; then
	systemctl restart shpmu-exporter || fail "systemctl restart"
else
	setpriv --reuid="$user" --regid="$user" --init-groups \
		--inh-caps=-all,+perfmon,+bpf --ambient-caps=-all,+perfmon,+bpf \
		--bounding-set=-all,+perfmon,+bpf --no-new-privs \
		/usr/bin/shpmu-exporter --web.listen-address=127.0.0.1:$port \
		>"$work/exporter.log" 2>&1 &
	exporter_pid=$!
fi
metrics=
i=0
while [ $i -lt 20 ] && [ -z "$metrics" ]; do
	sleep 0.5
	metrics=$(curl -s "127.0.0.1:$port/metrics" || true)
	i=$((i + 1))
done
echo "$metrics" | grep -q '^shpmu_cpu_events_total{' ||
	fail "the exporter served no per-CPU series"
echo "$metrics" | grep -q '^shpmu_cgroup_events_total{' ||
	fail "the exporter served no per-cgroup series"
ok
if [ -n "$exporter_pid" ]; then
	kill "$exporter_pid"
	wait "$exporter_pid" 2>/dev/null || true
	exporter_pid=
fi

# shellcheck disable=SC2086
dpkg --purge $pkgs >/dev/null || fail "dpkg --purge"
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q installed &&
		fail "$p is still installed"
done
ok

if [ $status -eq 0 ]; then
	echo "packaging: $checks passed, 0 failed (exposure $score)"
else
	echo "packaging: FAILED"
fi
exit $status
