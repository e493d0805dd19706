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
# Nodes open with "NAME {", globals follow "global:", "local:" ends them.
awk '
/^[ \t]*LIBSHPMU_[0-9.]+[ \t]*\{/ {
	node = $1; sub(/\{.*/, "", node)
	ver = node; sub(/^LIBSHPMU_/, "", ver)
	print node "@" node " " ver ".0"
	global = 0; next
}
/^[ \t]*global:/ { global = 1; next }
/^[ \t]*local:/ { global = 0; next }
/^[ \t]*\}/ { node = ""; next }
node != "" && global && /^[ \t]*[A-Za-z_][A-Za-z0-9_]*;/ {
	sym = $1; sub(/;.*/, "", sym)
	print sym "@" node " " ver ".0"
}' "$map" | LC_ALL=C sort | sed 's/^/ /'
