"""The torchmetrics ``Metric`` of the MATLAB evaluation toolbox of PraNet / Inf-Net / SINet (a named protocol).

States are float64 sums over images of the per-image values of
:func:`segmetrics_torch.functional.foreground.matlab_toolbox.toolbox_measures`: 256-point curves (Dice, IoU,
sensitivity, specificity, precision, F, E) and scalars (adaptive values, S-measure, MAE, weighted F), and an int64
image count, all reduced with ``"sum"``: a dataset split across DDP processes gives the single-process result (up to
float64 summation order). ``compute()`` averages the curves over the images (the toolbox's ``column_X``) and takes
their mean and maximum over the thresholds, as the toolbox's ``main.m`` does.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from .._checks import ImageBatch, check_bool, check_positive_float
from ..functional.foreground._intermediates import EdtBackend
from ..functional.foreground.matlab_toolbox import (
    TOOLBOX_KEYS,
    check_protocol,
    summarize_toolbox,
    toolbox_measures,
    toolbox_names,
    warn_toolbox_nans,
)
from ..functional.foreground.suite import add_sums
from ..functional.foreground.weighted_fmeasure import check_edt_backend
from ._base import ExactMetric

__all__ = ["MatlabToolboxMeasures"]


class MatlabToolboxMeasures(ExactMetric):
    """The dataset values of the MATLAB toolbox of PraNet / Inf-Net / SINet: mean / max / adaptive Dice, IoU,
    sensitivity, specificity, precision, F and E-measure, S-measure, MAE (and weighted F).

    Reproduces the toolbox's numbers (thresholds ``1:-1/255:0``, ``mapminmax`` normalisation, the zero-when-TP=0
    rules, the per-version E-measure binarisation, the order of averaging); see
    :mod:`segmetrics_torch.functional.foreground.matlab_toolbox` and ``docs/matlab-toolbox.md``. The toolbox always
    stretches the maps and keeps the images of empty ground truth, so there is no ``normalize`` or ``skip_empty_gt``.

    Args:
        protocol: ``"matlab-toolbox"`` (the E-measure of ``p > t``, as first released: the 2020 papers' tables) or
            ``"matlab-toolbox-2020-11"`` (``p >= t``, the code as updated on 2020-11-21).
        beta2: beta^2 of the F-measure (0.3: the SINet / COD toolboxes).
        weighted_f: also accumulate the weighted F-measure (PraNet's ``wFm``; a distance transform per image).
        edt_backend: the weighted F's distance-transform backend.
        validate_args: check shapes, dtypes and values; ``False`` skips the value checks.
        **kwargs: torchmetrics' own options (``dist_sync_on_step``, ``sync_on_compute``, ``process_group``, ...).

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, uint8 0..255, bool, or float in [0, 1], or a list of (H, W) maps.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a dict: ``mae``, ``s_measure`` (and ``weighted_f_measure``) 0-d float64 tensors; ``dice``, ``iou``,
      ``sensitivity``, ``specificity``, ``precision``, ``f_measure``, ``e_measure``: dicts ``{"adaptive", "curve",
      "mean", "max"}`` (``curve`` (256,), descending thresholds). Specificity is NaN when an image's ground truth
      covers it entirely (the toolbox's 0 / 0; a warning says so).

    Example:
        >>> import torch
        >>> from segmetrics_torch import MatlabToolboxMeasures
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = (torch.rand(2, 16, 16, generator=g) * 255).to(torch.uint8)
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[:, 4:12, 4:12] = True
        >>> metric = MatlabToolboxMeasures()
        >>> metric.update(preds, target)
        >>> res = metric.compute()
        >>> round(float(res["dice"]["mean"]), 4), round(float(res["specificity"]["max"]), 4)
        (0.2931, 0.9818)
    """

    is_differentiable = False
    #: mixed directions (MAE: lower is better; the others: higher)
    higher_is_better: bool | None = None
    full_state_update = False
    plot_lower_bound = 0.0

    count: Tensor

    def __init__(
        self,
        *,
        protocol: str = "matlab-toolbox",
        beta2: float = 0.3,
        weighted_f: bool = False,
        edt_backend: EdtBackend = "auto",
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.protocol = check_protocol(protocol).name
        self.beta2 = check_positive_float(beta2, "beta2")
        self.weighted_f = check_bool(weighted_f, "weighted_f")
        check_edt_backend(edt_backend)
        self.edt_backend = edt_backend
        self.validate_args = check_bool(validate_args, "validate_args")
        self._names = toolbox_names(weighted_f)
        for name in self._names:
            self.add_state(
                f"{name}_sum", default=torch.zeros(TOOLBOX_KEYS[name], dtype=torch.float64), dist_reduce_fx="sum"
            )
        self.add_state("count", default=torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")

    @property
    def settings(self) -> dict[str, Any]:
        """The measure settings (for reports): protocol, beta2, weighted_f, edt_backend."""
        return {
            "protocol": self.protocol,
            "beta2": self.beta2,
            "weighted_f": self.weighted_f,
            "edt_backend": self.edt_backend,
        }

    def update(self, preds: ImageBatch, target: ImageBatch) -> None:
        """Add a batch: ``preds``/``target`` (B, H, W) or (B, 1, H, W) tensors, or lists of (H, W) tensors."""
        values = toolbox_measures(
            preds,
            target,
            protocol=self.protocol,
            beta2=self.beta2,
            weighted_f=self.weighted_f,
            edt_backend=self.edt_backend,
            validate_args=self.validate_args,
        )
        add_sums(self, self._names, values)

    def compute(self) -> dict[str, Any]:
        res = summarize_toolbox({name: self._mean(f"{name}_sum") for name in self._names})
        if int(self.count):
            warn_toolbox_nans(res, type(self).__name__)
        return res
