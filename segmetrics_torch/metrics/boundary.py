"""torchmetrics ``Metric`` classes of the boundary measures: the BSDS benchmark and the morphological boundary F.

``BoundaryPR`` keeps only integer counts, reduced with ``"sum"``: per threshold the counts summed over images (ODS,
AP, R50 and the PR curve) and the counts of every image at its own best threshold (OIS), so a dataset split across
DDP processes gives exactly the single-process result. ``MorphologicalBoundaryF`` keeps float64 sums of per-image
values and an image count.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from .._checks import BACKENDS, Backend, ImageBatch, check_choice, check_positive_float
from ..functional.boundary.bsds import (
    InputFormat,
    boundary_pr_counts,
    check_input_format,
    check_nms,
    default_thresholds,
    warn_if_r50_nan,
)
from ..functional.boundary.morphological import morphological_boundary_f
from ..functional.boundary.summary import UniqueOccurrence, boundary_summary, check_unique_occurrence, ois_counts
from ._base import ExactMetric

__all__ = ["BoundaryPR", "MorphologicalBoundaryF"]


def _all_nan(res: Any) -> Any:
    """The same nested results with every value NaN (the thresholds, which are settings, stay)."""
    return {
        k: v if k == "thresholds" else _all_nan(v) if isinstance(v, dict) else torch.full_like(v, math.nan)
        for k, v in res.items()
    }


class _BoundaryScores(ExactMetric):
    """Boundary F, precision and recall: scores in [0, 1], higher is better, from summed states."""

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0


class BoundaryPR(_BoundaryScores):
    """The BSDS boundary benchmark (precision-recall of boundary pixels with a distance tolerance) over a dataset.

    Per image and threshold the machine map ``thin(pb >= t)`` is matched one-to-one with every annotator's
    boundaries within ``max_dist * diagonal`` pixels (see :func:`segmetrics_torch.functional.boundary_pr_counts`
    and :mod:`segmetrics_torch.ops.matching`); summaries as BSR ``collect_eval_bdry.m``
    (see :mod:`segmetrics_torch.functional.boundary.summary`).

    Args:
        thresholds: int K (MATLAB ``linspace(1/(K+1), 1-1/(K+1), K)``, default 99; levels 1..K for "stack") or the
            threshold values.
        max_dist: tolerance, fraction of the diagonal (< 1) or pixels (>= 1). BSR: 0.0075.
        thin: thin the binarised machine maps (BSR ``thinpb``).
        input_format: "soft" (maps in [0, 1] or uint8), "ucm2" (double-size grids) or "stack" (binary maps per level).
        nms: edge non-maximum suppression of the soft maps before thresholding (Dollar's ``edgesNms`` as pyEdgeEval's
            ``apply_nms=True``; see :mod:`segmetrics_torch.ops.edge_nms`), the protocol for HED / RCF / BDCN /
            PiDiNet outputs; "soft" input only.
        unique_occurrence: duplicate-recall rule of AP ("last": MATLAB before R2013a, as published; "first").
        backend: thresholding/thinning backend ("auto", "numba", "torch").
        validate_args: value checks (synchronise CUDA).

    ``update(preds, target)``: ``preds`` per ``input_format`` (batch or list), ``target`` (B, A, H, W) or a list of
    (A, H, W) annotator boundary maps.

    ``compute()`` returns ``{"ods": {"threshold", "recall", "precision", "f"}, "ois": {"recall", "precision", "f"},
    "ap", "r50", "thresholds", "recall", "precision", "f"}`` (float64; the last four are (K,) curves). R50 is NaN
    when precision never reaches 0.5 (a warning says so).

    As input to ``update`` (and ``forward``):

    - ``preds``: per ``input_format``: "soft" (B, H, W) boundary maps in [0, 1] or uint8, "ucm2" (B, 2H+1, 2W+1)
      ultrametric contour maps, "stack" (B, K, H, W) binary maps per level; or a list of per-image maps.
    - ``target``: (B, A, H, W) bool / {0, 1} annotator boundary maps (A annotators), or a list of (A, H, W).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - ``{"ods": {"threshold", "recall", "precision", "f"}, "ois": {"recall", "precision", "f"}, "ap", "r50",
      "thresholds", "recall", "precision", "f"}``: float64 tensors, the last four (K,) curves over the thresholds.

    Example:
        >>> gt = torch.zeros(1, 1, 32, 32, dtype=torch.bool); gt[0, 0, 16, 4:28] = True
        >>> pb = torch.zeros(1, 32, 32); pb[0, 17, 4:28] = 0.8
        >>> metric = BoundaryPR(thresholds=9, max_dist=2)
        >>> metric.update(pb, gt)
        >>> float(metric.compute()["ods"]["f"])
        1.0
    """

    cnt_r: Tensor
    sum_r: Tensor
    cnt_p: Tensor
    sum_p: Tensor
    ois: Tensor
    count: Tensor

    def __init__(
        self,
        thresholds: int | Sequence[float] | Tensor = 99,
        *,
        max_dist: float = 0.0075,
        thin: bool = True,
        input_format: InputFormat = "soft",
        nms: bool = False,
        unique_occurrence: UniqueOccurrence = "last",
        backend: Backend = "auto",
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_input_format(input_format)
        check_nms(nms, input_format)
        check_unique_occurrence(unique_occurrence)
        for name, value in (("thin", thin), ("validate_args", validate_args)):
            if not isinstance(value, bool):
                raise TypeError(f"Expected argument `{name}` to be a bool, but got {value!r}.")
        check_choice(backend, "backend", BACKENDS)
        self.max_dist = check_positive_float(max_dist, "max_dist")
        self.levels = default_thresholds(thresholds, input_format)
        self.thin = thin
        self.input_format = input_format
        self.nms = nms
        self.unique_occurrence = unique_occurrence
        self.backend = backend
        self.validate_args = validate_args
        k = self.levels.numel()
        for name in ("cnt_r", "sum_r", "cnt_p", "sum_p"):
            self.add_state(name, default=torch.zeros(k, dtype=torch.int64), dist_reduce_fx="sum")
        self.add_state("ois", default=torch.zeros(4, dtype=torch.int64), dist_reduce_fx="sum")
        self.add_state("count", default=torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")

    def update(self, preds: ImageBatch, target: ImageBatch) -> None:
        """Add a batch of images (see the class doc for the formats).

        Host synchronisation (by design; the foreground family's update has none): the correspondence of machine and
        human boundary pixels is an exact least-cost maximum matching solved by a compiled CPU kernel, so the
        thresholded maps and the annotator maps are copied to the host (``.cpu().numpy()`` in
        ``ops.matching.correspondence_counts``) together with the tolerance tables sized from the image dimensions;
        the per-image counts come back as one (3, B, K) tensor. Thinning runs in the same kernel (or, with
        ``backend="torch"``, on the device with one sync per thinning iteration for its stopping rule). With
        ``validate_args=True`` the value checks (range, NaN, binary annotators) also synchronise once per batch.
        """
        c = boundary_pr_counts(
            preds,
            target,
            thresholds=self.levels,
            max_dist=self.max_dist,
            thin=self.thin,
            input_format=self.input_format,
            nms=self.nms,
            backend=self.backend,
            validate_args=self.validate_args,
        )
        device = self.cnt_r.device
        self.cnt_r += c.cnt_r.sum(0).to(device)
        self.sum_r += c.sum_r.sum(0).to(device)
        self.cnt_p += c.cnt_p.sum(0).to(device)
        self.sum_p += c.sum_p.sum(0).to(device)
        self.ois += ois_counts(c.cnt_r, c.sum_r, c.cnt_p, c.sum_p).to(device)
        self.count += c.cnt_r.shape[0]

    def compute(self) -> dict[str, Any]:
        """ODS, OIS, AP, R50 and the PR curve of the images seen so far."""
        res = boundary_summary(
            self.cnt_r,
            self.sum_r,
            self.cnt_p,
            self.sum_p,
            self.levels.to(self.cnt_r.device),
            self.ois,
            unique_occurrence=self.unique_occurrence,
        )
        if int(self.count) == 0:
            # no image: every summary is undefined (the sums are 0, which would read as ODS = OIS = AP = 0)
            warnings.warn(
                "BoundaryPR.compute() saw no image (no update() since construction or reset()): its values are NaN.",
                RuntimeWarning,
                stacklevel=2,
            )
            return _all_nan(res)
        warn_if_r50_nan(res, "BoundaryPR", stacklevel=2)
        return res


class MorphologicalBoundaryF(_BoundaryScores):
    """Mean morphological boundary F / precision / recall of binary masks (DAVIS ``f_boundary``).

    See :func:`segmetrics_torch.functional.morphological_boundary_f`. ``compute()`` returns
    ``{"f", "precision", "recall"}``: means over the images (objects) seen, float64.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) binary masks (bool / {0, 1}), or a list of (H, W) masks.
    - ``target``: the ground-truth masks, same shape (or a list).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - ``{"f", "precision", "recall"}``: 0-d float64 tensors, the means over the images (objects) seen.

    Example:
        >>> gt = torch.zeros(1, 40, 40, dtype=torch.bool); gt[0, 10:30, 10:30] = True
        >>> metric = MorphologicalBoundaryF()
        >>> metric.update(gt.clone(), gt)
        >>> float(metric.compute()["f"])
        1.0
    """

    f_sum: Tensor
    precision_sum: Tensor
    recall_sum: Tensor
    count: Tensor

    def __init__(
        self, *, bound_th: float = 0.008, backend: Backend = "auto", validate_args: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.bound_th = check_positive_float(bound_th, "bound_th")
        check_choice(backend, "backend", BACKENDS)
        if not isinstance(validate_args, bool):
            raise TypeError(f"Expected argument `validate_args` to be a bool, but got {validate_args!r}.")
        self.backend = backend
        self.validate_args = validate_args
        for name in ("f", "precision", "recall"):
            self.add_state(f"{name}_sum", default=torch.zeros((), dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("count", default=torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")

    def update(self, preds: ImageBatch, target: ImageBatch) -> None:
        """Add binary masks: (B, H, W) / (B, 1, H, W) tensors or lists of (H, W) masks.

        Host synchronisation: none in the dilation and counting of the torch path beyond the binary-mask value check
        of ``validate_args=True`` (one per batch); the ``"numba"`` backend copies the masks to the host.
        """
        values = morphological_boundary_f(
            preds, target, bound_th=self.bound_th, backend=self.backend, validate_args=self.validate_args
        )
        for name in ("f", "precision", "recall"):
            state = getattr(self, f"{name}_sum")
            setattr(self, f"{name}_sum", state + values[name].sum().to(state.device))
        self.count += values["f"].shape[0]

    def compute(self) -> dict[str, Tensor]:
        """Means over the images seen."""
        return {name: self._mean(f"{name}_sum") for name in ("f", "precision", "recall")}
