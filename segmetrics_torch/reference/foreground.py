"""Reference oracles for the foreground-map (salient / camouflaged object) measures, in plain numpy/scipy.

What this is
------------
Slow, readable, single-image implementations written from the papers' formulas. They are the yardstick the fast
batched torch code of this package is tested against, so they deliberately take the *direct* route wherever that
is cheap: a threshold curve is computed by binarising the map 256 times and evaluating each binary map on its own
(the E-measure evaluates the enhanced alignment matrix pixel by pixel), whereas the torch code uses histograms and
cumulative counts. This module imports nothing from ``segmetrics_torch`` and no torch.

Contract: on every input the values equal those of pysodmetrics 1.6.2 (``py_sod_metrics``, the community reference,
itself checked against D.-P. Fan's MATLAB code) to within 1e-6 -- in practice to ~1e-15 -- with one documented,
opt-in deviation (``s_measure(..., moments="exact")``, the default, see below).

Inputs and conventions
----------------------
- :func:`prepare` turns one uint8 prediction and one uint8 ground truth (GT) into ``p`` (float64 in [0, 1]) and
  ``g`` (bool): ``g = gt > 128``; ``p = pred / 255``, then min-max stretched ``(p - min) / (max - min)`` in this
  exact float64 operation order, unless the map is constant (a constant map is *not* stretched: 100 -> 100/255).
  With ``normalize=False`` a float map in [0, 1] and a bool GT are taken as they are (as float64 / bool).
- Every measure takes the prepared ``p`` and ``g`` of one image (shape (H, W)). Dataset scores are means over
  images; for the curves the per-image 256-vectors are averaged first and the mean / max are taken of that average.
- Threshold curves have 256 entries in *descending* threshold order. With the bins ``b = trunc(255 p)``
  (``(p * 255).astype(np.uint8)``), entry ``i`` is the binary map ``b >= 255 - i``: entry 0 keeps only the pixels
  in the top bin, entry 255 keeps every pixel.
- The adaptive threshold (Achanta et al. 2009) is ``min(2 * mean(p), 1)``, applied as ``p >= thr`` to the float map.
- ``EPS = np.spacing(1)`` (= MATLAB ``eps``, 2.22e-16).

Edge cases (all reproduced from pysodmetrics 1.6.2)
---------------------------------------------------
- Empty GT (no foreground pixel): weighted F = 0 (guard); S = 1 - mean(p); E sums the alignment matrix as
  #(FM == 0); adaptive F, precision, recall, IoU and Dice are 0 (zero numerators / zero denominators give 0).
- Full GT (every pixel foreground): S = mean(p); E sums #(FM == 1); weighted F is *not* special-cased.
- Constant prediction: not stretched (0 stays 0, 255 stays 1, 100 stays 0.392...). All pixels share one bin.
- E-measure > 1 is possible: it is normalised by ``N - 1 + EPS`` instead of N, so a perfect map scores N / (N - 1).
- S-measure of a perfect map is 1 - O(1e-14), not exactly 1.
- S-measure = NaN whenever the GT centroid rounds to the last row or the last column (e.g. GT only in the last
  column, or *any* non-trivial GT of a 1-pixel-high or 1-pixel-wide image): one quadrant is empty, the mean of an
  empty array is NaN and ``0 * NaN = NaN``. Reproduced by default; ``empty_quadrant="skip"`` drops the empty
  (zero-weight) quadrant instead, which is the value the formula intends.
- S-measure rounding fragility of pysod: in a quadrant where prediction and GT are both constant, the formula gives
  ssim = 1 (alpha' = beta' = 0), but ``np.mean`` of a constant is not always that constant (off by an ulp), the
  variance becomes ~1e-33 instead of 0 and pysod's ssim flips to 0. ``moments="numpy"`` reproduces this exactly;
  ``moments="exact"`` (default) computes the moments so that a constant quadrant has exactly zero variance.

References
----------
- R. Achanta, S. Hemami, F. Estrada, S. Susstrunk. Frequency-tuned salient region detection. CVPR 2009
  (adaptive threshold twice the mean saliency; F-measure with beta^2 = 0.3).
- R. Margolin, L. Zelnik-Manor, A. Tal. How to evaluate foreground maps? CVPR 2014 (weighted F-measure).
- D.-P. Fan, M.-M. Cheng, Y. Liu, T. Li, A. Borji. Structure-measure: a new way to evaluate foreground maps.
  ICCV 2017 (S-measure).
- D.-P. Fan, C. Gong, Y. Cao, B. Ren, M.-M. Cheng, A. Borji. Enhanced-alignment measure for binary foreground map
  evaluation. IJCAI 2018 (E-measure).
- F. Perazzi, P. Krahenbuhl, Y. Pritch, A. Hornung. Saliency filters. CVPR 2012 (MAE).
- pysodmetrics 1.6.2, github.com/lartpang/PySODMetrics (the numerical reference).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import numpy as np
from scipy import ndimage

__all__ = [
    "EPS",
    "NUM_THRESHOLDS",
    "adaptive_threshold",
    "dice",
    "e_measure",
    "f_measure",
    "iou",
    "mae",
    "matlab_gaussian_kernel",
    "precision_recall",
    "prepare",
    "s_measure",
    "threshold_bins",
    "weighted_f_measure",
]

EPS = float(np.spacing(1))
NUM_THRESHOLDS = 256


# ----------------------------------------------------------------------------------------------------------------
# input handling and binarisation
# ----------------------------------------------------------------------------------------------------------------
def prepare(pred: np.ndarray, gt: np.ndarray, normalize: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Turn one prediction / GT pair into ``(p, g)``: float64 map in [0, 1] and bool mask.

    ``normalize=True`` (uint8 inputs, 0..255)::

        g = gt > 128
        p = pred / 255                                   # MATLAB im2double
        p = (p - min p) / (max p - min p)   if max p != min p   # MATLAB mapminmax; constant maps kept as they are

    ``normalize=False``: ``pred`` must be a float array with values in [0, 1] (used as float64) and ``gt`` a bool
    array; nothing is rescaled or binarised.
    """
    pred = np.asarray(pred)
    gt = np.asarray(gt)
    if pred.shape != gt.shape or pred.ndim != 2:
        raise ValueError(f"expected two 2-D arrays of one shape, got {pred.shape} and {gt.shape}")
    if normalize:
        g = gt > 128
        p = pred / 255
        lo, hi = p.min(), p.max()
        if hi != lo:
            p = (p - lo) / (hi - lo)
        return np.asarray(p, dtype=np.float64), g
    if pred.dtype not in (np.float32, np.float64):
        raise TypeError(f"with normalize=False the prediction must be float32/float64, got {pred.dtype}")
    if gt.dtype != bool:
        raise TypeError(f"with normalize=False the ground truth must be bool, got {gt.dtype}")
    p = pred.astype(np.float64)
    if p.size and not (p.min() >= 0 and p.max() <= 1):
        raise ValueError("with normalize=False the prediction must lie in [0, 1]")
    return p, gt.copy()


