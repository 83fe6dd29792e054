"""The measure tables, generated from the registry: ``{measure-table} foreground`` in a MyST page renders
:func:`segmetrics_torch.registry.render_table` of that name (a key of ``registry.TABLES``), so the site shows the rows
the README's generated tables come from, never a copy.

The rows are Markdown written for the README (at the repository's root): their links to ``docs/x.md`` are rewritten
relative to the page that shows the table. The directive parses them with the page's own (MyST) parser, so it is
for Markdown pages.
"""

from __future__ import annotations

import posixpath
from typing import Any, ClassVar

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from segmetrics_torch import registry
from segmetrics_torch.registry import TABLES, render_table


class MeasureTable(SphinxDirective):
    """``{measure-table} NAME``: the measure table ``NAME`` of ``registry.TABLES``."""

    required_arguments = 1
    has_content = False
    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        if name not in TABLES:
            raise self.error(f"unknown measure table {name!r}: expected one of {', '.join(TABLES)}")
        # the README sits one folder above docs/: its `docs/x.md` is `x.md` from docs/, `../x.md` from docs/sub/
        here = posixpath.dirname(self.env.docname)
        prefix = posixpath.relpath(".", here or ".") + "/" if here else ""
        text = render_table(name).replace("](docs/", f"]({prefix}")
        # the page is read again when the registry changes (an incremental build would keep the old rows)
        self.env.note_dependency(registry.__file__)
        container = nodes.container(classes=["measure-table", f"measure-table-{name}"])
        self.state.nested_parse(StringList(text.splitlines(), source=f"registry.TABLES[{name!r}]"), 0, container)
        return [container]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("measure-table", MeasureTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
