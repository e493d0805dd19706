#!/bin/sh
# The exporter's image, built without a registry and run as the DaemonSet
# runs it. Root.
#   tests/container/run.sh [DEBS_DIR]
# DEBS_DIR holds the .debs tests/packaging/run.sh kept; without it they
# are built here (tests/packaging/build-debs.sh).
#  1. deploy/container/build.sh: a Debian base made by mmdebstrap from the
#     apt mirror and imported, then the Containerfile with the .debs,
#     tagged as deploy/kubernetes/daemonset.yaml's image;
#  2. the image's config: its ENTRYPOINT the exporter, its EXPOSE the
#     DaemonSet's port, its user 0;
#  3. shpmu-exporter --help in it;
#  4. the exporter in a container made from the DaemonSet's container
#     (tests/container/podman_args.py): its capabilities (all dropped but
#     PERFMON and BPF), no_new_privs, read-only root, uid and mounts (the
#     node's cgroup hierarchy read-only; empty log directories, this
#     being no Kubernetes node), its arguments, a cgroup namespace and a
#     network namespace of its own, and the seccomp profile of a current
#     runtime. One scrape from outside, through its network namespace:
#     promtool check metrics clean, per-CPU series, and per-cgroup series
#     of a pod and a container cgroup made here as the kubelet names
#     them, the container's with the CPU time of a loop run in it. It
#     stops on SIGTERM with status 0;
#  5. the same in host scope (deploy/kubernetes/host-scope) on a BPF
#     filesystem mounted here: the domain is pinned while it runs, and
#     nothing is left of it after SIGTERM.
# Where podman or mmdebstrap is missing, or podman cannot run a container
# here, it says why and skips (exit 0). What it made (containers, images,
# cgroups, mounts, files) goes, on failure too; it will not run where the
# image's name is taken already.
set -eu
cd "$(dirname "$0")/../.."
root=$(pwd)
debs_in=${1:-}

skip() {
	echo "container: SKIP: $*"
	exit 0
}
[ "$(id -u)" = 0 ] || skip "needs root (podman, cgroups, a BPF filesystem)"
for tool in podman:podman mmdebstrap:mmdebstrap nsenter:util-linux \
	curl:curl promtool:prometheus; do
	command -v "${tool%%:*}" >/dev/null ||
		skip "no ${tool%%:*} (Debian: ${tool#*:}; scripts/install-deps.sh installs it)"
done
# python3-yaml is Debian's: Debian's python3 where the first in PATH (a
# python3 of its own) has no yaml module.
py=python3
python3 -c 'import yaml' 2>/dev/null || py=/usr/bin/python3
"$py" -c 'import yaml' 2>/dev/null ||
	skip "no python3-yaml (scripts/install-deps.sh installs it)"

# One run at a time: they share the base image.
exec 9>/run/lock/shpmu-container-test.lock
flock 9

deploy=$root/deploy/kubernetes
# The DaemonSet's image under a tag of this run's own: a user's image of
# that name is never replaced, and one a killed run left never stops the
# next.
image=$("$py" tests/container/podman_args.py image "$deploy")
image=${image%:*}:test-$$
. /etc/os-release
base=localhost/shpmu-debian-base:${VERSION_CODENAME:-none}

