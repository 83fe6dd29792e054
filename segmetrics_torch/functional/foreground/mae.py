"""Mean absolute error between a foreground map and its binary ground truth."""

from __future__ import annotations

from torch import Tensor

from ..._checks import ImageBatch
from ..._docs import fill_doc
from ._intermediates import ForegroundIntermediates, run_per_image

__all__ = ["mae"]


@fill_doc
def mae(preds: ImageBatch, target: ImageBatch, *, normalize: bool = True, validate_args: bool = True) -> Tensor:
    r"""Per-image mean absolute error :math:`\frac{1}{N}\sum |p - g|` (Perazzi et al. CVPR 2012).

    Reference: PySODMetrics 1.6.2 ``MAE`` and MATLAB ``mean2(abs(double(logical(gt)) - sal))`` (to 1e-6), after the
    PySODMetrics input preparation (``normalize=True`` stretches each map to [0, 1]).

    Args:
        {{foreground_args}}
        {{foreground_reading}}

    Returns:
        (B,) float64 tensor.

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 2, 2, dtype=torch.bool); target[0, 0, 0] = True
        >>> float(mae(torch.zeros(1, 2, 2), target)[0])
        0.25
    """

    def fn(values: ForegroundIntermediates) -> dict[str, Tensor]:
        return {"mae": values.mae}

    return run_per_image(fn, preds, target, normalize=normalize, validate_args=validate_args)["mae"]
