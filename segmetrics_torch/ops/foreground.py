"""Per-image statistics of foreground maps from one fused, compiled CPU pass (the CPU path of the foreground measures).

:func:`foreground_statistics` runs the kernel of :mod:`segmetrics_torch.ops._kernels.foreground` on a batch of raw
maps: the PySODMetrics input preparation (``/ 255`` for uint8, optional min-max stretch, in float64), the 2 x 256
histogram of ``trunc(255 p)`` split by the ground truth (the threshold curves of
:mod:`segmetrics_torch.ops.thresholds`), the counts of the adaptive binary map ``p >= min(2 mean(p), 1)``, MAE and,
on request, the S-measure and the weighted F-measure. The formulas and conventions are those of
:mod:`segmetrics_torch.functional.foreground` (whose tensor path computes the same quantities on any device); this
op only validates and converts. numba is imported on the first call.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor

from segmetrics_torch._checks import check_tensor
from segmetrics_torch.ops.filters import matlab_gaussian_kernel1d

__all__ = ["ForegroundStatistics", "foreground_kernel_ready", "foreground_statistics", "kernel_cache_folder"]


class ForegroundStatistics(NamedTuple):
    """Per-image outputs of :func:`foreground_statistics` (CPU tensors; B images).

    Attributes:
        histogram: (B, 2, 256) int64, ``histogram[b, t, k]`` = pixels of image b with ground truth t and bin k.
        tp_adaptive, pp_adaptive: (B,) float64 true / predicted positives of the adaptive binary map.
        pos: (B,) float64 ground-truth positives.
        mae: (B,) float64 mean absolute error.
        s_measure, weighted_f_measure: (B,) float64, or None when not requested.
    """

    histogram: Tensor
    tp_adaptive: Tensor
    pp_adaptive: Tensor
    pos: Tensor
    mae: Tensor
    s_measure: Tensor | None
    weighted_f_measure: Tensor | None


@functools.cache
def _importance() -> np.ndarray:
    from ._kernels.foreground import importance_table

    return importance_table()


def foreground_kernel_ready() -> bool:
    """Whether the fused kernel is compiled in this process or in numba's on-disk cache for this machine, so that
    its next call starts at once; False when that call would first compile it (about 13 s on a 2-core machine).
    Looks, compiles nothing (True where numba's internals cannot tell: the call then behaves as always)."""
    from ._kernels import foreground as kernel
    from ._kernels._compile_log import ready

    one = torch.zeros(1, 1, 1, dtype=torch.uint8)  # the types of a call with the defaults (every map dtype alike)
    args = _kernel_arguments(one, one.bool(), True, 0.5, False, True, 1.0, None, True, True)
    return ready(kernel.foreground_kernel, args)


def _kernel_arguments(
    preds: Tensor,
    target: Tensor,
    normalize: bool,
    alpha: float,
    skip_empty_quadrant: bool,
    weighted_f: bool,
    wf_beta2: float,
    distance: tuple[Tensor, Tensor] | None,
    counts: bool,
    s_measure: bool,
) -> tuple[object, ...]:
    """The fused kernel's arguments for checked (B, H, W) CPU inputs (see :func:`foreground_statistics`)."""
    import numba

    batch = preds.shape[0]
    # one kernel signature for every map dtype: the uint8 levels or the float64 values, the other a placeholder
    if preds.dtype == torch.uint8:
        raw8, raw64, scale = preds.contiguous().numpy(), np.zeros((batch, 1, 1)), 255.0
    else:
        raw8, raw64, scale = np.zeros((batch, 1, 1), np.uint8), preds.to(torch.float64).contiguous().numpy(), 1.0
    garr = target.contiguous().numpy()
    if weighted_f and distance is not None:
        dist, index = (x.contiguous().numpy() for x in distance)
        if dist.shape != garr.shape or index.shape != garr.shape or dist.dtype != np.float64 or index.dtype != np.int64:
            raise ValueError("Expected `distance` to be float64 and int64 (B, H, W) tensors of `preds`' shape.")
    else:  # the kernel computes the distance transform itself (or does not need one)
        dist, index = torch.zeros(batch, 1, 1, dtype=torch.float64).numpy(), torch.zeros(batch, 1, 1).long().numpy()
    return (
        raw8,
        raw64,
        garr,
        dist,
        index,
        scale,
        preds.dtype == torch.uint8,
        normalize,
        alpha,
        skip_empty_quadrant,
        wf_beta2,
        matlab_gaussian_kernel1d(7, 5.0).numpy(),
        _importance(),
        counts,
        s_measure,
        weighted_f,
        max(1, min(numba.get_num_threads(), batch)),
    )


def kernel_cache_folder() -> str:
    """Where numba caches the compiled kernels (``NUMBA_CACHE_DIR``, else the package's ``__pycache__``)."""
    from ._kernels._compile_log import cache_folder

    return cache_folder()


def foreground_statistics(
    preds: Tensor,
    target: Tensor,
    *,
    normalize: bool = True,
    s_measure: bool = False,
    alpha: float = 0.5,
    skip_empty_quadrant: bool = False,
    weighted_f: bool = False,
    wf_beta2: float = 1.0,
    distance: tuple[Tensor, Tensor] | None = None,
    counts: bool = True,
) -> ForegroundStatistics:
    """The per-image foreground statistics of a (B, H, W) CPU batch (see the module doc).

    Args:
        preds: (B, H, W) CPU tensor, uint8 (0..255), bool ({0, 1}) or floating in [0, 1] (not checked here: values
            outside are clamped to the end bins, never used as indices).
        target: (B, H, W) bool CPU ground truth.
        normalize: per-image min-max stretch of the prepared map.
        s_measure: compute the S-measure with object weight ``alpha``; ``skip_empty_quadrant`` drops an empty region
            quadrant instead of giving NaN.
        weighted_f: compute the weighted F-measure with ``wf_beta2``.
        distance: ``(dist, index)`` (B, H, W) float64 / int64 of ``distance_transform_edt(target)`` to use; ``None``
            computes it inside the kernel, image by image.
        counts: compute the histogram, the adaptive counts and MAE; ``False`` (with ``s_measure=False``) skips them
            for the weighted F alone: ``histogram`` is then all zero and ``tp_adaptive``, ``pp_adaptive`` and
            ``mae`` are NaN.

    Returns:
        :class:`ForegroundStatistics`.
    """
    check_tensor(preds, "preds")
    check_tensor(target, "target")
    if preds.ndim != 3 or target.shape != preds.shape:
        raise ValueError(
            f"Expected `preds` and `target` of one shape (B, H, W), but got {tuple(preds.shape)} and "
            f"{tuple(target.shape)}."
        )
    if preds.device.type != "cpu" or target.device.type != "cpu":
        raise ValueError(f"Expected CPU tensors (a compiled CPU kernel), but got {preds.device} and {target.device}.")
    if target.dtype != torch.bool:
        raise TypeError(f"Expected `target` to be a bool tensor, but got dtype {target.dtype}.")
    if not (preds.dtype in (torch.uint8, torch.bool) or preds.is_floating_point()):
        raise TypeError(f"Expected `preds` to be uint8, bool or floating, but got dtype {preds.dtype}.")
    from ._kernels import foreground as kernel

    args = _kernel_arguments(
        preds, target, normalize, alpha, skip_empty_quadrant, weighted_f, wf_beta2, distance, counts, s_measure
    )
    hist, out = kernel.foreground_kernel(*args)
    out = torch.from_numpy(out)
    return ForegroundStatistics(
        histogram=torch.from_numpy(hist),
        tp_adaptive=out[:, kernel.TP_A],
        pp_adaptive=out[:, kernel.PP_A],
        pos=out[:, kernel.POS],
        mae=out[:, kernel.MAE],
        s_measure=out[:, kernel.SM] if s_measure else None,
        weighted_f_measure=out[:, kernel.WFM] if weighted_f else None,
    )
