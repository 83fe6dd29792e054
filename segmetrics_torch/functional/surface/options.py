"""The keywords every boundary-distance function and Metric shares, typed once.

The seven functions of the family (and the five Metrics) read their inputs the same way and, but for Boundary IoU,
compute their distances the same way, so they share these keywords. Each function names its own arguments (``directed``,
``percentile``, ``tolerance``, ...) and takes the shared ones as ``**options: Unpack[DistanceOptions]`` (PEP 692):
type checkers and IDEs check and complete them from the TypedDicts below, and :func:`with_defaults` checks them at
run time (an unknown keyword is Python's ``TypeError``, with the nearest accepted name). What each keyword means:
:func:`~segmetrics_torch.functional.surface.hausdorff_distance`.

Example:
    >>> with_defaults("boundary_iou", {"num_classes": 3}, MASK_DEFAULTS)["num_classes"]
    3
    >>> with_defaults("boundary_iou", {"num_clases": 3}, MASK_DEFAULTS)
    Traceback (most recent call last):
    ...
    TypeError: boundary_iou() got an unexpected keyword argument 'num_clases' (did you mean 'num_classes'?)
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from ..._checks import with_defaults

__all__ = [
    "DISTANCE_DEFAULTS",
    "MASK_DEFAULTS",
    "Convention",
    "DistanceMetric",
    "DistanceOptions",
    "InputFormat",
    "MaskOptions",
    "with_defaults",
]


#: the reference whose rules a measure follows
Convention = Literal["monai", "medpy", "deepmind", "torchmetrics"]
#: the point-to-point distance (MONAI's and TorchMetrics' names)
DistanceMetric = Literal["euclidean", "chessboard", "taxicab"]
#: TorchMetrics' input layouts
InputFormat = Literal["index", "one-hot", "mixed"]


class MaskOptions(TypedDict, total=False):
    """How the inputs are read: binary masks, label maps or one-hot channels (every measure of the family)."""

    num_classes: int | None
    include_background: bool
    ignore_index: int | None
    input_format: InputFormat
    validate_args: bool


class DistanceOptions(MaskOptions, total=False):
    """How the distances are computed: whose rules, in which units and metric (the distance measures)."""

    convention: Convention
    spacing: object
    distance_metric: DistanceMetric
    connectivity: int


#: the defaults of :class:`MaskOptions`
MASK_DEFAULTS: dict[str, Any] = {
    "num_classes": None,
    "include_background": False,
    "ignore_index": None,
    "input_format": "index",
    "validate_args": True,
}
#: the defaults of :class:`DistanceOptions`
DISTANCE_DEFAULTS: dict[str, Any] = {
    **MASK_DEFAULTS,
    "convention": "monai",
    "spacing": None,
    "distance_metric": "euclidean",
    "connectivity": 1,
}
