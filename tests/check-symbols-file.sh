#!/bin/sh
# debian/libshpmu0.symbols must be what scripts/gen-symbols.sh makes of the
# version script: a node or symbol added to the map without it would make
# the package build fail (or its dependencies too loose).
#   tests/check-symbols-file.sh SOURCE_ROOT
set -eu
root=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$root/scripts/gen-symbols.sh" "$root/lib/libshpmu.map" >"$out"
diff -u "$root/debian/libshpmu0.symbols" "$out" || {
	echo "FAIL: debian/libshpmu0.symbols is stale; regenerate it:"
	echo "  scripts/gen-symbols.sh >debian/libshpmu0.symbols"
	exit 1
}
echo "debian/libshpmu0.symbols matches lib/libshpmu.map"
