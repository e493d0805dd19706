# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""python3 -m shpmu COMMAND: ``stat`` counts events like shpmu-stat."""

from __future__ import annotations

import sys

from . import stat

USAGE = "usage: python3 -m shpmu stat [options] [-- command [args]]"


def main(argv: list[str]) -> int:
    if argv[:1] == ["stat"]:
        return stat.run(argv[1:])
    print(USAGE, file=sys.stderr)
    return 0 if argv[:1] in (["-h"], ["--help"]) else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
