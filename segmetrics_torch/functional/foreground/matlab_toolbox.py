r"""The MATLAB evaluation toolbox of PraNet, Inf-Net and SINet (and the COD toolbox), reproduced: a named protocol.

Many tables in camouflaged object detection, polyp segmentation and COVID lung-infection segmentation were computed
with the MATLAB ``main.m`` that D.-P. Fan and co-authors released with PraNet (``eval/``), Inf-Net
(``EvaluationTool/``), SINet (``EvaluationTool/``), SINet-V2 (``eval/``) and the COD toolbox
(``Onekey_Evaluation_Code/``). PySODMetrics 1.6.2 (this package's default convention) imitates it but bins the map
into ``trunc(255 p)`` and binarises every measure with ``>=``; the toolbox compares the float map with a threshold
grid, with a per-measure comparison and zero rules of its own. This module computes the toolbox's numbers:

* **Map.** ``im2double`` (uint8 ``u / 255``; floating maps as they are), then ``mapminmax(x, 0, 1)`` over the image:
  ``y = (x - min) * g`` with the gain ``g = 1 / (max - min)`` (a multiplication by the reciprocal, not PySODMetrics'
  division: the two differ in the last bit for some pixels, which decides ties with a threshold); a map whose
  ``max - min`` is 0 (or whose gain would exceed 1e14) is left as it is. Ground truth ``gt > 128`` (uint8), bool as is.
* **Thresholds.** The 256 values of MATLAB's ``1:-1/255:0`` as its colon operator builds them (from both ends:
  ``t_k = 1 + k d`` for ``k <= 127`` and ``t_{255-k} = 0 - k d``, ``d = -1/255``), **descending**: entry 0 is
  ``t = 1``, entry 255 is ``t = 0``.
* **Per threshold** (``Fmeasure_calu.m``), on the binary map ``p >= t``: with ``TP``, ``FP``, ``FN``, ``TN``,
  ``G = TP + FN`` and ``P = TP + FP``

  .. math::
      \mathrm{Dice} = \frac{2TP}{G + P},\ \mathrm{IoU} = \frac{TP}{FN + P},\ \mathrm{Sen} = \frac{TP}{G},\
      \mathrm{Spe} = \frac{TN}{TN + FP},\ \mathrm{Pre} = \frac{TP}{P},\
      F_\beta = \frac{(1 + \beta^2)\,\mathrm{Pre}\,\mathrm{Sen}}{\beta^2\,\mathrm{Pre} + \mathrm{Sen}}

  and **every one of them 0 when TP = 0** (specificity included, although ``TN / (TN + FP)`` is then defined).
* **E-measure** per threshold (``Enhancedmeasure.m``, the formula of :mod:`.enhanced_alignment`) on a binary map
  that the toolbox versions build differently: ``p > t`` (**strict**) or ``p >= t``. See :data:`TOOLBOX_PROTOCOLS`.
* **Adaptive** (the first Inf-Net and the SINet / COD toolboxes): the threshold ``a = 2 mean(p)``; the overlap
  measures at ``p >= min(a, 1)`` (``Fmeasure_calu`` caps the threshold at 1), the E-measure at ``p > a`` or
  ``p >= a`` (uncapped, the protocol's comparison).
* **Scalars**: S-measure (alpha 0.5, :func:`~segmetrics_torch.functional.s_measure`'s formula), MAE
  ``mean |p - g|`` and the weighted F-measure (``original_WFb.m``), all of the toolbox's map ``p``.
* **Dataset**: a per-image 256-point curve is averaged over the images (``column_X = mean(threshold_X, 1)``); the
  dataset's ``mean`` is the mean of that column over the 256 thresholds and its ``max`` the column's maximum
  (:func:`summarize_toolbox`). Scalars and adaptive values are means over the images.

Edge cases (the toolbox's, reproduced): an image whose ground truth is empty has TP = 0 at every threshold, so all
its overlap curves are 0 (its E-measure is ``#(FM = 0) / (N - 1 + eps)``); a ground truth that covers the whole
image gives **specificity NaN** wherever TP > 0 (``0 / 0`` in the toolbox; the dataset's specificity is then NaN,
documented, and :class:`~segmetrics_torch.metrics.matlab_toolbox.MatlabToolboxMeasures` warns); a constant map is
not stretched. Known difference: the S-measure's ground-truth centroid is rounded half to even on the 0-based mean
here (PySODMetrics), half away from zero on the 1-based mean in MATLAB; they differ only when the 0-based mean is
``k + 1/2`` with ``k`` even (see ``docs/matlab-toolbox.md``).

The counts of all 256 thresholds come from one histogram per batch: a pixel passes the thresholds from the first
one it reaches onward (the grid descends), so the index of that first threshold, found by ``searchsorted`` on the
float64 map (exact comparisons, no binning), is histogrammed and cumulated. For uint8 maps the index is found once
per grey level of each image. Everything runs in float64 on the input's device.

References:
    D.-P. Fan et al., PraNet (MICCAI 2020), Inf-Net (IEEE TMI 2020), SINet (CVPR 2020); the MATLAB code in
    ``github.com/DengPingFan/PraNet`` ``eval/``, ``DengPingFan/Inf-Net`` ``EvaluationTool/``,
    ``DengPingFan/SINet`` ``EvaluationTool/``, ``GewelsJI/SINet-V2`` ``eval/``, ``DengPingFan/CODToolbox``.
"""

from __future__ import annotations

