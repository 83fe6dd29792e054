"""One backend seam (issue 42): which code computes an op is decided in ``segmetrics_torch/ops/backend.py`` alone,
from the device and one setting (``set_backend`` / ``use_backend`` / ``SEGMETRICS_BACKEND``), and the package reads
two ``SEGMETRICS_*`` variables and writes none of its own.

The source checks read every module of the package with ``ast`` (a docstring or comment that names a function is
not a call of it), so that a new module cannot reintroduce a second switch without failing here.
"""

from __future__ import annotations

import argparse
import ast
import re
import threading
from pathlib import Path

import pytest
import torch

import segmetrics_torch
from segmetrics_torch import environment as _env
from segmetrics_torch.ops import (
    BACKEND_SETTINGS,
    backend as backend_module,
    compiled_kernels,
    get_backend,
    resolve,
    set_backend,
    triton_kernels,
    use_backend,
)

ROOT = Path(segmetrics_torch.__file__).parent
CPU = torch.device("cpu")


def _sources() -> dict[str, ast.Module]:
    return {p.relative_to(ROOT).as_posix(): ast.parse(p.read_text(encoding="utf-8")) for p in ROOT.rglob("*.py")}


SOURCES = _sources()

# ------------------------------------------------------------------------------------------------- the variables


def test_two_variables_and_every_name_in_the_source_is_one_of_them() -> None:
    found = set()
    for path in ROOT.rglob("*.py"):
        found |= set(re.findall(r"\bSEGMETRICS_[A-Z_]+\b", path.read_text(encoding="utf-8")))
    assert found <= set(_env.VARIABLES), sorted(found - set(_env.VARIABLES))
    assert set(_env.VARIABLES) == {"SEGMETRICS_BACKEND", "SEGMETRICS_MAX_IMAGE_PIXELS"}
    assert len(_env.VARIABLES) <= 2


def test_the_settings_are_one_list() -> None:
    """The variable's check, the command's ``--backend`` choices and the function's settings agree."""
    from segmetrics_torch.app.cli_parser import build_parser

    variable = _env.VARIABLES[backend_module.BACKEND_ENV]
    assert [s for s in BACKEND_SETTINGS if variable.valid(s)] == list(BACKEND_SETTINGS)
    assert not variable.valid("Tensor") and not variable.valid("0")
    parser = build_parser()
    args = parser.parse_args(["evaluate", "foreground", "--pred", "p", "--gt", "g", "--backend", "tensor"])
    assert args.backend == "tensor"
    assert parser.parse_args(["evaluate", "foreground", "--pred", "p", "--gt", "g"]).backend is None
    found: dict[str, tuple[str, ...]] = {}
    readers: set[str] = set()  # the forms that read images (--max-image-pixels): every evaluate form

    def walk(command: argparse.ArgumentParser) -> None:
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    walk(sub)
            elif action.dest == "backend":
                found[command.prog] = tuple(action.choices or ())
            elif action.dest == "max_image_pixels":
                readers.add(command.prog)

    walk(parser)
    assert {"segmetrics evaluate", "segmetrics evaluate foreground", "segmetrics evaluate boundary"} <= readers
    assert set(found) == readers, sorted(set(found) ^ readers)  # the report form and every single-folder form
    assert set(found.values()) == {BACKEND_SETTINGS}


def test_an_unknown_value_of_the_variable_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend_module, "_setting", None)  # as in a new process: the first question reads it
    monkeypatch.setenv("SEGMETRICS_BACKEND", "numba")
    with pytest.raises(ValueError, match=r"^SEGMETRICS_BACKEND='numba': expected auto, compiled or tensor$"):
        get_backend()
    with pytest.raises(ValueError, match="SEGMETRICS_BACKEND='numba'"):
        compiled_kernels(CPU)  # however deep the first question is asked
    monkeypatch.setenv("SEGMETRICS_BACKEND", "tensor")
    assert get_backend() == "tensor" and not compiled_kernels(CPU)
    monkeypatch.setenv("SEGMETRICS_BACKEND", "auto")
    assert get_backend() == "tensor"  # read once: the process's setting changes through the functions


# -------------------------------------------------------------------------------------------- the functions


def test_use_backend_restores_the_previous_setting_even_when_the_block_raises() -> None:
    before = get_backend()
    with pytest.raises(RuntimeError, match="inside"):
        with use_backend("tensor"):
            assert get_backend() == "tensor"
            raise RuntimeError("inside")
    assert get_backend() == before
    with use_backend("tensor"):
        with use_backend("auto"):
            assert get_backend() == "auto"
        assert get_backend() == "tensor"
    assert get_backend() == before


def test_an_unknown_setting_is_refused_before_anything_changes() -> None:
    before = get_backend()
    with pytest.raises(ValueError, match=r"Expected `backend` to be one of 'auto', 'compiled', 'tensor'"):
        with use_backend("numba"):  # type: ignore[arg-type]
            pytest.fail("the block must not run")
    with pytest.raises(ValueError, match="`backend`"):
        set_backend("Tensor")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`backend`"):
        resolve("tensor", CPU)  # type: ignore[arg-type]  # an op's argument: auto, numba or torch
    assert get_backend() == before


