"""The command's accumulator of the foreground measures: :class:`~segmetrics_torch.ForegroundMeasures`' state
(:class:`~segmetrics_torch.functional.foreground.suite.SuiteSums`) without torchmetrics, whose import costs about a
second of the command's start-up, plus what the command reports beside the dataset values: each image's scores and
the images whose S-measure is NaN."""

from __future__ import annotations

import functools
from typing import Any, Unpack

import torch
from torch import Tensor

from .._checks import ImageBatch, check_positive_float, with_defaults
from ..functional.foreground._intermediates import run_per_image
from ..functional.foreground.suite import (
    SUITE_DEFAULTS,
    SuiteSettings,
    SuiteSums,
    derive_all,
    suite_options,
    suite_settings,
    summarize_foreground,
)

__all__ = ["ForegroundSums"]


def _row_value(host: dict[str, Tensor], i: int, name: str) -> Tensor:
    return host[name][i]


class ForegroundSums(SuiteSums):
    """:class:`~segmetrics_torch.ForegroundMeasures`' state and ``compute()``, in plain tensors (no torchmetrics).

    For single-process evaluation where start-up time counts (the ``segmetrics`` command). ``update`` / ``compute`` /
    ``count`` / ``settings`` / ``normalize`` behave as the Metric's, and the state is the Metric's
    (:class:`~segmetrics_torch.functional.foreground.suite.SuiteSums`, updated by the same ``add_sums``) summarised by
    the same function, so the results are identical (tested). Use the Metric for DDP and Lightning in Python; under
    ``torchrun`` the command adds its ranks' sums itself (:func:`segmetrics_torch.app.distributed.merge_foreground`).
    """

    def __init__(
        self,
        *,
        normalize: bool = True,
        validate_args: bool = True,
        device: torch.device | str = "cpu",
        per_image: bool = False,
        **settings: Unpack[SuiteSettings],
    ) -> None:
        if not isinstance(normalize, bool):
            raise TypeError(f"Expected argument `normalize` to be a bool, but got {normalize!r}.")
        super().__init__(device)
        named = ("normalize", "validate_args", "device", "per_image")
        chosen = with_defaults("ForegroundSums", settings, SUITE_DEFAULTS, named)
        self.beta2 = check_positive_float(chosen["beta2"], "beta2")
        self.options = suite_options(
            chosen["alpha"], chosen["empty_quadrant"], chosen["wf_beta2"], chosen["edt_backend"]
        )
        self.normalize = normalize
        self.validate_args = validate_args
        self.nan_s_images: list[int] = []
        #: ``{image name: {"mae": ..., "f_measure/max": ...}}`` when ``per_image`` (the suite's scalars of each image
        #: alone, i.e. what the functional measures return for it), else None
        self.per_image: dict[str, dict[str, float]] | None = {} if per_image else None

    @property
    def settings(self) -> dict[str, Any]:
        """The measure settings (for reports): beta2, wf_beta2, alpha, empty_quadrant, edt_backend."""
        return suite_settings(self.beta2, self.options)

    def update(self, preds: ImageBatch, target: ImageBatch, names: list[str] | None = None) -> None:
        """Add a batch, as :meth:`ForegroundMeasures.update`; ``names`` (one per image) key the per-image scores."""
        values = run_per_image(
            lambda v: derive_all(v, self.beta2), preds, target, normalize=self.normalize,
            validate_args=self.validate_args, options=self.options,
        )  # fmt: skip
        # positions (in update order) of the images whose S-measure is the documented NaN, so that the command can
        # name them (a host sync: the app accumulates on the host anyway)
        seen = int(self.count)
        self.nan_s_images.extend(seen + int(i) for i in torch.isnan(values["s_measure"]).nonzero().flatten())
        self.add(values)
        if self.per_image is not None and names is not None:
            self._keep_per_image(values, names)

    def _keep_per_image(self, values: dict[str, Tensor], names: list[str]) -> None:
        from .tables import scalar_row

        if self.per_image is None:
            return
        host = {name: values[name].to("cpu", torch.float64) for name in self.NAMES}
        for i, image in enumerate(names):
            self.per_image[image] = scalar_row(summarize_foreground(functools.partial(_row_value, host, i)))

    def compute(self) -> dict[str, Any]:
        """The dataset result, as :meth:`ForegroundMeasures.compute`."""
        if not int(self.count):
            raise ValueError("No images were added: the foreground measures of an empty dataset are undefined.")
        return summarize_foreground(self.mean)
