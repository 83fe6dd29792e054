r"""PySODMetrics' ``FmeasureV2`` handler set: ten confusion-count measures in three binarisation modes, batched.

Every measure is a function of the confusion counts ``tp, fp, tn, fn`` of a binary map against the ground truth:

============== ======================================================= =========================================
name (aliases)  formula (``div(a, b)`` = ``a / b``, 0 where ``b = 0``)  PySODMetrics 1.6.2 handler
============== ======================================================= =========================================
``fmeasure``    ``div((1 + b2) P R, b2 P + R)``, ``P``, ``R`` as below  ``FmeasureHandler(beta=b2)``
``precision``   ``div(tp, tp + fp)``                                    ``PrecisionHandler``
``recall``      ``div(tp, tp + fn)`` (``sensitivity``, ``tpr``)         ``RecallHandler`` (= TPR, Sensitivity)
``specificity`` ``div(tn, tn + fp)`` (``tnr``)                          ``SpecificityHandler`` (= TNR)
``fpr``         ``div(fp, tn + fp)``                                    ``FPRHandler``
``ber``         ``1 - (div(tp, tp + fn) + div(tn, tn + fp)) / 2``       ``BERHandler``
``iou``         ``div(tp, tp + fp + fn)``                               ``IOUHandler``
``dice``        ``div(2 tp, tp + fn + tp + fp)``                        ``DICEHandler``
``accuracy``    ``div(tp + tn, N)`` (``oa``, ``overall_accuracy``)      ``OverallAccuracyHandler``
``kappa``       ``div(oa - pe, 1 - pe)``,                               ``KappaHandler``
                ``pe = div((tp+fp)(tp+fn) + (tn+fn)(tn+tp), N^2)``
============== ======================================================= =========================================

Modes (PySODMetrics ``FmeasureV2.step``):

* ``adaptive``: the binary map ``p >= min(2 mean(p), 1)`` on the float map (Achanta et al. CVPR 2009);
* ``dynamic``: the 256 maps ``trunc(255 p) >= 255 - i`` (descending thresholds, entry 0 the strictest), from the
  family's one-pass (B, 2, 256) histograms (:mod:`segmetrics_torch.ops.thresholds`);
* ``binary``: ``p > 0.5`` ("simulating argmax"); a dataset value is the mean of per-image values
  (``sample_based=True``) or the measure of the pooled counts (``sample_based=False``, :class:`ThresholdMeasures`).

Exactness: counts are exact integers; every measure is evaluated from int64 counts with PySODMetrics' float64
operations in its order (e.g. Kappa's ``pe`` numerator and ``N^2`` are int64 before the one float64 division), so
per-image values agree to the last bit in practice. The binary mode's ``p > 0.5`` is decided on the map prepared with
the reference's float64 operations (a compiled kernel on CPU, tensor ops elsewhere). uint8 maps on the CPU take
a faster route with the same results: one histogram of the raw levels per image (``_level_path``).

Edge cases (as PySODMetrics): every 0/0 is 0 (empty GT: recall, IoU, Dice, F = 0; BER with empty GT is
``1 - specificity / 2``); Kappa of a constant-class image (``pe = 1``) is 0.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from ..._checks import ImageBatch, check_positive_float
from ...ops.foreground_levels import binary_half_counts, measure_table as kernel
from ...ops.thresholds import BinaryCounts, adaptive_threshold, binary_counts, threshold_counts
from ...registry import THRESHOLD_MEASURES
from ._extra_runner import run_raw
from ._intermediates import MeasureOptions, measure_values, use_cpu_kernel
from ._level_path import image_counts
from ._prepare import binarize_target, prepare_maps

__all__ = ["threshold_measures"]

#: accepted aliases -> canonical name
MEASURE_ALIASES = {
    "f": "fmeasure",
    "fm": "fmeasure",
    "sensitivity": "recall",
    "tpr": "recall",
    "tnr": "specificity",
    "oa": "accuracy",
    "overall_accuracy": "accuracy",
    "jaccard": "iou",
}
THRESHOLD_MODES = ("adaptive", "dynamic", "binary")


def canonical_measures(measures: object) -> tuple[tuple[str, str], ...]:
    """Validate ``measures`` (a name or a sequence of names) -> ((key, canonical name), ...) without duplicates."""
    if isinstance(measures, str):
        measures = (measures,)
    if not isinstance(measures, (list, tuple)) or not measures:
        raise TypeError(f"Expected `measures` to be a non-empty list of measure names, but got {measures!r}.")
    out: dict[str, str] = {}
    for name in measures:
        if not isinstance(name, str):
            raise TypeError(f"Expected `measures` to hold strings, but got {name!r}.")
        canonical = MEASURE_ALIASES.get(name.lower(), name.lower())
        if canonical not in THRESHOLD_MEASURES:
            raise ValueError(
                f"Expected `measures` from {THRESHOLD_MEASURES} (aliases {tuple(MEASURE_ALIASES)}), but got {name!r}."
            )
        out.setdefault(name, canonical)
    return tuple(out.items())


def check_modes(modes: object, allowed: tuple[str, ...] = THRESHOLD_MODES) -> tuple[str, ...]:
    """Validate ``modes`` (a name or a sequence of names from ``allowed``, :data:`THRESHOLD_MODES` by default);
    the names once each, in their order."""
    if isinstance(modes, str):
        modes = (modes,)
    if not isinstance(modes, (list, tuple)) or not modes:
        raise TypeError(f"Expected `modes` to be a non-empty list from {allowed}, but got {modes!r}.")
    for mode in modes:
        if mode not in allowed:
            raise ValueError(f"Expected `modes` from {allowed}, but got {mode!r}.")
    return tuple(dict.fromkeys(modes))


def _div(num: Tensor, den: Tensor) -> Tensor:
    """PySODMetrics' ``divide``: ``num / den`` in float64 with 0 where ``den == 0``."""
    num, den = num.to(torch.float64), den.to(torch.float64)
    zero = den == 0
    return torch.where(zero, torch.zeros_like(den), num / torch.where(zero, torch.ones_like(den), den))


