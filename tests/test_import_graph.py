"""The package's import graph: no cycle anywhere, and the library never imports the app (``segmetrics_torch.app``).

Every ``import`` / ``from ... import`` statement of every module is read with ``ast`` (those inside functions too:
a lazy import is still a dependency), resolved to a module of the package, and the graph is checked.
"""

from __future__ import annotations

import ast
from pathlib import Path

import segmetrics_torch

ROOT = Path(segmetrics_torch.__file__).parent
PACKAGE = "segmetrics_torch"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The package module that ``name`` (a module or a name inside one) denotes, or None outside the package."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    is_package = path.name == "__init__.py"
    base = module.split(".") if is_package else module.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - node.level + 1]
                prefix = ".".join(anchor + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            targets = [f"{prefix}.{a.name}" for a in node.names] + [prefix]
        for t in targets:
            if t.startswith(PACKAGE):
                resolved = _resolve(t, modules)
                if resolved and resolved != module:
                    out.add(resolved)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {m: _imports(m, p, modules) for m, p in modules.items()}
    # a submodule's import of its own package's __init__ is the normal loading order, not a dependency cycle
    return {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph.items()}


def test_the_graph_reads_every_module():
    graph = _graph()
    assert "segmetrics_torch.app.cli" in graph and "segmetrics_torch.io" in graph
    assert "segmetrics_torch.io" in graph["segmetrics_torch.datasets.decoding"]


def test_the_library_never_imports_the_app():
    offenders = {
        m: sorted(d for d in deps if d.startswith(f"{PACKAGE}.app"))
        for m, deps in _graph().items()
        if not m.startswith(f"{PACKAGE}.app")
    }
    assert {m: d for m, d in offenders.items() if d} == {}


def test_no_import_cycle():
    graph = _graph()
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                cycles.append([*path[path.index(dep) :], dep] if dep in path else [node, dep])
            elif dep not in state:
                visit(dep, [*path, dep])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_only_ops_imports_the_kernels():
    """The layer rule of the design: kernels are reached through a checked public op of ``segmetrics_torch.ops``."""
    kernels = f"{PACKAGE}.ops._kernels"
    offenders = {
        m: sorted(d for d in deps if d == kernels or d.startswith(kernels + "."))
        for m, deps in _graph().items()
        if not m.startswith(f"{PACKAGE}.ops")
    }
    assert {m: d for m, d in offenders.items() if d} == {}


def test_ops_never_imports_the_layers_above():
    above = tuple(f"{PACKAGE}.{layer}" for layer in ("functional", "metrics", "meta", "app", "losses"))
    offenders = {
        m: sorted(d for d in deps if d.startswith(above))
        for m, deps in _graph().items()
        if m.startswith(f"{PACKAGE}.ops")
    }
    assert {m: d for m, d in offenders.items() if d} == {}


def test_checks_import_nothing_of_the_package():
    """``_checks`` only checks (the converters live in ``ops``): the bottom of the layers, importing none of them but
    ``_constants``, which imports nothing at all (the bounds the checks share with the command's torch-free
    parser)."""
    deps = _graph()[f"{PACKAGE}._checks"]
    assert sorted(d for d in deps if d != PACKAGE) == [f"{PACKAGE}._constants"]
    assert sorted(d for d in _graph()[f"{PACKAGE}._constants"] if d != PACKAGE) == []
