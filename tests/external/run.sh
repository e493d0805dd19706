#!/bin/sh
# Installs libshpmu into a private prefix and builds tests/external/consumer.c
# against it the way an agent would: pkg-config, shared and static.
set -eu
cd "$(dirname "$0")/../.."
prefix=$(pwd)/_install
scripts/install-prefix.sh build-install "$prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

cc -Wall -Werror tests/external/consumer.c -o "$out/consumer-shared" \
	$(pkg-config --cflags --libs libshpmu)
cc -Wall -Werror tests/external/consumer.c -o "$out/consumer-static" \
	$(pkg-config --cflags libshpmu) "$prefix/lib/libshpmu.a" \
	$(pkg-config --static --libs-only-l libshpmu | sed 's/-lshpmu//')

status=0
LD_LIBRARY_PATH="$prefix/lib" "$out/consumer-shared" || status=1
"$out/consumer-static" || status=1
# The shared build must really use the installed .so.0.
LD_LIBRARY_PATH="$prefix/lib" ldd "$out/consumer-shared" |
	grep -q "$prefix/lib/libshpmu.so.0" || {
	echo "FAIL: consumer-shared does not load $prefix/lib/libshpmu.so.0"
	status=1
}
# The exporter and its unit are installed, and run from there.
if [ -e "$prefix/bin/shpmu-exporter" ]; then
	LD_LIBRARY_PATH="$prefix/lib" "$prefix/bin/shpmu-exporter" --help |
		grep -q -- --web.listen-address || {
		echo "FAIL: the installed shpmu-exporter does not run"
		status=1
	}
	[ -f "$prefix/lib/systemd/system/shpmu-exporter.service" ] || {
		echo "FAIL: shpmu-exporter.service is not installed"
		status=1
	}
fi
[ $status -eq 0 ] && echo "external: 2 passed, 0 failed" ||
	echo "external: FAILED"
exit $status
