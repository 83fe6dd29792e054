"""Plain numpy/scipy oracle of the boundary-distance measures, for tests (small inputs only).

An independent code path from ``segmetrics_torch.functional.surface``: boundary sets by ``scipy.ndimage`` erosion and
correlation, distances by brute force over all pairs of boundary points (``scipy.spatial.distance.cdist``), and each
convention's reduction written out as its reference describes it (see ``docs/surface-distances.md``). One image and
one binary mask pair at a time. The only shared piece is the data table of DeepMind's marching-cubes normals.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import ndimage
from scipy.spatial.distance import cdist

from segmetrics_torch._surfel_normals import NORMALS_3D

__all__ = [
    "average_surface_distance",
    "boundary_iou",
    "corner_surfels",
    "hausdorff_distance",
    "inner_edges",
    "mean_over_images",
    "normalized_surface_distance",
    "surface_distance_lists",
]


def inner_edges(mask: np.ndarray, connectivity: int = 1) -> np.ndarray:
    """Foreground voxels that an erosion (``generate_binary_structure(ndim, connectivity)``, outside = 0) removes."""
    structure = ndimage.generate_binary_structure(mask.ndim, connectivity)
    eroded = ndimage.binary_erosion(mask, structure=structure, iterations=1, border_value=0)
    return mask & ~eroded


def _contour_length(code: int, spacing: tuple[float, ...]) -> float:
    """Marching-squares contour length at a corner whose neighbours (TL, TR, BL, BR = bits 8, 4, 2, 1) are ``code``."""
    half_diagonal = 0.5 * math.sqrt(spacing[0] ** 2 + spacing[1] ** 2)
    corners = bin(code).count("1")
    if corners in (1, 3):
        return half_diagonal  # one corner cut off
    if code in (0b0011, 0b1100):
        return spacing[1]  # top or bottom pair: a horizontal segment
    if code in (0b0101, 0b1010):
        return spacing[0]  # left or right pair: a vertical segment
    if code in (0b0110, 0b1001):
        return 2 * half_diagonal  # diagonal saddle: two cuts
    return 0.0  # empty or full


def _surfel_area(code: int, spacing: tuple[float, ...]) -> float:
    """Area of the marching-cubes triangles at a corner: the sum of the lengths of their spacing-scaled normals."""
    s0, s1, s2 = spacing
    flat = NORMALS_3D[code]
    area = 0.0
    for i in range(0, len(flat), 3):
        n0, n1, n2 = flat[i] / 8, flat[i + 1] / 8, flat[i + 2] / 8
        area += float(np.linalg.norm([n0 * s1 * s2, n1 * s0 * s2, n2 * s0 * s1]))
    return area


def corner_surfels(mask: np.ndarray, spacing: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """DeepMind's surface: the corner-grid points (shape + 1 per axis) whose 2^n neighbourhood is mixed, and the
    contour length / surfel area of each corner."""
    padded = np.pad(mask.astype(np.int64), 1)
    kernel = (2 ** np.arange(2**mask.ndim - 1, -1, -1)).reshape((2,) * mask.ndim)
    # output[j] = sum_k kernel[k] * padded[j + k - 1]: corner c (between voxels c - 1 and c) is output[c + 1]
    codes = ndimage.correlate(padded, kernel, mode="constant", cval=0)[(slice(1, None),) * mask.ndim]
    points = (codes != 0) & (codes != 2 ** (2**mask.ndim) - 1)
    size_of = _contour_length if mask.ndim == 2 else _surfel_area
    table = np.array([size_of(c, spacing) for c in range(2 ** (2**mask.ndim))])
    return points, table[codes]


def _nearest(a: np.ndarray, b: np.ndarray, spacing: tuple[float, ...], metric: str) -> np.ndarray:
    """For each point of ``a`` (C order), the distance to the nearest point of ``b``, by brute force."""
    pa = np.argwhere(a) * np.asarray(spacing, dtype=np.float64)
    pb = np.argwhere(b) * np.asarray(spacing, dtype=np.float64)
    if len(pa) == 0:
        return np.empty(0)
    if len(pb) == 0:
        return np.full(len(pa), np.inf)
    name = {"euclidean": "euclidean", "chessboard": "chebyshev", "taxicab": "cityblock"}[metric]
    return cdist(pa, pb, metric=name).min(axis=1)


def surface_distance_lists(
    pred: np.ndarray,
    gt: np.ndarray,
    spacing: tuple[float, ...],
    *,
    corners: bool = False,
    connectivity: int = 1,
    metric: str = "euclidean",
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(pred->gt distances, gt->pred distances, pred point sizes, gt point sizes); sizes are 1 for inner edges."""
    if corners:
        bp, size_p = corner_surfels(pred, spacing)
        bg, size_g = corner_surfels(gt, spacing)
        wp, wg = size_p[bp], size_g[bg]
    else:
        bp, bg = inner_edges(pred, connectivity), inner_edges(gt, connectivity)
        wp, wg = np.ones(int(bp.sum())), np.ones(int(bg.sum()))
    return _nearest(bp, bg, spacing, metric), _nearest(bg, bp, spacing, metric), wp, wg


def _weighted_percentile(d: np.ndarray, w: np.ndarray, percentile: float) -> float:
    """The smallest distance whose share of the total size, counting all smaller distances, reaches the percentile."""
    order = np.lexsort((w, d))
    d, w = d[order], w[order]
    share = np.cumsum(w) / np.sum(w)
    for k in range(len(d)):
        if share[k] >= percentile / 100.0:
            return float(d[k])
    return float(d[-1])


