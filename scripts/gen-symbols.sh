#!/bin/sh
# Prints debian/libshpmu0.symbols from the version script: each node's
# symbols at that node's version (LIBSHPMU_0.2 -> 0.2.0), a symbol listed
# in two nodes once per node, and the node itself as dpkg-gensymbols
# lists it. Sorted as dpkg-gensymbols writes them, so a diff is real.
#   scripts/gen-symbols.sh [lib/libshpmu.map]
set -eu
map=${1:-"$(dirname "$0")/../lib/libshpmu.map"}
[ -r "$map" ] || {
	echo "$0: cannot read $map" >&2
	exit 2
}
echo "libshpmu.so.0 libshpmu0 #MINVER#"
echo "* Build-Depends-Package: libshpmu-dev"
symbols="$(dirname "$0")/map-symbols.sh"
{
	"$symbols" --nodes "$map" | awk '{ v = $1; sub(/^LIBSHPMU_/, "", v)
		print $1 "@" $1 " " v ".0" }'
	"$symbols" "$map" | awk '{ v = $2; sub(/^LIBSHPMU_/, "", v)
		print $1 "@" $2 " " v ".0" }'
} | LC_ALL=C sort | sed 's/^/ /'
