"""The command is a client of the public API, like any user's script (DESIGN.md, principle 5; docs/api.md).

Public means: a name in ``__all__`` of a public module, or a public module itself. The public modules are listed in
:data:`PUBLIC_MODULES` (and in docs/api.md, which a test keeps equal): the package, the functional families, the
Metric classes, losses, meta-measures, readers, registry, sharding, synthetic data, the error of unusable input,
the dataset readers and the report writers, and ``ops``' modules (its checked ops). No module whose dotted path has
a component starting with ``_`` is public. Every ``import`` and ``from ... import`` statement of every module of
``segmetrics_torch/app`` (module level, inside functions and under
``TYPE_CHECKING`` alike: each is a dependency) is read with ``ast`` and checked against that rule.
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import segmetrics_torch

ROOT = Path(segmetrics_torch.__file__).parent
PACKAGE = "segmetrics_torch"
APP = f"{PACKAGE}.app"
DOCS = ROOT.parent / "docs" / "api.md"

#: the public modules besides the modules of ``ops`` (see :func:`public_modules`)
PUBLIC_MODULES = (
    "segmetrics_torch",
    "segmetrics_torch.functional",
    "segmetrics_torch.functional.foreground",
    "segmetrics_torch.functional.boundary",
    "segmetrics_torch.functional.partition",
    "segmetrics_torch.functional.surface",
    "segmetrics_torch.functional.proposals",
    "segmetrics_torch.functional.semantic_boundary",
    "segmetrics_torch.metrics",
    "segmetrics_torch.losses",
    "segmetrics_torch.meta",
    "segmetrics_torch.io",
    "segmetrics_torch.readers",
    "segmetrics_torch.environment",
    "segmetrics_torch.registry",
    "segmetrics_torch.sharding",
    "segmetrics_torch.synthetic",
    "segmetrics_torch.errors",
    "segmetrics_torch.datasets",
    "segmetrics_torch.datasets.folders",
    "segmetrics_torch.datasets.pairing",
    "segmetrics_torch.datasets.prescan",
    "segmetrics_torch.datasets.decoding",
    "segmetrics_torch.datasets.label_maps",
    "segmetrics_torch.reports",
    "segmetrics_torch.reports.tables",
    "segmetrics_torch.reports.figures",
    "segmetrics_torch.reports.combined",
    "segmetrics_torch.reports.report",
    "segmetrics_torch.reports.files",
    "segmetrics_torch.reports.output_safety",
    "segmetrics_torch.reports.named_inputs",
    "segmetrics_torch.reports.cache",
    "segmetrics_torch.reports.protocol_report",
    "segmetrics_torch.reports.html_report",
    "segmetrics_torch.reports.overlays",
    "segmetrics_torch.reports.video_figures",
    "segmetrics_torch.warmup",
    "segmetrics_torch.ops",
)


def public_modules() -> frozenset[str]:
    """:data:`PUBLIC_MODULES` and every module of ``segmetrics_torch.ops`` whose name does not start with ``_`` (each
    a checked public op; ``ops._kernels`` and the other ``ops._*`` are not)."""
    ops = {f"{PACKAGE}.ops.{p.stem}" for p in (ROOT / "ops").glob("*.py") if not p.stem.startswith("_")}
    return frozenset(PUBLIC_MODULES) | ops


def public_names(module: str) -> frozenset[str]:
    """The public names of a public module: its ``__all__`` (``__version__`` is in the package's)."""
    return frozenset(getattr(importlib.import_module(module), "__all__", ()))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def violations(source: str, module: str, is_package: bool = False) -> list[tuple[int, str, str]]:
    """``(line, imported name, why)`` for each import of ``source`` (the module ``module``) that reaches the library
    outside its public API; imports of the app itself and of other packages are not checked."""
    public = public_modules()
    base = module.split(".") if is_package else module.split(".")[:-1]
    found: list[tuple[int, str, str]] = []

    def own(name: str) -> bool:
        return name == APP or name.startswith(APP + ".") or not (name == PACKAGE or name.startswith(PACKAGE + "."))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not own(alias.name) and alias.name not in public:
                    found.append((node.lineno, alias.name, "not a public module"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - node.level + 1]
                source_module = ".".join(anchor + ([node.module] if node.module else []))
            else:
                source_module = node.module or ""
            if own(source_module):
                continue
            for alias in node.names:
                full = f"{source_module}.{alias.name}"
                if full in public:
                    continue  # a public module itself
                if source_module not in public:
                    found.append((node.lineno, full, f"{source_module} is not a public module"))
                elif alias.name != "*" and alias.name not in public_names(source_module):
                    found.append((node.lineno, full, f"`{alias.name}` is not in {source_module}.__all__"))
    return found


def _app_violations() -> list[str]:
    out = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        module = _module_name(path)
        for line, name, why in violations(path.read_text(), module, path.name == "__init__.py"):
            out.append(f"{path.relative_to(ROOT.parent)}:{line}: {name} ({why})")
    return out


#: violations known and owned elsewhere, ``(file, imported name): why`` -- each must still occur (a fixed one must be
#: taken off this list, so that it cannot come back unseen); keep it empty
KNOWN: dict[tuple[str, str], str] = {}


def test_the_app_imports_only_public_names() -> None:
    found = _app_violations()
    for line in found:
        print(line)
    known = {(line.split(":")[0], line.split(": ")[1].split(" (")[0]) for line in found}
    new = [line for line in found if (line.split(":")[0], line.split(": ")[1].split(" (")[0]) not in KNOWN]
    assert not new, "the command imports names outside the public API (docs/api.md):\n" + "\n".join(new)
    assert not set(KNOWN) - known, f"fixed: take these off KNOWN: {sorted(set(KNOWN) - known)}"


def test_the_rule_catches_what_it_should() -> None:
    source = "\n".join(
        [
            "from .._checks import ImageBatch",  # a private module
            "from ..functional.foreground._intermediates import run_per_image",  # a private module deeper down
            "from ..functional.foreground.suite import derive_all",  # an implementation module of a family",
            "from ..io import _listing",  # a private name of a public module
            "from ..io import read_gray",  # public
            "from ..functional import foreground",  # a public module itself
            "from .. import metrics, __version__, ForegroundMeasures",  # public
            "from .tables import scalar_row",  # the app's own
            "import segmetrics_torch.ops._kernels.edt",  # a private module, imported whole
            "import segmetrics_torch.ops.distance",  # a public op module
            "import numpy",  # not the library
            "def f():\n    from ..reference import foreground",  # not public (an oracle for tests), in a function
        ]
    )
    found = violations(source, f"{APP}.example")
    assert [(line, name) for line, name, _ in found] == [
        (1, "segmetrics_torch._checks.ImageBatch"),
        (2, "segmetrics_torch.functional.foreground._intermediates.run_per_image"),
        (3, "segmetrics_torch.functional.foreground.suite.derive_all"),
        (4, "segmetrics_torch.io._listing"),
        (9, "segmetrics_torch.ops._kernels.edt"),
        (13, "segmetrics_torch.reference.foreground"),
    ]


def test_the_public_modules_exist_and_are_documented() -> None:
    """Each public module imports, no dotted component starts with ``_``, and docs/api.md names each (a page that
    lists another module as public, or forgets one, fails here)."""
    text = DOCS.read_text()
    for module in sorted(public_modules()):
        importlib.import_module(module)
        assert not any(part.startswith("_") for part in module.split(".")), module
    documented = {m for m in PUBLIC_MODULES if f"`{m}`" in text}
    assert documented == set(PUBLIC_MODULES), sorted(set(PUBLIC_MODULES) - documented)
    assert "docs/api.md" in (ROOT.parent / "README.md").read_text()


def test_the_registry_table_of_included_measures_names_their_metrics() -> None:
    """``registry.INCLUDABLE`` (what ``ForegroundMeasures(include=...)`` and the command build by name) agrees with
    the foreground records: each ``include`` is a key, and the record's Metric is the one the table names."""
    from segmetrics_torch.registry import INCLUDABLE, MEASURES

    records = [m for m in MEASURES.values() if m.family == "foreground" and m.include]
    assert {m.include for m in records} == set(INCLUDABLE)
    for m in records:
        assert getattr(m, "metric", INCLUDABLE[m.include]) == INCLUDABLE[m.include], m.key
        assert INCLUDABLE[m.include] in segmetrics_torch.__all__


def test_a_foreground_run_imports_no_torchmetrics(tmp_path: Path) -> None:
    """``segmetrics evaluate foreground`` with the default measures accumulates in the public torchmetrics-free
    ``ForegroundSums``: torchmetrics (about a second of start-up) is never imported."""
    rng = np.random.default_rng(0)
    pred, gt = tmp_path / "pred", tmp_path / "gt"
    pred.mkdir()
    gt.mkdir()
    for i in range(3):
        mask = np.zeros((24, 32), np.uint8)
        mask[5 : 12 + i, 6:20] = 255
        Image.fromarray(mask).save(gt / f"im{i}.png")
        Image.fromarray(rng.integers(0, 256, mask.shape, dtype=np.uint8)).save(pred / f"im{i}.png")
    code = (
        "import sys\n"
        "from segmetrics_torch.app.cli import main\n"
        f"status = main(['evaluate', 'foreground', '--pred', {str(pred)!r}, '--gt', {str(gt)!r}, '--no-progress',"
        f" '--json', {str(tmp_path / 'out.json')!r}])\n"
        "print('torchmetrics' in sys.modules, status)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "False 0", run.stdout + run.stderr
    assert (tmp_path / "out.json").is_file()


@pytest.mark.parametrize("module", ["segmetrics_torch.functional", "segmetrics_torch.functional.foreground"])
def test_the_foreground_accumulator_is_exported(module: str) -> None:
    exported = importlib.import_module(module)
    for name in ("ForegroundSums", "summarize_foreground", "S_MEASURE_NAN_REASON", "SI_MAE_NAN_REASON"):
        assert name in exported.__all__, (module, name)


def test_the_progress_bar_opens_before_torch_loads(tmp_path: Path) -> None:
    """A single-folder run shows its progress bar (a terminal's first line) before torch and the measures load: the
    device is resolved under the bar, so the user sees the command start at once instead of a pause."""
    rng = np.random.default_rng(1)
    pred, gt = tmp_path / "pred", tmp_path / "gt"
    pred.mkdir()
    gt.mkdir()
    for i in range(2):
        mask = np.zeros((16, 20), np.uint8)
        mask[4:10, 5:15] = 255
        Image.fromarray(mask).save(gt / f"im{i}.png")
        Image.fromarray(rng.integers(0, 256, mask.shape, dtype=np.uint8)).save(pred / f"im{i}.png")
    code = (
        "import sys\n"
        "from segmetrics_torch.app import cli, folder_io\n"
        "seen = []\n"
        "class Bar(folder_io.tqdm):\n"
        "    def __init__(self, *a, **k):\n"
        "        seen.append('torch' in sys.modules)\n"
        "        super().__init__(*a, **k)\n"
        "folder_io.tqdm = Bar\n"
        f"status = cli.main(['evaluate', 'foreground', '--pred', {str(pred)!r}, '--gt', {str(gt)!r}])\n"
        "print(seen, status)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "[False] 0", run.stdout + run.stderr
