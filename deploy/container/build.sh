#!/bin/sh
# Builds shpmu-exporter's image without a registry, as root, with podman
# and mmdebstrap:
#   deploy/container/build.sh DEBS_DIR [IMAGE]
# 1. The base, localhost/shpmu-debian-base:CODENAME (this machine's
#    Debian release, which the .debs were built on), unless it is there
#    already: a minimal root filesystem made by mmdebstrap from the apt
#    sources this machine uses, without documentation, imported with
#    podman import.
# 2. The image: Containerfile, beside this script, on that base, with the
#    libshpmu0 and shpmu-exporter .debs of DEBS_DIR (dpkg-buildpackage -b
#    makes them; tests/packaging/build-debs.sh DIR does it from this
#    tree). IMAGE defaults to localhost/shpmu-exporter:VERSION, the
#    packages' version, the name deploy/kubernetes/daemonset.yaml uses.
# podman's settings for this machine (runtime, ulimits) come from its
# containers.conf (CONTAINERS_CONF names another).
set -eu
here=$(cd "$(dirname "$0")" && pwd)

usage() {
	echo "usage: $0 DEBS_DIR [IMAGE]" >&2
	exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
debs=$1
for tool in podman mmdebstrap dpkg-deb; do
	command -v "$tool" >/dev/null || {
		echo "$0: no $tool (Debian: apt-get install podman mmdebstrap)" >&2
		exit 1
	}
done
lib=$(ls "$debs"/libshpmu0_*.deb 2>/dev/null | tail -1)
exporter=$(ls "$debs"/shpmu-exporter_*.deb 2>/dev/null | tail -1)
if [ -z "$lib" ] || [ -z "$exporter" ]; then
	echo "$0: no libshpmu0 and shpmu-exporter .debs in $debs" >&2
	exit 1
fi
version=$(dpkg-deb -f "$exporter" Version)
image=${2:-localhost/shpmu-exporter:$version}

# The .debs depend on libraries of the release they were built on.
. /etc/os-release
codename=${VERSION_CODENAME:-}
if [ "${ID:-}" != debian ] || [ -z "$codename" ]; then
	echo "$0: not a Debian machine: make a base of the release the .debs" \
		"were built on and pass it as --build-arg BASE=" >&2
	exit 1
fi
base=localhost/shpmu-debian-base:$codename

if ! podman image exists "$base"; then
	# The apt sources this machine reaches Debian through (mmdebstrap
	# reads a sources file given as its mirror).
	sources=
	for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
		if [ -s "$f" ] && grep -q '^[^#]' "$f"; then
			sources=$f
			break
		fi
	done
	[ -n "$sources" ] || {
		echo "$0: no apt sources in /etc/apt" >&2
		exit 1
	}
	echo "base: $base (mmdebstrap $codename from $sources)"
	log=$(mktemp)
	status=$(mktemp)
	# A pipeline's status is its last command's: mmdebstrap's is kept.
	if { mmdebstrap --variant=minbase \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-include=/usr/share/doc/*/copyright' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		"$codename" - "$sources" </dev/null 2>"$log"; echo $? >"$status"; } |
		podman import \
			--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
			- "$base" >/dev/null 2>>"$log" &&
		[ "$(cat "$status")" = 0 ]; then
		rm -f "$log" "$status"
	else
		tail -20 "$log"
		podman rmi "$base" >/dev/null 2>&1 || true
		rm -f "$log" "$status"
		echo "$0: making the base failed" >&2
		exit 1
	fi
fi

# The context: the Containerfile and the two packages, nothing else.
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cp "$here/Containerfile" "$lib" "$exporter" "$ctx/"
echo "image: $image (on $base)"
# The host's network for apt in the RUN step: a build needs no network
# of its own, and podman's needs plugins that may not be installed.
podman build --pull=never --layers=false --network=host \
	--build-arg "BASE=$base" -t "$image" -f "$ctx/Containerfile" "$ctx"