def hausdorff_distance(
    pred: np.ndarray,
    gt: np.ndarray,
    spacing: tuple[float, ...],
    *,
    convention: str = "monai",
    percentile: float | None = None,
    directed: bool = False,
    connectivity: int = 1,
    metric: str = "euclidean",
) -> float:
    """Hausdorff / percentile Hausdorff of one pair under ``convention`` (MONAI ignores spacing for chessboard and
    taxicab)."""
    if not pred.any() or not gt.any():
        if convention == "medpy":
            raise ValueError("empty mask")
        if convention == "deepmind":
            return math.inf
        if not pred.any() and not gt.any():
            return math.nan
        return math.inf if percentile is None else math.nan
    if convention == "monai" and metric != "euclidean":
        spacing = (1.0,) * pred.ndim
    d_pg, d_gp, w_p, w_g = surface_distance_lists(
        pred, gt, spacing, corners=convention == "deepmind", connectivity=connectivity, metric=metric
    )
    directions = [(d_pg, w_p)] if directed else [(d_pg, w_p), (d_gp, w_g)]
    if convention == "medpy":
        pooled = np.concatenate([d for d, _ in directions])
        return float(pooled.max()) if percentile is None else float(np.percentile(pooled, percentile))
    if convention == "deepmind":
        return max(_weighted_percentile(d, w, 100.0 if percentile is None else percentile) for d, w in directions)
    if percentile is None:
        return max(float(d.max()) for d, _ in directions)
    # linear interpolation between the order statistics at rank (n - 1) q
    values = []
    for d, _ in directions:
        d = np.sort(d)
        rank = (len(d) - 1) * percentile / 100
        lo = math.floor(rank)
        hi = min(lo + 1, len(d) - 1)
        values.append(float(d[lo] + (d[hi] - d[lo]) * (rank - lo)))
    return max(values)


def average_surface_distance(
    pred: np.ndarray,
    gt: np.ndarray,
    spacing: tuple[float, ...],
    *,
    convention: str = "monai",
    symmetric: bool = False,
    connectivity: int = 1,
) -> float:
    """Directed (pred->gt) or symmetric mean surface distance under ``convention``."""
    p_empty, g_empty = not pred.any(), not gt.any()
    if p_empty or g_empty:
        if convention == "medpy":
            raise ValueError("empty mask")
        if convention == "deepmind":
            return math.inf if (not symmetric and g_empty and not p_empty) else math.nan
        return math.nan if p_empty and g_empty else math.inf
    d_pg, d_gp, w_p, w_g = surface_distance_lists(
        pred, gt, spacing, corners=convention == "deepmind", connectivity=connectivity
    )
    if convention == "deepmind":
        pred_to_gt = float((d_pg * w_p).sum() / w_p.sum())
        gt_to_pred = float((d_gp * w_g).sum() / w_g.sum())
        return (pred_to_gt + gt_to_pred) / 2 if symmetric else pred_to_gt
    if symmetric:
        return float((d_pg.sum() + d_gp.sum()) / (len(d_pg) + len(d_gp)))
    return float(d_pg.mean())


def normalized_surface_distance(
    pred: np.ndarray,
    gt: np.ndarray,
    spacing: tuple[float, ...],
    tolerance: float,
    *,
    corners: bool = False,
) -> float:
    """Surface Dice at ``tolerance`` (``<=``): point counts, or surfel sizes with ``corners``."""
    p_empty, g_empty = not pred.any(), not gt.any()
    if p_empty or g_empty:
        return math.nan if p_empty and g_empty else 0.0
    d_pg, d_gp, w_p, w_g = surface_distance_lists(pred, gt, spacing, corners=corners)
    within = w_p[d_pg <= tolerance].sum() + w_g[d_gp <= tolerance].sum()
    return float(within / (w_p.sum() + w_g.sum()))


def boundary_iou(pred: np.ndarray, gt: np.ndarray, dilation_ratio: float = 0.02) -> float:
    """Boundary IoU of two 2-D masks: bands of width d = max(1, round(ratio * diagonal)) by repeated 3x3 erosion."""
    h, w = pred.shape
    d = max(1, round(dilation_ratio * math.sqrt(h * h + w * w)))

    def band(mask: np.ndarray) -> np.ndarray:
        eroded = ndimage.binary_erosion(mask, structure=np.ones((3, 3), bool), iterations=d, border_value=0)
        return mask & ~eroded

    bp, bg = band(pred.astype(bool)), band(gt.astype(bool))
    union = int((bp | bg).sum())
    return math.nan if union == 0 else int((bp & bg).sum()) / union


def mean_over_images(
    values: list[float],
    pred_empty: list[bool],
    gt_empty: list[bool],
    aggregation: str = "inf",
    worst_case: float | None = None,
) -> tuple[float, int]:
    """``(mean, dropped)`` of one class's per-image distances under ``aggregation``, written out case by case:

    ``"inf"``: a pair with exactly one empty mask is ``inf``; ``"drop_nan"``: MONAI's ``do_metric_reduction`` mean
    of the values as given; ``"worst_case"``: one empty mask is ``worst_case``, both empty is left out. In each, NaN
    values are left out (``dropped`` counts them), an ``inf`` makes the mean ``inf``, and no value left gives NaN.
    """
    kept: list[float] = []
    dropped = 0
    for value, p_empty, g_empty in zip(values, pred_empty, gt_empty, strict=True):
        one_empty = p_empty != g_empty
        if aggregation == "inf" and one_empty:
            value = math.inf
        elif aggregation == "worst_case" and one_empty:
            assert worst_case is not None
            value = worst_case
        elif aggregation == "worst_case" and p_empty and g_empty:
            value = math.nan
        if math.isnan(value):
            dropped += 1
        else:
            kept.append(value)
    if not kept:
        return math.nan, dropped
    if any(math.isinf(v) for v in kept):
        return math.inf, dropped
    return sum(kept) / len(kept), dropped
