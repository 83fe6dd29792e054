"""segmetrics-torch: reference-exact supervised evaluation measures for image segmentation, batched on any device.

Metric classes (torchmetrics) are importable from the top level; their functional twins live in
:mod:`segmetrics_torch.functional` and the plain numpy oracles in :mod:`segmetrics_torch.reference`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
        MSIoU,
        MultiScaleIoU,
        NormalizedVariationOfInformation,
        ObjectsAndPartsPR,
        PartitionBoundaryPR,
        PartitionMeasures,
        ProbabilisticRandIndex,
        ProposalRecall,
        RegionBenchmark,
        RegionPR,
        SegmentationCovering,
        SizeInvariantFMeasure,
        SizeInvariantMAE,
        SMeasure,
        ThresholdMeasures,
        VanDongen,
        VariationOfInformation,
        WeightedFMeasure,
        flatten_results,
    )

# The public classes are imported on first use (PEP 562): torch, torchmetrics (which imports matplotlib and
# scipy.signal) and numba take ~2.5 s to import, and the `segmetrics` command starts its image-decoding workers
# before paying that (segmetrics_torch.suite), so that decoding overlaps the import.
_LOSSES = ("EMeasureLoss", "SoftFMeasureLoss", "SoftIoULoss", "WeightedFMeasureLoss")


def __getattr__(name: str) -> Any:
    if name in _LOSSES or (name in __all__ and name != "__version__"):
        module = importlib.import_module(".losses" if name in _LOSSES else ".metrics", __name__)
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__version__ = "0.1.0"

__all__ = [
    "MAE",
    "BidirectionalConsistency",
    "BipartiteGraphMatching",
    "BoundaryPR",
    "CamouflageContextMeasure",
    "ContextMeasure",
    "Dice",
    "DirectionalHamming",
    "EMeasure",
    "EMeasureLoss",
    "FMeasure",
    "ForegroundMeasures",
    "GlobalConsistency",
    "HierarchyMeasures",
    "HumanCorrectionEffort",
    "IoU",
    "LocalConsistency",
    "MSIoU",
    "MorphologicalBoundaryF",
    "MultiScaleIoU",
    "NormalizedVariationOfInformation",
    "ObjectsAndPartsPR",
    "PartitionBoundaryPR",
    "PartitionMeasures",
    "ProbabilisticRandIndex",
    "ProposalRecall",
    "RegionBenchmark",
    "RegionPR",
    "SMeasure",
    "SegmentationCovering",
    "SizeInvariantFMeasure",
    "SizeInvariantMAE",
    "SoftFMeasureLoss",
    "SoftIoULoss",
    "ThresholdMeasures",
    "VanDongen",
    "VariationOfInformation",
    "WeightedFMeasure",
    "WeightedFMeasureLoss",
    "__version__",
    "flatten_results",
]
