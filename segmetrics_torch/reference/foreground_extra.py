"""Reference oracles of the foreground measures beyond the suite (threshold set, size invariance, MSIoU, HCE,
context), plain numpy/scipy (readable, loops allowed).

Like :mod:`segmetrics_torch.reference.foreground` this imports nothing from ``segmetrics_torch`` and no torch; inputs
are the prepared ``p`` (float64 in [0, 1]) and ``g`` (bool) of one image (``reference.foreground.prepare``).
Contract: the values equal pysodmetrics 1.6.2 to 1e-6 (tests in ``tests/reference/test_reference_extra_vs_pysod.py``).

Threshold measures (PySODMetrics ``FmeasureV2`` handlers)
---------------------------------------------------------
Each measure is a function of the confusion counts ``tp, fp, tn, fn`` of one binary map, computed here the direct
way: binarise the map, count with Python integers, divide with ``_div`` (0 where the denominator is 0). The three
binary maps: ``adaptive`` = ``p >= min(2 mean(p), 1)``; ``dynamic`` = the 256 maps ``trunc(255 p) >= 255 - i``,
``i = 0..255`` (each map built on its own, no histogram); ``binary`` = ``p > 0.5``.

Size-invariant measures (Li et al. ICML 2024, PySODMetrics ``size_invariance.py``)
-------------------------------------------------------------------------------
The GT's 4-connected components of >= 50 pixels are the targets (if none, the largest component only); each target
has a bounding box; a target's masked image is ``p * box`` and ``g & box`` over the whole image (boxes may overlap;
each target keeps its own box); the image value is the mean over targets of the measure of the masked image. For
MAE the background (pixels in no box) is one extra, area-weighted region. Details with the functions below.

Context measure (Wang et al. 2025, PySODMetrics ``ContextMeasure``)
-------------------------------------------------------------------
The formula as written, on the whole image, in float64: the kernel from ``np.cov`` of the GT's coordinate list
(PySOD's rules), both correlations with ``scipy.ndimage.correlate(mode="mirror")`` (OpenCV's ``BORDER_REFLECT_101``).
PySOD's forward correlation is float32, so the two agree to ~1e-7 (tested at 1e-6); the package's windowed FFT path
agrees with this oracle to ~1e-12.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import ndimage

from ..registry import THRESHOLD_MEASURES

__all__ = [
    "THRESHOLD_MEASURES",
    "confusion_counts",
    "context_kernel",
    "context_measure",
    "measure_from_counts",
    "multiscale_iou",
    "size_invariant_mae",
    "size_invariant_targets",
    "size_invariant_threshold_measures",
    "threshold_measures",
]


def _div(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` as float64 numbers; 0.0 when the denominator is 0."""
    if denominator == 0:
        return 0.0
    return float(np.float64(numerator) / np.float64(denominator))


def measure_from_counts(name: str, tp: int, fp: int, tn: int, fn: int, beta2: float = 0.3) -> float:
    """One measure of the counts of one binary map (formulas of ``functional.foreground.threshold_measures``)."""
    tp, fp, tn, fn = int(tp), int(fp), int(tn), int(fn)
    n = tp + fp + tn + fn
    precision = _div(tp, tp + fp)
    recall = _div(tp, tp + fn)
    specificity = _div(tn, tn + fp)
    if name == "precision":
        return precision
    if name == "recall":
        return recall
    if name == "specificity":
        return specificity
    if name == "fpr":
        return _div(fp, tn + fp)
    if name == "iou":
        return _div(tp, tp + fp + fn)
    if name == "dice":
        return _div(2 * tp, 2 * tp + fn + fp)
    if name == "accuracy":
        return _div(tp + tn, n)
    if name == "ber":
        return float(1 - 0.5 * (np.float64(recall) + np.float64(specificity)))
    if name == "kappa":
        oa = np.float64(_div(tp + tn, n))
        chance = np.float64(_div((tp + fp) * (tp + fn) + (tn + fn) * (tn + tp), n * n))
        return _div(oa - chance, 1 - chance)
    if name == "fmeasure":
        p, r = np.float64(precision), np.float64(recall)
        return _div((beta2 + 1) * p * r, beta2 * p + r)
    raise ValueError(f"unknown measure {name!r}")


