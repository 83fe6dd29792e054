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

import warnings
from typing import get_args

from torch import Tensor

from ..._checks import ImageBatch, check_choice
from ._intermediates import EmptyQuadrant, ForegroundIntermediates, MeasureOptions, run_per_image
from .matlab_toolbox import check_foreground_protocol, toolbox_foreground_values

__all__ = ["S_MEASURE_NAN_REASON", "s_measure"]

#: why an image's S-measure is NaN with ``empty_quadrant="nan"`` (said by the Metrics' warning and by the command's)
S_MEASURE_NAN_REASON = (
    "the ground-truth centroid on the last row or column, which leaves an empty region quadrant (PySODMetrics "
    "returns NaN there too)"
)


def warn_s_measure_nan(what: str, images: str) -> None:
    """The S-measure's documented NaN (an empty region quadrant), announced where a dataset value is NaN (the
    Metrics' and :class:`~segmetrics_torch.functional.ForegroundSums`' ``compute()``)."""
    warnings.warn(
        f"{what} is NaN: {images} {S_MEASURE_NAN_REASON}. Use empty_quadrant='skip' to drop the zero-weight quadrant.",
        RuntimeWarning,
        stacklevel=3,
    )


def check_s_options(alpha: object, empty_quadrant: object) -> None:
    """Validate the S-measure's ``alpha`` (in [0, 1]) and ``empty_quadrant`` ("nan" or "skip")."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1:
        raise ValueError(f"Expected argument `alpha` to be a number in [0, 1], but got {alpha!r}.")
    check_choice(empty_quadrant, "empty_quadrant", get_args(EmptyQuadrant))


def s_measure(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    alpha: float = 0.5,
    empty_quadrant: EmptyQuadrant = "nan",
    normalize: bool = True,
    validate_args: bool = True,
    protocol: str = "pysodmetrics",
) -> Tensor:
    """Per-image S-measure (see the module docstring for the formula, reference and edge cases).

    Args:
        preds: (B, H, W) or (B, 1, H, W) maps (uint8 0..255, or float in [0, 1]), or a list of (H, W) maps.
        target: ground truth of the same shape (uint8 binarised ``> 128``, bool, or {0, 1}).
        alpha: weight of the object term, in [0, 1].
        empty_quadrant: ``"nan"`` (PySODMetrics: an empty region quadrant makes the value NaN) or ``"skip"``.
        normalize: per-image min-max stretch of ``preds`` as PySODMetrics (constant maps are left alone).
        validate_args: check values (NaN, range, binary target); these checks synchronise a CUDA device.
        protocol: ``"pysodmetrics"`` (PySODMetrics 1.6.2, the default) or a MATLAB-toolbox protocol,
            ``"matlab-toolbox"`` or ``"matlab-toolbox-2020-11"`` (the toolbox's map, thresholds and zero rules:
            :mod:`.matlab_toolbox`, ``docs/matlab-toolbox.md``); ``normalize`` must then be ``True``.

    Returns:
        (B,) float64 tensor.

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 6, 6, dtype=torch.uint8); target[:, 1:4, 1:4] = 255
        >>> round(float(s_measure(target.clone(), target)[0]), 9)
        1.0
    """
    check_s_options(alpha, empty_quadrant)
    protocol = check_foreground_protocol(protocol, alpha=(alpha, 0.5), empty_quadrant=(empty_quadrant, "nan"))
    if protocol != "pysodmetrics":
        v = toolbox_foreground_values(
            preds, target, protocol=protocol, normalize=normalize, validate_args=validate_args
        )
        return v["s_measure"]
    options = MeasureOptions(s_measure=True, alpha=float(alpha), empty_quadrant=empty_quadrant)

    def fn(values: ForegroundIntermediates) -> dict[str, Tensor]:
        assert values.s_measure is not None
        return {"s_measure": values.s_measure}

    return run_per_image(fn, preds, target, normalize=normalize, validate_args=validate_args, options=options)[
        "s_measure"
    ]
