r"""Structure measure (S-measure) of foreground maps, batched.

Fan et al., "Structure-measure: A New Way to Evaluate Foreground Maps", ICCV 2017:

.. math:: S = \max(0,\ \alpha S_o + (1 - \alpha) S_r), \quad \alpha = 0.5

with ``y = mean(g)``: ``y == 0`` gives ``S = 1 - mean(p)`` and ``y == 1`` gives ``S = mean(p)``.

* Object term: ``S_o = y s(p[g]) + (1 - y) s((1 - p)[~g])``, ``s(x) = 2 mean(x) / (mean(x)^2 + 1 + std(x) + eps)``
  with the sample standard deviation (``ddof=1``, MATLAB ``std``; 0 for a single pixel).
* Region term: the ground-truth centroid ``(cy, cx) = round(mean(argwhere(g))) + 1`` (``round`` half-to-even, as
  numpy and ``torch.round``; MATLAB rounds half away from zero on the 1-based mean, which differs by up to 0.046
  when the 0-based mean is ``k + 0.5`` with ``k`` even) splits both maps into the quadrants ``[:cy, :cx]``,
  ``[:cy, cx:]``, ``[cy:, :cx]``, ``[cy:, cx:]`` weighted by area; each quadrant scores
  ``ssim = 4 xm ym sxy / ((xm^2 + ym^2)(sx + sy) + eps)`` with moments normalised by ``n - 1 + eps``, ``1`` when
  both numerator and denominator are exactly 0, and ``0`` when only the numerator is.

Reference: PySODMetrics 1.6.2 ``Smeasure`` (to 1e-6) and CODToolbox ``StructureMeasure.m`` (the ``max(0, .)`` clip).

Edge cases:
    * **NaN** (as PySODMetrics): when the centroid rounds to the last row or column (e.g. ground truth only in the last
      column), a quadrant is empty; its mean is NaN and its weight 0, and ``0 * NaN`` makes the image's S-measure
      NaN. ``empty_quadrant="skip"`` drops the zero-weight quadrant instead (the value the formula intends).
    * A perfect map scores ``1 - 9e-15``, not 1 (the ``eps`` terms).
    * Quadrant moments are taken of values shifted by the quadrant's first pixel, so a quadrant where both maps are
      constant has exactly zero (co)variance and ssim 1. PySODMetrics takes ``np.mean`` of the raw values, which is off
      by an ulp for some constants (0.1, 0.2, 1/3, ...) and then scores such a quadrant 0: a documented deviation
      that only constant, non-0/1 predictions can meet.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._prepare import MeasureOptions, run_per_image
from .emeasure import EPS

__all__ = ["s_measure", "s_measure_of_maps"]


def _object_score(x: Tensor, mask: Tensor) -> Tensor:
    """``s(x[mask])`` per image: ``2 m / (m^2 + 1 + std + eps)`` with the ddof=1 standard deviation."""
    n = mask.sum(dim=(1, 2)).to(x.dtype)
    mean = (x * mask).sum(dim=(1, 2)) / n
    var = (((x - mean.view(-1, 1, 1)) ** 2) * mask).sum(dim=(1, 2)) / (n - 1)
    std = torch.where(n > 1, var.sqrt(), torch.zeros_like(var))
    return 2 * mean / (mean * mean + 1 + std + EPS)


def _region_score(p: Tensor, g: Tensor, empty_quadrant: str) -> Tensor:
    batch, height, width = p.shape
    device = p.device
    rows = torch.arange(height, device=device)
    cols = torch.arange(width, device=device)
    count = g.sum(dim=(1, 2))
    # exact integer coordinate sums, then one float64 division: what numpy's mean of argwhere computes
    row_sum = (g.sum(dim=2) * rows).sum(dim=1)
    col_sum = (g.sum(dim=1) * cols).sum(dim=1)
    safe = count.clamp(min=1).to(torch.float64)
    cy = torch.round(row_sum.to(torch.float64) / safe).to(torch.int64) + 1
    cx = torch.round(col_sum.to(torch.float64) / safe).to(torch.int64) + 1

    n_pix = float(height * width)
    # integer products, then a float64 division: the reference's Python-int arithmetic
    w_lt = (cx * cy).to(torch.float64) / n_pix
    w_rt = (cy * (width - cx)).to(torch.float64) / n_pix
    w_lb = ((height - cy) * cx).to(torch.float64) / n_pix
    weights = torch.stack([w_lt, w_rt, w_lb, 1 - w_lt - w_rt - w_lb], dim=1)  # (B, 4)
    sizes = torch.stack([cy * cx, cy * (width - cx), (height - cy) * cx, (height - cy) * (width - cx)], dim=1)
    n = sizes.to(torch.float64)

    # quadrant of every pixel: 0 LT, 1 RT, 2 LB, 3 RB; key addresses (image, quadrant)
    quad = (rows.view(1, -1, 1) >= cy.view(-1, 1, 1)).to(torch.int64) * 2 + (
        cols.view(1, 1, -1) >= cx.view(-1, 1, 1)
    ).to(torch.int64)
    key = (quad + 4 * torch.arange(batch, device=device).view(-1, 1, 1)).reshape(-1)

    # shift by each quadrant's first pixel so that constant quadrants have exactly zero spread
    first_r = torch.stack([torch.zeros_like(cy), torch.zeros_like(cy), cy, cy], dim=1).clamp(max=height - 1)
    first_c = torch.stack([torch.zeros_like(cx), cx, torch.zeros_like(cx), cx], dim=1).clamp(max=width - 1)
    origin = p.reshape(batch, -1).gather(1, first_r * width + first_c)  # (B, 4)
    d = p.reshape(-1) - origin.reshape(-1)[key]
    gf = g.reshape(-1).to(torch.float64)
    slots = batch * 4
    mean_d = torch.bincount(key, weights=d, minlength=slots).view(batch, 4) / n
    mean_y = torch.bincount(key, weights=gf, minlength=slots).view(batch, 4) / n
    dc = d - mean_d.reshape(-1)[key]
    yc = gf - mean_y.reshape(-1)[key]
    den = n - 1 + EPS
    sx, sy, sxy = (
        torch.bincount(key, weights=w, minlength=slots).view(batch, 4) / den for w in (dc * dc, yc * yc, dc * yc)
    )
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


def check_s_options(alpha: object, empty_quadrant: object) -> None:
    """Validate the S-measure's ``alpha`` (in [0, 1]) and ``empty_quadrant`` ("nan" or "skip")."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1:
        raise ValueError(f"Expected argument `alpha` to be a number in [0, 1], but got {alpha!r}.")
    if empty_quadrant not in ("nan", "skip"):
        raise ValueError(f"Expected argument `empty_quadrant` to be 'nan' or 'skip', but got {empty_quadrant!r}.")


