r"""Enhanced-alignment measure (E-measure) of foreground maps, adaptive and 256-threshold curve, in closed form.

Fan et al., "Enhanced-alignment Measure for Binary Foreground Map Evaluation", IJCAI 2018. For a binary map ``FM``
and ground truth ``G`` with ``N`` pixels:

.. math::
    a = FM - \mu_{FM},\quad c = G - \mu_G,\quad \xi = \frac{2ac}{a^2 + c^2 + \epsilon},\quad
    \phi = \frac{(1 + \xi)^2}{4},\quad E = \frac{\sum \phi}{N - 1 + \epsilon}

with ``eps = 2.22e-16`` (MATLAB ``eps``). ``phi`` takes only four values (FM, G in {0, 1}), so ``sum phi`` follows from
the four confusion counts: all 256 thresholds come from one histogram, with no per-threshold pass over the image.

Reference: Fan's MATLAB ``Enhancedmeasure.m`` and PySODMetrics 1.6.2 ``Emeasure`` (to 1e-6), including
* normalisation by ``N - 1 + eps`` (the paper writes ``N``), so a perfect map scores ``N / (N - 1) > 1``;
* all-zero ground truth: ``sum phi = #(FM == 0)``; all-one ground truth: ``sum phi = #(FM == 1)``;
* the binarisation ``>=`` for both the adaptive threshold and the curve (the CODToolbox patch);
* a one-pixel image: ``N - 1 = 0``, so ``E = sum phi / eps``, about ``4.5e15`` (``2^52``) where ``phi`` is 1 (a
  right pixel) and 0 where it is wrong, as PySODMetrics returns it; the measure means nothing there (the E-measure
  loss normalises such an image by ``N`` instead).
"""

from __future__ import annotations

from torch import Tensor

from ..._checks import ImageBatch
from ._intermediates import ForegroundIntermediates, e_from_counts, run_per_image
from .matlab_toolbox import check_foreground_protocol, toolbox_foreground_values

__all__ = ["e_measure"]


def e_measure(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    normalize: bool = True,
    validate_args: bool = True,
    protocol: str = "pysodmetrics",
) -> dict[str, Tensor]:
    """Per-image E-measure at the adaptive threshold and at the 256 curve thresholds.

    Args:
        preds: (B, H, W) or (B, 1, H, W) maps (uint8 0..255, or float in [0, 1]), or a list of (H, W) maps.
        target: ground truth of the same shape (uint8 binarised ``> 128``, bool, or {0, 1}).
        normalize: per-image min-max stretch of ``preds`` as PySODMetrics (constant maps are left alone).
        validate_args: check values (NaN, range, binary target); these checks synchronise a CUDA device.
        protocol: ``"pysodmetrics"`` (PySODMetrics 1.6.2, the default) or a MATLAB-toolbox protocol,
            ``"matlab-toolbox"`` or ``"matlab-toolbox-2020-11"`` (the toolbox's map, thresholds and zero rules:
            :mod:`.matlab_toolbox`, ``docs/matlab-toolbox.md``); ``normalize`` must then be ``True``.

    Returns:
        dict with ``adaptive`` (B,) and ``curve`` (B, 256) (descending thresholds: entry 0 is ``trunc(255 p) >= 255``).

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 4, 4, dtype=torch.uint8); target[:, :2] = 255
        >>> round(float(e_measure(target.clone(), target)["adaptive"][0]), 6)  # 16 / 15: perfect maps exceed 1
        1.066667
    """

    if check_foreground_protocol(protocol) != "pysodmetrics":
        v = toolbox_foreground_values(
            preds, target, protocol=protocol, normalize=normalize, validate_args=validate_args
        )
        return {"adaptive": v["e_adaptive"], "curve": v["e_curve"]}

    def fn(values: ForegroundIntermediates) -> dict[str, Tensor]:
        return {"adaptive": e_from_counts(values.adaptive), "curve": e_from_counts(values.curve)}

    return run_per_image(fn, preds, target, normalize=normalize, validate_args=validate_args)