def test_set_backend_is_for_the_process_and_seen_by_other_threads() -> None:
    before = get_backend()
    seen: list[bool] = []
    try:
        set_backend("tensor")
        thread = threading.Thread(target=lambda: seen.append(compiled_kernels(CPU)))  # a pool's thread
        thread.start()
        thread.join()
    finally:
        set_backend(before)
    assert seen == [False]


def test_the_decisions() -> None:
    cuda, meta = torch.device("cuda"), torch.device("meta")
    for setting in ("auto", "compiled"):  # the same choice inside the library
        with use_backend(setting):
            assert compiled_kernels(CPU) and not compiled_kernels(cuda) and not compiled_kernels(meta)
            assert not triton_kernels(CPU)
            assert triton_kernels(cuda) == backend_module._triton_available()
            assert resolve("auto", CPU) == "numba" and resolve("auto", cuda) == "torch"
    with use_backend("tensor"):
        assert not compiled_kernels(CPU) and not triton_kernels(cuda)
        assert resolve("auto", CPU) == "torch"
        assert resolve("numba", CPU) == "numba" and resolve("torch", CPU) == "torch"  # an explicit choice wins


def test_every_auto_op_follows_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ops with a kernel and a tensor path take the tensor path for CPU tensors under "tensor", with the same
    results: the EDT, thinning, relabelling, the contingency tables, the mask moments, edge NMS's smoothing."""
    from segmetrics_torch.ops import contingency, distance, edge_nms, masks, morphology

    calls: list[str] = []
    originals = {
        (distance, "_edt_numba"): distance._edt_numba,
        (distance, "_edt_torch"): distance._edt_torch,
        (morphology, "_thin_numba"): morphology._thin_numba,
        (morphology, "_thin_torch"): morphology._thin_torch,
    }
    for (module, name), fn in originals.items():
        monkeypatch.setattr(module, name, lambda *a, _n=name, _f=fn, **k: calls.append(_n) or _f(*a, **k))
    gen = torch.Generator().manual_seed(0)
    mask = torch.rand(2, 17, 23, generator=gen) > 0.7
    labels = torch.randint(0, 4, (3, 40), generator=gen)
    edges = torch.rand(1, 16, 16, generator=gen, dtype=torch.float64)
    results = {}
    for setting in ("auto", "tensor"):
        calls.clear()
        with use_backend(setting):
            results[setting] = (
                distance.distance_transform_edt(mask),
                morphology.thin(mask),
                contingency.relabel(labels),
                masks.mask_moments(mask),
                edge_nms.edge_nms(edges),
            )
        suffix = "_numba" if setting == "auto" else "_torch"
        assert calls and all(c.endswith(suffix) for c in calls), (setting, calls)
    for a, b in zip(results["auto"], results["tensor"], strict=True):
        for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,), strict=True):
            assert torch.equal(x, y)


# -------------------------------------------------------------------------------------------- the source rule


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


#: the backend's functions, and where above ``ops`` each may be called (and why)
ALLOWED_ABOVE_OPS = {
    # the foreground family's one question (use_cpu_kernel), which its measure modules share
    "compiled_kernels": {"functional/foreground/_intermediates.py", "app/cold_start.py"},
    # the command's cold-start policy applies under "auto" only
    "get_backend": {"app/cold_start.py"},
    # the command's --backend and its cold-start switch, scoped to a run
    "use_backend": {"app/cli.py", "app/cold_start.py"},
    "triton_kernels": set(),
    # the proposals family still picks between its numba and tensor routes itself (moving them into ops is left to
    # do); it asks the seam for "auto", so the setting reaches it
    "resolve": {"functional/proposals.py"},
    # a library module never changes the user's setting for the process
    "set_backend": set(),
    "set_compile_aside": set(),
    "compile_aside_enabled": set(),
}


def test_nothing_above_ops_decides_the_backend() -> None:
    """Below ``functional``, ``metrics``, ``losses``, ``meta`` and ``app``: no module imports ``ops._kernels``, reads
    a ``SEGMETRICS_*`` variable, or calls a function of ``ops.backend`` except where :data:`ALLOWED_ABOVE_OPS` says;
    the variables are read in ``environment.py`` (the one reader), ``ops/backend.py`` and ``io.py`` only."""
    above = ("functional/", "metrics/", "meta/", "app/", "losses.py")
    offenders = []
    for path, tree in SOURCES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and path.startswith(above) and "_kernels" in (node.module or ""):
                offenders.append(f"{path}: imports {node.module}")
            if path.startswith(above) and isinstance(node, ast.ImportFrom) and _is_backend(path, node):
                for alias in node.names:
                    if path not in ALLOWED_ABOVE_OPS.get(alias.name, set()):
                        offenders.append(f"{path}: imports {alias.name} of the backend")
            if path.startswith(above) and isinstance(node, ast.Attribute) and node.attr in ALLOWED_ABOVE_OPS:
                if ast.unparse(node.value).endswith("backend") and path not in ALLOWED_ABOVE_OPS[node.attr]:
                    offenders.append(f"{path}: uses {ast.unparse(node)}")
            if path not in ("environment.py", "ops/backend.py", "io.py") and _reads_a_variable(node):
                offenders.append(f"{path}: reads {ast.unparse(node)}")
    assert offenders == []


