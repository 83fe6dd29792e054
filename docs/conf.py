"""Sphinx configuration of the documentation site: ``python -m sphinx -W --keep-going -b html docs docs/_build/html``.

The pages are the Markdown files of ``docs/`` (MyST), the API reference is autodoc on the docstrings (Google style,
napoleon), and three things are generated at build time, never copied: the measure tables from
``segmetrics_torch.registry`` (``_ext/measure_tables.py``), the command-line reference from the ``segmetrics``
parser (``_ext/cli_reference.py``) and the math, shown as its LaTeX source (``_ext/plain_math.py``: the site opens
offline, from ``file://``, and MathJax would be fetched from a CDN).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

from segmetrics_torch import __version__  # noqa: E402  (after the path set-up, as every conf.py)

project = "segmetrics-torch"
author = "the segmetrics-torch developers"
copyright = "the segmetrics-torch developers, Apache-2.0"
version = release = __version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "measure_tables",
    "cli_reference",
    "plain_math",
    "public_aliases",
    "readme_links",
    "public_modules",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# design/*.png are linked from design/README.md (design/draw_route.py draws them); _build is the default output
# folder
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# --- MyST: the pages link to each other's headings (`command-line.md#the-first-run-on-a-new-machine`)
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]

# --- autodoc + napoleon: the docstrings are Google style with Sphinx roles
autodoc_default_options = {"members": True, "undoc-members": True, "member-order": "bysource"}
autodoc_typehints = "signature"
# the package's modules are imported as a user would (nothing mocked); no extension of the build runs the docstring
# examples (pytest --doctest-modules does)
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
# a class docstring's "Attributes:" as fields: the attributes themselves are autodoc entries (undoc-members), and a
# second description of each from the section would be a duplicate object
napoleon_use_ivar = True

# --- HTML: the stock theme (alabaster ships with Sphinx), no external resources
html_theme = "alabaster"
html_title = f"segmetrics-torch {release}"
# wide tables (the measure tables have four long columns): the page takes the window's width
html_theme_options = {
    "description": "reference-exact segmentation measures",
    "fixed_sidebar": False,
    "page_width": "96%",
    "body_max_width": "none",
}
html_static_path: list[str] = []
html_show_sourcelink = False
html_copy_source = False
# the text as written: option names, quotes in code-like prose and the generated tables stay character for character
smartquotes = False
# _ext/plain_math.py: formulas as LaTeX source (MathJax would come from a CDN)
html_math_renderer = "plain"


# --- napoleon escapes a leading ``*args`` / ``**kwargs`` in an Args entry, but not one after a comma
# (``preds, target, **options: as ...``), which reST then reads as the start of bold text
_LATER_STARRED = re.compile(r"^(\s+[\w, ]+, )(\*\*?)(\w+:)")


def _escape_later_starred(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    for i, line in enumerate(lines):
        lines[i] = _LATER_STARRED.sub(lambda m: m[1] + m[2].replace("*", r"\*") + m[3], line)


def _drop_type_docstring(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """A constant without a ``#:`` comment would show its type's docstring (``tuple``'s, ``dict``'s): none instead."""
    if what in ("data", "attribute") and not isinstance(obj, type) and obj.__doc__ == type(obj).__doc__:
        lines.clear()


def _skip_field_aliases(app: Any, what: str, name: str, obj: Any, skip: bool, options: Any) -> bool | None:
    """A NamedTuple's fields are documented by its docstring's Attributes section; the generated field properties
    (docstring "Alias for field number N") would describe each field a second time (a duplicate object)."""
    if (getattr(obj, "__doc__", None) or "").startswith("Alias for field number"):
        return True
    return None


def setup(app: Any) -> None:
    # before napoleon's handler (priority 500), which turns the Args section into fields
    app.connect("autodoc-process-docstring", _escape_later_starred, priority=100)
    app.connect("autodoc-process-docstring", _drop_type_docstring, priority=50)
    app.connect("autodoc-skip-member", _skip_field_aliases)