def threshold_bins(p: np.ndarray) -> np.ndarray:
    """Bin of every pixel for the threshold curves: ``b = trunc(255 p)`` as uint8 (0..255)."""
    return (p * 255).astype(np.uint8)


def adaptive_threshold(p: np.ndarray) -> float:
    """Adaptive threshold of Achanta et al. 2009: ``min(2 * mean(p), 1)`` (mean with numpy's pairwise sum)."""
    return min(2 * float(np.mean(p)), 1.0)


def _curve_maps(p: np.ndarray) -> Iterator[np.ndarray]:
    """Yield the 256 binary maps of a threshold curve, in curve order: map ``i`` is ``trunc(255 p) >= 255 - i``."""
    bins = threshold_bins(p)
    for i in range(NUM_THRESHOLDS):
        yield bins >= (NUM_THRESHOLDS - 1 - i)


def _adaptive_map(p: np.ndarray) -> np.ndarray:
    """The adaptively binarised map ``p >= min(2 mean(p), 1)``."""
    return p >= adaptive_threshold(p)


def _confusion(fm: np.ndarray, g: np.ndarray) -> tuple[int, int, int, int]:
    """Counts ``(tp, fp, fn, tn)`` of the binary map ``fm`` against the GT ``g``."""
    tp = int(np.count_nonzero(fm & g))
    fp = int(np.count_nonzero(fm & ~g))
    fn = int(np.count_nonzero(~fm & g))
    tn = int(np.count_nonzero(~fm & ~g))
    return tp, fp, fn, tn


