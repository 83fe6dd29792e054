"""pytest's root configuration for ``--doctest-modules`` (``[tool.pytest.ini_options]`` in pyproject.toml), which
imports every module under the test paths to collect the docstring examples of ``segmetrics_torch``.

``collect_ignore``: what must not be imported at collection (also when a ``pytest <path>`` names it): the benchmark
and example scripts, which do their work when imported (``tests/test_examples.py`` runs the examples as programs),
and copies of the package made by a build or by CI (``build/``, ``dist/``, ``.ci-venv/``).

The examples of HCE and the context measures need the ``opencv`` extra (OpenCV, scikit-image, scikit-learn); their
modules import it lazily, so they are collected always and skipped, with the reason, where it is not installed.
``pip install -e ".[test]"`` installs it, so CI runs them.
"""

from __future__ import annotations

import importlib.util

import pytest

collect_ignore = ["benchmarks", "examples", "build", "dist", ".ci-venv"]

#: docstring examples (object names) that need the `opencv` extra
NEEDS_OPENCV = frozenset(
    {
        "human_correction_effort",
        "HumanCorrectionEffort",
        "context_measure",
        "ContextMeasure",
        "camouflage_context_measure",
        "CamouflageContextMeasure",
    }
)
MISSING_OPENCV = [name for name in ("cv2", "skimage", "sklearn") if importlib.util.find_spec(name) is None]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not MISSING_OPENCV:
        return
    skip = pytest.mark.skip(reason=f"needs the `opencv` extra ({', '.join(MISSING_OPENCV)} not installed)")
    for item in items:
        if isinstance(item, pytest.DoctestItem) and item.name.rsplit(".", 1)[-1] in NEEDS_OPENCV:
            item.add_marker(skip)
