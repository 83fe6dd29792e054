"""segmetrics-torch: reference-exact supervised evaluation measures for image segmentation, batched on any device.

Metric classes (torchmetrics) are importable from the top level; their functional twins live in
:mod:`segmetrics_torch.functional` and the plain numpy oracles in :mod:`segmetrics_torch.reference`.
"""

from __future__ import annotations

from ._lazy import attach_stub as _attach_stub

__version__ = "0.1.0"

# The public names are listed once, in __init__.pyi (static type checkers read it); the classes are imported on first
# use (PEP 562, see segmetrics_torch._lazy for why).
_API, __all__, __getattr__, __dir__ = _attach_stub(__name__, ("__version__",))
