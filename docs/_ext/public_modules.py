"""The API reference of public modules: ``.. public-module:: NAME`` documents one module, ``.. public-modules::
PACKAGE`` a package and each public module under it, found when the site is built (a module added to
``segmetrics_torch.reports``, ``datasets`` or ``ops`` is documented without editing a page).

A module is public by the rule of ``docs/api.md``: no component of its path starts with ``_``, and it is not the
command (``app``), the oracles (``reference``), nor a module inside a functional family, ``metrics`` or ``meta``
(their names are public where their package exports them). Each gets a section (its dotted name) holding
``.. automodule::`` with the site's default options (``__all__``'s members).

Constants: ``automodule`` documents a module's data only where the module's own source assigns it, so a constant
re-exported by a package (``segmetrics_torch.functional.FOREGROUND_KEYS``) would be missing; every name of
``__all__`` that is neither a class, a function nor a module is therefore documented with ``.. autodata::``, with the
``#:`` comment of the module that defines it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

#: packages whose inner modules are not public (their names are, where the package exports them)
CLOSED = {"segmetrics_torch.metrics", "segmetrics_torch.meta"}
#: the functional families: their inner modules are not public either
CLOSED_BELOW = "segmetrics_torch.functional"


def is_public(name: str) -> bool:
    """Whether the dotted module ``name`` is public by the rule of ``docs/api.md``."""
    parts = name.split(".")
    if any(part.startswith("_") for part in parts) or (len(parts) > 1 and parts[1] in ("app", "reference")):
        return False
    if any(name.startswith(closed + ".") for closed in CLOSED):
        return False
    return not (name.startswith(CLOSED_BELOW + ".") and len(parts) > 3)


def public_modules(package: str) -> list[str]:
    """``package`` and every public module under it, in import-path order."""
    found = [package]
    module = importlib.import_module(package)
    if hasattr(module, "__path__"):
        for info in pkgutil.walk_packages(module.__path__, package + "."):
            if is_public(info.name):
                found.append(info.name)
    return sorted(found)


def constants(module_name: str) -> list[str]:
    """The names of ``module_name.__all__`` that are data: neither a class, a routine nor a module."""
    module = importlib.import_module(module_name)
    return [
        name
        for name in getattr(module, "__all__", ())
        if not any(test(getattr(module, name)) for test in (inspect.isclass, inspect.isroutine, inspect.ismodule))
    ]


def comment_of(module_name: str, name: str) -> list[str]:
    """The ``#:`` comment of the constant ``module_name.name`` where another module of the package defines it (the
    module's own comment is found by autodoc itself); empty when there is none."""
    value = getattr(importlib.import_module(module_name), name)
    package = module_name.split(".")[0]
    for other_name, other in sorted(sys.modules.items()):
        if other_name == module_name or not other_name.startswith(package + ".") or other is None:
            continue
        if getattr(other, name, None) is not value:
            continue
        try:
            docs = ModuleAnalyzer.for_module(other_name).find_attr_docs()
        except PycodeError:
            continue
        if ("", name) in docs:
            return [line for line in docs["", name] if line]
    return []


def module_lines(name: str, heading: bool) -> list[str]:
    """The reST of one module's reference: its ``automodule`` (constants left out) and an ``autodata`` per
    constant."""
    data = constants(name)
    lines: list[str] = []
    if heading:
        title = f"``{name}``"
        lines += [title, "-" * len(title), ""]
    lines += [f".. automodule:: {name}"]
    if data:
        lines += [f"   :exclude-members: {', '.join(data)}"]
    lines += [""]
    own = ModuleAnalyzer.for_module(name).find_attr_docs()
    for constant in data:
        lines += [f".. autodata:: {name}.{constant}", ""]
        if ("", constant) not in own:
            lines[-1:] = ["", *(f"   {line}" for line in comment_of(name, constant)), ""]
    return lines


class PublicModules(SphinxDirective):
    """Sections ``.. automodule::`` of a package and of its public modules."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        lines: list[str] = []
        for name in public_modules(self.arguments[0]):
            lines += module_lines(name, heading=True)
        container = nodes.section()  # a holder: its children (the sections) are returned
        nested_parse_with_titles(self.state, StringList(lines, source=f"public-modules {self.arguments[0]}"), container)
        return list(container.children)


class PublicModule(SphinxDirective):
    """``.. automodule::`` of one module, its constants included."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        container = nodes.section()
        lines = module_lines(self.arguments[0], heading=False)
        nested_parse_with_titles(self.state, StringList(lines, source=f"public-module {self.arguments[0]}"), container)
        return list(container.children)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("public-modules", PublicModules)
    app.add_directive("public-module", PublicModule)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
