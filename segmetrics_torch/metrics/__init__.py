"""torchmetrics Metric classes, one module per family."""

from __future__ import annotations

from .._lazy import attach_stub as _attach_stub

# The public names are listed once, in __init__.pyi (static type checkers read it); a family module is imported on
# first use of one of its names (PEP 562).
_API, __all__, __getattr__, __dir__ = _attach_stub(__name__)