work=$(mktemp -d)
made_base= containers= burn_pid= cgroups=
cleanup() {
	# A signal now would end the cleanup halfway.
	trap '' INT TERM
	[ -z "$burn_pid" ] || kill "$burn_pid" 2>/dev/null || true
	for c in $containers; do
		podman rm -f -t 0 "$c" >/dev/null 2>&1 || true
	done
	podman rmi -f "$image" >/dev/null 2>&1 || true
	[ -z "$made_base" ] || podman rmi -f "$base" >/dev/null 2>&1 || true
	# Deepest first.
	for cg in $cgroups; do
		rmdir "$cg" 2>/dev/null || true
	done
	if mountpoint -q "$work/bpffs" 2>/dev/null; then
		umount "$work/bpffs" || true
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

# podman's settings for this machine, for build.sh and every run: limits
# no higher than this shell's (raising a hard limit needs
# CAP_SYS_RESOURCE, which a machine may withhold even from root, and
# podman asks for 1048576 files), and a runtime that can run here.
nofile=$(ulimit -Hn)
if [ "$nofile" = unlimited ] || [ "$nofile" -gt 1048576 ]; then
	nofile=1048576
fi
export CONTAINERS_CONF="$work/containers.conf"
write_conf() {
	cat >"$CONTAINERS_CONF" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=4096:4096"]
[engine]
runtime = "$1"
EOF
}

# Can podman run a container here? A root of /bin/true and its libraries
# answers in a second, before the base is made. crun (podman's default)
# refuses a hybrid cgroup host whose cgroup2 hierarchy has a controller;
# runc runs there.
probe=$work/probe
mkdir "$probe"
for f in /bin/true $(ldd /bin/true | grep -o '/[^ ]*'); do
	cp -L --parents "$f" "$probe"
done
runtime= why=
for rt in crun runc; do
	if ! command -v "$rt" >/dev/null; then
		why="$why; $rt: not installed"
		continue
	fi
	write_conf "$rt"
	if podman run --rm --network=none --rootfs "$probe" /bin/true \
		>"$work/probe.log" 2>&1; then
		runtime=$rt
		break
	fi
	why="$why; $rt: $(tr '\n' ' ' <"$work/probe.log")"
done
[ -n "$runtime" ] || skip "podman cannot run a container here${why}"
echo "podman $(podman version -f '{{.Client.Version}}') with $runtime"

# 1. The image.
if [ -z "$debs_in" ]; then
	debs_in=$work/debs
	mkdir "$debs_in"
	tests/packaging/build-debs.sh "$debs_in"
fi
podman image exists "$base" || made_base=1
start=$(date +%s)
if ! deploy/container/build.sh "$debs_in" "$image" >"$work/build.log" 2>&1; then
	tail -30 "$work/build.log"
	echo "FAIL: deploy/container/build.sh $debs_in $image"
	exit 1
fi
grep -E '^(base|image):' "$work/build.log"
echo "built in $(($(date +%s) - start)) s: $(podman image inspect -f '{{.Size}}' "$image" |
	awk '{printf "%.0f MB", $1 / 1e6}')"
ok

# 2. Its config, as the DaemonSet expects it.
port=$("$py" - "$deploy" <<'EOF'
import sys
sys.path.insert(0, 'tests')
import manifests
ds = manifests.one(manifests.kustomize(sys.argv[1]), 'DaemonSet', '')
print(manifests.exporter_container(ds)['ports'][0]['containerPort'])
EOF
)
config=$(podman image inspect -f '{{json .Config}}' "$image")
"$py" - "$config" "$port" <<'EOF' || fail "the image's config"
import json, sys
c, port = json.loads(sys.argv[1]), sys.argv[2]
bad = []
if c.get('Entrypoint') != ['/usr/bin/shpmu-exporter']:
    bad.append(f"Entrypoint {c.get('Entrypoint')}")
if f'{port}/tcp' not in (c.get('ExposedPorts') or {}):
    bad.append(f"ExposedPorts {c.get('ExposedPorts')}, not {port}/tcp")
if c.get('User') not in ('0', '0:0', 'root', ''):
    bad.append(f"User {c.get('User')}")
for b in bad:
    print('image config: ' + b)
sys.exit(1 if bad else 0)
EOF
ok

# 3. --help, from the image's own exporter.
if podman run --rm --network=none --pull=never "$image" --help \
	>"$work/help" 2>&1 && grep -q '^usage: shpmu-exporter' "$work/help"; then
	ok
else
	cat "$work/help"
	fail "shpmu-exporter --help in the image"
fi