def s_measure_of_maps(p: Tensor, g: Tensor, alpha: float = 0.5, empty_quadrant: str = "nan") -> Tensor:
    """S-measure per image of prepared maps ``p`` (float64) and ``g`` (bool), shape (B,)."""
    y = g.sum(dim=(1, 2)).to(torch.float64) / (p.shape[1] * p.shape[2])
    mean_p = p.mean(dim=(1, 2))
    obj = y * _object_score(p, g) + (1 - y) * _object_score(1 - p, ~g)
    region = _region_score(p, g, empty_quadrant)
    combined = torch.clamp(obj * alpha + region * (1 - alpha), min=0)
    return torch.where(y == 0, 1 - mean_p, torch.where(y == 1, mean_p, combined))


def s_measure(
    preds,
    target,
    *,
    alpha: float = 0.5,
    empty_quadrant: str = "nan",
    normalize: bool = True,
    validate_args: bool = True,
) -> Tensor:
    """Per-image S-measure (see the module docstring for the formula, reference and edge cases).

    Args:
        preds: (B, H, W) or (B, 1, H, W) maps (uint8 0..255, or float in [0, 1]), or a list of (H, W) maps.
        target: ground truth of the same shape (uint8 binarised ``> 128``, bool, or {0, 1}).
        alpha: weight of the object term, in [0, 1].
        empty_quadrant: ``"nan"`` (PySODMetrics: an empty region quadrant makes the value NaN) or ``"skip"``.
        normalize: per-image min-max stretch of ``preds`` as PySODMetrics.
        validate_args: check values (NaN, range, binary target); synchronises a CUDA device.

    Returns:
        (B,) float64 tensor.

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 6, 6, dtype=torch.uint8); target[:, 1:4, 1:4] = 255
        >>> round(float(s_measure(target.clone(), target)[0]), 9)
        1.0
    """
    check_s_options(alpha, empty_quadrant)
    options = MeasureOptions(s_measure=True, alpha=float(alpha), empty_quadrant=empty_quadrant)
    return run_per_image(
        lambda v: {"sm": v["sm"]}, preds, target, normalize=normalize, validate_args=validate_args, options=options
    )["sm"]
