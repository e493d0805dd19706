#!/bin/sh
# What a release promised stays so: every call of a released symbol
# version node (lib/abi/released) is still in that node of the version
# script, no call was added to a released node (a new call needs a new
# node), and the newest node is either released or named after the
# project's version (the one place it is written: project() in
# meson.build). The self-test runs it on broken copies of the map and
# expects each to fail.
#   tests/check-abi.sh MAP RELEASED VERSION
#   tests/check-abi.sh --self-test MAP RELEASED VERSION
set -eu
map_symbols="$(dirname "$0")/../scripts/map-symbols.sh"

# check MAP RELEASED VERSION (its names are its own: the self-test calls
# it with its own map in between)
check() {
	cmap=$1 creleased=$2 cversion=$3
	tmp=$(mktemp -d)
	status=0
	"$map_symbols" "$cmap" | sort >"$tmp/map"
	grep -v '^#' "$creleased" | sort >"$tmp/released"
	cut -d' ' -f2 "$tmp/released" | sort -u >"$tmp/released-nodes"
	# Calls of released nodes, as the map has them now.
	awk 'NR == FNR { done[$1] = 1; next } done[$2]' \
		"$tmp/released-nodes" "$tmp/map" >"$tmp/map-released"
	if ! diff -u "$tmp/released" "$tmp/map-released" >"$tmp/diff"; then
		echo "FAIL: a released symbol version node changed" \
			"(+ added to it, - removed from it):"
		sed -n 's/^\([+-]shpmu\)/  \1/p' "$tmp/diff"
		echo "  A call added after a release goes into a new node" \
			"LIBSHPMU_<next version>, with project()'s version raised to it."
		status=1
	fi
	cnewest=$("$map_symbols" --nodes "$cmap" | tail -n 1)
	want="LIBSHPMU_$(echo "$cversion" | cut -d. -f1-2)"
	if ! grep -qx "$cnewest" "$tmp/released-nodes" && [ "$cnewest" != "$want" ]; then
		echo "FAIL: the newest node $cnewest is not released and not" \
			"$want, the node of version $cversion (meson.build)"
		status=1
	fi
	if [ $status -eq 0 ]; then
		echo "abi: $(wc -l <"$tmp/map") calls checked against" \
			"$(wc -l <"$tmp/released-nodes") released nodes"
	fi
	rm -rf "$tmp"
	return $status
}

if [ "${1:-}" = --self-test ]; then
	shift
	map=$1 released=$2 version=$3
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	fails=0
	expect_fail() {
		if check "$work/map" "$released" "$2" >"$work/out" 2>&1; then
			echo "FAIL: the check passed $1"
			fails=1
		else
			echo "ok: refused $1"
		fi
	}
	# A new call in the newest released node (the map's newest node may
	# be the next version's, not released yet).
	grep -v '^#' "$released" | cut -d' ' -f2 | sort -u >"$work/released"
	newest=$("$map_symbols" --nodes "$map" | grep -Fx -f "$work/released" |
		tail -n 1)
	last=$("$map_symbols" --nodes "$map" | tail -n 1)
	awk -v node="$newest" '$1 == node { print; getline; print;
		print "\t\tshpmu_added_later;"; next } { print }' "$map" >"$work/map"
	expect_fail "a call added to released node $newest" "$version"
	# A call taken out of a released node.
	grep -v 'shpmu_read_many;' "$map" >"$work/map"
	expect_fail "a released call removed" "$version"
	# A new node that is not the project's version.
	{ cat "$map"; printf 'LIBSHPMU_9.9 {\n\tglobal:\n\t\tshpmu_added_later;\n} %s;\n' "$last"; } >"$work/map"
	expect_fail "a new node LIBSHPMU_9.9 while the version is $version" "$version"
	# The same new node is right once the version is raised to it.
	if check "$work/map" "$released" 9.9.0 >"$work/out" 2>&1; then
		echo "ok: accepted LIBSHPMU_9.9 at version 9.9.0"
	else
		echo "FAIL: refused a new node named after the version:"
		cat "$work/out"
		fails=1
	fi
	exit $fails
fi

[ $# -eq 3 ] || {
	echo "usage: $0 [--self-test] MAP RELEASED VERSION" >&2
	exit 2
}
check "$@"
