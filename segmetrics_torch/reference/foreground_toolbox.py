"""Reference oracle of the MATLAB evaluation toolbox of PraNet / Inf-Net / SINet, in plain numpy: its per-image loop.

What this is
------------
A readable port, written from the behaviour of the released MATLAB files (``main.m``, ``Fmeasure_calu.m``,
``Enhancedmeasure.m``, ``StructureMeasure.m``, ``CalMAE``-style MAE, ``original_WFb.m``) and of the MATLAB built-ins
they call (``im2double``, ``mapminmax``, the colon operator, ``round``). It loops like the toolbox: for each image,
for each of the 256 thresholds, it binarises the map, counts, and evaluates the E-measure pixel by pixel. The fast
batched code of :mod:`segmetrics_torch.functional.foreground.matlab_toolbox` is tested against it. It imports no
torch and nothing of the package outside :mod:`segmetrics_torch.reference`.

The facts it encodes (see ``docs/matlab-toolbox.md`` for the sources)
--------------------------------------------------------------------
- Ground truth ``gt > 128``; the map ``im2double`` (``u8 / 255``), then ``mapminmax(x, 0, 1)`` over the whole image:
  gain ``1 / (max - min)``, ``y = (x - min) * gain``; when ``max == min`` (or the gain exceeds 1e14) the map is left
  as it is.
- Thresholds: MATLAB's ``1:-1/255:0`` built by its colon algorithm (both ends exact; :func:`matlab_colon`).
- ``Fmeasure_calu``: the binary map ``p >= t`` (``t`` capped at 1); precision, recall (= sensitivity), specificity,
  Dice, F-beta and IoU, **all 0 when TP = 0**.
- ``Enhancedmeasure``: the binary map is built in ``main.m``: ``p > t`` in the first releases, ``p >= t`` after the
  update of 2020-11-21 (``e_strict``).
- Adaptive values (the first Inf-Net and the SINet / COD toolboxes): ``a = 2 * mean(p)``; ``Fmeasure_calu`` at ``a``
  (capped at 1 inside), the E-measure of ``p > a`` (or ``>=``), uncapped.
- S-measure with alpha 0.5; the ground-truth centroid rounded by MATLAB's ``round`` (half away from zero) on the
  1-based mean (:func:`matlab_centroid`).
- Dataset: per-image curves averaged over images (``column``), then ``mean`` over the 256 thresholds and ``max``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from .foreground import EPS, _object_similarity, _ssim, weighted_f_measure as _weighted_f_measure

__all__ = [
    "PROTOCOL_E_STRICT",
    "enhanced_measure",
    "evaluate_dataset",
    "evaluate_image",
    "fmeasure_calu",
    "im2double",
    "mapminmax",
    "matlab_centroid",
    "matlab_colon",
    "matlab_round",
    "structure_measure",
    "toolbox_thresholds",
]

#: the protocols of the package by name -> whether the E-measure binarises with ``p > t`` (strict)
PROTOCOL_E_STRICT = {"matlab-toolbox": True, "matlab-toolbox-2020-11": False}


def matlab_round(x: float) -> float:
    """MATLAB's ``round``: half away from zero."""
    return math.copysign(math.floor(abs(x) + 0.5), x)


