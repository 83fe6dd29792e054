"""One public object, documented under each public path that exports it, without duplicate-object warnings.

A Metric class is public as ``segmetrics_torch.MAE`` and ``segmetrics_torch.metrics.MAE``, a function as
``segmetrics_torch.functional.mae`` and ``segmetrics_torch.functional.foreground.mae``; the API reference documents
each path (a user looks up the one they import). autodoc gives every such entry the ``:canonical:`` name where the
object is defined (``segmetrics_torch.metrics.foreground.MAE``), an alias in the inventory, so two public paths
register the same alias twice, which Sphinx reports as a duplicate description even though both point at the same
object. Here a second *alias* of a name keeps the first one silently; a real duplicate (two descriptions of one
documented path, or an alias against a real description) still warns or resolves exactly as Sphinx does.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.domains.python import PythonDomain


class PublicAliasPythonDomain(PythonDomain):
    """The Python domain, with a repeated canonical alias kept once instead of reported."""

    def note_object(self, name: str, objtype: str, node_id: str, aliased: bool = False, location: Any = None) -> None:
        other = self.objects.get(name)
        if aliased and other is not None and other.aliased:
            return
        super().note_object(name, objtype, node_id, aliased=aliased, location=location)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_domain(PublicAliasPythonDomain, override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
