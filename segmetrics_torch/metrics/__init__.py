"""torchmetrics Metric classes, one module per family."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# The public API, one entry per name: name -> the family module that defines it. It drives `__all__`, `__getattr__`
# and `__dir__`; a family is imported on first use of one of its names (PEP 562).
_API: dict[str, str] = {
    **dict.fromkeys(("BoundaryPR", "MorphologicalBoundaryF"), ".boundary"),
    **dict.fromkeys(
        (
            "MAE",
            "Dice",
            "EMeasure",
            "FMeasure",
            "ForegroundMeasures",
            "IoU",
            "SMeasure",
            "WeightedFMeasure",
            "flatten_results",
        ),
        ".foreground",
    ),
    **dict.fromkeys(
        (
            "BidirectionalConsistency",
            "BipartiteGraphMatching",
            "DirectionalHamming",
            "GlobalConsistency",
            "HierarchyMeasures",
            "LocalConsistency",
            "NormalizedVariationOfInformation",
            "ObjectsAndPartsPR",
            "PartitionBoundaryPR",
            "PartitionMeasures",
            "ProbabilisticRandIndex",
            "RegionBenchmark",
            "RegionPR",
            "SegmentationCovering",
            "VanDongen",
            "VariationOfInformation",
        ),
        ".partition",
    ),
    **dict.fromkeys(
        (
            "CamouflageContextMeasure",
            "ContextMeasure",
            "HumanCorrectionEffort",
            "MSIoU",
            "MultiScaleIoU",
            "SizeInvariantFMeasure",
            "SizeInvariantMAE",
            "ThresholdMeasures",
        ),
        ".foreground_extra",
    ),
    "ProposalRecall": ".proposals",
    **dict.fromkeys(
        ("AverageSurfaceDistance", "BoundaryIoU", "HausdorffDistance", "NormalizedSurfaceDistance",
         "SurfaceDistanceMeasures"),
        ".surface",
    ),
}

__all__ = sorted(_API)

if TYPE_CHECKING:  # static type checkers read these explicit re-exports; tests/test_public_api.py checks
    # that they name exactly the entries of `_API`
    from .boundary import (
        BoundaryPR as BoundaryPR,
    )
    from .boundary import (
        MorphologicalBoundaryF as MorphologicalBoundaryF,
    )
    from .foreground import (
        MAE as MAE,
    )
    from .foreground import (
        Dice as Dice,
    )
    from .foreground import (
        EMeasure as EMeasure,
    )
    from .foreground import (
        FMeasure as FMeasure,
    )
    from .foreground import (
        ForegroundMeasures as ForegroundMeasures,
    )
    from .foreground import (
        IoU as IoU,
    )
    from .foreground import (
        SMeasure as SMeasure,
    )
    from .foreground import (
        WeightedFMeasure as WeightedFMeasure,
    )
    from .foreground import (
        flatten_results as flatten_results,
    )
    from .foreground_extra import (
        CamouflageContextMeasure as CamouflageContextMeasure,
    )
    from .foreground_extra import (
        ContextMeasure as ContextMeasure,
    )
    from .foreground_extra import (
        HumanCorrectionEffort as HumanCorrectionEffort,
    )
    from .foreground_extra import (
        MSIoU as MSIoU,
    )
    from .foreground_extra import (
        MultiScaleIoU as MultiScaleIoU,
    )
    from .foreground_extra import (
        SizeInvariantFMeasure as SizeInvariantFMeasure,
    )
    from .foreground_extra import (
        SizeInvariantMAE as SizeInvariantMAE,
    )
    from .foreground_extra import (
        ThresholdMeasures as ThresholdMeasures,
    )
    from .partition import (
        BidirectionalConsistency as BidirectionalConsistency,
    )
    from .partition import (
        BipartiteGraphMatching as BipartiteGraphMatching,
    )
    from .partition import (
        DirectionalHamming as DirectionalHamming,
    )
    from .partition import (
        GlobalConsistency as GlobalConsistency,
    )
    from .partition import (
        HierarchyMeasures as HierarchyMeasures,
    )
    from .partition import (
        LocalConsistency as LocalConsistency,
    )
    from .partition import (
        NormalizedVariationOfInformation as NormalizedVariationOfInformation,
    )
    from .partition import (
        ObjectsAndPartsPR as ObjectsAndPartsPR,
    )
    from .partition import (
        PartitionBoundaryPR as PartitionBoundaryPR,
    )
    from .partition import (
        PartitionMeasures as PartitionMeasures,
    )
    from .partition import (
        ProbabilisticRandIndex as ProbabilisticRandIndex,
    )
    from .partition import (
        RegionBenchmark as RegionBenchmark,
    )
    from .partition import (
        RegionPR as RegionPR,
    )
    from .partition import (
        SegmentationCovering as SegmentationCovering,
    )
    from .partition import (
        VanDongen as VanDongen,
    )
    from .partition import (
        VariationOfInformation as VariationOfInformation,
    )
    from .proposals import (
        ProposalRecall as ProposalRecall,
    )
    from .surface import (
        AverageSurfaceDistance as AverageSurfaceDistance,
    )
    from .surface import (
        BoundaryIoU as BoundaryIoU,
    )
    from .surface import (
        HausdorffDistance as HausdorffDistance,
    )
    from .surface import (
        NormalizedSurfaceDistance as NormalizedSurfaceDistance,
    )
    from .surface import (
        SurfaceDistanceMeasures as SurfaceDistanceMeasures,
    )


def __getattr__(name: str) -> Any:
    if name in _API:
        value = getattr(importlib.import_module(_API[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
