#!/bin/sh
# The header, the version script and the library's exports must name the
# same functions: a symbol missing from the map is silently hidden, and one
# missing from the header is an export nobody can call.
set -eu
header=$1 map=$2 lib=$3
NM=${NM:-nm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Declarations look like "SHPMU_API <type> [*]name(".
sed -n 's/^SHPMU_API[^(]*[ *]\(shpmu_[a-z0-9_]*\)(.*/\1/p' "$header" |
	sort >"$tmp/header"
sed -n 's/^[[:space:]]*\(shpmu_[a-z0-9_]*\);/\1/p' "$map" | sort >"$tmp/map"
"$NM" -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' |
	sed 's/@.*//' | sort >"$tmp/lib"

status=0
for pair in "header map" "map lib"; do
	set -- $pair
	if ! diff -u "$tmp/$1" "$tmp/$2"; then
		echo "FAIL: $1 and $2 disagree" >&2
		status=1
	fi
done
[ -s "$tmp/header" ] || { echo "FAIL: no SHPMU_API declarations found"; status=1; }
echo "$(wc -l <"$tmp/lib") exported symbols checked"
exit $status