import dataclasses
import decimal
import functools
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from ..._checks import ImageBatch, check_bool, check_choice, check_positive_float
from ...ops.device_exact import count_by_key, divide_exactly
from ...ops.thresholds import NUM_THRESHOLDS, BinaryCounts, binary_counts
from ...registry import FOREGROUND_PROTOCOLS, TOOLBOX_RESULTS
from ._intermediates import (
    EdtBackend,
    MeasureOptions,
    _blocks,
    add_sums,
    check_edt_backend,
    e_from_counts,
    measure_values,
    run_grouped,
    use_cpu_kernel,
)
from ._prepare import binarize_target
from ._tensor_path import s_measure_of_maps

__all__ = [
    "TOOLBOX_LAYOUTS",
    "TOOLBOX_PROTOCOLS",
    "ToolboxSums",
    "format_toolbox_line",
    "summarize_toolbox",
    "toolbox_measures",
]


@dataclass(frozen=True)
class ToolboxProtocol:
    """One version of the toolbox: how its E-measure binarises the map (everything else is common to all).

    Attributes:
        name: the protocol's name (``protocol=`` of the functions, the Metric and the command).
        e_measure_strict: ``True``: the E-measure's binary map is ``p > t``; ``False``: ``p >= t``. The overlap
            measures (Dice, IoU, sensitivity, specificity, precision, F) use ``p >= t`` in every version.
        versions: the released ``main.m`` files that behave so (repository, folder, commit dates).
    """

    name: str
    e_measure_strict: bool
    versions: str


#: the toolbox versions by name. ``"matlab-toolbox"`` is the code as first released (strict ``>`` for the
#: E-measure), which the papers of 2020 used; ``"matlab-toolbox-2020-11"`` the update of 2020-11-21 (``>=``)
TOOLBOX_PROTOCOLS: dict[str, ToolboxProtocol] = {
    "matlab-toolbox": ToolboxProtocol(
        name="matlab-toolbox",
        e_measure_strict=True,
        versions=(
            "PraNet eval/main.m of 2020-06-29; Inf-Net EvaluationTool/main.m from 2020-05-03 to 2020-06-28; SINet "
            "EvaluationTool/main.m of 2020-04-30 and 2020-05-05; every version of SINet-V2 eval/main.m "
            "(2021-02-21 to 2021-12-07) and of the COD toolbox's OnekeyEvaluationCode/main.m (2020-04-25 to "
            "2020-11-26)"
        ),
    ),
    "matlab-toolbox-2020-11": ToolboxProtocol(
        name="matlab-toolbox-2020-11",
        e_measure_strict=False,
        versions=(
            "PraNet eval/main.m, Inf-Net EvaluationTool/main.m and SINet EvaluationTool/main.m as updated on "
            "2020-11-21 (their current code)"
        ),
    ),
}

#: per-image 256-point curves (descending thresholds) of :func:`toolbox_measures`
TOOLBOX_CURVES = (
    "dice_curve",
    "iou_curve",
    "sensitivity_curve",
    "specificity_curve",
    "precision_curve",
    "f_curve",
    "e_curve",
)
#: per-image scalars of :func:`toolbox_measures` (``weighted_f_measure`` only when requested)
TOOLBOX_SCALARS = (
    "mae",
    "s_measure",
    "weighted_f_measure",
    "dice_adaptive",
    "iou_adaptive",
    "sensitivity_adaptive",
    "specificity_adaptive",
    "precision_adaptive",
    "f_adaptive",
    "e_adaptive",
)
#: every per-image key of :func:`toolbox_measures` and its shape after the image dimension
TOOLBOX_KEYS: dict[str, tuple[int, ...]] = {
    **{key: () for key in TOOLBOX_SCALARS},
    **{key: (NUM_THRESHOLDS,) for key in TOOLBOX_CURVES},
}

# the colon operator's tolerance for the last point: 2 eps max(|a|, |b|) with a = 1, b = 0
_COLON_TOLERANCE = 2 * 2.220446049250313e-16
# mapminmax leaves a row alone when its gain 1 / (max - min) would exceed this
_MAPMINMAX_MAX_GAIN = 1e14


