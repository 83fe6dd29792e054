"""segmetrics-torch: reference-exact supervised evaluation measures for image segmentation, batched on any device.

Metric classes (torchmetrics) are importable from the top level; their functional twins live in
:mod:`segmetrics_torch.functional` and the plain numpy oracles in :mod:`segmetrics_torch.reference`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# The public API, one entry per name: name -> the submodule that defines it. It drives `__all__`, `__getattr__` and
# `__dir__`. The classes are imported on first use (PEP 562): torch, torchmetrics (which imports matplotlib and
# scipy.signal) and numba take ~2.5 s to import, and the `segmetrics` command starts its image-decoding workers before
# paying that (segmetrics_torch.app.report_run), so that decoding overlaps the import.
_API: dict[str, str] = {
    **dict.fromkeys(
        (
            "MAE",
            "BidirectionalConsistency",
            "BipartiteGraphMatching",
            "BoundaryPR",
            "Dice",
            "DirectionalHamming",
            "EMeasure",
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
            "ProposalRecall",
            "RegionBenchmark",
            "RegionPR",
            "SMeasure",
            "SegmentationCovering",
            "VanDongen",
            "VariationOfInformation",
            "WeightedFMeasure",
            "CamouflageContextMeasure",
            "ContextMeasure",
            "HumanCorrectionEffort",
            "MSIoU",
            "MultiScaleIoU",
            "SizeInvariantFMeasure",
            "SizeInvariantMAE",
            "ThresholdMeasures",
            "flatten_results",
            "AverageSurfaceDistance",
            "BoundaryIoU",
            "HausdorffDistance",
            "NormalizedSurfaceDistance",
            "SurfaceDistanceMeasures",
        ),
        ".metrics",
    ),
    **dict.fromkeys(("EMeasureLoss", "SoftFMeasureLoss", "SoftIoULoss", "WeightedFMeasureLoss"), ".losses"),
}

__all__ = sorted([*_API, "__version__"])

if TYPE_CHECKING:  # static type checkers read these explicit re-exports; tests/test_public_api.py checks
    # that they name exactly the entries of `_API`
    from .losses import (
        EMeasureLoss as EMeasureLoss,
    )
    from .losses import (
        SoftFMeasureLoss as SoftFMeasureLoss,
    )
    from .losses import (
        SoftIoULoss as SoftIoULoss,
    )
    from .losses import (
        WeightedFMeasureLoss as WeightedFMeasureLoss,
    )
    from .metrics import (
        MAE as MAE,
    )
    from .metrics import (
        AverageSurfaceDistance as AverageSurfaceDistance,
    )
    from .metrics import (
        BidirectionalConsistency as BidirectionalConsistency,
    )
    from .metrics import (
        BipartiteGraphMatching as BipartiteGraphMatching,
    )
    from .metrics import (
        BoundaryIoU as BoundaryIoU,
    )
    from .metrics import (
        BoundaryPR as BoundaryPR,
    )
    from .metrics import (
        CamouflageContextMeasure as CamouflageContextMeasure,
    )
    from .metrics import (
        ContextMeasure as ContextMeasure,
    )
    from .metrics import (
        Dice as Dice,
    )
    from .metrics import (
        DirectionalHamming as DirectionalHamming,
    )
    from .metrics import (
        EMeasure as EMeasure,
    )
    from .metrics import (
        FMeasure as FMeasure,
    )
    from .metrics import (
        ForegroundMeasures as ForegroundMeasures,
    )
    from .metrics import (
        GlobalConsistency as GlobalConsistency,
    )
    from .metrics import (
        HausdorffDistance as HausdorffDistance,
    )
    from .metrics import (
        HierarchyMeasures as HierarchyMeasures,
    )
    from .metrics import (
        HumanCorrectionEffort as HumanCorrectionEffort,
    )
    from .metrics import (
        IoU as IoU,
    )
    from .metrics import (
        LocalConsistency as LocalConsistency,
    )
    from .metrics import (
        MorphologicalBoundaryF as MorphologicalBoundaryF,
    )
    from .metrics import (
        MSIoU as MSIoU,
    )
    from .metrics import (
        MultiScaleIoU as MultiScaleIoU,
    )
    from .metrics import (
        NormalizedSurfaceDistance as NormalizedSurfaceDistance,
    )
    from .metrics import (
        NormalizedVariationOfInformation as NormalizedVariationOfInformation,
    )
    from .metrics import (
        ObjectsAndPartsPR as ObjectsAndPartsPR,
    )
    from .metrics import (
        PartitionBoundaryPR as PartitionBoundaryPR,
    )
    from .metrics import (
        PartitionMeasures as PartitionMeasures,
    )
    from .metrics import (
        ProbabilisticRandIndex as ProbabilisticRandIndex,
    )
    from .metrics import (
        ProposalRecall as ProposalRecall,
    )
    from .metrics import (
        RegionBenchmark as RegionBenchmark,
    )
    from .metrics import (
        RegionPR as RegionPR,
    )
    from .metrics import (
        SegmentationCovering as SegmentationCovering,
    )
    from .metrics import (
        SizeInvariantFMeasure as SizeInvariantFMeasure,
    )
    from .metrics import (
        SizeInvariantMAE as SizeInvariantMAE,
    )
    from .metrics import (
        SMeasure as SMeasure,
    )
    from .metrics import (
        SurfaceDistanceMeasures as SurfaceDistanceMeasures,
    )
    from .metrics import (
        ThresholdMeasures as ThresholdMeasures,
    )
    from .metrics import (
        VanDongen as VanDongen,
    )
    from .metrics import (
        VariationOfInformation as VariationOfInformation,
    )
    from .metrics import (
        WeightedFMeasure as WeightedFMeasure,
    )
    from .metrics import (
        flatten_results as flatten_results,
    )


def __getattr__(name: str) -> Any:
    if name in _API:
        value = getattr(importlib.import_module(_API[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
