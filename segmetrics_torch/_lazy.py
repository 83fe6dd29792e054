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
import importlib.resources
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from .registry import DEPRECATED_CLASSES

__all__ = ["attach_stub", "deprecated_alias"]


def stub_table(package: str) -> dict[str, str]:
    """``{name: ".submodule"}`` of the relative ``from .x import name as name`` lines of ``package``'s
    ``__init__.pyi`` (read through the package's loader: a zipped install works too)."""
    tree = ast.parse(importlib.resources.files(package).joinpath("__init__.pyi").read_text(encoding="utf-8"))
    table: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is not None:
            for alias in node.names:
                table[alias.asname or alias.name] = "." + node.module
    return table


def deprecated_alias(name: str, namespace: Mapping[str, Any]) -> Any:
    """The class a former name (``registry.DEPRECATED_CLASSES``) stands for, from ``namespace``, with a
    DeprecationWarning that names the new one (attributed to the line that used the old name)."""
    new = DEPRECATED_CLASSES[name]
    warnings.warn(f"`{name}` is deprecated; use `{new}` (the same class).", DeprecationWarning, stacklevel=3)
    return namespace[new]


def attach_stub(
    package: str, extra: tuple[str, ...] = ()
) -> tuple[dict[str, str], list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``(table, __all__, __getattr__, __dir__)`` of ``package`` from its stub (:func:`stub_table`); ``extra``: the
    names the package defines itself (``__version__``), listed in ``__all__`` too. The former class names of
    ``registry.DEPRECATED_CLASSES`` whose new name the table holds still answer, with a DeprecationWarning, in
    neither the stub nor ``__all__``.

    Example:
        >>> import segmetrics_torch
        >>> segmetrics_torch._API["MAE"], "MAE" in segmetrics_torch.__all__
        ('.metrics', True)
    """
    table = stub_table(package)
    names = sorted([*table, *extra])
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        if name in table:
            value = getattr(importlib.import_module(table[name], package), name)
            namespace[name] = value  # the next look-up is a plain attribute
            return value
        if DEPRECATED_CLASSES.get(name) in table:
            __getattr__(DEPRECATED_CLASSES[name])  # imports the new name into the namespace
            return deprecated_alias(name, namespace)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return table, names, __getattr__, __dir__
