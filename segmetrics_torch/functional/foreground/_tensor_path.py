"""Shared intermediates of a block of prepared maps, computed with tensor operations (any device; the CUDA path)."""

from __future__ import annotations

from torch import Tensor

from ._prepare import MeasureOptions
from .mae import mae_of_maps
from .overlap import all_counts
from .smeasure import s_measure_of_maps
from .weighted_fmeasure import weighted_f_measure_of_maps


def tensor_values(p: Tensor, g: Tensor, options: MeasureOptions) -> dict:
    """Counts, MAE and (as ``options`` asks) S-measure and weighted F of prepared (B, H, W) maps."""
    adaptive, curve = all_counts(p, g)
    values = {"adaptive": adaptive, "curve": curve, "mae": mae_of_maps(p, g)}
    if options.s_measure:
        values["sm"] = s_measure_of_maps(p, g, options.alpha, options.empty_quadrant)
    if options.weighted_f:
        values["wfm"] = weighted_f_measure_of_maps(p, g, options.wf_beta2, options.edt_backend)
    return values
