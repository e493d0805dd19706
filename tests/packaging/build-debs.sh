#!/bin/sh
# Builds the project's Debian packages from a copy of the tree as git
# sees it (tracked and new files, not ignored builds):
#   tests/packaging/build-debs.sh DIR
# DIR (which must exist) gets the copy (DIR/libshpmu), the .debs, the
# .changes and the build's log (DIR/build.log, whose last lines are
# printed on failure).
set -eu
out=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.."
mkdir "$out/libshpmu"
git ls-files -z --cached --others --exclude-standard |
	xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\n" "$f"; done' sh |
	tar -cf - -T - | tar -xf - -C "$out/libshpmu"

echo "building the packages (log: the last lines on failure)"
# With the system's tools only, as a build chroot has them: pybuild runs
# the python3.X first on PATH, which must be Debian's.
(cd "$out/libshpmu" && PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 || {
	tail -40 "$out/build.log"
	echo "FAIL: dpkg-buildpackage"
	exit 1
}
