#!/bin/sh
# Builds libshpmu in BUILD_DIR and installs it into PREFIX (lib/ under it),
# fresh each time, as a user's `meson install` would: what
# tests/external/run.sh and bindings/go/test.sh build against.
#   scripts/install-prefix.sh BUILD_DIR PREFIX
set -eu
[ $# -eq 2 ] || {
	echo "usage: $0 BUILD_DIR PREFIX" >&2
	exit 2
}
cd "$(dirname "$0")/.."
rm -rf "$2" "$1"
meson setup "$1" --prefix="$2" --libdir=lib -Dtests=disabled >/dev/null
meson install -C "$1" >/dev/null
