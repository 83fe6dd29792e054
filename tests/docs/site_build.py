"""The documentation site, built once per test session with warnings as errors: the fixture ``docs_site`` of
``tests/docs`` (through its ``conftest.py``) and of ``tests/browser/test_docs_site_browser.py`` (which imports it).

The build runs as CI's does (``python -m sphinx -W --keep-going -b html docs OUT``), in a child process, into a
temporary folder. A failing build fails the test that asked for it with Sphinx's own messages. Where Sphinx or
MyST-Parser is not installed (the ``docs`` extra; a user's clone) the tests skip with the reason; with
``SEGMETRICS_REQUIRE_SHARED=1`` (CI) they fail instead, as the browser tests do.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: what the site's build needs (pyproject's ``docs`` extra)
NEEDS = ("sphinx", "myst_parser")


@dataclass(frozen=True)
class Site:
    """A built site: its HTML folder, the build's output, and the files of ``docs/`` before and after the build."""

    html: Path
    log: str
    sources_before: frozenset[str]
    sources_after: frozenset[str]

    def page(self, name: str) -> Path:
        """The HTML file of a page (``"index"``, ``"reference/segmetrics_torch"``)."""
        return self.html / f"{name}.html"


_BUILT: dict[str, Site | str] = {}


def _missing(reason: str) -> None:
    if os.environ.get("SEGMETRICS_REQUIRE_SHARED") == "1":
        pytest.fail(f"SEGMETRICS_REQUIRE_SHARED=1 but {reason}")
    pytest.skip(reason)


def _sources() -> frozenset[str]:
    """The files of docs/ (a local ``docs/_build`` and Python's byte-code caches left out)."""
    skip = {"_build", "__pycache__"}
    return frozenset(
        str(path.relative_to(DOCS)) for path in DOCS.rglob("*") if not skip & set(path.relative_to(DOCS).parts)
    )


def build_site(out: Path) -> Site | str:
    """Build the site into ``out`` (``-W --keep-going``): the :class:`Site`, or Sphinx's messages on failure."""
    before = _sources()
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS), str(out / "html")],
        cwd=ROOT,
        # the extensions in docs/_ext are imported from the source folder: no byte-code written there
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    log = done.stdout + done.stderr
    if done.returncode != 0:
        return f"the documentation build failed (exit {done.returncode}):\n{log}"
    return Site(out / "html", log, before, _sources())


@pytest.fixture(scope="session")
def docs_site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """The site, built once per session (every module that imports this fixture shares the one build)."""
    for name in NEEDS:
        if importlib.util.find_spec(name) is None:
            _missing(f"{name} is not installed (pip install -e '.[docs]')")
    if "site" not in _BUILT:
        _BUILT["site"] = build_site(tmp_path_factory.mktemp("docs_site"))
    built = _BUILT["site"]
    if isinstance(built, str):
        pytest.fail(built, pytrace=False)
    return built
