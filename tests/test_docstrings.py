"""Every public Metric class and function carries a short executed example, and every Metric class says what it
takes and returns (torchmetrics' "As input" / "As output" sections); no Metric shadows ``torch.nn.Module`` API.

"Executed": the examples are doctests that ``python -m pytest`` runs (``--doctest-modules`` over the package in
pyproject.toml), so this test checks that each object's docstring holds doctest examples that the doctest finder
reaches in its module, and that pytest is configured to run them.
"""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import importlib.util
import inspect
import re
import tomllib
from pathlib import Path

import pytest
import torch
from torchmetrics import Metric

ROOT = Path(__file__).resolve().parents[1]
MODULES = (
    "segmetrics_torch",
    "segmetrics_torch.metrics",
    "segmetrics_torch.functional",
    "segmetrics_torch.losses",
    "segmetrics_torch.meta",
)
#: exported result containers (dataclasses / named tuples): documented by their attributes, no example required
RESULT_TYPES = {"BoundaryCounts", "AnnotationErrorResult", "Measure", "RateResult", "SIHDResult"}


def _exported() -> dict[str, object]:
    out: dict[str, object] = {}
    for name in MODULES:
        module = importlib.import_module(name)
        for public in module.__all__:
            obj = getattr(module, public)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                out.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return out


EXPORTED = _exported()
DOCUMENTED = {k: v for k, v in EXPORTED.items() if v.__name__ not in RESULT_TYPES}
METRICS = {k: v for k, v in EXPORTED.items() if inspect.isclass(v) and issubclass(v, Metric)}


def test_the_lists_are_what_they_say():
    assert len(METRICS) >= 34 and len(DOCUMENTED) >= 80
    for key, obj in EXPORTED.items():
        if obj.__name__ in RESULT_TYPES:
            assert dataclasses.is_dataclass(obj) or issubclass(obj, tuple), key


def test_pytest_runs_the_package_doctests():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "--doctest-modules" in options["addopts"].split()
    assert "segmetrics_torch" in options["testpaths"]
    spec = importlib.util.spec_from_file_location("_root_conftest", ROOT / "conftest.py")
    assert spec is not None and spec.loader is not None
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    ignored = conftest.collect_ignore
    assert not [path for path in ignored if path.startswith("segmetrics_torch")], ignored


@pytest.mark.parametrize("key", sorted(DOCUMENTED))
def test_has_an_executed_example(key):
    obj = DOCUMENTED[key]
    doc = inspect.getdoc(obj) or ""
    assert "Example:" in doc, f"{key}: no `Example:` section"
    module = importlib.import_module(obj.__module__)
    found = {t.name: t for t in doctest.DocTestFinder().find(module)}
    test = found.get(key)
    assert test is not None and test.examples, f"{key}: the doctest finder reaches no example in {obj.__module__}"
    # the example shows a result: at least one line with expected output
    assert any(example.want.strip() for example in test.examples), f"{key}: the example checks no output"


@pytest.mark.parametrize("key", sorted(METRICS))
def test_metric_says_what_it_takes_and_returns(key):
    doc = inspect.getdoc(METRICS[key]) or ""
    assert "As input" in doc, f"{key}: no `As input` section"
    assert "As output" in doc, f"{key}: no `As output` section"


#: the torch.nn.Module API; a Metric may override `forward` (and torchmetrics' own API), nothing else of it
# forward and extra_repr are meant to be overridden; _apply is overridden on purpose by metrics/_base.ExactMetric
# (the states keep their exact dtype under every cast: .to(dtype), .half(), set_dtype, a parent module's cast)
MODULE_API = {name for name in dir(torch.nn.Module) if not name.startswith("__")} - {"forward", "extra_repr", "_apply"}


#: values for the constructor arguments some Metrics require (no default)
REQUIRED_ARGUMENTS = {"tolerance": 1.0, "num_classes": 2, "num_thresholds": 5, "levels": 3}


def _instance(cls):
    """``cls`` built with its required arguments (from :data:`REQUIRED_ARGUMENTS`) and ``validate_args=False``."""
    parameters = inspect.signature(cls).parameters
    args, kwargs = [], {}
    for name, p in parameters.items():
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            if p.kind == p.KEYWORD_ONLY:
                kwargs[name] = REQUIRED_ARGUMENTS[name]
            else:
                args.append(REQUIRED_ARGUMENTS[name])
    if "validate_args" in parameters:
        kwargs["validate_args"] = False
    return cls(*args, **kwargs)


@pytest.mark.parametrize("key", sorted(METRICS))
def test_metric_shadows_no_module_api(key):
    cls = METRICS[key]
    names = set(vars(_instance(cls)))
    for klass in cls.__mro__:
        if klass.__module__.startswith("segmetrics_torch"):
            names |= set(vars(klass))
    assert not names & MODULE_API, f"{key} shadows torch.nn.Module API: {sorted(names & MODULE_API)}"


def test_docstrings_hold_no_placeholder():
    """Docstrings are readable in the source: no ``{{name}}`` template filled at import anywhere in the package."""
    import pathlib

    import segmetrics_torch

    root = pathlib.Path(segmetrics_torch.__file__).parent
    placeholder = re.compile(r"^[ \t]*\{\{\w+\}\}[ \t]*$", re.MULTILINE)
    found = [str(p.relative_to(root)) for p in root.rglob("*.py") if placeholder.search(p.read_text(encoding="utf-8"))]
    assert not found, found


def test_shared_paragraphs_agree_with_their_copies():
    """Each shared paragraph (segmetrics_torch._docs) is held whole by at least two docstrings, and no docstring holds
    a part of one only: a copy edited alone, or the canonical text edited alone, leaves a partial copy."""
    from segmetrics_torch._docs import copies, partial_copies

    few = {name: holders for name, holders in copies().items() if len(holders) < 2}
    assert not few, f"paragraphs held whole by fewer than two docstrings: {few}"
    partial = partial_copies()
    assert not partial, f"docstrings holding part of a shared paragraph only (edit both): {partial}"


@pytest.mark.parametrize(
    ("name", "edit"),
    [
        ("loss_returns", lambda text: text.replace("at least", "at most")),
        # the longer line of a two-line paragraph
        ("surface_returns", lambda text: text.replace("for label maps", "for label images", 1)),
        # an edit in the first line, the rest re-wrapped: whole words are compared, not lines
        ("foreground_update", lambda text: " ".join(text.replace("As input", "As inputs", 1).split())),
    ],
)
def test_an_edited_copy_is_found(monkeypatch, name, edit):
    """The check can fail: a paragraph edited here (as if edited alone) leaves every copy partial."""
    from segmetrics_torch import _docs

    text = _docs.PARAGRAPHS[name]
    assert edit(text) != text
    monkeypatch.setitem(_docs.PARAGRAPHS, name, edit(text))
    assert len(_docs.partial_copies().get(name, [])) >= 2, name
