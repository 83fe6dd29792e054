"""The public names: one stub per lazy package (``__init__.pyi``) lists them; static type checkers read it and, at
import, it drives `__all__`, lazy loading and `__dir__` (segmetrics_torch._lazy)."""

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGES = ("segmetrics_torch", "segmetrics_torch.metrics")


@pytest.mark.parametrize("name", PACKAGES)
def test_the_stub_is_the_table(name):
    """Every import of the stub is an explicit re-export (``X as X``, as type checkers need) of the table, and the
    package's own source lists no name again (no second table to keep equal)."""
    module = importlib.import_module(name)
    stub = Path(module.__file__).with_suffix(".pyi")
    seen = {}
    for node in ast.parse(stub.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            assert node.level == 1
            for alias in node.names:
                assert alias.asname == alias.name, "re-export explicitly: `import X as X`"
                seen[alias.name] = "." + node.module
    assert seen == module._API
    source = Path(module.__file__).read_text()
    assert not [n for n in module._API if f'"{n}"' in source]


@pytest.mark.parametrize("name", PACKAGES)
def test_table_drives_all_getattr_and_dir(name):
    module = importlib.import_module(name)
    assert set(module.__all__) - {"__version__"} == set(module._API)
    assert len(module.__all__) == len(set(module.__all__))
    for public in module._API:
        value = getattr(module, public)
        defining = importlib.import_module(module._API[public], name)
        assert value is getattr(defining, public)
        assert public in getattr(defining, "__all__", [public])
        assert public in dir(module)
    with pytest.raises(AttributeError):
        module.NoSuchName  # noqa: B018


def test_metric_families_export_exactly_the_table():
    from segmetrics_torch import metrics

    for family in set(metrics._API.values()):
        module = importlib.import_module(family, "segmetrics_torch.metrics")
        assert set(module.__all__) == {n for n, f in metrics._API.items() if f == family}


def test_top_level_table_names_every_metric():
    import segmetrics_torch
    from segmetrics_torch import metrics

    assert {n for n, m in segmetrics_torch._API.items() if m == ".metrics"} == set(metrics._API)


def test_importing_the_package_imports_no_torch():
    code = (
        "import sys, segmetrics_torch, segmetrics_torch.metrics; dir(segmetrics_torch); "
        "print(sorted(m for m in ('torch', 'torchmetrics', 'numba') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("old", "new"), [("MSIoU", "MultiScaleIoU"), ("SizeInvariantFMeasure", "SizeInvariantThresholdMeasures")]
)
def test_former_names_still_answer_with_a_deprecation_warning(old, new):
    import segmetrics_torch
    from segmetrics_torch import metrics
    from segmetrics_torch.metrics import foreground_extra

    for module in (segmetrics_torch, metrics, foreground_extra):
        with pytest.warns(DeprecationWarning, match=f"`{old}` is deprecated; use `{new}`"):
            assert getattr(module, old) is getattr(module, new)
        assert old not in module.__all__ and old not in dir(module)


@pytest.mark.parametrize("name", ["check_pairing", "warn_on_stderr"])
def test_names_moved_to_the_prescan_still_answer_from_the_pairing_module(name):
    from segmetrics_torch.datasets import pairing, prescan

    with pytest.warns(DeprecationWarning, match=f"`segmetrics_torch.datasets.pairing.{name}` is deprecated; use"):
        assert getattr(pairing, name) is getattr(prescan, name)
    assert name not in pairing.__all__ and name in prescan.__all__
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        pairing.nothing  # noqa: B018 - the module's __getattr__ answers the moved names only


def test_meta_and_functional_export_their_submodules_lists() -> None:
    """``meta`` and ``functional`` build ``__all__`` from their submodules' lists: the public names are exactly
    those (the meta-measures' measure lists and perturbation names included), each importable, none twice."""
    import segmetrics_torch.functional as functional
    import segmetrics_torch.meta as meta
    from segmetrics_torch.functional import foreground
    from segmetrics_torch.meta import baselines, metameasures

    assert sorted(meta.__all__) == sorted({*baselines.__all__, *metameasures.__all__})
    assert len(meta.__all__) == len(set(meta.__all__))
    assert {"FOREGROUND_MEASURES", "PARTITION_MEASURES", "PERTURBATIONS", "Perturbation", "sihd"} <= set(meta.__all__)
    assert set(foreground.__all__) <= set(functional.__all__)
    assert len(functional.__all__) == len(set(functional.__all__))
    for module in (meta, functional):
        for name in module.__all__:
            assert getattr(module, name) is not None, name


def test_typed_keyword_tables_match_what_they_describe() -> None:
    """MetricKeywords lists torchmetrics' own Metric keywords (the installed torchmetrics pops these), and the
    suite's defaults are those of ForegroundMeasures, ForegroundSums and foreground_measures."""
    import inspect
    import re

    import torchmetrics

    from segmetrics_torch.functional.foreground.suite import SUITE_DEFAULTS, ForegroundSums, foreground_measures
    from segmetrics_torch.metrics import ForegroundMeasures
    from segmetrics_torch.metrics._base import MetricKeywords

    popped = set(re.findall(r'kwargs\.pop\("(\w+)"', inspect.getsource(torchmetrics.Metric.__init__)))
    assert set(MetricKeywords.__optional_keys__) == popped
    for function in (ForegroundMeasures.__init__, ForegroundSums.__init__, foreground_measures):
        parameters = inspect.signature(function).parameters
        assert {key: parameters[key].default for key in SUITE_DEFAULTS} == SUITE_DEFAULTS, function


def test_the_stubs_are_generated_from_the_modules_lists():
    """A Metric is listed once, in its family module's ``__all__`` (a loss in ``losses.__all__``): both stubs are
    what ``python -m segmetrics_torch._stubs`` writes from those lists, so a new Metric costs no stub edit."""
    from segmetrics_torch._stubs import render_stubs, write_stubs

    assert write_stubs(check=True) == [], "run: python -m segmetrics_torch._stubs"
    stub = render_stubs()["metrics/__init__.pyi"]
    assert "    BoundaryIoU as BoundaryIoU,\n" in stub and "from .surface import (" in stub


def test_the_stub_generator_sees_a_new_metric(tmp_path, monkeypatch):
    """The generator reads the lists from disk: a name added to a family's ``__all__`` appears in both stubs (the
    test that can fail)."""
    import shutil

    from segmetrics_torch import _stubs

    package = tmp_path / "segmetrics_torch"
    shutil.copytree(Path(_stubs.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__", "_kernels"))
    surface = package / "metrics" / "surface.py"
    text = surface.read_text()
    surface.write_text(text.replace("__all__ = [", '__all__ = [\n    "MeanAverageSurfaceDistance",', 1))
    monkeypatch.setattr(_stubs, "PACKAGE", package)
    stubs = _stubs.render_stubs()
    assert "    MeanAverageSurfaceDistance as MeanAverageSurfaceDistance,\n" in stubs["metrics/__init__.pyi"]
    assert "    MeanAverageSurfaceDistance as MeanAverageSurfaceDistance,\n" in stubs["__init__.pyi"]
    assert _stubs.write_stubs(check=True) == ["metrics/__init__.pyi", "__init__.pyi"]


def test_a_new_functional_module_is_exported_by_its_family_and_functional(tmp_path, monkeypatch):
    """A new measure module of a functional family is exported by the family and by ``functional`` from its own
    ``__all__`` alone (the generated import blocks), its private siblings' names are not, and two families exporting
    one name is an error."""
    import shutil

    from segmetrics_torch import _stubs

    package = tmp_path / "segmetrics_torch"
    shutil.copytree(Path(_stubs.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__", "_kernels"))
    surface = package / "functional" / "surface"
    (surface / "betti.py").write_text('"""A new measure."""\n\n__all__ = ["betti_error"]\n')
    (surface / "_helpers.py").write_text('__all__ = ["hidden_helper"]\n')
    monkeypatch.setattr(_stubs, "PACKAGE", package)
    faces = _stubs.render_faces()
    family, top = faces["functional/surface/__init__.py"], faces["functional/__init__.py"]
    assert "from .betti import (\n    betti_error,\n)\n" in family and '    "betti_error",\n' in family
    assert family.startswith('"""Boundary-distance measures') and family.count(_stubs.FACE_MARKER) == 1
    assert "    betti_error,\n" in top and "hidden_helper" not in family + top
    assert _stubs.write_stubs(check=True) == ["functional/surface/__init__.py", "functional/__init__.py"]
    (package / "functional" / "video" / "clash.py").write_text('__all__ = ["betti_error"]\n')
    with pytest.raises(ValueError, match="both export 'betti_error'"):
        _stubs.render_faces()


def test_the_generator_reads_every_form_of_all_or_says_why_not(tmp_path):
    """``__all__`` annotated or not is read; a form it would misread (``+=``, computed) is an error naming the file;
    names are ordered as ruff orders them (natural sort; a one-letter name is no constant)."""
    from segmetrics_torch import _stubs

    module = tmp_path / "m.py"
    module.write_text('__all__: list[str] = ["b", "a"]\n')
    assert _stubs._all_of(module) == ["b", "a"]
    for text in (
        '__all__ = ["a"]\n__all__ += ["b"]\n',
        "__all__ = sorted(['a'])\n",
        "__all__ = ['a']\n__all__ = ['b']\n",
    ):
        module.write_text(text)
        with pytest.raises(ValueError, match=r"m\.py: __all__ must be one literal list"):
            _stubs._all_of(module)
    assert _stubs._sorted(["ap10", "ap5", "X", "AP_KEYS"]) == ["AP_KEYS", "X", "ap5", "ap10"]
    assert _stubs._sorted_all(["f_10", "f_2", "Metric10D", "Metric2D"]) == ["Metric2D", "Metric10D", "f_2", "f_10"]


def test_a_face_without_its_marker_or_with_a_subpackage_is_refused(tmp_path, monkeypatch):
    import shutil

    from segmetrics_torch import _stubs

    package = tmp_path / "segmetrics_torch"
    shutil.copytree(Path(_stubs.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__", "_kernels"))
    monkeypatch.setattr(_stubs, "PACKAGE", package)
    face = package / "functional" / "video" / "__init__.py"
    face.write_text('"""Video."""\n\nfrom .davis import davis_sequence\n')
    with pytest.raises(ValueError, match="no marker line"):
        _stubs.render_faces()
    face.write_text(f'"""Video."""\n\n{_stubs.FACE_MARKER}\n')
    (package / "functional" / "video" / "inner").mkdir()
    (package / "functional" / "video" / "inner" / "__init__.py").write_text("")
    with pytest.raises(ValueError, match="holds no package"):
        _stubs.render_faces()
