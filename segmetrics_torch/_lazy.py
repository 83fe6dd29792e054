"""Lazy public names read from one stub: a package's ``__init__.pyi`` lists its public names as explicit re-exports
(``from .metrics import MAE as MAE``); static type checkers read that file as the package's types, and
:func:`attach_stub` reads the same imports at run time to build the package's ``__all__``, ``__getattr__`` and
``__dir__`` (PEP 562), so that the list is written once.

Why lazy: torch, torchmetrics (which imports matplotlib and scipy.signal) and numba take ~2.5 s to import, and the
``segmetrics`` command starts its image-decoding workers before paying that, so that decoding overlaps the import.
Reading the stub costs about a millisecond (``ast`` of a 100-line file) and imports nothing of the package.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["attach_stub"]


def stub_table(init_file: str) -> dict[str, str]:
    """``{name: ".submodule"}`` of the relative ``from .x import name as name`` lines of ``init_file``'s stub."""
    tree = ast.parse(Path(init_file).with_suffix(".pyi").read_text(encoding="utf-8"))
    table: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is not None:
            for alias in node.names:
                table[alias.asname or alias.name] = "." + node.module
    return table


def attach_stub(
    package: str, init_file: str, extra: tuple[str, ...] = (), deprecated: Mapping[str, str] | None = None
) -> tuple[dict[str, str], list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``(table, __all__, __getattr__, __dir__)`` of ``package`` from its stub (:func:`stub_table`); ``extra``: the
    names the package defines itself (``__version__``), listed in ``__all__`` too; ``deprecated``: former names ->
    the submodule that still answers them (with its DeprecationWarning, on every access), in neither the stub nor
    ``__all__``.

    Example:
        >>> import segmetrics_torch
        >>> segmetrics_torch._API["MAE"], "MAE" in segmetrics_torch.__all__
        ('.metrics', True)
    """
    table = stub_table(init_file)
    names = sorted([*table, *extra])
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        if name in table:
            value = getattr(importlib.import_module(table[name], package), name)
            namespace[name] = value  # the next look-up is a plain attribute
            return value
        if deprecated and name in deprecated:
            return getattr(importlib.import_module(deprecated[name], package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return table, names, __getattr__, __dir__
