"""segmetrics-torch: reference-exact supervised evaluation measures for image segmentation, batched on any device.

Metric classes (torchmetrics) are importable from the top level; their functional twins live in
:mod:`segmetrics_torch.functional` and the plain numpy oracles in :mod:`segmetrics_torch.reference`.
"""

from .metrics import (
    MAE,
    BoundaryPR,
    Dice,
    EMeasure,
    FMeasure,
    ForegroundMeasures,
    IoU,
    MorphologicalBoundaryF,
    SMeasure,
    WeightedFMeasure,
    flatten_results,
)

__version__ = "0.1.0"

__all__ = [
    "MAE",
    "BoundaryPR",
    "Dice",
    "EMeasure",
    "FMeasure",
    "ForegroundMeasures",
    "IoU",
    "MorphologicalBoundaryF",
    "SMeasure",
    "WeightedFMeasure",
    "__version__",
    "flatten_results",
]
