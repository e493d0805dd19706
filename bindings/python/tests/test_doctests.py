# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Every example in the package's docstrings runs and gives what it
shows, against the installed package."""

from __future__ import annotations

import doctest
import errno
import importlib
import pkgutil
import time

import pytest

import shpmu

MODULES = sorted(
    ["shpmu"]
    + [f"shpmu.{m.name}" for m in pkgutil.iter_modules(shpmu.__path__) if m.name != "__main__"]
)


@pytest.mark.parametrize("name", MODULES)
def test_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(
        module,
        extraglobs={"shpmu": shpmu, "time": time, "errno": errno},
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        report=True,
    )
    assert result.failed == 0


def test_there_are_examples() -> None:
    finder = doctest.DocTestFinder()
    found = sum(len(t.examples) for n in MODULES for t in finder.find(importlib.import_module(n)))
    assert found >= 20, found
