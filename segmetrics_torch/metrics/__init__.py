"""torchmetrics Metric classes, one module per family."""

from .boundary import BoundaryPR, MorphologicalBoundaryF
from .foreground import (
    MAE,
    Dice,
    EMeasure,
    FMeasure,
    ForegroundMeasures,
    IoU,
    SMeasure,
    WeightedFMeasure,
    flatten_results,
)

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
    "flatten_results",
]
