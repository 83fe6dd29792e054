"""Math shown as its LaTeX source, in the page's own markup: no script, nothing fetched.

Sphinx renders ``:math:`` and ``.. math::`` with MathJax by default, loaded from a CDN, which a page opened offline
from ``file://`` cannot reach (and the browser test forbids any network request). The docstrings' formulas are short
and written to be read as source too (``help()`` shows them so), so the site shows the same text, in a ``code`` span
(inline) or a ``pre`` block (display), with the class ``math`` for styling.
"""

from __future__ import annotations

from html import escape
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx


def _inline(self: Any, node: nodes.Element) -> None:
    self.body.append(f'<code class="docutils literal notranslate math">{escape(node.astext())}</code>')
    raise nodes.SkipNode


def _block(self: Any, node: nodes.Element) -> None:
    self.body.append(f'<div class="math"><pre>{escape(node.astext())}</pre></div>\n')
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_html_math_renderer("plain", (_inline, None), (_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
