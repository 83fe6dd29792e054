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
    human_correction_effort,
    iou,
    mae,
    multiscale_iou,
    precision_recall,
    s_measure,
    size_invariant_mae,
    size_invariant_threshold_measures,
    threshold_measures,
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
    "human_correction_effort",
    "iou",
    "mae",
    "morphological_boundary_f",
    "multiscale_iou",
    "partition_measures",
    "precision_recall",
    "s_measure",
    "segmentation_boundaries",
    "size_invariant_mae",
    "size_invariant_threshold_measures",
    "threshold_measures",
    "weighted_f_measure",
]
