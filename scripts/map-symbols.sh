#!/bin/sh
# Reads the version script: prints "NAME NODE" for every global symbol of
# every node, in the map's order, or with --nodes each node's name, oldest
# first. The one reader of lib/libshpmu.map for the checks
# (tests/check-symbols.sh, tests/check-abi.sh) and the Debian symbols file
# (scripts/gen-symbols.sh).
#   scripts/map-symbols.sh [--nodes] MAP
set -eu
what=symbols
if [ "${1:-}" = --nodes ]; then
	what=nodes
	shift
fi
[ $# -eq 1 ] && [ -r "$1" ] || {
	echo "usage: $0 [--nodes] MAP (a readable version script)" >&2
	exit 2
}
# Nodes open with "NAME {", globals follow "global:", "local:" ends them.
awk -v what="$what" '
/^[ \t]*LIBSHPMU_[0-9.]+[ \t]*\{/ {
	node = $1; sub(/\{.*/, "", node)
	if (what == "nodes") print node
	global = 0; next
}
/^[ \t]*global:/ { global = 1; next }
/^[ \t]*local:/ { global = 0; next }
/^[ \t]*\}/ { node = ""; next }
what == "symbols" && node != "" && global &&
    /^[ \t]*[A-Za-z_][A-Za-z0-9_]*;/ {
	sym = $1; sub(/;.*/, "", sym)
	print sym " " node
}' "$1"