def _ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, and 0 when the denominator is 0."""
    return float(numerator / denominator) if denominator != 0 else 0.0


# ----------------------------------------------------------------------------------------------------------------
# MAE
# ----------------------------------------------------------------------------------------------------------------
def mae(p: np.ndarray, g: np.ndarray) -> float:
    """Mean absolute error (Perazzi et al. 2012): ``MAE = 1/N sum_x |p(x) - g(x)|``."""
    return float(np.mean(np.abs(p - g.astype(np.float64))))


# ----------------------------------------------------------------------------------------------------------------
# F-measure, precision / recall, IoU, Dice
# ----------------------------------------------------------------------------------------------------------------
def _precision_recall_of(fm: np.ndarray, g: np.ndarray) -> tuple[float, float]:
    """``P = TP / #FM`` and ``R = TP / #G``, each 0 where its denominator is 0."""
    tp, fp, fn, _ = _confusion(fm, g)
    return _ratio(tp, tp + fp), _ratio(tp, tp + fn)


def _f_of(precision: float, recall: float, beta2: float) -> float:
    """``F = (1 + beta2) P R / (beta2 P + R)``, and 0 where the numerator is 0."""
    numerator = (1 + beta2) * precision * recall
    return float(numerator / (beta2 * precision + recall)) if numerator != 0 else 0.0


def f_measure(p: np.ndarray, g: np.ndarray, beta2: float = 0.3) -> dict:
    """F-measure (Achanta et al. 2009), ``F = (1 + beta2) P R / (beta2 P + R)`` with ``beta2 = beta^2 = 0.3``.

    ``P = TP / #FM`` (0 if the binary map ``FM`` is empty), ``R = TP / #G`` (0 if the GT is empty), F = 0 where
    ``P R = 0``. Returns ``adaptive`` (FM = the adaptive binarisation; 0 when it misses the GT entirely),
    ``curve`` (256 values, FM = bins >= 255 - i), and the matching ``precision`` / ``recall`` curves.
    """
    precision = np.empty(NUM_THRESHOLDS)
    recall = np.empty(NUM_THRESHOLDS)
    curve = np.empty(NUM_THRESHOLDS)
    for i, fm in enumerate(_curve_maps(p)):
        precision[i], recall[i] = _precision_recall_of(fm, g)
        curve[i] = _f_of(precision[i], recall[i], beta2)
    adaptive = _f_of(*_precision_recall_of(_adaptive_map(p), g), beta2)
    return {"adaptive": adaptive, "curve": curve, "precision": precision, "recall": recall}


def precision_recall(p: np.ndarray, g: np.ndarray) -> dict:
    """Precision ``TP / (TP + FP)`` and recall ``TP / (TP + FN)``, each 0 where its denominator is 0.

    Returns ``adaptive_precision`` / ``adaptive_recall`` (adaptive binarisation) and the 256-point ``precision`` /
    ``recall`` curves.
    """
    curves = [_precision_recall_of(fm, g) for fm in _curve_maps(p)]
    adaptive_precision, adaptive_recall = _precision_recall_of(_adaptive_map(p), g)
    return {
        "adaptive_precision": adaptive_precision,
        "adaptive_recall": adaptive_recall,
        "precision": np.array([c[0] for c in curves], dtype=np.float64),
        "recall": np.array([c[1] for c in curves], dtype=np.float64),
    }


def _iou_of(fm: np.ndarray, g: np.ndarray) -> float:
    tp, fp, fn, _ = _confusion(fm, g)
    return _ratio(tp, tp + fp + fn)


def _dice_of(fm: np.ndarray, g: np.ndarray) -> float:
    tp, fp, fn, _ = _confusion(fm, g)
    return _ratio(2 * tp, 2 * tp + fn + fp)


def iou(p: np.ndarray, g: np.ndarray) -> dict:
    """Intersection over union (Jaccard) ``IoU = TP / (TP + FP + FN)``, 0 where the denominator is 0.

    Returns ``adaptive`` (adaptive binarisation) and the 256-point ``curve``.
    """
    curve = np.array([_iou_of(fm, g) for fm in _curve_maps(p)], dtype=np.float64)
    return {"adaptive": _iou_of(_adaptive_map(p), g), "curve": curve}


