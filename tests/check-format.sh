#!/bin/sh
# Every C file is as the root .clang-format has it (kernel style, tabs, 80
# columns), so formatting is never a review topic: clang-format finds
# nothing to change, and no line passes 80 columns once tabs are expanded.
set -eu
cd "$1"
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
if ! command -v "$CLANG_FORMAT" >/dev/null; then
	echo "SKIP: no clang-format (scripts/install-deps.sh installs it)"
	exit 77
fi
files=$(find include lib tests bench examples tools bindings plugins -name '*.[ch]' | sort)
status=0
for f in $files; do
	"$CLANG_FORMAT" --dry-run --Werror "$f" 2>/dev/null || {
		echo "FAIL: $f differs from .clang-format ($CLANG_FORMAT -i $f)"
		status=1
	}
	expand -t8 "$f" | awk -v f="$f" 'length > 80 {
		print "FAIL: " f ":" NR " has " length " columns"; bad = 1 }
		END { exit bad }' || status=1
done
n=$(echo "$files" | wc -l)
[ $status -eq 0 ] && echo "$n passed, 0 failed" || echo "0 passed, 1 failed"
exit $status
