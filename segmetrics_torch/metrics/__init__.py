"""torchmetrics Metric classes, one module per family."""

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
    "Dice",
    "EMeasure",
    "FMeasure",
    "ForegroundMeasures",
    "IoU",
    "SMeasure",
    "WeightedFMeasure",
    "flatten_results",
]
