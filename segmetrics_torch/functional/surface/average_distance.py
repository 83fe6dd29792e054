"""Average surface distance, directed (mean surface distance) and symmetric (ASSD)."""

from __future__ import annotations

from typing import Unpack

from torch import Tensor

from ._rules import mean_rule, reduce_pairs
from .distances import convention_distances, distance_settings
from .options import DistanceOptions

__all__ = ["average_surface_distance"]


def average_surface_distance(
    preds: object,
    target: object,
    *,
    symmetric: bool = False,
    **options: Unpack[DistanceOptions],
) -> Tensor:
    r"""Per-image (and per-class) mean distance from the boundary of the prediction to that of the ground truth.

    .. math::
        \mathrm{ASD} = \frac{1}{|\partial P|}\sum_{x \in \partial P} d(x, \partial G), \qquad
        \mathrm{ASSD} = \frac{\sum_{x \in \partial P} d(x, \partial G) + \sum_{y \in \partial G} d(y, \partial P)}
        {|\partial P| + |\partial G|}

    (Heimann et al., TMI 2009, "Comparison and evaluation of methods for liver segmentation from CT datasets").
    ``symmetric=False`` (MONAI's default) is the directed mean, prediction to ground truth.

    * ``"monai"`` (default; ``compute_average_surface_distance``) and ``"medpy"`` (0.5.2 ``asd`` / ``assd``):
      voxel-centre edges; the symmetric value is the mean of the pooled list (every edge voxel weighs the same).
      MedPy <= 0.5.1 averaged the two directed means instead (1.5185 vs 1.5226 on the notes' case A).
    * ``"deepmind"`` (``compute_average_surface_distance``): corner surfels, each distance weighted by its surfel's
      length / area, :math:`\sum a_x d_x / \sum a_x`. DeepMind returns the two directed means and no symmetric
      value; ``symmetric=True`` here is the mean of the two, as its users combine them.

    Empty masks (warns, naming the image and class): ``"monai"`` one empty ``inf``, both ``NaN``; ``"medpy"`` raises
    ``ValueError``; ``"deepmind"`` (numpy 1.x; 0.1 crashes on numpy 2) the empty side's mean is 0/0 = ``NaN`` and
    the other ``inf``, so directed: empty prediction ``NaN``, empty ground truth ``inf``; symmetric ``NaN``.

    Args:
        symmetric: the symmetric ASSD instead of the directed mean.
        preds, target, **options: as :func:`~segmetrics_torch.functional.surface.hausdorff_distance` (``convention``
            ``"monai"``, ``"medpy"`` or ``"deepmind"``: ``"torchmetrics"`` has no surface distance).

    Returns:
        (B,) float64 for binary masks, (B, C') for label maps.

    Example:
        >>> import torch
        >>> g = torch.zeros(1, 20, 20, dtype=torch.bool); g[:, 5:11, 5:11] = True
        >>> p = torch.zeros(1, 20, 20, dtype=torch.bool); p[:, 7:13, 6:13] = True
        >>> [round(float(average_surface_distance(p, g, symmetric=s)[0]), 4) for s in (False, True)]
        [1.6046, 1.5226]
    """
    conventions = ("monai", "medpy", "deepmind")
    settings = distance_settings(
        "average_surface_distance", options, conventions, "the average surface distance", ("symmetric",)
    )
    name = settings["convention"]
    if not isinstance(symmetric, bool):
        raise TypeError(f"Expected argument `symmetric` to be a bool, but got {symmetric!r}.")
    pairs, results = convention_distances(preds, target, settings, corners=name == "deepmind")
    return reduce_pairs(pairs, results, mean_rule(name, symmetric))
