"""The public names of ``segmetrics_torch``: the one table of its lazy exports. Static type checkers read it as
the package's types; at import, :func:`segmetrics_torch._lazy.attach_stub` reads the same imports to build
``__all__``, ``__getattr__`` (each name imported from its module on first use) and ``__dir__``."""

__version__: str

from .losses import (
    EMeasureLoss as EMeasureLoss,
    SoftFMeasureLoss as SoftFMeasureLoss,
    SoftIoULoss as SoftIoULoss,
    WeightedFMeasureLoss as WeightedFMeasureLoss,
)
from .metrics import (
    MAE as MAE,
    AverageSurfaceDistance as AverageSurfaceDistance,
    BidirectionalConsistency as BidirectionalConsistency,
    BipartiteGraphMatching as BipartiteGraphMatching,
    BoundaryIoU as BoundaryIoU,
    BoundaryPR as BoundaryPR,
    CamouflageContextMeasure as CamouflageContextMeasure,
    ContextMeasure as ContextMeasure,
    Dice as Dice,
    DirectionalHamming as DirectionalHamming,
    EMeasure as EMeasure,
    FMeasure as FMeasure,
    ForegroundMeasures as ForegroundMeasures,
    GlobalConsistency as GlobalConsistency,
    HausdorffDistance as HausdorffDistance,
    HierarchyMeasures as HierarchyMeasures,
    HumanCorrectionEffort as HumanCorrectionEffort,
    IoU as IoU,
    LocalConsistency as LocalConsistency,
    MorphologicalBoundaryF as MorphologicalBoundaryF,
    MultiScaleIoU as MultiScaleIoU,
    NormalizedSurfaceDistance as NormalizedSurfaceDistance,
    NormalizedVariationOfInformation as NormalizedVariationOfInformation,
    ObjectsAndPartsPR as ObjectsAndPartsPR,
    PartitionBoundaryPR as PartitionBoundaryPR,
    PartitionMeasures as PartitionMeasures,
    ProbabilisticRandIndex as ProbabilisticRandIndex,
    ProposalRecall as ProposalRecall,
    RegionBenchmark as RegionBenchmark,
    RegionPR as RegionPR,
    SegmentationCovering as SegmentationCovering,
    SizeInvariantMAE as SizeInvariantMAE,
    SizeInvariantThresholdMeasures as SizeInvariantThresholdMeasures,
    SMeasure as SMeasure,
    SurfaceDistanceMeasures as SurfaceDistanceMeasures,
    ThresholdMeasures as ThresholdMeasures,
    VanDongen as VanDongen,
    VariationOfInformation as VariationOfInformation,
    WeightedFMeasure as WeightedFMeasure,
    flatten_results as flatten_results,
)
