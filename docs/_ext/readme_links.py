"""Links from a docs page to the README (``../README.md#measures``) land on the site's entry page, which is the
README's text (``index.md`` includes it, and keeps its section headings).

MyST resolves a Markdown link to a ``.md`` file as a link to that document of the site; the README lies outside the
source folder (``docs/``), so MyST reports it as an unknown document. This rewrites such a link, after reading, to
``index`` with the same anchor; a heading the entry page lacks still fails the build.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx


def _to_entry_page(app: Sphinx, doctree: nodes.document) -> None:
    readme = str(Path(app.srcdir).resolve().parent / "README")
    for node in doctree.findall(addnodes.pending_xref):
        if node.get("refdomain") == "doc" and node.get("reftype") == "myst" and node.get("reftarget") == readme:
            node["reftarget"] = app.config.root_doc


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("doctree-read", _to_entry_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