def dice(p: np.ndarray, g: np.ndarray) -> dict:
    """Dice coefficient ``2 TP / (2 TP + FN + FP)``, 0 where the denominator is 0.

    Returns ``adaptive`` (adaptive binarisation) and the 256-point ``curve``.
    """
    curve = np.array([_dice_of(fm, g) for fm in _curve_maps(p)], dtype=np.float64)
    return {"adaptive": _dice_of(_adaptive_map(p), g), "curve": curve}


# ----------------------------------------------------------------------------------------------------------------
# E-measure
# ----------------------------------------------------------------------------------------------------------------
def _enhanced_alignment(fm: np.ndarray, g: np.ndarray) -> float:
    """E-measure of one binary map ``fm`` (Fan et al. IJCAI 2018), evaluated pixel by pixel.

    Bias matrices ``a = FM - mean(FM)``, ``c = GT - mean(GT)``; alignment matrix ``xi = 2 a c / (a^2 + c^2 + EPS)``;
    enhanced alignment matrix ``phi = (1 + xi)^2 / 4``; ``Em = sum(phi) / (N - 1 + EPS)`` (the MATLAB code's
    normalisation). When the GT is all zero (all one) the alignment is defined as 1 on the pixels where FM is
    zero (one) and 0 elsewhere.
    """
    n = g.size
    if not g.any():
        phi = (~fm).astype(np.float64)
    elif g.all():
        phi = fm.astype(np.float64)
    else:
        a = fm.astype(np.float64)
        a = a - np.count_nonzero(fm) / n
        c = g.astype(np.float64)
        c = c - np.count_nonzero(g) / n
        xi = 2 * a * c / (a * a + c * c + EPS)
        phi = (xi + 1) ** 2 / 4
    return float(np.sum(phi) / (n - 1 + EPS))


def e_measure(p: np.ndarray, g: np.ndarray) -> dict:
    """Enhanced-alignment measure (Fan et al. IJCAI 2018) of the adaptive map and of the 256 threshold maps.

    Returns ``adaptive`` (Em of ``p >= min(2 mean(p), 1)``) and ``curve`` (Em of ``bins >= 255 - i``); see
    :func:`_enhanced_alignment` for the per-map formula. Values can exceed 1 (perfect map: N / (N - 1)).
    """
    curve = np.array([_enhanced_alignment(fm, g) for fm in _curve_maps(p)], dtype=np.float64)
    return {"adaptive": _enhanced_alignment(_adaptive_map(p), g), "curve": curve}


# ----------------------------------------------------------------------------------------------------------------
# weighted F-measure
# ----------------------------------------------------------------------------------------------------------------
def matlab_gaussian_kernel(size: int = 7, sigma: float = 5.0) -> np.ndarray:
    """MATLAB ``fspecial('gaussian', size, sigma)``: ``h(x, y) = exp(-(x^2 + y^2) / (2 sigma^2))`` on the centred
    integer grid, entries below ``eps * max(h)`` set to 0, normalised to sum 1."""
    offsets = np.arange(size, dtype=np.float64) - (size - 1) / 2
    yy, xx = np.meshgrid(offsets, offsets, indexing="ij")
    h = np.exp(-(xx * xx + yy * yy) / (2 * sigma * sigma))
    h[h < np.finfo(np.float64).eps * h.max()] = 0
    total = h.sum()
    return h / total if total != 0 else h


