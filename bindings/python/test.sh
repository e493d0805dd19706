#!/bin/sh
# Tests the Python binding the way a user gets it: libshpmu installed into
# a private prefix, the wheel built from pyproject.toml (Debian's
# setuptools, offline) and installed into a private venv, then pytest
# from there (accuracy against raw twins, bad input, 8 threads and a
# close, every docstring example, python3 -m shpmu stat against
# shpmu-stat, the structs against the header), mypy --strict and black.
# Where the sanitizer build exists (build-asan, scripts/test.sh's ASan
# stage), the threads, API and bad-input tests run again on it.
set -eu
cd "$(dirname "$0")/../.."
py=/usr/bin/python3
root=$(pwd)
work=$root/build-python
prefix=$root/_install-python
scripts/install-prefix.sh build-install-python "$prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig" LD_LIBRARY_PATH="$prefix/lib"
export SHPMU_STAT="$prefix/bin/shpmu-stat" PYTHONDONTWRITEBYTECODE=1

rm -rf "$work"
mkdir -p "$work"
# Built from a copy: setuptools writes build/ and egg-info/ beside it.
cp -r bindings/python "$work/src"
$py -m pip wheel -q --no-build-isolation --no-deps --no-index \
	-w "$work/dist" "$work/src"
# Debian's pytest comes from the system's site-packages.
$py -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install -q --no-index --no-deps "$work"/dist/shpmu-*.whl
venv_py=$work/venv/bin/python
cd "$work"
$venv_py -c 'import shpmu, sys; p = shpmu.__file__
sys.exit(0 if "/venv/" in p else "shpmu imported from " + p)'
$venv_py -m pytest -q -p no:cacheprovider "$root/bindings/python/tests"
cd "$root/bindings/python"
if command -v mypy >/dev/null 2>&1; then
	MYPYPATH=src mypy --strict --cache-dir "$work/mypy" src/shpmu tests bench examples
fi
if command -v black >/dev/null 2>&1; then
	black --check -q src tests bench examples
fi

asan_lib=$root/build-asan/libshpmu.so.0
if [ -e "$asan_lib" ]; then
	echo "python: threads, API and bad input on the ASan build"
	cd "$work"
	# Python's own allocations outlive it at exit: leaks are the C
	# suites' to find; here ASan catches what a close under readers
	# would touch after it is freed.
	LD_PRELOAD=$(gcc -print-file-name=libasan.so) SHPMU_LIBRARY=$asan_lib \
		ASAN_OPTIONS=detect_leaks=0 \
		$venv_py -m pytest -q -p no:cacheprovider \
		"$root/bindings/python/tests/test_threads.py" \
		"$root/bindings/python/tests/test_api.py" \
		"$root/bindings/python/tests/test_bad_input.py"
fi
