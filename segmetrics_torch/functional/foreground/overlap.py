"""Threshold-based measures of a soft foreground map: F-measure, precision, recall, IoU, Dice.

All of them derive from the confusion counts of :mod:`segmetrics_torch.ops.thresholds`: the adaptive binary map
``p >= min(2 mean(p), 1)`` (Achanta et al. CVPR 2009) and the 256-threshold curve of ``trunc(255 p) >= 255 - i`` in
PySODMetrics' descending order (entry 0 = strictest threshold). Per-image values are returned; dataset summaries
(``mean``/``max`` of the image-averaged curve) are taken by the Metric classes.

Reference: PySODMetrics 1.6.2 ``Fmeasure`` (F, precision and recall curves) and ``FmeasureV2`` handlers (IoU, Dice,
precision, recall, ``sample_based=True``), which follow Fan's MATLAB toolbox (CODToolbox ``Fmeasure_calu.m``).
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..._checks import ImageBatch, check_positive_float
from ...ops.thresholds import BinaryCounts
from ._intermediates import ForegroundIntermediates, run_per_image
from .matlab_toolbox import check_foreground_protocol, toolbox_foreground_values

__all__ = ["dice", "f_measure", "iou", "precision_recall"]


def safe_divide(num: Tensor, den: Tensor) -> Tensor:
    """``num / den`` with 0 where ``den == 0`` (PySODMetrics' ``divide``)."""
    return torch.where(den == 0, torch.zeros_like(num), num / torch.where(den == 0, torch.ones_like(den), den))


def f_from_counts(counts: BinaryCounts, beta2: float) -> dict[str, Tensor]:
    """F-beta, precision and recall of ``Fmeasure`` from counts (curves or adaptive).

    ``P = TP / PP`` (0 when nothing is predicted), ``R = TP / max(G, 1)``,
    ``F = (1 + beta^2) P R / (beta^2 P + R)`` and 0 where ``P R = 0`` (covers the empty ground truth).
    """
    tp, pp = counts.tp, counts.pp
    pos = counts.pos if tp.ndim == 1 else counts.pos[:, None]
    precision = tp / torch.where(pp == 0, torch.ones_like(pp), pp)
    recall = tp / torch.clamp(pos, min=1)
    num = (1 + beta2) * precision * recall
    den = torch.where(num == 0, torch.ones_like(num), beta2 * precision + recall)
    return {"f": num / den, "precision": precision, "recall": recall}


def overlap_from_counts(counts: BinaryCounts) -> dict[str, Tensor]:
    """IoU ``tp/(tp+fp+fn)``, Dice ``2tp/(2tp+fp+fn)``, precision ``tp/(tp+fp)``, recall ``tp/(tp+fn)``; 0 on 0/0."""
    tp, fp, fn, _ = counts.expand()
    return {
        "iou": safe_divide(tp, tp + fp + fn),
        "dice": safe_divide(2 * tp, 2 * tp + fn + fp),
        "precision": safe_divide(tp, tp + fp),
        "recall": safe_divide(tp, tp + fn),
    }


def f_measure(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    beta2: float = 0.3,
    normalize: bool = True,
    validate_args: bool = True,
    protocol: str = "pysodmetrics",
) -> dict[str, Tensor]:
    r"""Per-image F-beta measure: adaptive value and the 256-threshold F, precision and recall curves.

    .. math:: F_\beta = \frac{(1+\beta^2)\,P\,R}{\beta^2 P + R}, \quad \beta^2 = 0.3

    Reference: Achanta et al. CVPR 2009 (adaptive threshold ``min(2 mean(p), 1)``); PySODMetrics 1.6.2 ``Fmeasure``
    (to 1e-6). Input preparation: see :mod:`segmetrics_torch.functional.foreground._prepare`.

    Args:
        preds: (B, H, W) or (B, 1, H, W) maps (uint8 0..255, or float in [0, 1]), or a list of (H, W) maps.
        target: ground truth of the same shape (uint8 binarised ``> 128``, bool, or {0, 1}).
        beta2: :math:`\beta^2` (PySODMetrics calls it ``beta``).
        normalize: per-image min-max stretch of ``preds`` as PySODMetrics (constant maps are left alone).
        validate_args: check values (NaN, range, binary target); these checks synchronise a CUDA device.
        protocol: ``"pysodmetrics"`` (PySODMetrics 1.6.2, the default) or a MATLAB-toolbox protocol,
            ``"matlab-toolbox"`` or ``"matlab-toolbox-2020-11"`` (the toolbox's map, thresholds and zero rules:
            :mod:`.matlab_toolbox`, ``docs/matlab-toolbox.md``); ``normalize`` must then be ``True``.

    Returns:
        dict with ``adaptive`` (B,), ``curve``, ``precision``, ``recall`` (B, 256), descending thresholds.

    Edge cases: empty ground truth gives F = 0 and recall 0 at every threshold; a threshold selecting no pixel has
    precision 0.

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 8, 8, dtype=torch.uint8); target[:, 2:6, 2:6] = 255
        >>> out = f_measure(target.clone(), target)
        >>> float(out["adaptive"][0]), float(out["curve"][0, 0])
        (1.0, 1.0)
    """
    beta2 = check_positive_float(beta2, "beta2")
    if check_foreground_protocol(protocol) != "pysodmetrics":
        v = _toolbox(preds, target, protocol, normalize, validate_args, beta2)
        return {
            "adaptive": v["f_adaptive"],
            "curve": v["f_curve"],
            "precision": v["precision_curve"],
            "recall": v["recall_curve"],
        }

    def fn(values: ForegroundIntermediates) -> dict[str, Tensor]:
        c = f_from_counts(values.curve, beta2)
        a = f_from_counts(values.adaptive, beta2)
        return {"adaptive": a["f"], "curve": c["f"], "precision": c["precision"], "recall": c["recall"]}

    return run_per_image(fn, preds, target, normalize=normalize, validate_args=validate_args)


def _toolbox(
    preds: ImageBatch, target: ImageBatch, protocol: str, normalize: bool, validate_args: bool, beta2: float = 0.3
) -> dict[str, Tensor]:
    """The per-image values of a MATLAB-toolbox ``protocol`` (:func:`.matlab_toolbox.toolbox_foreground_values`)."""
    return toolbox_foreground_values(
        preds, target, protocol=protocol, beta2=beta2, normalize=normalize, validate_args=validate_args
    )


def _overlap_measure(
    name: str, preds: ImageBatch, target: ImageBatch, normalize: bool, validate_args: bool, protocol: str
) -> dict[str, Tensor]:
    if check_foreground_protocol(protocol) != "pysodmetrics":
        v = _toolbox(preds, target, protocol, normalize, validate_args)
        return {"adaptive": v[f"{name}_adaptive"], "curve": v[f"{name}_curve"]}

    def fn(values: ForegroundIntermediates) -> dict[str, Tensor]:
        return {
            "adaptive": overlap_from_counts(values.adaptive)[name],
            "curve": overlap_from_counts(values.curve)[name],
        }

    return run_per_image(fn, preds, target, normalize=normalize, validate_args=validate_args)


def iou(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    normalize: bool = True,
    validate_args: bool = True,
    protocol: str = "pysodmetrics",
) -> dict[str, Tensor]:
    r"""Per-image intersection over union (Jaccard index) ``tp / (tp + fp + fn)``, adaptive and 256-curve.

    Reference: PySODMetrics 1.6.2 ``FmeasureV2`` + ``IOUHandler`` (``sample_based=True``); 0 where
    ``tp + fp + fn = 0`` (empty ground truth and empty prediction). Arguments as :func:`f_measure` (``protocol``
    included: with a toolbox protocol the toolbox's ``TP / (FN + P)``, 0 wherever TP = 0).

    Returns:
        dict with ``adaptive`` (B,) and ``curve`` (B, 256), descending thresholds.

    Example:
        >>> import torch
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 16, 16, generator=g)
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[:, 4:12, 4:12] = True
        >>> from segmetrics_torch.functional import iou
        >>> out = iou(preds, target)
        >>> out["adaptive"].shape, out["curve"].shape
        (torch.Size([2]), torch.Size([2, 256]))
        >>> [round(v, 4) for v in out["adaptive"].tolist()]
        [0.0294, 0.0]
    """
    return _overlap_measure("iou", preds, target, normalize, validate_args, protocol)


def dice(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    normalize: bool = True,
    validate_args: bool = True,
    protocol: str = "pysodmetrics",
) -> dict[str, Tensor]:
    r"""Per-image Dice coefficient ``2 tp / (2 tp + fp + fn)``, adaptive and 256-curve.

    Reference: PySODMetrics 1.6.2 ``FmeasureV2`` + ``DICEHandler``; 0 where the denominator is 0. Arguments and
    returns as :func:`iou` (a toolbox ``protocol``: the toolbox's ``2 TP / (|G| + |P|)``, 0 wherever TP = 0).

    Example:
        >>> import torch
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 16, 16, generator=g)
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[:, 4:12, 4:12] = True
        >>> from segmetrics_torch.functional import dice
        >>> out = dice(preds, target)
        >>> [round(v, 4) for v in out["adaptive"].tolist()]
        [0.0571, 0.0]
        >>> round(float(out["curve"].max()), 4)
        0.424
    """
    return _overlap_measure("dice", preds, target, normalize, validate_args, protocol)


def precision_recall(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    normalize: bool = True,
    validate_args: bool = True,
    protocol: str = "pysodmetrics",
) -> dict[str, Tensor]:
    r"""Per-image precision ``tp/(tp+fp)`` and recall ``tp/(tp+fn)``, adaptive and 256-curves.

    Reference: PySODMetrics 1.6.2 ``FmeasureV2`` + ``PrecisionHandler``/``RecallHandler``; 0 where a denominator is 0.
    Arguments as :func:`f_measure` (a toolbox ``protocol``: the toolbox's precision and sensitivity, 0 wherever
    TP = 0).

    Returns:
        dict with ``adaptive_precision``, ``adaptive_recall`` (B,) and ``precision``, ``recall`` (B, 256).

    Example:
        >>> import torch
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 16, 16, generator=g)
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[:, 4:12, 4:12] = True
        >>> from segmetrics_torch.functional import precision_recall
        >>> out = precision_recall(preds, target)
        >>> sorted(out)
        ['adaptive_precision', 'adaptive_recall', 'precision', 'recall']
        >>> [round(v, 4) for v in out["adaptive_recall"].tolist()]
        [0.0312, 0.0]
    """

    if check_foreground_protocol(protocol) != "pysodmetrics":
        v = _toolbox(preds, target, protocol, normalize, validate_args)
        return {
            "adaptive_precision": v["precision_adaptive"],
            "adaptive_recall": v["recall_adaptive"],
            "precision": v["precision_curve"],
            "recall": v["recall_curve"],
        }

    def fn(values: ForegroundIntermediates) -> dict[str, Tensor]:
        a, c = overlap_from_counts(values.adaptive), overlap_from_counts(values.curve)
        return {
            "adaptive_precision": a["precision"],
            "adaptive_recall": a["recall"],
            "precision": c["precision"],
            "recall": c["recall"],
        }

    return run_per_image(fn, preds, target, normalize=normalize, validate_args=validate_args)
