"""The per-pair reductions of each convention, on the two distance lists of one (image, class) pair.

Each rule returns a float for a pair; empty masks follow the convention's own result (section 7 of the conventions
notes) and warn, naming the image and the class. The public functions of the family are loops of these rules over the
pairs; :func:`~segmetrics_torch.functional.surface.surface_distance_measures` applies several of them to one
:class:`~segmetrics_torch.functional.surface.distances.SurfaceDistances`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor

from ..._checks import check_number_in, check_numbers_per
from ._inputs import Pairs, warn_empty
from .distances import SurfaceDistances

__all__ = ["check_percentile", "check_tolerances", "hausdorff_rule", "mean_rule", "nsd_rule", "reduce_pairs"]


def check_percentile(percentile: object) -> float | None:
    """None, or ``percentile`` as a float in [0, 100] (any number, numpy's too; not a bool); a fraction in (0, 1)
    warns."""
    if percentile is None:
        return None
    percentile = check_number_in(percentile, "percentile", 0, 100, "None or a number in [0, 100]")
    if 0 < percentile < 1:
        warnings.warn(
            f"`percentile`={percentile!r} is the {percentile}th percentile, close to the minimum distance: "
            "percentiles are in [0, 100] here as in MONAI and MedPy (95 for HD95), not fractions.",
            UserWarning,
            stacklevel=3,
        )
    return percentile


def check_tolerances(tolerance: object, n_columns: int) -> list[float]:
    """One finite tolerance >= 0 per output column (a number applies to all)."""
    return check_numbers_per(tolerance, n_columns, "tolerance", "class", zero_ok=True)


def _empty(
    measure: str, convention: str, sd: SurfaceDistances, image: int, class_id: int, binary: bool, value: float
) -> float:
    """``value`` after the warning (or the error, for MedPy, which raises on any empty mask)."""
    if convention == "medpy":
        side = "prediction (`preds`)" if sd.pred_empty else "ground truth (`target`)"
        cls = "" if binary else f", class {class_id}"
        raise ValueError(
            f"{measure}: image {image}{cls}: the {side} is empty (no foreground); convention='medpy' raises, as "
            "MedPy does (RuntimeError 'The ... supplied array does not contain any binary object')."
        )
    # the caller's line: warn_empty <- _empty <- rule <- reduce_pairs <- public function <- caller
    warn_empty(measure, image, class_id, binary, sd.pred_empty, sd.gt_empty, repr(value), stacklevel=6)
    return value


def _weighted_rank(sd: SurfaceDistances, from_pred: bool, percentile: float) -> float:
    """DeepMind's ``compute_robust_hausdorff`` for one direction: sorted by (distance, size), the first distance whose
    cumulative normalised size reaches ``percentile / 100`` (no interpolation)."""
    ranked, cum = sd.ranked(from_pred)
    idx = int(np.searchsorted(cum, percentile / 100.0))
    return float(ranked[min(idx, len(ranked) - 1)])


def hausdorff_rule(convention: str, percentile: float | None, directed: bool) -> Callable[..., float]:
    def rule(sd: SurfaceDistances, image: int, class_id: int, binary: bool) -> float:
        if sd.pred_empty or sd.gt_empty:
            if convention == "deepmind":
                value = math.inf
            elif sd.pred_empty and sd.gt_empty:
                value = math.nan
            else:
                # MONAI: quantile of a list of inf interpolates inf - inf = NaN (its issue 9095); the max stays inf
                value = math.inf if percentile is None else math.nan
            measure = "hausdorff_distance" if percentile is None else f"hausdorff_distance (percentile {percentile:g})"
            return _empty(measure, convention, sd, image, class_id, binary, value)
        dirs = [(sd.pred_to_gt, sd.pred_sizes)]
        if not directed:
            dirs.append((sd.gt_to_pred, sd.gt_sizes))
        if convention == "medpy":
            pooled = np.concatenate([d for d, _ in dirs])
            return float(pooled.max() if percentile is None else np.percentile(pooled, percentile))
        if convention == "deepmind":
            p = 100.0 if percentile is None else percentile
            return max(_weighted_rank(sd, from_pred, p) for from_pred in ((True,) if directed else (True, False)))
        if percentile is None:
            return max(float(d.max()) for d, _ in dirs)
        return max(float(np.quantile(d, percentile / 100)) for d, _ in dirs)

    return rule


def mean_rule(convention: str, symmetric: bool) -> Callable[..., float]:
    def rule(sd: SurfaceDistances, image: int, class_id: int, binary: bool) -> float:
        if sd.pred_empty or sd.gt_empty:
            if convention == "deepmind":
                # DeepMind (numpy 1.x): the empty side's mean is 0/0 = NaN, the other side's inf; their mean NaN
                value = math.inf if not symmetric and sd.gt_empty and not sd.pred_empty else math.nan
            else:
                value = math.nan if sd.pred_empty and sd.gt_empty else math.inf
            return _empty("average_surface_distance", convention, sd, image, class_id, binary, value)
        if convention == "deepmind":
            assert sd.pred_sizes is not None and sd.gt_sizes is not None
            pred_to_gt = float(np.sum(sd.pred_to_gt * sd.pred_sizes) / np.sum(sd.pred_sizes))
            if not symmetric:
                return pred_to_gt
            gt_to_pred = float(np.sum(sd.gt_to_pred * sd.gt_sizes) / np.sum(sd.gt_sizes))
            return (gt_to_pred + pred_to_gt) / 2
        if not symmetric:
            return float(np.mean(sd.pred_to_gt))
        return float(np.mean(np.concatenate([sd.pred_to_gt, sd.gt_to_pred])))

    return rule


def nsd_rule(convention: str, tolerances: list[float]) -> Callable[..., float]:
    def rule(sd: SurfaceDistances, image: int, class_id: int, binary: bool, column: int = 0) -> float:
        if sd.pred_empty or sd.gt_empty:
            value = math.nan if sd.pred_empty and sd.gt_empty else 0.0
            return _empty("normalized_surface_distance", convention, sd, image, class_id, binary, value)
        tau: float | np.floating = tolerances[column]
        gt_to_pred, pred_to_gt = sd.gt_to_pred, sd.pred_to_gt
        if convention == "monai" and tau > 0:
            # MONAI casts its distances to float32 and compares them with the tolerance there (a distance an ulp
            # above tau in float64, 0.30000000000000004 against 0.3, is within it); DeepMind compares in float64.
            # Both sides are first scaled by the power of two that brings tau near 1 (exact; float32's rounding is
            # the same at any scale), so that a spacing outside float32's range (1e-50, 1e50) does not turn every
            # distance and tau into 0 or inf, all "within"
            scale = math.ldexp(1.0, -math.frexp(tau)[1])
            tau = np.float32(tau * scale)
            gt_to_pred, pred_to_gt = ((d * scale).astype(np.float32) for d in (gt_to_pred, pred_to_gt))
        if sd.gt_sizes is None or sd.pred_sizes is None:
            hits = int(np.count_nonzero(gt_to_pred <= tau)) + int(np.count_nonzero(pred_to_gt <= tau))
            return hits / (gt_to_pred.size + pred_to_gt.size)
        overlap_gt = np.sum(sd.gt_sizes[gt_to_pred <= tau])
        overlap_pred = np.sum(sd.pred_sizes[pred_to_gt <= tau])
        return float((overlap_gt + overlap_pred) / (np.sum(sd.gt_sizes) + np.sum(sd.pred_sizes)))

    return rule


def reduce_pairs(
    pairs: Pairs, results: list[tuple[int, int, SurfaceDistances]], rule: Callable[..., float], per_column: bool = False
) -> Tensor:
    """The (B,) / (B, C') float64 tensor of ``rule`` over the pairs; the ignored class stays NaN."""
    out = np.full((pairs.batch_size, len(pairs.class_ids)), np.nan)
    for image, column, sd in results:
        class_id = pairs.class_ids[column]
        if per_column:
            out[image, column] = rule(sd, image, class_id, pairs.binary, column)
        else:
            out[image, column] = rule(sd, image, class_id, pairs.binary)
    return pairs.finish(torch.from_numpy(out))
