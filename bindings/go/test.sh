#!/bin/sh
# Tests the Go binding the way a Go agent builds it: installs libshpmu into
# a private prefix, builds the module against it through pkg-config, and
# runs gofmt, go vet, go test -race (accuracy against private raw events,
# bad input, many goroutines, every Example, shpmu-top, the README's table
# of Go signatures against the source: internal/readme) and the overhead
# benchmark against C (figures printed, not judged: see the README).
set -eu
cd "$(dirname "$0")/../.."
if ! command -v go >/dev/null 2>&1; then
	echo "go: skipped: no Go toolchain (scripts/install-deps.sh installs golang-go)"
	exit 0
fi
prefix=$(pwd)/_install-go
scripts/install-prefix.sh build-install-go "$prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig" LD_LIBRARY_PATH="$prefix/lib"
# Nothing to download (standard library only); caches stay in the tree
# when the environment names none.
export GOPROXY=off GOFLAGS=-buildvcs=false
[ -n "${GOCACHE:-}${HOME:-}${XDG_CACHE_HOME:-}" ] ||
	export GOCACHE="$(pwd)/build-go/cache"
cd bindings/go
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "gofmt: not formatted: $unformatted" >&2
	exit 1
fi
go vet ./...
go test -race -count=1 ./...
go test -count=1 -run '^$' -bench Overhead -benchtime 1x ./shpmu
