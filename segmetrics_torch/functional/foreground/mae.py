"""Mean absolute error between a foreground map and its binary ground truth."""

from __future__ import annotations

from torch import Tensor

from ..._checks import ImageBatch
from ._intermediates import ForegroundIntermediates, run_per_image
from .matlab_toolbox import check_foreground_protocol, toolbox_foreground_values

__all__ = ["mae"]


def mae(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    normalize: bool = True,
    validate_args: bool = True,
    protocol: str = "pysodmetrics",
) -> Tensor:
    r"""Per-image mean absolute error :math:`\frac{1}{N}\sum |p - g|` (Perazzi et al. CVPR 2012).

    Reference: PySODMetrics 1.6.2 ``MAE`` and MATLAB ``mean2(abs(double(logical(gt)) - sal))`` (to 1e-6), after the
    PySODMetrics input preparation (``normalize=True`` stretches each map to [0, 1]).

    Args:
        preds: (B, H, W) or (B, 1, H, W) maps (uint8 0..255, or float in [0, 1]), or a list of (H, W) maps.
        target: ground truth of the same shape (uint8 binarised ``> 128``, bool, or {0, 1}).
        normalize: per-image min-max stretch of ``preds`` as PySODMetrics (constant maps are left alone).
        validate_args: check values (NaN, range, binary target); these checks synchronise a CUDA device.
        protocol: ``"pysodmetrics"`` (PySODMetrics 1.6.2, the default) or a MATLAB-toolbox protocol,
            ``"matlab-toolbox"`` or ``"matlab-toolbox-2020-11"`` (the toolbox's map, thresholds and zero rules:
            :mod:`.matlab_toolbox`, ``docs/matlab-toolbox.md``); ``normalize`` must then be ``True``.

    Returns:
        (B,) float64 tensor.

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 2, 2, dtype=torch.bool); target[0, 0, 0] = True
        >>> float(mae(torch.zeros(1, 2, 2), target)[0])
        0.25
    """

    if check_foreground_protocol(protocol) != "pysodmetrics":
        v = toolbox_foreground_values(
            preds, target, protocol=protocol, normalize=normalize, validate_args=validate_args
        )
        return v["mae"]

    def fn(values: ForegroundIntermediates) -> dict[str, Tensor]:
        return {"mae": values.mae}

    return run_per_image(fn, preds, target, normalize=normalize, validate_args=validate_args)["mae"]
