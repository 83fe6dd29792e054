"""Boundary-distance measures: Hausdorff (directed, symmetric, percentile), average surface distance (ASD / ASSD),
normalised surface distance (surface Dice), Boundary IoU and clDice, each reproducing MONAI, MedPy, DeepMind
``surface-distance`` or TorchMetrics by name (``convention=``). See ``docs/surface-distances.md``."""

from ._inputs import CONVENTIONS, EmptyMaskWarning
from .aggregation import (
    AGGREGATION_REFERENCES,
    AGGREGATIONS,
    AggregatedDistances,
    aggregate_distances,
    empty_sides,
)
from .average_distance import average_surface_distance
from .boundary_iou import boundary_iou
from .cldice import ClDiceWarning, cl_dice, soft_cl_dice_loss, soft_skeleton
from .distances import SurfaceDistances, point_set_distances, surface_distances
from .edges import boundary_band, boundary_dilation, corner_codes, corner_surfels, inner_boundary, surfel_size_table
from .hausdorff import hausdorff_distance, hd95
from .summary import surface_distance_measures
from .surface_dice import normalized_surface_distance

__all__ = [
    "AGGREGATIONS",
    "AGGREGATION_REFERENCES",
    "CONVENTIONS",
    "AggregatedDistances",
    "ClDiceWarning",
    "EmptyMaskWarning",
    "SurfaceDistances",
    "aggregate_distances",
    "average_surface_distance",
    "boundary_band",
    "boundary_dilation",
    "boundary_iou",
    "cl_dice",
    "corner_codes",
    "corner_surfels",
    "empty_sides",
    "hausdorff_distance",
    "hd95",
    "inner_boundary",
    "normalized_surface_distance",
    "point_set_distances",
    "soft_cl_dice_loss",
    "soft_skeleton",
    "surface_distance_measures",
    "surface_distances",
    "surfel_size_table",
]
