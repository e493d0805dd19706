#!/bin/sh
# The unit tests given (host scope's books and their repair) need no
# root. The suites run as root, so this runs them again as nobody
# (setpriv), from a copy nobody can run whatever the modes of the build
# directory.
set -eu
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: not root: suite unit ran them unprivileged already"
	exit 77
fi
if ! command -v setpriv >/dev/null; then
	echo "SKIP: no setpriv (util-linux) to drop root with"
	exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
status=0
for t in "$@"; do
	name=$(basename "$t")
	cp "$t" "$dir/$name"
	if (cd "$dir" && setpriv --reuid=65534 --regid=65534 --clear-groups \
		"./$name" --jobs=1 --verbose=0); then
		echo "ok: $name as nobody"
	else
		echo "FAIL: $name as nobody"
		status=1
	fi
done
exit $status
