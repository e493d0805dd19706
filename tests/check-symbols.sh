#!/bin/sh
# The header, the version script and the library's exports must name the
# same functions: a symbol missing from the map is silently hidden, and one
# missing from the header is an export nobody can call. Each name the map
# lists in a version node must be exported with that version (a function
# whose structs grew keeps its old version for binaries linked before).
set -eu
header=$1 map=$2 lib=$3
NM=${NM:-nm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Declarations look like "SHPMU_API <type> [*]name(".
sed -n 's/^SHPMU_API[^(]*[ *]\(shpmu_[a-z0-9_]*\)(.*/\1/p' "$header" |
	sort >"$tmp/header"
# "name@NODE" for every name in every node of the map.
"$(dirname "$0")/../scripts/map-symbols.sh" "$map" | tr ' ' @ |
	sort >"$tmp/map-versioned"
sed 's/@.*//' "$tmp/map-versioned" | sort -u >"$tmp/map"
"$NM" -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' |
	sed 's/@@*/@/' | sort >"$tmp/lib-versioned"

status=0
for pair in "header map" "map-versioned lib-versioned"; do
	set -- $pair
	if ! diff -u "$tmp/$1" "$tmp/$2"; then
		echo "FAIL: $1 and $2 disagree" >&2
		status=1
	fi
done
[ -s "$tmp/header" ] || { echo "FAIL: no SHPMU_API declarations found"; status=1; }
echo "$(wc -l <"$tmp/header") functions, $(wc -l <"$tmp/lib-versioned") versioned exports checked"
exit $status
