"""The public names of ``segmetrics_torch.metrics``, one family module each: the one table of its lazy exports
(read by static type checkers, and at import by :func:`segmetrics_torch._lazy.attach_stub`). Generated from each
family module's ``__all__`` by ``python -m segmetrics_torch._stubs``: edit those lists, not this file."""

from .boundary import (
    BoundaryPR as BoundaryPR,
    MorphologicalBoundaryF as MorphologicalBoundaryF,
)
from .foreground import (
    MAE as MAE,
    Dice as Dice,
    EMeasure as EMeasure,
    FMeasure as FMeasure,
    ForegroundMeasures as ForegroundMeasures,
    IoU as IoU,
    SMeasure as SMeasure,
    WeightedFMeasure as WeightedFMeasure,
    flatten_results as flatten_results,
)
from .foreground_extra import (
    CamouflageContextMeasure as CamouflageContextMeasure,
    ContextMeasure as ContextMeasure,
    HumanCorrectionEffort as HumanCorrectionEffort,
    MultiScaleIoU as MultiScaleIoU,
    SizeInvariantMAE as SizeInvariantMAE,
    SizeInvariantThresholdMeasures as SizeInvariantThresholdMeasures,
    ThresholdMeasures as ThresholdMeasures,
)
from .matlab_toolbox import (
    MatlabToolboxMeasures as MatlabToolboxMeasures,
)
from .partition import (
    BidirectionalConsistency as BidirectionalConsistency,
    BipartiteGraphMatching as BipartiteGraphMatching,
    DirectionalHamming as DirectionalHamming,
    GlobalConsistency as GlobalConsistency,
    HierarchyMeasures as HierarchyMeasures,
    LocalConsistency as LocalConsistency,
    NormalizedVariationOfInformation as NormalizedVariationOfInformation,
    ObjectsAndPartsPR as ObjectsAndPartsPR,
    PartitionBoundaryPR as PartitionBoundaryPR,
    PartitionMeasures as PartitionMeasures,
    ProbabilisticRandIndex as ProbabilisticRandIndex,
    RegionBenchmark as RegionBenchmark,
    RegionPR as RegionPR,
    SegmentationCovering as SegmentationCovering,
    VanDongen as VanDongen,
    VariationOfInformation as VariationOfInformation,
)
from .proposals import (
    ProposalRecall as ProposalRecall,
)
from .semantic_boundary import (
    SemanticBoundaryPR as SemanticBoundaryPR,
)
from .surface import (
    AverageSurfaceDistance as AverageSurfaceDistance,
    BoundaryIoU as BoundaryIoU,
    ClDice as ClDice,
    HausdorffDistance as HausdorffDistance,
    NormalizedSurfaceDistance as NormalizedSurfaceDistance,
    SurfaceDistanceMeasures as SurfaceDistanceMeasures,
)
from .video import (
    VideoObjectSegmentation as VideoObjectSegmentation,
)