def measure_from_counts(name: str, tp: Tensor, fp: Tensor, tn: Tensor, fn: Tensor, beta2: float = 0.3) -> Tensor:
    """One measure (canonical ``name``) of int64 counts of any (equal) shape, float64, PySODMetrics' operations."""
    if name == "precision":
        return _div(tp, tp + fp)
    if name == "recall":
        return _div(tp, tp + fn)
    if name == "specificity":
        return _div(tn, tn + fp)
    if name == "fpr":
        return _div(fp, tn + fp)
    if name == "iou":
        return _div(tp, tp + fp + fn)
    if name == "dice":
        return _div(2 * tp, tp + fn + tp + fp)
    if name == "accuracy":
        return _div(tp + tn, tp + fp + tn + fn)
    if name == "ber":
        return 1 - 0.5 * (_div(tp, tp + fn) + _div(tn, tn + fp))
    if name == "kappa":
        oa = _div(tp + tn, tp + fp + tn + fn)
        pe = _div((tp + fp) * (tp + fn) + (tn + fn) * (tn + tp), (tp + fp + tn + fn) ** 2)
        return _div(oa - pe, 1 - pe)
    if name == "fmeasure":
        p, r = _div(tp, tp + fp), _div(tp, tp + fn)
        return _div((beta2 + 1) * p * r, beta2 * p + r)
    raise ValueError(f"Unknown threshold measure {name!r}.")


