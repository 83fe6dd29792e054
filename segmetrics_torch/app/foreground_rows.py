"""The command's per-image report of the foreground suite, built on the per-image values that the library's
accumulator returns (:meth:`segmetrics_torch.functional.ForegroundSums.update`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import torch

from ..functional.foreground import summarize_foreground
from ..reports.tables import scalar_row

if TYPE_CHECKING:  # annotations only: the app imports torch lazily
    from torch import Tensor

__all__ = ["ForegroundRows"]


class ForegroundRows:
    """What the command reports of each image beside the dataset values: every image's row of the suite's scalars
    (``per_image``: ``{stem: {"mae": ..., "f_measure/max": ...}}``, the image's own
    :func:`~segmetrics_torch.functional.summarize_foreground`, i.e. what the functional measures return for it alone)
    and the positions, in update order, of the images whose S-measure is the documented NaN (``nan_s_images``, so
    that the command can name them). Under torchrun :func:`.distributed.merge_foreground` gathers every rank's rows
    in image order.
    """

    def __init__(self, summarize: Callable[[Mapping[str, Tensor]], dict[str, Any]] = summarize_foreground) -> None:
        """``summarize``: the accumulator's summary of image averages, applied to each image alone
        (:func:`~segmetrics_torch.functional.summarize_foreground`, or
        :func:`~segmetrics_torch.functional.summarize_toolbox` for a MATLAB-toolbox protocol's ``ToolboxSums``)."""
        self.summarize = summarize
        self.per_image: dict[str, dict[str, Any]] = {}
        self.nan_s_images: list[int] = []
        #: images added so far (the position of the next one)
        self.seen = 0

    def add(self, names: list[str], values: Mapping[str, Tensor]) -> None:
        """Add a batch's rows: ``names`` (one per image) and its per-image ``values`` (keys of
        :data:`~segmetrics_torch.functional.FOREGROUND_KEYS`, as ``ForegroundSums.update`` returns them, or the
        toolbox's keys, as ``ToolboxSums.update`` does)."""

        # one copy of the batch's values to the host (a sync: the command reads every value there anyway), then
        # plain indexing; float64 as the sums, so that a row is the image's own summary in the dataset's precision
        host = {name: value.to("cpu", torch.float64) for name, value in values.items()}
        self.nan_s_images.extend(self.seen + int(i) for i in torch.isnan(host["s_measure"]).nonzero().flatten())
        self.seen += len(names)
        for i, image in enumerate(names):
            self.per_image[image] = scalar_row(self.summarize({name: host[name][i] for name in host}))
