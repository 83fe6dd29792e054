"""Functional API: pure functions returning per-image values; the Metric classes accumulate them."""

from .boundary import (
    BoundaryCounts,
    annotator_boundaries,
    boundary_pr,
    boundary_pr_counts,
    morphological_boundary_f,
    segmentation_boundaries,
)
from .foreground import (
    FOREGROUND_KEYS,
    dice,
    e_measure,
    f_measure,
    foreground_measures,
    iou,
    mae,
    precision_recall,
    s_measure,
    weighted_f_measure,
)
from .partition import hierarchy_measures, partition_measures

__all__ = [
    "FOREGROUND_KEYS",
    "BoundaryCounts",
    "annotator_boundaries",
    "boundary_pr",
    "boundary_pr_counts",
    "dice",
    "e_measure",
    "f_measure",
    "foreground_measures",
    "hierarchy_measures",
    "iou",
    "mae",
    "morphological_boundary_f",
    "partition_measures",
    "precision_recall",
    "s_measure",
    "segmentation_boundaries",
    "weighted_f_measure",
]
