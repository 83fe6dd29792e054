"""Normalised surface distance (surface Dice) at a tolerance."""

from __future__ import annotations

from torch import Tensor

from ._inputs import check_convention
from ._rules import check_tolerances, nsd_rule, reduce_pairs
from .distances import check_corners, check_metric, convention_distances

__all__ = ["normalized_surface_distance"]


def normalized_surface_distance(
    preds: object,
    target: object,
    *,
    tolerance: float | list[float],
    convention: str = "monai",
    use_subvoxels: bool = False,
    spacing: object = None,
    distance_metric: str = "euclidean",
    num_classes: int | None = None,
    include_background: bool = False,
    ignore_index: int | None = None,
    input_format: str = "index",
    validate_args: bool = True,
) -> Tensor:
    r"""Per-image (and per-class) surface Dice: the fraction of both boundaries within ``tolerance`` of the other.

    .. math::
        \mathrm{NSD}_\tau = \frac{\sum_{x \in \partial P,\, d(x, \partial G) \le \tau} a_x
        + \sum_{y \in \partial G,\, d(y, \partial P) \le \tau} a_y}
        {\sum_{x \in \partial P} a_x + \sum_{y \in \partial G} a_y}

    (Nikolov et al., "Clinically applicable segmentation of head and neck anatomy for radiotherapy", JMIR 2021). The
    test is ``<=`` in both references; ``tolerance`` is in spacing units (mm when ``spacing`` is in mm; MONAI's
    docstring says "pixels", its code uses spacing units).

    * ``"monai"`` (default; ``compute_surface_dice``): voxel-centre edges, :math:`a = 1` (point counts).
      ``use_subvoxels=True`` is MONAI's corner-surfel mode, identical to DeepMind's.
    * ``"deepmind"`` (``compute_surface_dice_at_tolerance``): corner surfels, :math:`a` = contour length (2-D) or
      marching-cubes area (3-D) with ``spacing``.

    Empty masks (warns, naming the image and class): one empty gives 0.0, both ``NaN``, in both references (DeepMind
    0.1 on numpy 1.x).

    Args:
        tolerance: τ, one number, or one per output class (MONAI's ``class_thresholds``); finite and >= 0.
        use_subvoxels: corner surfels weighted by their size (``"monai"``; always on for ``"deepmind"``).
        preds, target, spacing, distance_metric, num_classes, include_background, ignore_index, validate_args: as
            :func:`~segmetrics_torch.functional.surface.hausdorff_distance`.

    Returns:
        (B,) float64 for binary masks, (B, C') for label maps.

    Example:
        >>> import torch
        >>> g = torch.zeros(1, 20, 20, dtype=torch.bool); g[0, 5:11, 5:11] = True
        >>> p = torch.zeros(1, 20, 20, dtype=torch.bool); p[0, 7:13, 6:13] = True
        >>> [round(float(normalized_surface_distance(p, g, tolerance=1.0, convention=c)[0]), 4)
        ...  for c in ("monai", "deepmind")]
        [0.4048, 0.3864]
    """
    name = check_convention(convention, ("monai", "deepmind"), "the normalized surface distance")
    corners = check_corners(name, use_subvoxels)
    metric = check_metric(distance_metric, name)
    pairs, results = convention_distances(
        preds, target, convention=name, corners=corners, distance_metric=metric,
        spacing=spacing, num_classes=num_classes, include_background=include_background, ignore_index=ignore_index,
        input_format=input_format,
        validate_args=validate_args,
    )  # fmt: skip
    tolerances = check_tolerances(tolerance, len(pairs.class_ids))
    return reduce_pairs(pairs, results, nsd_rule(name, tolerances), per_column=True)
