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

from typing import Any, Literal, TypedDict, get_args

from ..._checks import with_defaults as with_defaults  # the shared check, for the family's modules

# what the family's package exports from here (the rest is its modules' and Metrics' shared typing)
__all__ = ["CONVENTIONS", "EmptyMaskWarning"]


#: the reference whose rules a measure follows
Convention = Literal["monai", "medpy", "deepmind", "torchmetrics"]
#: the point-to-point distance (MONAI's and TorchMetrics' names)
DistanceMetric = Literal["euclidean", "chessboard", "taxicab"]
#: TorchMetrics' input layouts
InputFormat = Literal["index", "one-hot", "mixed"]


#: the reference implementations whose rules ``convention=`` reproduces
CONVENTIONS: tuple[str, ...] = get_args(Convention)
#: MONAI's and TorchMetrics' names of the point-to-point distances
DISTANCE_METRICS: tuple[str, ...] = get_args(DistanceMetric)
#: TorchMetrics' names of the input layouts: "index" (masks, or label maps with ``num_classes``: this package's
#: default), "one-hot" ((B, C, *spatial) channels; floating scores are arg-maxed over the channels) and "mixed" (one
#: side one-hot, the other index labels)
INPUT_FORMATS: tuple[str, ...] = get_args(InputFormat)


class EmptyMaskWarning(UserWarning):
    """A prediction or ground truth of one (image, class) pair has no foreground: the measure is inf, NaN or 0.

    Besides its message it names the pair: ``image`` (the index in the batch), ``class_id`` (None for masks) and
    ``what`` ("prediction is", "ground truth is" or "prediction and ground truth are" empty), so that a caller can
    name the pair its own way (the command names the file), and the ``measure`` with the ``value`` it returned.

    Example:
        >>> import torch, warnings
        >>> from segmetrics_torch.functional.surface import hausdorff_distance
        >>> g = torch.zeros(2, 8, 8, dtype=torch.bool); g[:, 2:5, 2:5] = True
        >>> p = g.clone(); p[1] = False  # the second prediction misses the structure
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     values = hausdorff_distance(p, g)
        >>> values.tolist()
        [0.0, inf]
        >>> [w] = [c.message for c in caught if c.category is EmptyMaskWarning]
        >>> w.image, w.class_id, w.what, w.measure, w.value
        (1, None, 'prediction is', 'hausdorff_distance', 'inf')
    """

    def __init__(
        self,
        message: str,
        image: int = -1,
        class_id: int | None = None,
        what: str = "",
        measure: str = "",
        value: str = "",
    ) -> None:
        super().__init__(message)
        self.image, self.class_id, self.what, self.measure, self.value = image, class_id, what, measure, value


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