def confusion_counts(binary: np.ndarray, g: np.ndarray) -> tuple[int, int, int, int]:
    """``(tp, fp, tn, fn)`` of a bool map against a bool GT, as Python integers."""
    tp = int(np.sum(binary & g))
    fp = int(np.sum(binary & ~g))
    fn = int(np.sum(~binary & g))
    tn = int(np.sum(~binary & ~g))
    return tp, fp, tn, fn


def binary_maps(p: np.ndarray, mode: str) -> list[np.ndarray]:
    """The binary maps of one mode: one for ``adaptive``/``binary``, 256 (descending thresholds) for ``dynamic``."""
    if mode == "adaptive":
        return [p >= min(2 * p.mean(), 1.0)]
    if mode == "binary":
        return [p > 0.5]
    if mode == "dynamic":
        bins = (p * 255).astype(np.uint8)
        return [bins >= 255 - i for i in range(256)]
    raise ValueError(f"unknown mode {mode!r}")


def threshold_measures(
    p: np.ndarray,
    g: np.ndarray,
    measures: Sequence[str] = THRESHOLD_MEASURES,
    modes: Sequence[str] = ("adaptive", "dynamic", "binary"),
    beta2: float = 0.3,
) -> dict:
    """``{"<measure>/<mode>": float (adaptive, binary) or (256,) array (dynamic)}`` of one image, plus
    ``"counts/<mode>"``: the ``(tp, fp, tn, fn)`` tuple(s) (for pooled dataset values)."""
    out: dict = {}
    for mode in modes:
        counts = [confusion_counts(b, g) for b in binary_maps(p, mode)]
        out[f"counts/{mode}"] = counts if mode == "dynamic" else counts[0]
        for name in measures:
            values = [measure_from_counts(name, *c, beta2=beta2) for c in counts]
            out[f"{name}/{mode}"] = np.array(values) if mode == "dynamic" else values[0]
    return out


# ----------------------------------------------------------------------------------------------------------------
# size-invariant measures
# ----------------------------------------------------------------------------------------------------------------
def size_invariant_targets(g: np.ndarray, area_threshold: int = 50) -> list[tuple[int, int, int, int]]:
    """Bounding boxes ``(y0, y1, x0, x1)`` (inclusive) of the GT's targets: 4-connected components of at least
    ``area_threshold`` pixels, or, if there is none, every component of the largest area. Empty GT: no target."""

    labels, num = ndimage.label(g)  # default structure = 4-connectivity (skimage connectivity=1)
    components = []
    for label in range(1, num + 1):
        rows, cols = np.nonzero(labels == label)
        components.append((rows.size, (rows.min(), rows.max(), cols.min(), cols.max())))
    targets = [box for area, box in components if area >= area_threshold]
    if not targets and components:
        largest = max(area for area, _ in components)
        targets = [box for area, box in components if area == largest]
    return [(int(y0), int(y1), int(x0), int(x1)) for y0, y1, x0, x1 in targets]


def _box_mask(shape: tuple[int, int], box: tuple[int, int, int, int]) -> np.ndarray:
    mask = np.zeros(shape, dtype=bool)
    y0, y1, x0, x1 = box
    mask[y0 : y1 + 1, x0 : x1 + 1] = True
    return mask


