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

__all__ = [
    "BoundaryCounts",
    "annotator_boundaries",
    "average_surface_distance",
    "boundary_iou",
    "boundary_pr",
    "boundary_pr_counts",
    "cl_dice",
    "hausdorff_distance",
    "hd95",
    "hierarchy_measures",
    "morphological_boundary_f",
    "normalized_surface_distance",
    "partition_measures",
    "segmentation_boundaries",
    "surface_distance_measures",
    "surface_distances",
]
__all__ += foreground.__all__