def matlab_colon(start: float, step: float, stop: float) -> np.ndarray:
    """``start:step:stop`` as MATLAB builds it for a non-integer step: ``n = round((stop - start) / step)``
    intervals (one fewer if that overshoots by more than ``2 eps max(|start|, |stop|)``), the right end snapped to
    ``stop`` within that tolerance, the first half of the points ``start + k step`` and the second half
    ``last - k step`` counted from the right end, the middle point of an even ``n`` the mean of both ends."""
    tol = 2.0 * np.spacing(1.0) * max(abs(start), abs(stop))
    sig = math.copysign(1.0, step)
    n = int(matlab_round((stop - start) / step))
    if sig * (start + n * step - stop) > tol:
        n -= 1
    last = start + n * step
    if sig * (last - stop) > -tol:
        last = stop
    out = np.zeros(n + 1)
    for k in range(n // 2 + 1):
        out[k] = start + k * step
        out[n - k] = last - k * step
    if n % 2 == 0:
        out[n // 2] = (start + last) / 2
    return out


def toolbox_thresholds() -> np.ndarray:
    """The toolbox's ``Thresholds = 1:-1/255:0`` (256 values, descending).

    Example:
        >>> t = toolbox_thresholds()
        >>> len(t), float(t[0]), float(t[-1]), float(t[-2]) == 1 / 255
        (256, 1.0, 0.0, True)
    """
    return matlab_colon(1.0, -1.0 / 255.0, 0.0)


def im2double(image: np.ndarray) -> np.ndarray:
    """MATLAB's ``im2double``: uint8 -> ``u / 255``; logical -> 0/1; floating -> float64 as it is."""
    if image.dtype == np.uint8:
        return image.astype(np.float64) / 255.0
    return image.astype(np.float64)


def mapminmax(x: np.ndarray, ymin: float = 0.0, ymax: float = 1.0) -> np.ndarray:
    """MATLAB's ``mapminmax`` of one row (here: all the pixels of an image) to ``[ymin, ymax]``.

    Settings: ``gain = (ymax - ymin) / (xmax - xmin)``, ``xoffset = xmin``; where the gain is not usable
    (``xmax == xmin``, a non-finite range, or a gain above 1e14) the gain is 1 and the offset ``ymin``. When that
    leaves ``gain == 1`` and ``xoffset == 0`` the row is returned as it is; otherwise
    ``y = (x - xoffset) * gain + ymin`` (a multiplication by the gain, not a division by the range).
    """
    xmin, xmax = float(np.min(x)), float(np.max(x))
    xrange = xmax - xmin
    with np.errstate(divide="ignore"):
        gain = (ymax - ymin) / xrange if xrange != 0 else math.inf
    xoffset = xmin
    if abs(gain) > 1e14 or not math.isfinite(xrange) or xrange == 0:
        gain, xoffset = 1.0, ymin
    if gain == 1.0 and xoffset == 0.0:
        return x.astype(np.float64, copy=True)
    return (x - xoffset) * gain + ymin


def fmeasure_calu(
    smap: np.ndarray, gt: np.ndarray, threshold: float, beta2: float = 0.3
) -> tuple[float, float, float, float, float, float]:
    """``Fmeasure_calu`` of one binary map ``smap >= threshold`` (threshold capped at 1).

    Returns ``(precision, recall, specificity, dice, f, iou)``; all 0 when TP = 0. ``f`` is
    ``(1 + beta2) P R / (beta2 P + R)`` with ``1 + beta2`` taken as its decimal literal (``1.3`` for 0.3, ``2.0``
    for 1: the toolboxes' two versions of this line).
    """
    if threshold > 1:
        threshold = 1.0
    label = smap >= threshold
    num_rec = int(np.count_nonzero(label))  # TP + FP
    num_no_rec = label.size - num_rec  # FN + TN
    num_and = int(np.count_nonzero(label & gt))  # TP
    num_obj = int(np.count_nonzero(gt))  # TP + FN
    fn = num_obj - num_and
    fp = num_rec - num_and
    tn = num_no_rec - fn
    if num_and == 0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    iou = num_and / (fn + num_rec)
    precision = num_and / num_rec
    recall = num_and / num_obj
    specificity = tn / (tn + fp) if tn + fp else math.nan  # 0 / 0 in MATLAB: a full ground truth
    dice = 2 * num_and / (num_obj + num_rec)
    one_plus = float(_decimal_one_plus(beta2))
    f = one_plus * precision * recall / (beta2 * precision + recall)
    return precision, recall, specificity, dice, f, iou


def _decimal_one_plus(beta2: float) -> str:
    """``1 + beta2`` in decimal, as a person writes the literal (``"1.3"`` for 0.3)."""
    from decimal import Decimal

    return str(Decimal(repr(beta2)) + 1)


def enhanced_measure(fm: np.ndarray, gt: np.ndarray) -> float:
    """``Enhancedmeasure`` of a binary map ``fm`` against ``gt``, pixel by pixel (Fan et al. IJCAI 2018).

    Empty ground truth: the enhanced matrix is ``1 - FM``; full ground truth: ``FM``; otherwise
    ``((1 + 2 a_G a_FM / (a_G^2 + a_FM^2 + eps))^2) / 4`` with the biases ``a = x - mean(x)``. Score: the sum over
    the pixels divided by ``w h - 1 + eps``.
    """
    dfm = fm.astype(np.float64)
    dgt = gt.astype(np.float64)
    if np.sum(dgt) == 0:
        enhanced = 1.0 - dfm
    elif np.sum(1.0 - dgt) == 0:
        enhanced = dfm
    else:
        align_fm = dfm - np.mean(dfm)
        align_gt = dgt - np.mean(dgt)
        align = 2.0 * (align_gt * align_fm) / (align_gt * align_gt + align_fm * align_fm + EPS)
        enhanced = ((align + 1) ** 2) / 4
    h, w = gt.shape
    return float(np.sum(enhanced) / (w * h - 1 + EPS))


def matlab_centroid(g: np.ndarray) -> tuple[int, int]:
    """The S-measure's split point ``(Y, X)``: MATLAB's ``round`` of the 1-based mean row and column of the ground
    truth (the blocks are ``1:Y`` / ``1:X``, so ``Y``, ``X`` are also the 0-based exclusive ends)."""
    rows, cols = np.nonzero(g)
    total = rows.size
    x = int(matlab_round(float(np.sum(cols + 1)) / total))
    y = int(matlab_round(float(np.sum(rows + 1)) / total))
    return y, x


def structure_measure(p: np.ndarray, g: np.ndarray, alpha: float = 0.5) -> float:
    """``StructureMeasure`` (Fan et al. ICCV 2017) with the toolbox's centroid rounding (:func:`matlab_centroid`).

    Empty ground truth: ``1 - mean(p)``; full: ``mean(p)``; otherwise ``max(0, alpha So + (1 - alpha) Sr)``. An
    empty region block (centroid on the last row or column) gives NaN, as a mean of an empty block does in MATLAB.
    Block moments are taken on values shifted by the block's first pixel (``moments="exact"`` of
    :func:`segmetrics_torch.reference.foreground.s_measure`), so that a constant block has exactly zero spread; how
    MATLAB's own sums round in that case is not known here.
    """
    y = float(np.mean(g))
    if y == 0:
        return float(1.0 - np.mean(p))
    if y == 1:
        return float(np.mean(p))
    object_term = y * _object_similarity(p[g], "exact") + (1 - y) * _object_similarity(1 - p[~g], "exact")
    h, w = g.shape
    cy, cx = matlab_centroid(g)
    region = 0.0
    for rs, cs in (
        (slice(0, cy), slice(0, cx)),
        (slice(0, cy), slice(cx, w)),
        (slice(cy, h), slice(0, cx)),
        (slice(cy, h), slice(cx, w)),
    ):
        block_p, block_g = p[rs, cs], g[rs, cs]
        if block_p.size == 0:
            return math.nan
        region += block_p.size / g.size * _ssim(block_p, block_g, "exact")
    return float(max(0.0, alpha * object_term + (1 - alpha) * region))


def evaluate_image(
    pred: np.ndarray,
    gt: np.ndarray,
    protocol: str = "matlab-toolbox",
    beta2: float = 0.3,
    weighted_f: bool = False,
) -> dict[str, float | np.ndarray]:
    """One pass of the toolbox's per-image loop.

    Args:
        pred: (H, W) uint8 map (or float in [0, 1], or bool).
        gt: (H, W) uint8 ground truth (binarised ``> 128``) or bool.
        protocol: ``"matlab-toolbox"`` (E-measure of ``p > t``) or ``"matlab-toolbox-2020-11"`` (``p >= t``).
        beta2: the F-measure's beta^2.
        weighted_f: also compute the weighted F-measure.

    Returns:
        The per-image values under the keys of the fast path: ``{dice,iou,sensitivity,specificity,precision,f,e}``
        ``_curve`` (256,) arrays and ``_adaptive`` floats, ``s_measure``, ``mae`` (and ``weighted_f_measure``).
    """
    e_strict = PROTOCOL_E_STRICT[protocol]
    g = gt > 128 if gt.dtype == np.uint8 else gt.astype(bool)
    p = mapminmax(im2double(pred))
    thresholds = toolbox_thresholds()
    names = ("precision", "sensitivity", "specificity", "dice", "f", "iou")
    curves = {name: np.zeros(len(thresholds)) for name in (*names, "e")}
    for k, t in enumerate(thresholds):
        for name, value in zip(names, fmeasure_calu(p, g, t, beta2), strict=True):
            curves[name][k] = value
        curves["e"][k] = enhanced_measure(p > t if e_strict else p >= t, g)
    out: dict[str, float | np.ndarray] = {f"{name}_curve": curve for name, curve in curves.items()}

    adaptive = 2 * float(np.mean(p))
    for name, value in zip(names, fmeasure_calu(p, g, adaptive, beta2), strict=True):
        out[f"{name}_adaptive"] = value
    out["e_adaptive"] = enhanced_measure(p > adaptive if e_strict else p >= adaptive, g)
    out["s_measure"] = structure_measure(p, g)
    out["mae"] = float(np.mean(np.abs(g.astype(np.float64) - p)))
    if weighted_f:
        out["weighted_f_measure"] = _weighted_f_measure(p, g)
    return out


def evaluate_dataset(
    pairs: Iterable[tuple[np.ndarray, np.ndarray]],
    protocol: str = "matlab-toolbox",
    beta2: float = 0.3,
    weighted_f: bool = False,
) -> dict[str, float | np.ndarray]:
    """The toolbox's dataset values of ``(pred, gt)`` pairs: ``column_X`` (mean of the per-image curves), ``meanX``
    (its mean over the thresholds), ``maxX`` (its maximum), and the means of the scalars and adaptive values.

    Returns:
        A flat dict: ``column_<family>``, ``mean_<family>``, ``max_<family>``, ``adaptive_<family>`` for the families
        ``dice, iou, sensitivity, specificity, precision, f, e``, and ``s_measure``, ``mae``
        (``weighted_f_measure``).
    """
    images = [evaluate_image(p, g, protocol, beta2, weighted_f) for p, g in pairs]
    out: dict[str, float | np.ndarray] = {}
    for family in ("dice", "iou", "sensitivity", "specificity", "precision", "f", "e"):
        column = np.mean(np.stack([np.asarray(image[f"{family}_curve"]) for image in images]), axis=0)
        out[f"column_{family}"] = column
        out[f"mean_{family}"] = float(np.mean(column))
        out[f"max_{family}"] = float(np.max(column))
        out[f"adaptive_{family}"] = float(np.mean([float(image[f"{family}_adaptive"]) for image in images]))
    scalars: Sequence[str] = ("s_measure", "mae", "weighted_f_measure") if weighted_f else ("s_measure", "mae")
    for name in scalars:
        out[name] = float(np.mean([float(image[name]) for image in images]))
    return out