def size_invariant_mae(p: np.ndarray, g: np.ndarray) -> float:
    """SI-MAE of one image (formula in ``functional.foreground.size_invariance``); plain MAE for an empty GT."""
    boxes = size_invariant_targets(g)
    err = np.abs(p - g)
    if not boxes:
        return float(err.mean())
    masks = [_box_mask(g.shape, box) for box in boxes]
    background = ~np.any(masks, axis=0)
    bg_area = int(background.sum())
    ratio = bg_area / (g.size - bg_area)
    factor = 1 / (len(boxes) + ratio)
    with np.errstate(invalid="ignore", divide="ignore"):  # boxes covering the image: 0 * 0 / 0 = NaN (as PySOD)
        value = ratio * np.float64(err[background].sum()) / np.float64(bg_area) * factor
    for mask in masks:
        value += err[mask].sum() / mask.sum() * factor
    return float(value)


def size_invariant_threshold_measures(
    p: np.ndarray,
    g: np.ndarray,
    measures: Sequence[str] = THRESHOLD_MEASURES,
    modes: Sequence[str] = ("adaptive", "dynamic", "binary"),
    beta2: float = 0.3,
) -> dict:
    """Per target: the threshold measures of the masked image ``p * box``, ``g & box`` (whole image); returns the
    per-image means over targets under ``"<measure>/<mode>"``, the per-target results under ``"targets"`` (a list
    of :func:`threshold_measures` dicts). Empty GT: one "target", the whole image."""
    boxes = size_invariant_targets(g) or [(0, g.shape[0] - 1, 0, g.shape[1] - 1)]
    per_target = []
    for box in boxes:
        mask = _box_mask(g.shape, box)
        per_target.append(threshold_measures(p * mask, g & mask, measures, modes, beta2))
    out: dict = {"targets": per_target}
    for mode in modes:
        for name in measures:
            out[f"{name}/{mode}"] = np.mean([t[f"{name}/{mode}"] for t in per_target], axis=0)
    return out


# ----------------------------------------------------------------------------------------------------------------
# multi-scale IoU
# ----------------------------------------------------------------------------------------------------------------
def msiou_edges(mask: np.ndarray) -> np.ndarray:
    """Edges of a bool map: a float Sobel response (zero padding) along either axis is non-zero."""

    m = mask.astype(np.float64)
    sy = ndimage.sobel(m, axis=0, mode="constant")
    sx = ndimage.sobel(m, axis=1, mode="constant")
    return (sy != 0) | (sx != 0)


