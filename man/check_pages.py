#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks the generated man pages, so that they cannot fall behind.

  check_pages.py lint MANDOC PAGE...  mandoc -T lint says nothing
  check_pages.py api HEADER PAGE      every SHPMU_API call is in PAGE
  check_pages.py options TOOL PAGE    every long option of TOOL --help is
"""
import re
import subprocess
import sys


def page_text(path):
    """The page's words, without roff's escapes (scdoc puts \\& after
    every period)."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    text = re.sub(r'\\f[BIRP]', '', text)
    return text.replace('\\&', '').replace('\\-', '-').replace('\\e', '\\')


def lint(mandoc, pages):
    out = subprocess.run([mandoc, '-T', 'lint', '-W', 'warning'] + pages,
                         capture_output=True, text=True)
    said = (out.stdout + out.stderr).strip()
    if said:
        print(said)
        return 1
    return 0


def api(header, page):
    with open(header, encoding='utf-8') as f:
        names = re.findall(r'^SHPMU_API\b[^(]*?\b(shpmu_\w+)\s*\(', f.read(),
                           re.M)
    text = page_text(page)
    missing = [n for n in names if not re.search(r'\b%s\b' % n, text)]
    for n in missing:
        print('%s: %s is not documented' % (page, n))
    if not names:
        print('%s: no SHPMU_API call found' % header)
        return 1
    return 1 if missing else 0


def options(tool, page):
    # --help exits 0 or 2 and may print to either stream.
    out = subprocess.run([tool, '--help'], capture_output=True, text=True)
    helps = set(re.findall(r'(?<![\w-])--[a-z][\w.-]*[a-z]',
                           out.stdout + out.stderr))
    text = page_text(page)
    missing = sorted(o for o in helps if not re.search(
        re.escape(o) + r'(?![\w.-]*[a-z])', text))
    for o in missing:
        print('%s: %s --help has %s' % (page, tool, o))
    if not helps:
        print('%s --help printed no long option' % tool)
        return 1
    return 1 if missing else 0


def main(argv):
    if len(argv) >= 3 and argv[1] == 'lint':
        return lint(argv[2], argv[3:])
    if len(argv) == 4 and argv[1] == 'api':
        return api(argv[2], argv[3])
    if len(argv) == 4 and argv[1] == 'options':
        return options(argv[2], argv[3])
    print(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
