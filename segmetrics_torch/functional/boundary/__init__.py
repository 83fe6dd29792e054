"""Functional boundary measures: the BSDS boundary benchmark and the morphological boundary F (DAVIS)."""

from .bsds import (
    INPUT_FORMATS,
    BoundaryCounts,
    InputFormat,
    annotator_boundaries,
    boundary_pr,
    boundary_pr_counts,
    default_thresholds,
    segmentation_boundaries,
    summarize_counts,
)
from .morphological import boundary_radius, morphological_boundary_f
from .summary import (
    average_precision,
    best_f_interpolated,
    boundary_summary,
    matlab_linspace,
    ois_counts,
    precision_recall_f,
    recall_at_precision,
)

__all__ = [
    "INPUT_FORMATS",
    "BoundaryCounts",
    "InputFormat",
    "annotator_boundaries",
    "average_precision",
    "best_f_interpolated",
    "boundary_pr",
    "boundary_pr_counts",
    "boundary_radius",
    "boundary_summary",
    "default_thresholds",
    "matlab_linspace",
    "morphological_boundary_f",
    "ois_counts",
    "precision_recall_f",
    "recall_at_precision",
    "segmentation_boundaries",
    "summarize_counts",
]