def _is_backend(path: str, node: ast.ImportFrom) -> bool:
    """``from ...ops.backend import ...`` or ``from ...ops import ...`` (which re-exports it), relative or not."""
    module = (node.module or "").removeprefix("segmetrics_torch.")
    if node.level:
        package = path.split("/")[:-1]
        anchor = package[: len(package) - node.level + 1]
        module = ".".join([*anchor, *([node.module] if node.module else [])])
    return module in ("ops", "ops.backend")


def _reads_a_variable(node: ast.AST) -> bool:
    """A read of a ``SEGMETRICS_*`` variable: ``os.environ.get(...)``, ``os.getenv(...)``, ``environment_value(...)``
    or ``os.environ[...]`` naming one (a string or a constant whose name ends in ``_ENV``)."""
    if isinstance(node, ast.Call):
        name, func = _name(node.func), ast.unparse(node.func)
        if not (name in ("getenv", "environment_value") or (name == "get" and "environ" in func)):
            return False
        keys = node.args[:1]
    elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and "environ" in ast.unparse(node.value):
        keys = [node.slice]
    else:
        return False
    return any("SEGMETRICS_" in ast.unparse(k) or ast.unparse(k).endswith("_ENV") for k in keys)


def test_the_source_checks_see_what_they_look_for() -> None:
    """The checks above find the reads, imports and writes that are there (a check that finds nothing proves
    nothing)."""
    assert any(_reads_a_variable(n) for n in ast.walk(SOURCES["ops/backend.py"]))
    assert any(_reads_a_variable(n) for n in ast.walk(SOURCES["io.py"]))
    imports = [n for n in ast.walk(SOURCES["app/cold_start.py"]) if isinstance(n, ast.ImportFrom)]
    assert any(_is_backend("app/cold_start.py", n) for n in imports)
    assert ("ops/_kernels/__init__.py", "'NUMBA_CACHE_DIR'") in _environment_writes()
    probe = ast.parse('import os\nos.environ["SEGMETRICS_BACKEND"] = "tensor"\nos.environ.get("SEGMETRICS_X")')
    assert any(_reads_a_variable(n) for n in ast.walk(probe))


#: the environment writes the package makes, each for a library that reads nothing but its environment
ALLOWED_WRITES = {
    # numba reads NUMBA_CACHE_DIR at import; a read-only install gets a private cache folder, children inherit it
    ("ops/_kernels/__init__.py", "'NUMBA_CACHE_DIR'"),
    # OpenMP reads its wait policy when torch loads it (the command, before any import of torch)
    ("app/cli.py", "'OMP_WAIT_POLICY'"),
}


def _environment_writes() -> set[tuple[str, str]]:
    writes = set()
    for path, tree in SOURCES.items():
        for node in ast.walk(tree):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign | ast.Delete):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign):
                targets = [node.target]
            for target in targets:
                if isinstance(target, ast.Subscript) and "environ" in ast.unparse(target.value):
                    writes.add((path, ast.unparse(target.slice)))
            if isinstance(node, ast.Call):
                name, text = _name(node.func), ast.unparse(node.func)
                if name in ("putenv", "unsetenv", "setenv", "delenv") or (
                    "environ" in text and name in ("setdefault", "update", "pop", "popitem", "clear", "__setitem__")
                ):
                    key = ast.unparse(node.args[0]) if node.args else ast.unparse(node)
                    writes.add((path, key))
    return writes


def test_the_package_writes_no_setting_of_its_own_to_the_environment() -> None:
    writes = _environment_writes()
    assert not [w for w in writes if "SEGMETRICS_" in w[1] or "BACKEND" in w[1]], writes
    assert writes <= ALLOWED_WRITES, sorted(writes - ALLOWED_WRITES)


def test_the_proposals_family_follows_the_setting() -> None:
    """Its "auto" is the seam's (it chose the numba kernel on CPU tensors whatever the setting)."""
    import torch

    from segmetrics_torch.functional import proposals
    from segmetrics_torch.ops import use_backend

    cpu = torch.device("cpu")
    with use_backend("tensor"):
        assert proposals._backend("auto", cpu) == "torch"
    with use_backend("compiled"):
        assert proposals._backend("auto", cpu) == "numba" and proposals._backend("torch", cpu) == "torch"
