"""No package kernel is compiled for a literal argument.

Inside compiled code, numba types a constant argument (``f(a, 0)``) or a counter whose first value is a constant
(``p = 0`` before ``p = f(..., p)``) as a literal, and compiles the callee once for that literal while it infers the
caller's types -- a whole second compilation, then discarded for the general one. On a new machine these doubled
the first run's compilation (the assignment solver three times: ~3 s; the weighted F of the foreground kernel
twice: ~3.5 s). The kernels pass such values as ``np.int64(...)`` / ``np.bool_(...)``; this test runs the main
paths of every family and reads every package dispatcher's compiled signatures (compiled in this process or loaded
from numba's cache: both record the signature asked for).
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import numpy as np
import torch
from numba.core import types
from numba.core.registry import CPUDispatcher

import segmetrics_torch as st
import segmetrics_torch.ops._kernels as kernels
from segmetrics_torch.functional import (
    boundary_pr_counts,
    context_measure,
    hierarchy_measures,
    partition_measures,
    surface_distance_measures,
)
from segmetrics_torch.losses import weighted_f_measure_loss
from segmetrics_torch.ops.edge_nms import edge_nms


def _run_main_paths() -> None:
    gen = torch.Generator().manual_seed(0)
    g = torch.zeros(2, 40, 48, dtype=torch.bool)
    g[:, 10:30, 12:36] = True
    p8 = (torch.rand(2, 40, 48, generator=gen) * 255).to(torch.uint8)
    m = st.ForegroundMeasures()
    m.update(p8, g)
    m.update(p8.float() / 255, g)
    m.compute()
    context_measure(p8.float() / 255, g)
    weighted_f_measure_loss(torch.rand(2, 40, 48, generator=gen, requires_grad=True), g.float()).backward()
    soft = torch.rand(2, 40, 48, generator=gen, dtype=torch.float64)
    edge_nms(soft)
    gt = torch.zeros(2, 2, 40, 48, dtype=torch.bool)
    gt[:, 0, 20, 5:40] = True
    gt[:, 1, 21, 6:41] = True
    boundary_pr_counts(soft, gt, thresholds=5)
    boundary_pr_counts(soft, gt, thresholds=5, nms=True)
    seg = torch.randint(0, 4, (2, 24, 30), generator=gen)
    human = torch.randint(0, 3, (2, 2, 24, 30), generator=gen)
    partition_measures(seg, human)
    hierarchy_measures(torch.stack([torch.zeros_like(seg), seg], dim=1), human, input_format="stack", thresholds=2)
    vol_p = torch.rand(1, 12, 14, 16, generator=gen) < 0.3
    vol_g = torch.rand(1, 12, 14, 16, generator=gen) < 0.3
    for convention in ("monai", "medpy", "deepmind"):
        surface_distance_measures(vol_p, vol_g, convention=convention, spacing=(1.0, 0.8, 1.3), tolerance=1.0)


def _literal_signatures() -> list[str]:
    found = []
    for info in pkgutil.iter_modules(kernels.__path__):
        module = importlib.import_module(f"{kernels.__name__}.{info.name}")
        for name, obj in vars(module).items():
            if not isinstance(obj, CPUDispatcher) or obj.py_func.__module__ != module.__name__:
                continue
            for signature in obj.overloads:
                if any(isinstance(t, types.Literal) for t in signature):
                    found.append(f"{module.__name__}.{name}{signature}")
    return found


def test_no_kernel_is_compiled_for_a_literal_argument() -> None:
    _run_main_paths()
    assert _literal_signatures() == []


def test_the_check_sees_a_literal_specialisation() -> None:
    # the detector itself: a throw-away dispatcher called with a constant from compiled code is caught
    import numba

    @numba.njit
    def callee(x, k):  # pragma: no cover - compiled
        return x + k

    @numba.njit
    def caller(x):  # pragma: no cover - compiled
        return callee(x, 3)

    caller(np.int64(1))
    assert any(isinstance(t, types.Literal) for sig in callee.overloads for t in sig)


def _literal_arguments() -> list[str]:
    """Calls, in the kernel modules, of a package kernel with an int / bool constant or with a local variable that is
    ever assigned one: the sources of literal specialisations, found without compiling (the test above sees them
    only where this process compiles the kernel: a warm on-disk cache loads the caller whole)."""

    def constant(node: ast.expr) -> bool:
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            node = node.operand
        return isinstance(node, ast.Constant) and isinstance(node.value, bool | int)

    trees = {path: ast.parse(path.read_text()) for path in Path(kernels.__file__).parent.glob("*.py")}
    names = {
        node.name
        for tree in trees.values()
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and any("njit" in ast.unparse(d) for d in node.decorator_list)
    }
    found = []
    for path, tree in trees.items():
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef):
                continue
            literal = set()
            for node in ast.walk(func):
                if isinstance(node, ast.Assign) and constant(node.value):
                    literal |= {t.id for t in node.targets if isinstance(t, ast.Name)}
                elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple):
                    for target in node.targets:
                        if isinstance(target, ast.Tuple):
                            literal |= {
                                t.id
                                for t, v in zip(target.elts, node.value.elts, strict=False)
                                if isinstance(t, ast.Name) and constant(v)
                            }
            for node in ast.walk(func):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
                    for arg in node.args:
                        if constant(arg) or (isinstance(arg, ast.Name) and arg.id in literal):
                            found.append(f"{path.name}:{node.lineno} {node.func.id}(... {ast.unparse(arg)} ...)")
    return found


def test_no_kernel_call_passes_a_literal() -> None:
    assert _literal_arguments() == []