def weighted_f_measure(p: np.ndarray, g: np.ndarray, beta2: float = 1.0) -> float:
    """Weighted F-measure of Margolin et al. CVPR 2014 (their MATLAB ``WFb.m``), ``beta2 = beta^2``.

    1. ``E = |p - g|``. Pixel dependency: a background pixel takes the error of its nearest GT pixel
       (``Et(x) = E(nn(x))``, exact Euclidean distance transform; ties as scipy breaks them), then
       ``EA = Et * K`` with ``K`` the 7x7, sigma 5 MATLAB Gaussian and zero padding; on the GT ``E <- min(E, EA)``.
    2. Pixel importance: ``B = 1`` on the GT and ``B = 2 - exp(ln(0.5) / 5 * D)`` (= 2 - 0.5^(D/5)) off it,
       ``D`` = distance to the GT; ``Ew = E B``.
    3. ``TPw = #G - sum_G Ew``, ``FPw = sum_~G Ew``, ``R = 1 - mean_G(Ew)``, ``P = TPw / (TPw + FPw + EPS)``,
       ``Q = (1 + beta2) R P / (R + beta2 P + EPS)``.

    An all-zero GT scores 0 (pysod's guard; MATLAB would fail on it).
    """
    if not g.any():
        return 0.0
    dist, (near_r, near_c) = ndimage.distance_transform_edt(~g, return_indices=True)
    err = np.abs(p - g.astype(np.float64))

    # pixel dependency
    err_dep = err[near_r, near_c]  # GT pixels are their own nearest GT pixel
    err_blur = ndimage.convolve(err_dep, matlab_gaussian_kernel(7, 5.0), mode="constant", cval=0.0)
    err_min = np.where(g & (err_blur < err), err_blur, err)

    # pixel importance
    importance = np.where(g, 1.0, 2 - np.exp(np.log(0.5) / 5 * dist))
    err_w = err_min * importance

    n_fg = np.count_nonzero(g)
    tp_w = n_fg - np.sum(err_w[g])
    fp_w = np.sum(err_w[~g])
    recall = 1 - np.mean(err_w[g])
    precision = tp_w / (tp_w + fp_w + EPS)
    return float((1 + beta2) * recall * precision / (recall + beta2 * precision + EPS))


# ----------------------------------------------------------------------------------------------------------------
# S-measure
# ----------------------------------------------------------------------------------------------------------------
Moments = Literal["exact", "numpy"]