def _colon_thresholds() -> list[float]:
    """MATLAB's ``1:-1/255:0`` as its colon operator computes it (MathWorks' published ``colonop`` algorithm):
    ``n = round((b - a) / d)`` intervals, the right end snapped to ``b`` within the tolerance, the first half
    ``a + k d`` and the second half ``last - k d``, so that both ends are exact."""
    start, step, stop = 1.0, -1.0 / 255.0, 0.0
    n = round((stop - start) / step)
    if (start + n * step - stop) * -1 > _COLON_TOLERANCE:  # sign(d) = -1
        n -= 1
    last = start + n * step
    if -(last - stop) > -_COLON_TOLERANCE:
        last = stop
    values = [0.0] * (n + 1)
    for k in range(n // 2 + 1):
        values[k] = start + k * step
        values[n - k] = last - k * step
    if n % 2 == 0:
        values[n // 2] = (start + last) / 2
    return values


_THRESHOLDS = _colon_thresholds()
assert len(_THRESHOLDS) == NUM_THRESHOLDS


def toolbox_thresholds(device: torch.device | str | None = None) -> Tensor:
    """The toolbox's 256 thresholds ``1:-1/255:0`` (float64, descending, bit for bit as MATLAB builds them).

    Example:
        >>> t = toolbox_thresholds()
        >>> t.shape, float(t[0]), float(t[-1])
        (torch.Size([256]), 1.0, 0.0)
        >>> bool((t[:-1] > t[1:]).all())
        True
    """
    return torch.tensor(_THRESHOLDS, dtype=torch.float64, device=device)


def _gain_offset(x: Tensor) -> tuple[Tensor, Tensor]:
    """mapminmax's per-image ``(gain, offset)`` of (B, H, W) float64 ``x``, shaped (B, 1, 1):
    ``y = (x - offset) * gain``."""
    lo = x.amin(dim=(1, 2), keepdim=True)
    hi = x.amax(dim=(1, 2), keepdim=True)
    span = hi - lo
    gain = 1 / torch.where(span == 0, torch.ones_like(span), span)
    left_alone = (span == 0) | ~torch.isfinite(span) | (gain.abs() > _MAPMINMAX_MAX_GAIN)
    # a row left alone gets gain 1 and offset ymin = 0: y = x (mapminmax's "no change")
    return torch.where(left_alone, 1.0, gain), torch.where(left_alone, 0.0, lo)


def _im2double(preds: Tensor) -> Tensor:
    """MATLAB's ``im2double``, always a new tensor (callers work in place on it)."""
    if preds.dtype == torch.uint8:
        return divide_exactly(preds.to(torch.float64), 255)
    return preds.to(torch.float64, copy=True)


def toolbox_maps(preds: Tensor) -> Tensor:
    """The toolbox's map: ``mapminmax(im2double(preds), 0, 1)`` per image, float64 (see the module doc).

    Args:
        preds: (B, H, W) uint8 (0..255), bool or floating maps.

    Returns:
        (B, H, W) float64 maps in [0, 1] (a constant map keeps its value).

    Example:
        >>> import torch
        >>> toolbox_maps(torch.tensor([[[51, 102], [153, 204]]], dtype=torch.uint8))[0, 0].tolist()
        [0.0, 0.3333333333333333]
    """
    x = _im2double(preds)
    gain, offset = _gain_offset(x)
    return (x - offset) * gain


@functools.lru_cache(maxsize=8)
def _ascending_thresholds(device: torch.device) -> Tensor:
    """The grid in ascending order on ``device``, made once per device (no host-to-device copy per batch)."""
    return toolbox_thresholds(device).flip(0)


def _first_passed(values: Tensor, strict: bool) -> Tensor:
    """Index in [0, 256] of the first (largest) threshold that each value passes (256: none); int64."""
    ascending = _ascending_thresholds(values.device)
    # ``>=``: thresholds <= v pass (side right); ``>``: thresholds < v (side left); they are the last ones
    passed = torch.searchsorted(ascending, values.contiguous(), right=not strict)
    return NUM_THRESHOLDS - passed


_BINS = NUM_THRESHOLDS + 1  # first passed threshold 0..255, or 256 for none


def _cumulate(hist: Tensor, pos: Tensor, numel: int) -> BinaryCounts:
    """Counts per threshold from the (B, 2, 257) histogram of the first passed threshold by ground truth."""
    passed = hist.view(-1, 2, _BINS).cumsum(-1)[:, :, :NUM_THRESHOLDS].to(torch.float64)
    tp = passed[:, 1]
    return BinaryCounts(tp=tp, pp=tp + passed[:, 0], pos=pos, numel=numel)


def _grey_levels(preds: Tensor, g: Tensor, gain: Tensor, offset: Tensor) -> tuple[Tensor, Tensor]:
    """For uint8 ``preds``: the toolbox value of each grey level of each image (B, 256), by the same operations as
    :func:`toolbox_maps` (so equal to the pixels' values), and the (B, 2, 256) histogram of the levels by ground
    truth."""
    batch = preds.shape[0]
    device = preds.device
    levels = divide_exactly(torch.arange(256, dtype=torch.float64, device=device), 255).expand(batch, 1, 256)
    values = ((levels - offset) * gain).reshape(batch, 256)
    key = preds.to(torch.int64)
    key.add_(g, alpha=256).add_(torch.arange(0, 512 * batch, 512, device=device).view(-1, 1, 1))
    return values, count_by_key(key.view(-1), batch * 512).view(batch, 2, 256)


def _level_counts(values: Tensor, hist: Tensor, strict: bool, numel: int) -> BinaryCounts:
    """:func:`toolbox_counts` from :func:`_grey_levels`: each level's pixels go to its first passed threshold."""
    batch = values.shape[0]
    device = values.device
    first = _first_passed(values, strict).view(batch, 1, 256)
    key = (
        first
        + _BINS * torch.arange(2, device=device).view(1, 2, 1)
        + 2 * _BINS * torch.arange(batch, device=device).view(-1, 1, 1)
    )
    per_threshold = torch.zeros(batch * 2 * _BINS, dtype=torch.int64, device=device)
    per_threshold.index_add_(0, key.reshape(-1), hist.reshape(-1))
    return _cumulate(per_threshold, hist[:, 1].sum(-1).to(torch.float64), numel)


def _level_binary_counts(values: Tensor, hist: Tensor, threshold: Tensor, strict: bool, numel: int) -> BinaryCounts:
    """Counts of the binary map ``p > threshold`` (``strict``) or ``p >= threshold`` (one threshold per image) from
    :func:`_grey_levels`: the pixels of the levels that pass."""
    t = threshold.view(-1, 1)
    passed = (values > t if strict else values >= t).to(torch.int64)  # (B, 256)
    tp = (hist[:, 1] * passed).sum(-1).to(torch.float64)
    pp = tp + (hist[:, 0] * passed).sum(-1).to(torch.float64)
    return BinaryCounts(tp=tp, pp=pp, pos=hist[:, 1].sum(-1).to(torch.float64), numel=numel)


def toolbox_counts(p: Tensor, g: Tensor, *, strict: bool, preds: Tensor | None = None) -> BinaryCounts:
    """Confusion counts of ``p >= t`` (or ``p > t`` with ``strict``) at the toolbox's 256 thresholds, per image.

    Args:
        p: (B, H, W) float64 toolbox maps (:func:`toolbox_maps`).
        g: (B, H, W) bool ground truth.
        strict: compare with ``>`` instead of ``>=``.
        preds: the uint8 maps ``p`` was made of (optional): the first passed threshold is then found for each of the
            256 grey levels of an image instead of for each pixel (the same values: ``p`` is a function of the level).

    Returns:
        :class:`~segmetrics_torch.ops.thresholds.BinaryCounts` with ``tp`` and ``pp`` (B, 256), descending
        thresholds (exact integer counts in float64).
    """
    numel = p.shape[1] * p.shape[2]
    if preds is not None and preds.dtype == torch.uint8:
        gain, offset = _gain_offset(_im2double(preds))
        return _level_counts(*_grey_levels(preds, g, gain, offset), strict, numel)
    batch = p.shape[0]
    image = torch.arange(batch, device=p.device).view(-1, 1, 1)
    key = _first_passed(p, strict) + _BINS * g.to(torch.int64) + 2 * _BINS * image
    hist = count_by_key(key.reshape(-1), batch * 2 * _BINS)
    return _cumulate(hist, g.sum(dim=(1, 2)).to(torch.float64), numel)


def _one_plus(beta2: float) -> float:
    """``1 + beta2`` as its decimal literal (the toolbox writes ``1.3`` for beta^2 = 0.3; ``1 + 0.3`` is an ulp
    below it in binary)."""
    return float(decimal.Decimal(repr(beta2)) + 1)


def toolbox_overlap_from_counts(counts: BinaryCounts, beta2: float = 0.3) -> dict[str, Tensor]:
    """The toolbox's ``Fmeasure_calu`` from counts: Dice, IoU, sensitivity, specificity, precision and F-beta, each
    0 where TP = 0 (shape of ``counts.tp``; specificity NaN where TP > 0 and the ground truth is the whole image)."""
    tp, fp, fn, tn = counts.expand()
    pp = counts.pp
    pos = counts.pos if tp.ndim == 1 else counts.pos[:, None]
    hit = tp > 0
    one = torch.ones_like(tp)

    def rule(num: Tensor, den: Tensor) -> Tensor:
        # TP = 0: 0 whatever the denominator (the toolbox's rule); otherwise the plain quotient (0 / 0 stays NaN)
        return torch.where(hit, num / torch.where(hit, den, one), torch.zeros_like(num))

    precision = rule(tp, pp)
    recall = rule(tp, pos)
    f_num = _one_plus(beta2) * precision * recall
    return {
        "dice": rule(2 * tp, pos + pp),
        "iou": rule(tp, fn + pp),
        "sensitivity": recall,
        "specificity": rule(tn, tn + fp),
        "precision": precision,
        "f": rule(f_num, beta2 * precision + recall),
    }


def _derive(
    preds: Tensor, g: Tensor, protocol: ToolboxProtocol, options: MeasureOptions, beta2: float
) -> dict[str, Tensor]:
    """Every per-image value of a block of raw maps ``preds`` and ground truth ``g`` (bool)."""
    x = _im2double(preds)
    gain, offset = _gain_offset(x)
    p = x.sub_(offset).mul_(gain)  # toolbox_maps, in place (x is a fresh float64 copy)
    # the family's shared pass on the toolbox's map, taken as it is (normalize=False): MAE, S-measure, weighted F and
    # the counts at p >= min(2 mean(p), 1), which is Fmeasure_calu's adaptive map (it caps the threshold at 1)
    kernel = use_cpu_kernel(p.device)
    # the tensor path computes the S-measure below with MATLAB's centroid; the compiled kernel rounds it as numpy
    values = measure_values(p, g, False, options if kernel else dataclasses.replace(options, s_measure=False))
    s_measure = _matlab_s_measure(p, g, values.s_measure if kernel else None)
    numel = p.shape[1] * p.shape[2]
    strict = protocol.e_measure_strict
    adaptive = 2 * p.mean(dim=(1, 2))  # the E-measure's adaptive threshold is not capped
    if preds.dtype == torch.uint8:  # one histogram of the grey levels serves every comparison
        levels, hist = _grey_levels(preds, g, gain, offset)
        curve = _level_counts(levels, hist, False, numel)
        e_counts = _level_counts(levels, hist, True, numel) if strict else curve
        e_adaptive = _level_binary_counts(levels, hist, adaptive, strict, numel)
    else:
        curve = toolbox_counts(p, g, strict=False)
        e_counts = toolbox_counts(p, g, strict=True) if strict else curve
        if strict:  # p > a  <=>  p >= the next float above a
            adaptive = torch.nextafter(adaptive, torch.full_like(adaptive, float("inf")))
        e_adaptive = binary_counts(p, g, adaptive)
    overlap_curve = toolbox_overlap_from_counts(curve, beta2)
    overlap_adaptive = toolbox_overlap_from_counts(values.adaptive, beta2)
    out = {
        "mae": values.mae,
        "s_measure": s_measure,
        **{f"{name}_curve": value for name, value in overlap_curve.items()},
        **{f"{name}_adaptive": value for name, value in overlap_adaptive.items()},
        "e_curve": e_from_counts(e_counts),
        "e_adaptive": e_from_counts(e_adaptive),
    }
    if values.weighted_f_measure is not None:
        out["weighted_f_measure"] = values.weighted_f_measure
    return out


def _matlab_s_measure(p: Tensor, g: Tensor, numpy_rounded: Tensor | None) -> Tensor:
    """The S-measure (alpha 0.5) of toolbox maps ``p`` with the centroid rounded as MATLAB's ``round`` of the 1-based
    mean (half away from zero). ``numpy_rounded``: the compiled kernel's values (centroid rounded half to even, as
    PySODMetrics), which are MATLAB's except on a tie (0-based mean ``k + 1/2``): only those images are computed
    again (one host read of whether any is a tie); None: compute every image with the tensor path."""
    if numpy_rounded is None:
        return s_measure_of_maps(p, g, 0.5, "nan", centroid="half-away")
    count = g.sum(dim=(1, 2))
    row_sum = (g.sum(dim=2) * torch.arange(g.shape[1], device=g.device)).sum(dim=1)
    col_sum = (g.sum(dim=1) * torch.arange(g.shape[2], device=g.device)).sum(dim=1)
    # 2 S = n (2 k + 1): the 0-based mean is k + 1/2, where the two roundings may part
    ties = (count > 0) & (
        ((2 * row_sum) % (2 * count).clamp(min=1) == count) | ((2 * col_sum) % (2 * count).clamp(min=1) == count)
    )
    if not bool(ties.any()):
        return numpy_rounded
    out = numpy_rounded.clone()
    out[ties] = s_measure_of_maps(p[ties], g[ties], 0.5, "nan", centroid="half-away")
    return out


def check_foreground_protocol(protocol: object, **fixed: tuple[object, object]) -> str:
    """``protocol`` of the foreground functions and Metrics, checked: a name of
    :data:`~segmetrics_torch.registry.FOREGROUND_PROTOCOLS` (``"pysodmetrics"``, the default convention, or a name of
    :data:`TOOLBOX_PROTOCOLS`). ``fixed``: option name -> ``(value, the toolbox's value)``, for the options the
    toolbox has no switch for (the S-measure's ``alpha``, the weighted F's ``beta2`` ...): with a toolbox protocol a
    value other than the toolbox's is a ``ValueError`` naming the option."""
    name = check_choice(protocol, "protocol", FOREGROUND_PROTOCOLS)
    if name != "pysodmetrics":
        for option, (value, toolbox_value) in fixed.items():
            if value != toolbox_value:
                raise ValueError(
                    f"Expected `{option}` to be {toolbox_value!r} with protocol={name!r} (the MATLAB toolbox has no "
                    f"other), but got {value!r}; use protocol='pysodmetrics' for this option."
                )
    return name


def check_protocol(protocol: object) -> ToolboxProtocol:
    """The :class:`ToolboxProtocol` of a name of :data:`TOOLBOX_PROTOCOLS` (``ValueError`` naming the choices)."""
    return TOOLBOX_PROTOCOLS[check_choice(protocol, "protocol", tuple(TOOLBOX_PROTOCOLS))]


def toolbox_measures(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    protocol: str = "matlab-toolbox",
    beta2: float = 0.3,
    weighted_f: bool = False,
    edt_backend: EdtBackend = "auto",
    validate_args: bool = True,
) -> dict[str, Tensor]:
    """Per-image values of the MATLAB toolbox (see the module doc): curves, adaptive values, S-measure, MAE.

    Args:
        preds: (B, H, W) or (B, 1, H, W) maps (uint8 0..255, bool, or float in [0, 1]), or a list of (H, W) maps of
            any sizes. The toolbox's ``mapminmax`` always stretches them (there is no ``normalize`` switch).
        target: ground truth of the same shape (uint8 binarised ``> 128``, bool, or {0, 1}).
        protocol: a name of :data:`TOOLBOX_PROTOCOLS`: ``"matlab-toolbox"`` (E-measure of ``p > t``, the code as
            first released) or ``"matlab-toolbox-2020-11"`` (``p >= t``).
        beta2: beta^2 of the F-measure (0.3: the SINet / COD toolboxes; PraNet's and Inf-Net's ``F`` is beta = 1).
        weighted_f: also compute the weighted F-measure (``original_WFb.m``; a distance transform per image).
        edt_backend: the weighted F's distance-transform backend (``"auto"``, ``"numba"``, ``"torch"``).
        validate_args: check values (NaN, range, binary target); these checks synchronise a CUDA device.

    Returns:
        dict of float64 tensors: the curves of :data:`TOOLBOX_CURVES` (B, 256) (descending thresholds: entry 0 is
        ``t = 1``), the scalars of :data:`TOOLBOX_SCALARS` (B,) (``weighted_f_measure`` only with ``weighted_f``).
        ``sensitivity`` is the recall. Specificity is NaN where TP > 0 on a ground truth covering the whole image.

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 4, 4, dtype=torch.uint8); target[:, :2] = 255
        >>> preds = torch.zeros(1, 4, 4, dtype=torch.uint8); preds[:, :2, :3] = 255; preds[:, 2, 0] = 100
        >>> out = toolbox_measures(preds, target)
        >>> [round(float(out[k][0, 0]), 4) for k in ("dice_curve", "sensitivity_curve", "specificity_curve")]
        [0.8571, 0.75, 1.0]
        >>> float(out["dice_curve"][0, -1])  # t = 0: every pixel is foreground
        0.6666666666666666
        >>> preds[:, :2, :3] = 200  # mapminmax's gain 1 / (200 / 255) maps 200 to 0.9999999999999999 < 1
        >>> float(toolbox_measures(preds, target)["dice_curve"][0, 0])  # no pixel reaches t = 1: TP = 0
        0.0
    """
    spec = check_protocol(protocol)
    beta2 = check_positive_float(beta2, "beta2")
    check_bool(weighted_f, "weighted_f")
    check_edt_backend(edt_backend)

    options = MeasureOptions(s_measure=True, weighted_f=weighted_f, edt_backend=edt_backend)

    def run(p_raw: Tensor, t: Tensor, indices: list[int] | None, n: int) -> dict[str, Tensor]:
        parts = []
        kernel = use_cpu_kernel(p_raw.device)
        for block in _blocks(p_raw.shape[0], p_raw.shape[1], p_raw.shape[2], p_raw.device, kernel):
            raw = p_raw[block]
            parts.append(_derive(raw, binarize_target(t[block]), spec, options, beta2))
        if len(parts) == 1:
            return parts[0]
        return {key: torch.cat([part[key] for part in parts]) for key in parts[0]}

    return run_grouped(run, preds, target, validate_args=validate_args)


#: the result lines of the toolboxes' ``main.m`` (``fprintf`` formats): per layout, the text between the values
#: and the result key each value is read from (see :func:`format_toolbox_line`)
TOOLBOX_LAYOUTS: dict[str, tuple[tuple[str, str], ...]] = {
    # PraNet eval/main.m
    "pranet": (
        (" meanDic:", "dice.mean"),
        (";meanIoU:", "iou.mean"),
        (";wFm:", "weighted_f_measure"),
        (";Sm:", "s_measure"),
        (";meanEm:", "e_measure.mean"),
        (";MAE:", "mae"),
        (";maxEm:", "e_measure.max"),
        (";maxDice:", "dice.max"),
        (";maxIoU:", "iou.max"),
        (";meanSen:", "sensitivity.mean"),
        (";maxSen:", "sensitivity.max"),
        (";meanSpe:", "specificity.mean"),
        (";maxSpe:", "specificity.max"),
    ),
    # Inf-Net EvaluationTool/main.m (2020-05-12 onward)
    "inf-net": (
        (" meanDic:", "dice.mean"),
        (";meanSen:", "sensitivity.mean"),
        (";meanSpe:", "specificity.mean"),
        (";Sm:", "s_measure"),
        (";meanEm:", "e_measure.mean"),
        (";MAE:", "mae"),
    ),
    # SINet / SINet-V2 / COD toolbox main.m
    "cod": (
        (" Smeasure:", "s_measure"),
        ("; wFmeasure:", "weighted_f_measure"),
        (";MAE:", "mae"),
        ("; adpEm:", "e_measure.adaptive"),
        ("; meanEm:", "e_measure.mean"),
        ("; maxEm:", "e_measure.max"),
        ("; adpFm:", "f_measure.adaptive"),
        ("; meanFm:", "f_measure.mean"),
        ("; maxFm:", "f_measure.max"),
    ),
}


def format_toolbox_line(summary: Mapping[str, Any], dataset: str, model: str, layout: str = "pranet") -> str:
    """One result line as the toolbox's ``main.m`` writes it to ``<dataset>_result.txt`` (three decimals).

    Args:
        summary: a dataset summary (:func:`summarize_toolbox`, or ``MatlabToolboxMeasures.compute()``).
        dataset, model: the names printed in ``(Dataset:...; Model:...)``.
        layout: ``"pranet"``, ``"inf-net"`` or ``"cod"`` (:data:`TOOLBOX_LAYOUTS`).

    Returns:
        The line without its newline. Values are rounded as ``%.3f`` (Python's formatting rounds the exact binary
        value, as C's ``printf`` does).

    Example:
        >>> import torch
        >>> summary = {"dice": {"mean": torch.tensor(0.8996)}, "sensitivity": {"mean": torch.tensor(0.9)},
        ...            "specificity": {"mean": torch.tensor(0.99)}, "s_measure": torch.tensor(0.9363),
        ...            "e_measure": {"mean": torch.tensor(0.9626)}, "mae": torch.tensor(0.0094)}
        >>> format_toolbox_line(summary, "Kvasir", "PraNet", "inf-net")
        '(Dataset:Kvasir; Model:PraNet) meanDic:0.900;meanSen:0.900;meanSpe:0.990;Sm:0.936;meanEm:0.963;MAE:0.009.'
    """
    fields = TOOLBOX_LAYOUTS[check_choice(layout, "layout", tuple(TOOLBOX_LAYOUTS))]
    parts = [f"(Dataset:{dataset}; Model:{model})"]
    for text, key in fields:
        value: Any = summary
        for part in key.split("."):
            if not isinstance(value, Mapping) or part not in value:
                raise ValueError(
                    f"Expected `summary` to hold {key!r} for the {layout!r} layout (compute it with weighted_f=True "
                    "for wFm), but it does not."
                )
            value = value[part]
        parts.append(f"{text}{float(value):.3f}")
    return "".join(parts) + "."


def summarize_toolbox(means: Mapping[str, Tensor]) -> dict[str, Any]:
    """The toolbox's dataset values from the image averages of the per-image values of :func:`toolbox_measures`.

    ``means[key]`` is the average over the images of the per-image value ``key`` (a (256,) curve for the
    ``*_curve`` keys: the toolbox's ``column_X``). A family's ``mean`` is the mean of that column over the 256
    thresholds and its ``max`` the column's maximum (not means of per-image maxima).

    Returns:
        ``mae``, ``s_measure`` (and ``weighted_f_measure`` when present): the means as given; ``dice``, ``iou``,
        ``sensitivity``, ``specificity``, ``precision``, ``f_measure``, ``e_measure``: dicts ``{"adaptive", "curve",
        "mean", "max"}``. A NaN average stays NaN (specificity with a full ground truth).

    Example:
        >>> import torch
        >>> target = torch.zeros(2, 8, 8, dtype=torch.bool); target[:, 2:6, 2:6] = True
        >>> preds = torch.rand(2, 8, 8, generator=torch.Generator().manual_seed(0))
        >>> values = toolbox_measures(preds, target)
        >>> summary = summarize_toolbox({key: value.mean(0) for key, value in values.items()})
        >>> sorted(summary["dice"])
        ['adaptive', 'curve', 'max', 'mean']
    """
    out: dict[str, Any] = {key: means[key] for key in ("mae", "s_measure", "weighted_f_measure") if key in means}
    families = ("dice", "iou", "sensitivity", "specificity", "precision", "f", "e")
    for family in families:
        column = means[f"{family}_curve"]
        name = {"f": "f_measure", "e": "e_measure"}.get(family, family)
        out[name] = {
            "adaptive": means[f"{family}_adaptive"],
            "curve": column,
            "mean": column.mean(),
            "max": column.max(),
        }
    return out


#: where each measure of the registry (``segmetrics_torch.registry``, by key) sits in :func:`summarize_toolbox`'s
#: result (``/``-paths, as the registry's ``result`` of the default convention): the registry's ``TOOLBOX_RESULTS``;
#: the measures not listed (size invariance, multi-scale IoU, HCE, context, BER, kappa, accuracy) are not part of the
#: toolbox
TOOLBOX_RESULT_PATHS: dict[str, str] = TOOLBOX_RESULTS


def warn_toolbox_nans(result: Mapping[str, Any], who: str) -> None:
    """Warn of the toolbox's documented NaNs in a dataset result: specificity (a ground truth covering its whole
    image, ``0 / 0``) and S-measure (a centroid on the last row or column)."""
    if bool(torch.isnan(result["specificity"]["curve"]).any()):
        warnings.warn(
            f"{who}: specificity is NaN: an image's ground truth covers the whole image, where the toolbox's "
            "TN / (TN + FP) is 0 / 0 at every threshold with TP > 0.",
            RuntimeWarning,
            stacklevel=3,
        )
    if bool(torch.isnan(result["s_measure"])):
        warnings.warn(
            f"{who}: s_measure is NaN: the ground-truth centroid of an image lies on its last row or column, which "
            "leaves a region quadrant empty (a mean of no pixel, as in the toolbox).",
            RuntimeWarning,
            stacklevel=3,
        )


class ToolboxSums:
    """The MATLAB-toolbox protocol's dataset accumulator without torchmetrics, each batch's per-image values
    returned by ``update`` (the toolbox counterpart of :class:`~segmetrics_torch.functional.ForegroundSums`).

    The state is the float64 sum over the images of every per-image value of :func:`toolbox_measures` (attribute
    ``{name}_sum``; :attr:`names`) and the image count ``count``; ``compute()`` is :func:`summarize_toolbox` of the
    averages. :class:`~segmetrics_torch.metrics.matlab_toolbox.MatlabToolboxMeasures` holds the same sums as
    torchmetrics states and gives the same result. Across processes, add every process's :meth:`sums` and counts
    and :meth:`load` the totals.

    Args:
        protocol, beta2, weighted_f, edt_backend, validate_args: as :func:`toolbox_measures`.
        device: where the sums live (default CPU).

    Example:
        >>> import torch
        >>> target = torch.zeros(2, 8, 8, dtype=torch.bool); target[:, 2:6, 2:6] = True
        >>> preds = (torch.rand(2, 8, 8, generator=torch.Generator().manual_seed(0)) * 255).to(torch.uint8)
        >>> sums = ToolboxSums(protocol="matlab-toolbox")
        >>> values = sums.update(preds, target)  # per-image values, as toolbox_measures(preds, target)
        >>> tuple(values["dice_curve"].shape), int(sums.count)
        ((2, 256), 2)
        >>> result = sums.compute()
        >>> bool(result["dice"]["mean"] == values["dice_curve"].mean())
        True
    """

    count: Tensor

    def __init__(
        self,
        *,
        protocol: str = "matlab-toolbox",
        beta2: float = 0.3,
        weighted_f: bool = False,
        edt_backend: EdtBackend = "auto",
        validate_args: bool = True,
        device: torch.device | str = "cpu",
    ) -> None:
        self.protocol = check_protocol(protocol).name
        self.beta2 = check_positive_float(beta2, "beta2")
        self.weighted_f = check_bool(weighted_f, "weighted_f")
        check_edt_backend(edt_backend)
        self._options = MeasureOptions(s_measure=True, weighted_f=weighted_f, edt_backend=edt_backend)
        self.validate_args = check_bool(validate_args, "validate_args")
        self._device = torch.device(device)
        #: the names of the summed per-image values
        self.names = toolbox_names(weighted_f)
        self.reset()

    @property
    def settings(self) -> dict[str, Any]:
        """The measure settings (for reports): protocol, beta2, weighted_f, edt_backend."""
        return {
            "protocol": self.protocol,
            "beta2": self.beta2,
            "weighted_f": self.weighted_f,
            "edt_backend": self._options.edt_backend,
        }

    @property
    def normalize(self) -> bool:
        """Always ``True``: the toolbox stretches every map with ``mapminmax`` (as ``ForegroundSums.normalize``
        reads, for reports)."""
        return True

    @property
    def edt_backend(self) -> EdtBackend:
        """The weighted F's distance-transform backend; settable (the transform is exact on every backend)."""
        return self._options.edt_backend

    @edt_backend.setter
    def edt_backend(self, value: EdtBackend) -> None:
        check_edt_backend(value)
        self._options = dataclasses.replace(self._options, edt_backend=value)

    def reset(self) -> None:
        """Forget every image: zero sums and count."""
        for name in self.names:
            setattr(self, f"{name}_sum", torch.zeros(TOOLBOX_KEYS[name], dtype=torch.float64, device=self._device))
        self.count = torch.zeros((), dtype=torch.int64, device=self._device)

    def update(self, preds: ImageBatch, target: ImageBatch) -> dict[str, Tensor]:
        """Add a batch (inputs as :func:`toolbox_measures`) and return its per-image values (on the inputs'
        device). A batch that fails the checks raises and adds nothing."""
        values = toolbox_measures(
            preds,
            target,
            protocol=self.protocol,
            beta2=self.beta2,
            weighted_f=self.weighted_f,
            edt_backend=self._options.edt_backend,
            validate_args=self.validate_args,
        )
        add_sums(self, self.names, values)
        return values

    def mean(self, name: str) -> Tensor:
        """The image average of the per-image value ``name`` (NaN with no image)."""
        return getattr(self, f"{name}_sum") / self.count

    def compute(self) -> dict[str, Any]:
        """The dataset result, as :meth:`MatlabToolboxMeasures.compute` (float64 tensors on ``device``)."""
        n = int(self.count)
        if not n:
            warnings.warn(
                "ToolboxSums.compute(): no image has been added, so the value is NaN.", RuntimeWarning, stacklevel=2
            )
        res = summarize_toolbox({name: self.mean(name) for name in self.names})
        if n:
            warn_toolbox_nans(res, "ToolboxSums")
        return res

    def sums(self) -> dict[str, Tensor]:
        """The sums by name (to be added across processes, then :meth:`load`-ed)."""
        return {name: getattr(self, f"{name}_sum") for name in self.names}

    def load(self, sums: Mapping[str, Tensor], count: int) -> None:
        """Replace the state by ``sums`` (by name, as :meth:`sums`) and ``count`` images."""
        for name in self.names:
            total = getattr(self, f"{name}_sum")
            setattr(self, f"{name}_sum", sums[name].to(total.device, total.dtype))
        self.count = torch.tensor(count, dtype=torch.int64, device=self.count.device)


def toolbox_names(weighted_f: bool) -> tuple[str, ...]:
    """The per-image values an accumulator sums: :data:`TOOLBOX_SCALARS` and :data:`TOOLBOX_CURVES`, without the
    weighted F unless ``weighted_f``."""
    return tuple(name for name in (*TOOLBOX_SCALARS, *TOOLBOX_CURVES) if weighted_f or name != "weighted_f_measure")


def as_foreground_keys(values: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """:func:`toolbox_measures`' per-image values under the names of the default convention's
    (:data:`~segmetrics_torch.functional.FOREGROUND_KEYS`: ``recall_*`` for ``sensitivity_*``), the specificity
    curves kept as they are: what the PySODMetrics-convention functions and Metrics read when given a toolbox
    ``protocol``."""
    renamed = {"sensitivity_curve": "recall_curve", "sensitivity_adaptive": "recall_adaptive"}
    return {renamed.get(key, key): value for key, value in values.items()}


def toolbox_foreground_values(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    protocol: str,
    beta2: float = 0.3,
    weighted_f: bool = False,
    edt_backend: EdtBackend = "auto",
    normalize: bool = True,
    validate_args: bool = True,
) -> dict[str, Tensor]:
    """The per-image values of a toolbox ``protocol`` under the default convention's names
    (:func:`as_foreground_keys` of :func:`toolbox_measures`): the one call by which the PySODMetrics-convention
    functions and Metrics serve ``protocol="matlab-toolbox"``. ``normalize=False`` is refused: the toolbox always
    applies ``mapminmax``.

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 4, 4, dtype=torch.bool); target[:, :2] = True
        >>> values = toolbox_foreground_values(target.to(torch.uint8) * 255, target, protocol="matlab-toolbox")
        >>> float(values["recall_curve"][0, 0]), float(values["dice_curve"][0, -1])
        (1.0, 0.6666666666666666)
    """
    if normalize is not True:
        raise ValueError(
            f"Expected `normalize` to be True with protocol={protocol!r} (the toolbox always stretches each map with "
            f"mapminmax), but got {normalize!r}; normalize=False is a PySODMetrics-convention option."
        )
    return as_foreground_keys(
        toolbox_measures(
            preds,
            target,
            protocol=protocol,
            beta2=beta2,
            weighted_f=weighted_f,
            edt_backend=edt_backend,
            validate_args=validate_args,
        )
    )
