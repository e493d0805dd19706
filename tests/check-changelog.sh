#!/bin/sh
# The Debian package's version is the project's: dpkg needs it written in
# debian/changelog, so this checks it follows project() in meson.build
# (a native package: no Debian revision).
#   tests/check-changelog.sh CHANGELOG VERSION
set -eu
got=$(sed -n '1s/^libshpmu (\([^)]*\)).*/\1/p' "$1")
if [ "$got" != "$2" ]; then
	echo "FAIL: debian/changelog is at '$got', meson.build at '$2':" \
		"add a changelog entry for $2 (dch -v $2)"
	exit 1
fi
echo "debian/changelog at $got, as meson.build"
