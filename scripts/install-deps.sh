#!/bin/sh
# Installs what libshpmu needs to build and test on Debian 12 (as root).
set -eu
# podman (with crun), runc (where crun refuses a hybrid cgroup host),
# mmdebstrap and python3-yaml: the container stage and the manifests'
# test (tests/container/run.sh, tests/test_manifests.py). collectd-core
# (the daemon and its plugins, no service started) and collectd-dev: the
# collectd plugin and its stage. The Python binding: its wheel (setuptools,
# wheel), a venv to install it in, pytest, mypy and black; its Debian
# package (dh-python, pybuild-plugin-pyproject).
packages="gcc meson ninja-build pkg-config binutils libcriterion-dev libmount-dev libpfm4-dev linux-perf python3 libpapi-dev valgrind clang
libclang-rt-14-dev libbpf-dev bpftool clang-format libmicrohttpd-dev prometheus
golang-go
debhelper dpkg-dev build-essential fakeroot lintian scdoc mandoc man-db
systemd libcap2-bin util-linux curl
podman runc mmdebstrap python3-yaml
collectd-core collectd-dev
python3-pytest python3-venv python3-pip python3-setuptools python3-wheel mypy black
dh-python pybuild-plugin-pyproject python3-all"
missing=
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends $missing
fi