def msiou_shrink(edge: np.ndarray, size: int) -> np.ndarray:
    """``size x size`` cells (zero padding at the top/left to a multiple of ``size``), "on" if any pixel is."""
    h, w = edge.shape
    pad_h, pad_w = (size - h % size) % size, (size - w % size) % size
    padded = np.pad(edge, ((pad_h, 0), (pad_w, 0)))
    cells = np.zeros((padded.shape[0] // size, padded.shape[1] // size), dtype=bool)
    for cy in range(cells.shape[0]):
        for cx in range(cells.shape[1]):
            cells[cy, cx] = padded[cy * size : (cy + 1) * size, cx * size : (cx + 1) * size].any()
    return cells


def msiou_score(binary: np.ndarray, g: np.ndarray, num_levels: int = 10) -> float:
    """MSIoU of one binary map: trapezoid rule over the ratios ``(|P_s & G_s| + 1) / (|G_s| + 1)``.

    PySOD's denominators are float16 numbers (its edge maps are float16): reproduced with ``np.float16``."""
    sizes = np.power(2, np.linspace(0, 9, num=num_levels, dtype=int))
    pe, ge = msiou_edges(binary), msiou_edges(g)
    ratios = []
    for size in sizes:
        p_cells, g_cells = msiou_shrink(pe, int(size)), msiou_shrink(ge, int(size))
        denominator = np.float16(np.float16(g_cells.sum()) + np.float16(1))
        ratios.append(int((p_cells & g_cells).sum() + 1) / np.float64(denominator))
    return float(np.trapezoid(ratios, dx=1 / (num_levels - 1)))


def multiscale_iou(p: np.ndarray, g: np.ndarray, num_levels: int = 10) -> dict:
    """``{"adaptive", "binary": float, "dynamic": (257,) array}``, thresholds ``trunc(255 p) >= t``, t = 0..256."""
    bins = (p * 255).astype(np.uint8)
    return {
        "adaptive": msiou_score(p >= min(2 * p.mean(), 1.0), g, num_levels),
        "binary": msiou_score(p > 0.5, g, num_levels),
        "dynamic": np.array([msiou_score(bins >= t, g, num_levels) for t in range(257)]),
    }


def context_kernel(g: np.ndarray, alpha: float = 6.0) -> np.ndarray:
    """PySOD's Gaussian context kernel of a bool GT: covariance ``S`` of the GT pixels' (row, column) coordinates
    (``np.cov``; one pixel or none: ``diag(0.25, 0.25)`` with half sizes 1; a zero variance -> EPS), scaled to
    ``alpha^2 S / trace S``, half sizes ``round(3 (alpha sigma / sqrt(trace S)))`` per axis, normalised to sum 1.
    A singular ``S`` (GT on one slanted line) raises numpy's ``LinAlgError`` (as PySOD), and so does one that rounding
    left barely invertible, whose kernel overflows (PySOD's value is NaN there)."""
    eps = np.spacing(1)
    points = np.argwhere(g)
    if len(points) <= 1:
        cov, x_dis, y_dis = np.diag([0.25, 0.25]), 1, 1
    else:
        cov = np.cov(points, rowvar=False)
        cov[0, 0] = cov[0, 0] if cov[0, 0] != 0 else eps
        cov[1, 1] = cov[1, 1] if cov[1, 1] != 0 else eps
        total = np.sqrt(cov[0, 0] + cov[1, 1])
        x_dis = round(3 * (alpha * np.sqrt(cov[0, 0]) / total))
        y_dis = round(3 * (alpha * np.sqrt(cov[1, 1]) / total))
        cov = alpha**2 * cov / total**2
    inv = np.linalg.inv(cov)
    # the quadratic form of every offset z = (a, b) in one contraction, as PySOD evaluates it: on a nearly singular S
    # (entries of the inverse ~1e15) another order of the same sums differs from PySOD's value by 1e-3
    a, b = np.meshgrid(np.arange(-x_dis, x_dis + 1), np.arange(-y_dis, y_dis + 1), indexing="ij")
    z = np.stack([a, b], axis=-1)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        kernel = np.exp(-0.5 * np.einsum("...i,ij,...j->...", z, inv, z)) / (2 * np.pi * np.sqrt(np.linalg.det(cov)))
        kernel = kernel / kernel.sum()
    if not np.isfinite(kernel).all():  # a covariance that rounding left barely invertible: PySOD's value is NaN
        raise np.linalg.LinAlgError("the covariance of the GT pixels is numerically singular")
    return kernel


def context_measure(p: np.ndarray, g: np.ndarray, beta2: float = 1.0, alpha: float = 6.0) -> float:
    """``CM = (1 + beta2) mF wR / (beta2 mF + wR + EPS)`` with ``mF = sum([p > 0] (K * g) p) / (sum p + EPS)`` and
    ``wR = sum(e / (e - 1) g (1 - exp(-(K * p)))) / (sum g + EPS)`` (``*``: correlation, border REFLECT_101)."""

    eps = np.spacing(1)
    kernel = context_kernel(g, alpha)
    gf = g.astype(np.float64)
    forward = (p > 0) * ndimage.correlate(gf, kernel, mode="mirror")
    m_forward = np.sum(forward * p) / (np.sum(p) + eps)
    reverse = np.e / (np.e - 1) * gf * (1 - np.exp(-ndimage.correlate(p, kernel, mode="mirror")))
    w_reverse = np.sum(reverse * gf) / (np.sum(gf) + eps)
    return float((1 + beta2) * m_forward * w_reverse / (beta2 * m_forward + w_reverse + eps))