def measure_table(names: tuple[str, ...], counts: list[Tensor], beta2: float) -> Tensor:
    """(M, B, W) float64: the canonical measures ``names`` of the int64 (B, W) counts ``tp, fp, tn, fn``.

    On the CPU one compiled pass (the same float64 operations, bit-identical values) replaces the ~90 small tensor
    operations of evaluating the measures one by one; elsewhere :func:`measure_from_counts` per measure.
    """
    if use_cpu_kernel(counts[0].device):
        codes = np.array([THRESHOLD_MEASURES.index(n) for n in names], np.int64)
        arrays = [c.to(torch.int64).contiguous().numpy() for c in counts]
        return torch.from_numpy(kernel(arrays[0], arrays[1], arrays[2], arrays[3], codes, float(beta2)))
    tp, fp, tn, fn = counts
    return torch.stack([measure_from_counts(n, tp, fp, tn, fn, beta2=beta2) for n in names])


def _split(tp: Tensor, pp: Tensor, pos: Tensor, numel: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """int64 ``(tp, fp, tn, fn)`` from true / predicted / ground-truth positives (``pos`` broadcast to ``tp``)."""
    tp, pp, pos = tp.to(torch.int64), pp.to(torch.int64), pos.to(torch.int64)
    if tp.ndim == 2:
        pos = pos[:, None]
    fp = pp - tp
    fn = pos - tp
    tn = numel - pos - fp
    return tp, fp, tn, fn


def _binary_half(preds: Tensor, target: Tensor, normalize: bool, g: Tensor) -> tuple[Tensor, Tensor]:
    """``(tp, pp)`` int64 (B,) of ``p > 0.5`` on the prepared map."""
    if use_cpu_kernel(preds.device):
        if preds.dtype == torch.uint8:
            raw, scale = preds.contiguous().numpy(), 255.0
        else:
            raw, scale = preds.to(torch.float64).contiguous().numpy(), 1.0
        out = torch.from_numpy(binary_half_counts(raw, g.contiguous().numpy(), scale, normalize))
        return out[:, 0], out[:, 1]
    p, _ = prepare_maps(preds, target, normalize)
    binary = p > 0.5
    return (binary & g).sum(dim=(1, 2)), binary.sum(dim=(1, 2))


def block_counts(
    preds: Tensor, target: Tensor, normalize: bool, modes: tuple[str, ...]
) -> dict[str, tuple[Tensor, Tensor, Tensor, Tensor]]:
    """int64 ``(tp, fp, tn, fn)`` per mode of one (B, H, W) block: (B,) for adaptive/binary, (B, 256) dynamic."""
    out: dict[str, tuple[Tensor, Tensor, Tensor, Tensor]] = {}
    numel = preds.shape[1] * preds.shape[2]
    if use_cpu_kernel(preds.device) and preds.dtype == torch.uint8:  # one histogram pass of the raw levels
        return {mode: _split(*c, numel) for mode, c in image_counts(preds, target, normalize, modes).items()}
    g = binarize_target(target)
    if "adaptive" in modes or "dynamic" in modes:
        if use_cpu_kernel(preds.device):
            values = measure_values(preds, target, normalize, MeasureOptions())
            adaptive: BinaryCounts | None = values.adaptive if "adaptive" in modes else None
            curve: BinaryCounts | None = values.curve if "dynamic" in modes else None
        else:  # only what is asked (the shared pass would also compute MAE)
            p, _ = prepare_maps(preds, target, normalize)

            adaptive = binary_counts(p, g, adaptive_threshold(p)) if "adaptive" in modes else None
            curve = threshold_counts(p, g) if "dynamic" in modes else None
        if adaptive is not None:  # asked
            out["adaptive"] = _split(adaptive.tp, adaptive.pp, adaptive.pos, numel)
        if curve is not None:  # asked
            out["dynamic"] = _split(curve.tp, curve.pp, curve.pos, numel)
    if "binary" in modes:
        tp, pp = _binary_half(preds, target, normalize, g)
        out["binary"] = _split(tp, pp, g.sum(dim=(1, 2)), numel)
    return out


def threshold_measures(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    measures: str | list[str] | tuple[str, ...] = THRESHOLD_MEASURES,
    modes: str | list[str] | tuple[str, ...] = THRESHOLD_MODES,
    beta2: float = 0.3,
    normalize: bool = True,
    validate_args: bool = True,
    return_counts: bool = False,
) -> dict[str, Tensor]:
    r"""Per-image confusion-count measures (PySODMetrics ``FmeasureV2`` handlers) in the adaptive/dynamic/binary modes.

    See the module documentation for the formulas of the measures and the modes. Reference: PySODMetrics 1.6.2
    ``FmeasureV2`` (to 1e-6; in practice bit-equal); Achanta et al. CVPR 2009 for the adaptive threshold; Cohen 1960
    for Kappa.

    Args:
        preds: (B, H, W) or (B, 1, H, W) maps (uint8 0..255, or float in [0, 1]), or a list of (H, W) maps.
        target: ground truth of the same shape (uint8 binarised ``> 128``, bool, or {0, 1}).
        measures: names from :data:`THRESHOLD_MEASURES` or their aliases (``tpr``, ``sensitivity``, ``tnr``, ``oa``,
            ``overall_accuracy``, ``f``, ``fm``, ``jaccard``); the result keys use the names as given.
        modes: from ``("adaptive", "dynamic", "binary")``.
        beta2: :math:`\beta^2` of ``fmeasure`` (PySODMetrics' ``FmeasureHandler(beta=0.3)``).
        normalize: per-image min-max stretch of ``preds`` as PySODMetrics (constant maps are left alone).
        validate_args: check values (NaN, range, binary target); these checks synchronise a CUDA device.
        return_counts: add ``"counts/<mode>"``: int64 (B, 4) (or (B, 256, 4) for ``dynamic``) ``tp, fp, tn, fn``.

    Returns:
        dict ``"<measure>/<mode>"`` -> float64 (B,) for ``adaptive`` and ``binary``, (B, 256) for ``dynamic``
        (descending thresholds). Dataset values (means, pooled ``binary``) come from :class:`ThresholdMeasures`.

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 8, 8, dtype=torch.uint8); target[:, 2:6, 2:6] = 255
        >>> preds = target.clone(); preds[:, 2, 2] = 0
        >>> out = threshold_measures(preds, target, measures=["iou", "kappa"], modes=["binary", "dynamic"])
        >>> round(float(out["iou/binary"][0]), 4), round(float(out["kappa/dynamic"][0, 0]), 4)
        (0.9375, 0.9168)
    """
    pairs = canonical_measures(measures)
    modes = check_modes(modes)
    beta2 = check_positive_float(beta2, "beta2")
    if not isinstance(return_counts, bool):
        raise TypeError(f"Expected argument `return_counts` to be a bool, but got {return_counts!r}.")

    def fn(p: Tensor, t: Tensor) -> dict[str, Tensor]:
        counts = block_counts(p, t, normalize, modes)
        # all modes side by side, (B, 1 | 256 | 1) -> (B, n): each measure is evaluated once (elementwise, so the
        # values are those of per-mode evaluation)
        widths = [1 if counts[m][0].ndim == 1 else counts[m][0].shape[1] for m in modes]
        joined = [torch.cat([counts[m][j].reshape(counts[m][j].shape[0], -1) for m in modes], dim=1) for j in range(4)]
        names = tuple(dict.fromkeys(name for _, name in pairs))
        table = measure_table(names, joined, beta2)
        out = {}
        for key, name in pairs:
            parts = table[names.index(name)].split(widths, dim=1)
            for mode, part in zip(modes, parts, strict=True):
                out[f"{key}/{mode}"] = part if mode == "dynamic" else part[:, 0]
        if return_counts:
            for mode in modes:
                out[f"counts/{mode}"] = torch.stack(counts[mode], dim=-1)
        return out

    return run_raw(fn, preds, target, normalize=normalize, validate_args=validate_args)
