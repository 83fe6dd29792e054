"""Shared intermediates of a block of CPU maps from the compiled kernel (`ops/_kernels/foreground.py`)."""

from __future__ import annotations

import functools

import torch
from torch import Tensor

from ...ops.distance import distance_transform_edt
from ...ops.filters import matlab_gaussian_kernel1d
from ...ops.thresholds import BinaryCounts
from ._prepare import MeasureOptions


@functools.cache
def _importance():
    from ...ops._kernels.foreground import importance_table

    return importance_table()


def kernel_values(preds: Tensor, g: Tensor, normalize: bool, options: MeasureOptions) -> dict:
    """As :func:`._tensor_path.tensor_values`, from raw (unprepared) CPU ``preds`` and bool ground truth ``g``."""
    import numba

    from ...ops._kernels import foreground as kernels

    if preds.dtype == torch.uint8:
        raw, scale = preds.contiguous().numpy(), 255.0
    else:
        raw, scale = preds.to(torch.float64).contiguous().numpy(), 1.0
    garr = g.contiguous().numpy()
    batch, height, width = preds.shape
    if options.weighted_f and options.edt_backend == "torch":
        dist, index = distance_transform_edt(g, backend="torch")
        dist, index = dist.numpy(), index.numpy()
    else:  # the kernel computes the distance transform itself (or does not need one)
        dist, index = torch.zeros(batch, 1, 1, dtype=torch.float64).numpy(), torch.zeros(batch, 1, 1).long().numpy()
    hist, out = kernels.foreground_kernel(
        raw, garr, dist, index, scale, normalize, options.alpha, options.empty_quadrant == "skip", options.wf_beta2,
        matlab_gaussian_kernel1d(7, 5.0).numpy(), _importance(), options.s_measure, options.weighted_f,
        max(1, min(numba.get_num_threads(), batch)),
    )  # fmt: skip
    hist, out = torch.from_numpy(hist), torch.from_numpy(out)
    cum = hist.flip(-1).cumsum(-1).to(torch.float64)  # [:, :, i]: pixels with bin >= 255 - i
    pos = out[:, kernels.POS]
    numel = height * width
    values = {
        "adaptive": BinaryCounts(tp=out[:, kernels.TP_A], pp=out[:, kernels.PP_A], pos=pos, numel=numel),
        "curve": BinaryCounts(tp=cum[:, 1], pp=cum[:, 1] + cum[:, 0], pos=pos, numel=numel),
        "mae": out[:, kernels.MAE],
    }
    if options.s_measure:
        values["sm"] = out[:, kernels.SM]
    if options.weighted_f:
        values["wfm"] = out[:, kernels.WFM]
    return values
