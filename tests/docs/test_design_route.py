"""The design notes' route of ``evaluate foreground``'s arguments (docs/design/draw_route.py) names real code.

The route is written down by hand from the code; this keeps its names honest: every stay's function is defined in
the module it names (a renamed or moved function fails here), and the counts the notes print are the route's.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "segmetrics_torch"


def _route_module():
    spec = importlib.util.spec_from_file_location("draw_route", ROOT / "docs" / "design" / "draw_route.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _defined(path: Path) -> set[str]:
    """Top-level functions and classes of a module, and ``Class.method`` for each method."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
            names.update(
                f"{node.name}.{item.name}"
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            )
    return names


DRAW_ROUTE = _route_module()
ROUTE = DRAW_ROUTE.ROUTE


@pytest.mark.parametrize("stay", ROUTE, ids=[f"{s.module}:{s.function}" for s in ROUTE])
def test_every_stay_names_a_function_of_its_module(stay) -> None:
    path = PACKAGE / stay.module
    assert path.is_file(), f"{stay.module} is no module of the package"
    assert stay.function in _defined(path), f"{stay.function} is not defined in {stay.module}"
    if stay.also:  # "OPTION: Class.method", in the same module
        also = stay.also.rpartition(": ")[2]
        assert also in _defined(path), f"{also} is not defined in {stay.module}"


def test_the_counts_in_the_design_notes_are_the_routes() -> None:
    counts = DRAW_ROUTE.counts
    without = tuple(s for s in ROUTE if s.branch != "--html")
    notes = (ROOT / "docs" / "design" / "README.md").read_text(encoding="utf-8")
    n0, m0, r0 = counts(without)
    n, m, r = counts(ROUTE)
    n1, m1, r1 = counts(tuple(s for s in ROUTE if s.read))
    # the rows of "now" in the notes' table, read whole: stays, modules and returns
    assert re.search(
        rf"\| \*\*now \([^)]*\), without the `--html` branch\*\* \| \*\*{n0}\*\* \| {m0} \| \*\*{r0}\*\* \|", notes
    )
    assert f"| now, the `--html` branch included | {n} | {m} | {r} |" in notes
    assert f"| now, the `--html` branch included, as a program reads the code | {n1} | {m1} | {r1} |" in notes


def test_a_missing_function_fails(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def a():\n    pass\n\nclass C:\n    def b(self):\n        pass\n", encoding="utf-8")
    assert _defined(module) == {"a", "C", "C.b"}
    assert "C.c" not in _defined(module)
