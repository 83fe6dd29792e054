"""Normalised surface distance (surface Dice) at a tolerance."""

from __future__ import annotations

from typing import Unpack

from torch import Tensor

from ._rules import check_tolerances, nsd_rule, reduce_pairs
from .distances import check_corners, convention_distances, distance_settings
from .options import DistanceOptions

__all__ = ["normalized_surface_distance"]


def normalized_surface_distance(
    preds: object,
    target: object,
    *,
    tolerance: float | list[float],
    use_subvoxels: bool = False,
    **options: Unpack[DistanceOptions],
) -> Tensor:
    r"""Per-image (and per-class) surface Dice: the fraction of both boundaries within ``tolerance`` of the other.

    .. math::
        \mathrm{NSD}_\tau = \frac{\sum_{x \in \partial P,\, d(x, \partial G) \le \tau} a_x
        + \sum_{y \in \partial G,\, d(y, \partial P) \le \tau} a_y}
        {\sum_{x \in \partial P} a_x + \sum_{y \in \partial G} a_y}

    (Nikolov et al., "Clinically applicable segmentation of head and neck anatomy for radiotherapy", JMIR 2021). The
    test is ``<=`` in both references, MONAI's on its distances cast to float32 (and the tolerance with them: a
    distance of 0.30000000000000004 is within 0.3 there), DeepMind's in float64, as here by convention; the
    distances are scipy's bits (each offset times its spacing, squared, added in axis order), so that a tolerance of
    whole voxels falls where the references' does. ``tolerance`` is in spacing units (mm when ``spacing`` is in mm;
    MONAI's docstring says "pixels", its code uses spacing units).

    * ``"monai"`` (default; ``compute_surface_dice``): voxel-centre edges, :math:`a = 1` (point counts).
      ``use_subvoxels=True`` is MONAI's corner-surfel mode, identical to DeepMind's.
    * ``"deepmind"`` (``compute_surface_dice_at_tolerance``): corner surfels, :math:`a` = contour length (2-D) or
      marching-cubes area (3-D) with ``spacing``.

    Empty masks (warns, naming the image and class): one empty gives 0.0, both ``NaN``, in both references (DeepMind
    0.1 on numpy 1.x).

    Args:
        tolerance: τ, one number, or one per output class (MONAI's ``class_thresholds``); finite and >= 0.
        use_subvoxels: corner surfels weighted by their size (``"monai"``; always on for ``"deepmind"``).
        preds, target, **options: as :func:`~segmetrics_torch.functional.surface.hausdorff_distance` (``convention``
            ``"monai"`` or ``"deepmind"``; ``connectivity`` 1).

    Returns:
        (B,) float64 for binary masks, (B, C') for label maps.

    Example:
        >>> import torch
        >>> g = torch.zeros(1, 20, 20, dtype=torch.bool); g[:, 5:11, 5:11] = True
        >>> p = torch.zeros(1, 20, 20, dtype=torch.bool); p[:, 7:13, 6:13] = True
        >>> [round(float(normalized_surface_distance(p, g, tolerance=1.0, convention=c)[0]), 4)
        ...  for c in ("monai", "deepmind")]
        [0.4048, 0.3864]
    """
    conventions = ("monai", "deepmind")
    settings = distance_settings(
        "normalized_surface_distance",
        options,
        conventions,
        "the normalized surface distance",
        ("tolerance", "use_subvoxels"),
    )
    name = settings["convention"]
    pairs, results = convention_distances(preds, target, settings, corners=check_corners(name, use_subvoxels))
    tolerances = check_tolerances(tolerance, len(pairs.class_ids))
    return reduce_pairs(pairs, results, nsd_rule(name, tolerances), per_column=True)