# 4. The DaemonSet's container, scraped once.
# The seccomp profile: the runtime's default where it lets bpf(2) and
# perf_event_open(2) through with CAP_BPF and CAP_PERFMON; older ones
# (containers-common before its change of October 2025) gate them on
# CAP_SYS_ADMIN, so the test runs with what containerd's and Docker's
# defaults allow (docs/kubernetes.md says which).
seccomp=
if "$py" tests/container/podman_args.py seccomp \
	/usr/share/containers/seccomp.json "$work/seccomp.json" 2>"$work/seccomp.log"; then
	seccomp=--security-opt=seccomp=$work/seccomp.json
fi
cat "$work/seccomp.log"

cgroot=$(findmnt -n -t cgroup2 -o TARGET /sys/fs/cgroup 2>/dev/null ||
	findmnt -n -t cgroup2 -o TARGET | head -1)
if [ -z "$cgroot" ]; then
	echo "FAIL: no cgroup2 mount: no pod cgroups to make"
	exit 1
fi
# A pod and its container as the kubelet's systemd driver names them,
# below a slice of their own (the kubelet's --cgroup-root).
top=shpmuctest$$
uid=5f1d2c3b_8e4a_4b6c_9d0e_1a2b3c4d5e6f
cid=$(printf '%064x' $$)
path=/$top.slice/$top-kubepods.slice/$top-kubepods-besteffort.slice
pod=$path/$top-kubepods-besteffort-pod$uid.slice
ctr=$pod/cri-containerd-$cid.scope
cgroups="$cgroot$ctr $cgroot$pod $cgroot$path $cgroot/$top.slice/$top-kubepods.slice $cgroot/$top.slice"
mkdir -p "$cgroot$ctr"

# Its logs as the kubelet lays them out, which name it: namespace
# shpmu-test, pod web-0, container app. Without a link in
# /var/log/containers a container of a pod is taken for its sandbox.
mkdir "$work/pods" "$work/containers"
logs=shpmu-test_web-0_$(echo "$uid" | tr _ -)
mkdir -p "$work/pods/$logs/app"
: >"$work/pods/$logs/app/0.log"
ln -s "/var/log/pods/$logs/app/0.log" \
	"$work/containers/web-0_shpmu-test_app-$cid.log"
# run_exporter DIR NAME [MOUNTPATH=HOSTDIR...]: the DaemonSet's container
# of DIR, started as NAME; its pid in $pid.
run_exporter() {
	dir=$1 name=$2
	shift 2
	"$py" tests/container/podman_args.py args "$dir" "$work/help" \
		>"$work/args" 2>"$work/args.note"
	sed 's/^/  /' "$work/args.note"
	"$py" tests/container/podman_args.py options "$dir" \
		/var/log/pods="$work/pods" \
		/var/log/containers="$work/containers" "$@" >"$work/options"
	containers="$containers $name"
	(
		IFS='
'
		set -f
		# shellcheck disable=SC2046,SC2086
		podman run -d --name "$name" --pull=never --network=none \
			--cgroupns=private $seccomp \
			$(cat "$work/options") "$image" $(cat "$work/args") >/dev/null
	) || return 1
	pid=$(podman inspect -f '{{.State.Pid}}' "$name")
	echo "  $(tr '\n' ' ' <"$work/args")"
}
# scrape NAME FILE: /metrics through the container's network namespace,
# waiting for it to listen (30 s at most: a loaded machine loads the BPF
# program slowly).
scrape() {
	i=0
	while [ $i -lt 120 ]; do
		if nsenter --net="/proc/$pid/ns/net" \
			curl -sf -m 20 "http://127.0.0.1:$port/metrics" -o "$2" 2>/dev/null; then
			return 0
		fi
		[ "$(podman inspect -f '{{.State.Running}}' "$1")" = true ] || break
		sleep 0.25
		i=$((i + 1))
	done
	podman logs "$1" 2>&1 | tail -20
	return 1
}
# stop NAME: SIGTERM, and the exporter's exit status.
stop() {
	podman stop -t 10 "$1" >/dev/null
	code=$(podman inspect -f '{{.State.ExitCode}}' "$1")
	[ "$code" = 0 ] || {
		podman logs "$1" 2>&1 | tail -20
		fail "$1 exited $code after SIGTERM"
	}
}
# check_page FILE WHAT: promtool clean, per-CPU series, the pod's and the
# container's series.
check_page() {
	promtool check metrics <"$1" >"$work/promtool" 2>&1 ||
		{ cat "$work/promtool"; fail "$2: promtool check metrics"; }
	grep -q '^shpmu_cpu_events_total{cpu="' "$1" ||
		fail "$2: no per-CPU series"
	for cg in "$pod" "$ctr"; do
		grep -q "^shpmu_cgroup_[a-z_]*_total{cgroup=\"$cg\"" "$1" ||
			fail "$2: no series of $cg (shpmu_cgroups $(sed -n \
				's/^shpmu_cgroups\(_left_out\)* //p' "$1" | tr '\n' ' '))"
	done
	# The kubelet's names, where this exporter reads them.
	if grep -q -- '--kubernetes.logs-dir' "$work/help"; then
		for label in 'namespace="shpmu-test"' 'pod="web-0"' \
			'container="app"'; do
			grep "^shpmu_cgroup_[a-z_]*_total{cgroup=\"$ctr\"" "$1" |
				grep -q -F "$label" ||
				fail "$2: $ctr's series have no $label"
		done
	fi
}