def _mean_std(x: np.ndarray, moments: Moments) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof = 1; 0 for a single value) of the values ``x``."""
    if moments == "numpy":
        mean = float(np.mean(x))
        std = float(np.std(x, ddof=1)) if x.size > 1 else 0.0
        return mean, std
    x = np.asarray(x, dtype=np.float64).ravel()
    shifted = x - x[0]  # a constant region gives exact zeros
    shift_mean = np.mean(shifted)
    std = float(np.sqrt(np.sum((shifted - shift_mean) ** 2) / (x.size - 1))) if x.size > 1 else 0.0
    return float(x[0] + shift_mean), std


def _object_similarity(x: np.ndarray, moments: Moments) -> float:
    """Object-aware similarity of Fan et al. 2017 (with MATLAB's sample std): ``2 m / (m^2 + 1 + std + EPS)``."""
    mean, std = _mean_std(x, moments)
    return 2 * mean / (mean * mean + 1 + std + EPS)


def _ssim(x: np.ndarray, y: np.ndarray, moments: Moments) -> float:
    """Region ssim of Fan et al. 2017 between the prediction block ``x`` and the GT block ``y`` (n pixels).

    Means ``mx, my``; ``sx = sum (x - mx)^2 / (n - 1 + EPS)``, ``sy``, ``sxy`` likewise;
    ``alpha = 4 mx my sxy``, ``beta = (mx^2 + my^2)(sx + sy)``;
    ``ssim = alpha / (beta + EPS)`` if ``alpha != 0``; 1 if ``alpha == beta == 0``; else 0.
    An empty block gives NaN (as the mean of an empty array does in pysod).
    """
    n = x.size
    if n == 0:
        return float("nan")
    yf = y.astype(np.float64)
    if moments == "numpy":
        # the direct two-pass computation, means by numpy's pairwise sum over the 2-D block
        mx = np.mean(x)
        my = np.mean(y)
        dx = x - mx
        dy = yf - my
        sx = np.sum(dx**2) / (n - 1 + EPS)
        sy = np.sum(dy**2) / (n - 1 + EPS)
        sxy = np.sum(dx * dy) / (n - 1 + EPS)
    else:
        # prediction moments on values shifted by the first pixel: a constant block has exactly zero variance
        shifted = x - x.flat[0]
        shift_mean = np.mean(shifted)
        mx = x.flat[0] + shift_mean
        dx = shifted - shift_mean
        # GT moments from the count: my is exactly 0 or 1 for a constant block, so dy is exactly 0 there
        count = int(np.count_nonzero(y))
        my = count / n
        dy = yf - my
        sx = np.sum(dx**2) / (n - 1 + EPS)
        sy = (count * (1 - my) ** 2 + (n - count) * my**2) / (n - 1 + EPS)
        sxy = np.sum(dx * dy) / (n - 1 + EPS)
    alpha = 4 * mx * my * sxy
    beta = (mx * mx + my * my) * (sx + sy)
    if alpha != 0:
        return float(alpha / (beta + EPS))
    if beta == 0:
        return 1.0
    return 0.0


def _centroid_split(g: np.ndarray) -> tuple[int, int]:
    """Split point ``(cy, cx)`` of the S-measure region term: the GT centroid ``round(mean(rows)), round(mean(cols))``
    (0-based, numpy round-half-to-even, from exact integer sums) plus 1 -- MATLAB's inclusive 1-based ``1:X`` split."""
    rows, cols = np.nonzero(g)
    k = rows.size
    cy = int(np.round(int(rows.sum()) / k)) + 1
    cx = int(np.round(int(cols.sum()) / k)) + 1
    return cy, cx


def s_measure(
    p: np.ndarray,
    g: np.ndarray,
    alpha: float = 0.5,
    moments: Moments = "exact",
    empty_quadrant: Literal["nan", "skip"] = "nan",
) -> float:
    """Structure measure of Fan et al. ICCV 2017: ``S = max(0, alpha So + (1 - alpha) Sr)``.

    Special cases on the GT mean ``y = #G / N``: ``y == 0 -> 1 - mean(p)``; ``y == 1 -> mean(p)``.

    Object term ``So = y s(p[G]) + (1 - y) s(1 - p[~G])`` with ``s(x) = 2 m / (m^2 + 1 + std + EPS)``, ``m`` the
    mean and ``std`` the sample standard deviation (ddof = 1, 0 for one pixel).

    Region term: split the image at ``(cy, cx) = round(GT centroid) + 1`` (see :func:`_centroid_split`) into the
    quadrants ``[0:cy, 0:cx]``, ``[0:cy, cx:W]``, ``[cy:H, 0:cx]``, ``[cy:H, cx:W]`` and sum
    ``area_q / N * ssim_q`` (see :func:`_ssim`).

    ``moments``:
        - ``"numpy"``: means with ``np.mean`` on the blocks, exactly as pysodmetrics 1.6.2 computes them. In a
          quadrant where prediction and GT are both constant ``np.mean`` of the constant may be off by an ulp, so
          ``sigma_x`` is ~1e-33 instead of 0 and ssim becomes 0 instead of 1 (e.g. a constant 0.1 prediction over an
          all-one GT block). This mode reproduces pysod bit for bit, fragility included.
        - ``"exact"`` (default): moments of values shifted by the block's first pixel (``d = x - x[0]``,
          ``mean = x[0] + mean(d)``, variance sums from ``d - mean(d)``), GT moments from counts; a constant block has
          exactly zero variance and ssim 1, as the formula intends. Equal to pysod except in that fragile case.

    ``empty_quadrant``: when the centroid rounds to the last row or column a quadrant is empty (weight 0).
        ``"nan"`` (default) returns NaN as pysod does (mean of an empty array, times weight 0); ``"skip"`` leaves the
        zero-weight quadrant out, which is the value the formula intends.
    """
    if moments not in ("exact", "numpy"):
        raise ValueError(f"moments must be 'exact' or 'numpy', got {moments!r}")
    if empty_quadrant not in ("nan", "skip"):
        raise ValueError(f"empty_quadrant must be 'nan' or 'skip', got {empty_quadrant!r}")
    n = g.size
    n_fg = int(np.count_nonzero(g))
    if n_fg == 0:
        return float(1 - np.mean(p))
    if n_fg == n:
        return float(np.mean(p))
    y = n_fg / n

    object_term = y * _object_similarity(p[g], moments) + (1 - y) * _object_similarity(1 - p[~g], moments)

    h, w = g.shape
    cy, cx = _centroid_split(g)
    region_term = 0.0
    for rs, cs in (
        (slice(0, cy), slice(0, cx)),
        (slice(0, cy), slice(cx, w)),
        (slice(cy, h), slice(0, cx)),
        (slice(cy, h), slice(cx, w)),
    ):
        block_p, block_g = p[rs, cs], g[rs, cs]
        if block_p.size == 0:
            if empty_quadrant == "skip":
                continue
            return float("nan")
        region_term += block_p.size / n * _ssim(block_p, block_g, moments)

    score = alpha * object_term + (1 - alpha) * region_term
    return float(max(0.0, score))
