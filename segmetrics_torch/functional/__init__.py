"""Functional API: pure functions returning per-image values; the Metric classes accumulate them."""

from . import foreground
from .boundary import (
    BoundaryCounts,
    annotator_boundaries,
    boundary_pr,
    boundary_pr_counts,
    morphological_boundary_f,
    segmentation_boundaries,
)
from .foreground import *  # noqa: F403  (the foreground measures: foreground.__all__)
from .partition import hierarchy_measures, partition_measures
from .semantic_boundary import semantic_boundary_counts, semantic_boundary_pr, semantic_boundary_protocol
from .surface import (
    average_surface_distance,
    boundary_iou,
    cl_dice,
    hausdorff_distance,
    hd95,
    normalized_surface_distance,
    surface_distance_measures,
    surface_distances,
)
from .video import (
    davis_global_csv,
    davis_j_and_f,
    davis_per_sequence_csv,
    davis_sequence,
    davis_statistics,
    evaluate_davis,
)

__all__ = [
    "BoundaryCounts",
    "annotator_boundaries",
    "average_surface_distance",
    "boundary_iou",
    "boundary_pr",
    "boundary_pr_counts",
    "cl_dice",
    "davis_global_csv",
    "davis_j_and_f",
    "davis_per_sequence_csv",
    "davis_sequence",
    "davis_statistics",
    "evaluate_davis",
    "hausdorff_distance",
    "hd95",
    "hierarchy_measures",
    "morphological_boundary_f",
    "normalized_surface_distance",
    "partition_measures",
    "segmentation_boundaries",
    "semantic_boundary_counts",
    "semantic_boundary_pr",
    "semantic_boundary_protocol",
    "surface_distance_measures",
    "surface_distances",
]
__all__ += foreground.__all__
