"""The tensor path of the foreground measures: per-image values of prepared maps with tensor operations (any device;
the CUDA path, and the CPU path when the compiled kernel is switched off).

Inputs are prepared maps (:func:`._prepare.prepare_maps`): ``p`` (B, H, W) float64 in [0, 1] and ``g`` (B, H, W) bool.
The formulas, references and edge cases are documented with each measure (:mod:`.mae`, :mod:`.overlap`,
:mod:`.structure_measure`, :mod:`.weighted_fmeasure`); :func:`segmetrics_torch.ops.foreground.foreground_statistics`
computes the same quantities in one fused CPU pass.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..._checks import Backend
from ..._constants import EPS, LOG_HALF_OVER_5
from ...ops.device_exact import divide_exactly
from ...ops.distance import distance_transform_edt
from ...ops.filters import gaussian_blur_zero
from ...ops.thresholds import BinaryCounts, adaptive_threshold, binary_counts, threshold_counts

__all__ = ["all_counts", "mae_of_maps", "s_measure_of_maps", "weighted_f_measure_of_maps"]


def mae_of_maps(p: Tensor, g: Tensor) -> Tensor:
    """``mean |p - g|`` per image of prepared maps, shape (B,)."""
    return (p - g.to(p.dtype)).abs().mean(dim=(1, 2))


def all_counts(p: Tensor, g: Tensor) -> tuple[BinaryCounts, BinaryCounts]:
    """The adaptive-threshold counts and the 256-threshold curve counts of prepared maps."""
    return binary_counts(p, g, adaptive_threshold(p)), threshold_counts(p, g)


def _object_score(x: Tensor, mask: Tensor) -> Tensor:
    """``s(x[mask])`` per image: ``2 m / (m^2 + 1 + std + eps)`` with the ddof=1 standard deviation."""
    n = mask.sum(dim=(1, 2)).to(x.dtype)
    mean = (x * mask).sum(dim=(1, 2)) / n
    var = (((x - mean.view(-1, 1, 1)) ** 2) * mask).sum(dim=(1, 2)) / (n - 1)
    std = torch.where(n > 1, var.sqrt(), torch.zeros_like(var))
    return 2 * mean / (mean * mean + 1 + std + EPS)


def _region_score(p: Tensor, g: Tensor, empty_quadrant: str, centroid: str = "half-even") -> Tensor:
    batch, height, width = p.shape
    device = p.device
    rows = torch.arange(height, device=device)
    cols = torch.arange(width, device=device)
    count = g.sum(dim=(1, 2))
    # exact integer coordinate sums, then one float64 division: what numpy's mean of argwhere computes
    row_sum = (g.sum(dim=2) * rows).sum(dim=1)
    col_sum = (g.sum(dim=1) * cols).sum(dim=1)
    if centroid == "half-away":
        # MATLAB's round() of the 1-based mean: floor(S / n + 1 + 1/2) = floor((2 S + 3 n) / (2 n)), exact integers
        twice = 2 * count.clamp(min=1)
        cy = torch.div(2 * row_sum + 3 * count, twice, rounding_mode="floor")
        cx = torch.div(2 * col_sum + 3 * count, twice, rounding_mode="floor")
    else:  # numpy's round() (half to even) of the 0-based mean, + 1: PySODMetrics
        safe = count.clamp(min=1).to(torch.float64)
        cy = torch.round(row_sum.to(torch.float64) / safe).to(torch.int64) + 1
        cx = torch.round(col_sum.to(torch.float64) / safe).to(torch.int64) + 1

    n_pix = float(height * width)
    # integer products, then a float64 division: the reference's Python-int arithmetic
    w_lt = divide_exactly((cx * cy).to(torch.float64), n_pix)
    w_rt = divide_exactly((cy * (width - cx)).to(torch.float64), n_pix)
    w_lb = divide_exactly(((height - cy) * cx).to(torch.float64), n_pix)
    weights = torch.stack([w_lt, w_rt, w_lb, 1 - w_lt - w_rt - w_lb], dim=1)  # (B, 4)
    sizes = torch.stack([cy * cx, cy * (width - cx), (height - cy) * cx, (height - cy) * (width - cx)], dim=1)
    n = sizes.to(torch.float64)

    # quadrant masks as one-hot factors: top (B, H, 2) = [y < cy, y >= cy], left (B, W, 2) = [x < cx, x >= cx];
    # a quadrant's sum is top^T v left (two batched matrix products, one pass over v, no atomics: the same order on
    # every run), and a per-quadrant value spread to its pixels is top q left^T (each pixel one exact product)
    top_rows = (rows.view(1, -1) < cy.view(-1, 1)).to(torch.float64)  # (B, H)
    left_cols = (cols.view(1, -1) < cx.view(-1, 1)).to(torch.float64)  # (B, W)
    top = torch.stack([top_rows, 1 - top_rows], dim=2)  # (B, H, 2)
    left = torch.stack([left_cols, 1 - left_cols], dim=2)  # (B, W, 2)

    def quadrant_sums(v: Tensor) -> Tensor:
        return torch.bmm(torch.bmm(top.transpose(1, 2), v), left).reshape(batch, 4)  # LT, RT, LB, RB

    def spread(q: Tensor) -> Tensor:
        # an empty quadrant's value (0 / 0) has no pixel to go to, and must not reach the others as 0 * nan
        q = torch.where(sizes > 0, q, 0.0).view(batch, 2, 2)
        return torch.bmm(torch.bmm(top, q), left.transpose(1, 2))  # (B, H, W)

    # shift by each quadrant's first pixel so that constant quadrants have exactly zero spread
    first_r = torch.stack([torch.zeros_like(cy), torch.zeros_like(cy), cy, cy], dim=1).clamp(max=height - 1)
    first_c = torch.stack([torch.zeros_like(cx), cx, torch.zeros_like(cx), cx], dim=1).clamp(max=width - 1)
    origin = p.reshape(batch, -1).gather(1, first_r * width + first_c)  # (B, 4)
    d = p - spread(origin)
    gf = g.to(torch.float64)

    mean_d = quadrant_sums(d) / n
    mean_y = quadrant_sums(gf) / n
    dc = d - spread(mean_d)
    yc = gf - spread(mean_y)
    den = n - 1 + EPS
    sx, sy, sxy = (quadrant_sums(w) / den for w in (dc * dc, yc * yc, dc * yc))
    mean_x = origin + mean_d
    alpha = 4 * mean_x * mean_y * sxy
    beta = (mean_x * mean_x + mean_y * mean_y) * (sx + sy)
    ssim = torch.where(
        alpha != 0, alpha / (beta + EPS), torch.where(beta == 0, torch.ones_like(beta), torch.zeros_like(beta))
    )
    score = weights * ssim
    if empty_quadrant == "skip":
        score = torch.where(sizes == 0, torch.zeros_like(score), score)
    return score.sum(dim=1)


def s_measure_of_maps(
    p: Tensor, g: Tensor, alpha: float = 0.5, empty_quadrant: str = "nan", centroid: str = "half-even"
) -> Tensor:
    """S-measure per image of prepared maps ``p`` (float64) and ``g`` (bool), shape (B,).

    ``centroid``: how the region term rounds the ground truth's centroid, ``"half-even"`` (numpy's ``round`` of the
    0-based mean: PySODMetrics) or ``"half-away"`` (MATLAB's ``round`` of the 1-based mean: the toolboxes'
    ``centroid.m``); they differ only when the 0-based mean is ``k + 1/2`` with ``k`` even."""
    y = g.sum(dim=(1, 2)).to(torch.float64) / (p.shape[1] * p.shape[2])
    mean_p = p.mean(dim=(1, 2))
    obj = y * _object_score(p, g) + (1 - y) * _object_score(1 - p, ~g)
    region = _region_score(p, g, empty_quadrant, centroid)
    combined = torch.clamp(obj * alpha + region * (1 - alpha), min=0)
    return torch.where(y == 0, 1 - mean_p, torch.where(y == 1, mean_p, combined))


def weighted_f_measure_of_maps(p: Tensor, g: Tensor, beta2: float = 1.0, edt_backend: Backend = "auto") -> Tensor:
    """Weighted F per image of prepared maps ``p`` (float64) and ``g`` (bool), shape (B,)."""
    batch = p.shape[0]
    dist, nearest = distance_transform_edt(g, backend=edt_backend)
    gf = g.to(p.dtype)
    err = (p - gf).abs()
    # nearest is -1 only on images without ground truth, whose score is forced to 0 below
    err_t = err.reshape(batch, -1).gather(1, nearest.reshape(batch, -1).clamp(min=0)).view_as(err)
    err_a = gaussian_blur_zero(err_t, 7, 5.0)
    min_e = torch.where(g & (err_a < err), err_a, err)
    importance = torch.where(g, torch.ones_like(dist), 2 - torch.exp(LOG_HALF_OVER_5 * dist))
    ew = min_e * importance
    pos = gf.sum(dim=(1, 2))
    ew_fg = (ew * gf).sum(dim=(1, 2))
    fpw = ew.sum(dim=(1, 2)) - ew_fg
    tpw = pos - ew_fg
    recall = 1 - ew_fg / pos
    precision = tpw / (tpw + fpw + EPS)
    q = (1 + beta2) * recall * precision / (recall + beta2 * precision + EPS)
    return torch.where(pos == 0, torch.zeros_like(q), q)
