"""segmetrics-torch: reference-exact supervised evaluation measures for image segmentation, batched on any device.

Metric classes (torchmetrics) are importable from the top level; their functional twins live in
:mod:`segmetrics_torch.functional` and the plain numpy oracles in :mod:`segmetrics_torch.reference`.
"""

from .losses import EMeasureLoss, SoftFMeasureLoss, SoftIoULoss, WeightedFMeasureLoss
from .metrics import (
    MAE,
    BidirectionalConsistency,
    BipartiteGraphMatching,
    BoundaryPR,
    Dice,
    DirectionalHamming,
    EMeasure,
    FMeasure,
    ForegroundMeasures,
    GlobalConsistency,
    HierarchyMeasures,
    IoU,
    LocalConsistency,
    MorphologicalBoundaryF,
    NormalizedVariationOfInformation,
    ObjectsAndPartsPR,
    PartitionBoundaryPR,
    PartitionMeasures,
    ProbabilisticRandIndex,
    RegionBenchmark,
    RegionPR,
    SegmentationCovering,
    SMeasure,
    VanDongen,
    VariationOfInformation,
    WeightedFMeasure,
    flatten_results,
)

__version__ = "0.1.0"

__all__ = [
    "MAE",
    "BidirectionalConsistency",
    "BipartiteGraphMatching",
    "BoundaryPR",
    "Dice",
    "DirectionalHamming",
    "EMeasure",
    "EMeasureLoss",
    "FMeasure",
    "ForegroundMeasures",
    "GlobalConsistency",
    "HierarchyMeasures",
    "IoU",
    "LocalConsistency",
    "MorphologicalBoundaryF",
    "NormalizedVariationOfInformation",
    "ObjectsAndPartsPR",
    "PartitionBoundaryPR",
    "PartitionMeasures",
    "ProbabilisticRandIndex",
    "RegionBenchmark",
    "RegionPR",
    "SMeasure",
    "SegmentationCovering",
    "SoftFMeasureLoss",
    "SoftIoULoss",
    "VanDongen",
    "VariationOfInformation",
    "WeightedFMeasure",
    "WeightedFMeasureLoss",
    "__version__",
    "flatten_results",
]
