"""Plain numpy/scipy oracle of semantic boundary evaluation, written for readability (loops allowed).

* SEAL's ground-truth regeneration (pyEdgeEval 0.2.8 ``mask2bdry``): an edge pixel of mask ``m`` with ignore region
  ``I`` has ``0 < d_in + d_out <= radius``, ``d_in`` = distance to the nearest pixel outside ``m | I``, ``d_out`` =
  distance to the nearest pixel of ``m`` (``scipy.ndimage.distance_transform_edt``; a map without such pixels has
  no finite distance, hence no edge); instance-sensitive: OR over the class's instances; thin: then thinning.
* Per image and class: predictions in the ignored frame set to 0; an image without GT edges of the class skipped
  (``skip_if_nonexistent``); per threshold ``thin(pb >= t)``, then kill_internal (drop pixels with
  ``segmentation == k`` farther than the tolerance from every GT edge, only when the class has GT edges), then the
  BSR correspondence of :mod:`segmetrics_torch.reference.boundary`.

Depends on numpy and scipy only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import ndimage

from .boundary import collect_eval_bdry, correspond, thin

__all__ = ["evaluate_image_class", "mask_boundaries", "regenerate_boundaries", "semantic_summary"]


def _distance_to(features: np.ndarray) -> np.ndarray:
    """Distance of every pixel to the nearest True pixel; +inf everywhere when there is none."""
    if not features.any():
        return np.full(features.shape, np.inf)
    return ndimage.distance_transform_edt(~features)


def mask_boundaries(mask: np.ndarray, ignore: np.ndarray | None, radius: float) -> np.ndarray:
    """SEAL's edges of one binary mask (see module doc)."""
    inside = mask | ignore if ignore is not None else mask
    d = _distance_to(~inside) + _distance_to(mask)
    return (d > 0) & (d <= radius)


def regenerate_boundaries(
    labels: np.ndarray,
    class_values: list[int],
    radius: float,
    thin_edges: bool,
    ignore: np.ndarray | None = None,
    instances: np.ndarray | None = None,
    instance_classes: dict[int, int] | None = None,
) -> np.ndarray:
    """(K, H, W) edges per class value, SEAL's rule (see module doc)."""
    out = np.zeros((len(class_values), *labels.shape), bool)
    for k, value in enumerate(class_values):
        mask = labels == value
        if not mask.any():
            continue
        edges = mask_boundaries(mask, ignore, radius)
        if instances is not None and instance_classes:
            for inst_id, cls in instance_classes.items():
                if cls == value and (instances == inst_id).any():
                    edges |= mask_boundaries(instances == inst_id, ignore, radius)
        out[k] = thin(edges) if thin_edges else edges
    return out


def evaluate_image_class(
    pb: np.ndarray,
    gt: np.ndarray,
    region: np.ndarray | None,
    thresholds: np.ndarray,
    max_dist: float,
    thin_pb: bool = True,
    kill_internal: bool = False,
    skip_if_nonexistent: bool = False,
    ignore_border: int = 0,
) -> np.ndarray:
    """``[cntR, sumR, cntP, sumP]`` per threshold (T, 4) of one image and class; ``pb`` float in [0, 1]."""
    out = np.zeros((len(thresholds), 4), np.int64)
    gt = np.asarray(gt, bool)
    if skip_if_nonexistent and not gt.any():
        return out
    pb = pb.astype(np.float64).copy()
    h, w = pb.shape
    b = ignore_border
    if b:
        pb[:b] = 0
        pb[h - b :] = 0
        pb[:, :b] = 0
        pb[:, w - b :] = 0
    max_dist_px = max_dist * np.hypot(h, w) if max_dist < 1 else float(max_dist)
    for i, t in enumerate(thresholds):
        bmap = pb >= t
        if thin_pb:
            bmap = thin(bmap)
        if kill_internal and gt.any():
            assert region is not None
            bmap = bmap & ~((_distance_to(gt) > max_dist_px) & region)
        m1, m2, _ = correspond(bmap, gt, max_dist_px)
        out[i] = (m2.sum(), gt.sum(), m1.sum(), bmap.sum())
    return out


def semantic_summary(thresholds: np.ndarray, tables: np.ndarray) -> dict[str, object]:
    """Per class ``collect_eval_bdry`` of (B, K, T, 4) tables and the class mean of ODS F, OIS F, AP."""
    per_class: list[dict[str, Any]] = [
        collect_eval_bdry(thresholds, list(tables[:, k])) for k in range(tables.shape[1])
    ]
    ods = np.array([c["ods"][3] for c in per_class])
    ois = np.array([c["ois"][2] for c in per_class])
    ap = np.array([c["ap"] for c in per_class])
    return {"classes": per_class, "ods_f": ods, "ois_f": ois, "ap": ap, "mean": (ods.mean(), ois.mean(), ap.mean())}
