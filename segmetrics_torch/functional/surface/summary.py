"""Every boundary-distance measure of a convention from one pass of distance transforms."""

from __future__ import annotations

from typing import Unpack

from torch import Tensor

from ..._checks import check_bool
from ._inputs import CONVENTIONS
from ._rules import check_percentile, check_tolerances, hausdorff_rule, mean_rule, nsd_rule, reduce_pairs
from .distances import convention_distances, distance_settings
from .options import DistanceOptions

__all__ = ["surface_distance_measures"]


def surface_distance_measures(
    preds: object,
    target: object,
    *,
    percentile: float = 95.0,
    tolerance: float | list[float] | None = None,
    directed: bool = False,
    **options: Unpack[DistanceOptions],
) -> dict[str, Tensor]:
    """Hausdorff, percentile Hausdorff, ASD, ASSD and NSD from the same distance lists (one EDT per direction and
    (image, class) pair, instead of one per measure as separate reference calls do).

    Each value equals the corresponding single-measure function with the same arguments
    (:func:`hausdorff_distance`, ``percentile=``, ``directed=``; :func:`average_surface_distance`,
    ``symmetric=False`` / ``True``; :func:`normalized_surface_distance` with the convention's own boundary set, i.e.
    MONAI's voxel counts).

    Args:
        percentile: the percentile of ``"hausdorff_percentile"`` (95: HD95), in [0, 100].
        tolerance: the NSD's tolerance in spacing units (mm when ``spacing`` is in mm), one number or one per class.
            It has no default: a tolerance is a physical length that depends on the structure and the dataset. None
            (the default) leaves the NSD out of the result; where the convention defines no NSD (``"medpy"``,
            ``"torchmetrics"``) it is checked and unused.
        directed: the Hausdorff distances (HD and percentile HD) from the prediction to the ground truth only, as
            :func:`hausdorff_distance`'s ``directed`` (ASD is directed and ASSD symmetric whatever it is).
        preds, target, **options: as :func:`~segmetrics_torch.functional.surface.hausdorff_distance`; under
            ``"torchmetrics"`` only the Hausdorff distance is computed (``percentile`` and ``tolerance`` unused).

    Returns:
        ``{"hausdorff", "hausdorff_percentile", "asd", "assd", "nsd"}``, the measures the convention defines:
        ``"medpy"`` has no NSD, ``"torchmetrics"`` only ``"hausdorff"``, and ``"nsd"`` needs a ``tolerance``. Each
        (B,) or (B, C') float64.

    Example:
        >>> import torch
        >>> g = torch.zeros(1, 20, 20, dtype=torch.bool); g[:, 5:11, 5:11] = True
        >>> p = torch.zeros(1, 20, 20, dtype=torch.bool); p[:, 7:13, 6:13] = True
        >>> {k: round(float(v[0]), 4) for k, v in surface_distance_measures(p, g, tolerance=1.0).items()}
        {'hausdorff': 2.8284, 'hausdorff_percentile': 2.2361, 'asd': 1.6046, 'assd': 1.5226, 'nsd': 0.4048}
        >>> list(surface_distance_measures(p, g))  # no tolerance, no NSD
        ['hausdorff', 'hausdorff_percentile', 'asd', 'assd']
    """
    own = ("percentile", "tolerance", "directed")
    settings = distance_settings("surface_distance_measures", options, CONVENTIONS, "surface distances", own)
    name = settings["convention"]
    q = check_percentile(percentile)
    check_bool(directed, "directed")
    pairs, results = convention_distances(preds, target, settings, corners=name == "deepmind")
    tolerances = None if tolerance is None else check_tolerances(tolerance, len(pairs.class_ids))
    out = {"hausdorff": reduce_pairs(pairs, results, hausdorff_rule(name, None, directed))}
    if name == "torchmetrics":
        return out
    out["hausdorff_percentile"] = reduce_pairs(pairs, results, hausdorff_rule(name, q, directed))
    out["asd"] = reduce_pairs(pairs, results, mean_rule(name, False))
    out["assd"] = reduce_pairs(pairs, results, mean_rule(name, True))
    if name != "medpy" and tolerances is not None:
        out["nsd"] = reduce_pairs(pairs, results, nsd_rule(name, tolerances), per_column=True)
    return out