echo "the DaemonSet's container:"
name=shpmu-ctest-$$
if run_exporter "$deploy" "$name" && scrape "$name" "$work/first.prom"; then
	# A loop in the container's cgroup while the exporter counts it.
	sh -c 'echo $$ >"$1/cgroup.procs" && i=0 &&
		while [ $i -lt 200000 ]; do i=$((i + 1)); done' sh "$cgroot$ctr" &
	burn_pid=$!
	wait "$burn_pid" || fail "the loop in $ctr"
	burn_pid=
	scrape "$name" "$work/page.prom" || fail "the second scrape"
	check_page "$work/page.prom" "the DaemonSet's container"
	# (The kubelet's names and the path's labels lie between the two.)
	ns=$(sed -n "s|^shpmu_cgroup_clock_seconds_total{cgroup=\"$ctr\",.*event=\"task-clock\"} \(.*\)|\1|p" \
		"$work/page.prom")
	echo "  $(wc -c <"$work/page.prom") bytes; $ctr: task-clock ${ns:-none} s"
	awk -v v="${ns:-0}" 'BEGIN { exit !(v > 0) }' ||
		fail "the loop's CPU time was not counted in $ctr"
	stop "$name"
	ok
else
	fail "the DaemonSet's container did not serve /metrics"
fi

# 5. Host scope, on a BPF filesystem of this test's own.
echo "host scope (deploy/kubernetes/host-scope):"
mkdir "$work/bpffs"
if ! mount -t bpf bpf "$work/bpffs" 2>"$work/mount.log"; then
	echo "  SKIP: mount -t bpf: $(cat "$work/mount.log")"
else
	# What the kubelet's DirectoryOrCreate makes: root's, 0755.
	mkdir -m 0755 "$work/bpffs/shpmu"
	name=shpmu-ctest-host-$$
	if run_exporter "$deploy/host-scope" "$name" \
		/host/sys/fs/bpf/shpmu="$work/bpffs/shpmu" &&
		scrape "$name" "$work/host.prom"; then
		check_page "$work/host.prom" "host scope"
		domain=$(ls -d "$work"/bpffs/shpmu/layout-*/default 2>/dev/null || true)
		[ -n "$domain" ] && [ -e "$domain/prog" ] ||
			fail "host scope: no domain pinned in the BPF filesystem"
		echo "  pinned: ${domain#"$work/bpffs"/}: $(ls "$domain" 2>/dev/null | wc -l) entries"
		stop "$name"
		left=$(find "$work/bpffs/shpmu" -mindepth 1 | head -5)
		[ -z "$left" ] || fail "host scope left in bpffs: $left"
		ok
	else
		fail "host scope: the container did not serve /metrics"
	fi
fi

if [ $status -eq 0 ]; then
	echo "container: $checks passed, 0 failed"
else
	echo "container: FAILED"
fi
exit $status
