"""torchmetrics ``Metric`` of semantic boundaries: per-class BSDS precision-recall (SBD, Cityscapes protocols).

``SemanticBoundaryPR`` keeps only integer counts, reduced with ``"sum"``: per class and threshold the counts summed
over images (ODS, AP, the PR curves) and per class the counts of every image at its own best threshold (OIS), so a
dataset split across DDP processes gives exactly the single-process result.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from .._checks import BACKENDS, Backend, ImageBatch, check_bool, check_choice, check_num_classes, check_positive_float
from ..functional.boundary.bsds import default_thresholds
from ..functional.boundary.summary import UniqueOccurrence, boundary_summary, check_unique_occurrence, ois_counts
from ..functional.semantic_boundary.evaluation import protocol_thresholds, semantic_boundary_counts
from ..functional.semantic_boundary.protocols import SemanticBoundaryProtocol
from ._base import ExactMetric

__all__ = ["SemanticBoundaryPR"]


class SemanticBoundaryPR(ExactMetric):
    """Per-class boundary precision-recall (ODS, OIS, AP) and the class mean (mF) over a dataset.

    Per image, class and threshold the machine map ``thin(pb >= t)`` (optionally less the pixels that kill_internal
    drops) is matched with the class's GT edges within ``max_dist`` (see
    :func:`segmetrics_torch.functional.semantic_boundary_counts`); summaries per class as BSR
    ``collect_eval_bdry.m``, the mean over classes as CASENet / SEAL / pyEdgeEval.

    Args:
        num_classes: K, the channels of ``preds`` / ``target``.
        thresholds: int T (MATLAB ``linspace``) or the values; ignored when ``protocol`` is given.
        max_dist, thin, kill_internal, skip_if_nonexistent, ignore_border: see
            :func:`~segmetrics_torch.functional.semantic_boundary_counts`.
        protocol: a :class:`~segmetrics_torch.functional.semantic_boundary.SemanticBoundaryProtocol`; its values
            replace the five arguments above and ``thresholds`` (its ground-truth rules apply to the ``target`` you
            give: make it with the protocol's readers).
        unique_occurrence: AP's duplicate-recall rule ("last": MATLAB before R2013a; "first").
        backend: thresholding / thinning backend ("auto", "numba", "torch").
        validate_args: value checks (synchronise CUDA).

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, K, H, W) soft maps in [0, 1] or uint8, or a list of (K, H, W).
    - ``target``: (B, K, H, W) bool / {0, 1} GT edges per class, or a list of (K, H, W).
    - ``segmentation``: (B, H, W) integer class maps (class k's region ``== k``), or a list; needed by
      kill_internal.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - ``{"ods_f", "ois_f", "ap": (K,), "mean": {"ods_f", "ois_f", "ap"}, "classes": [K dicts with "ods", "ois",
      "ap", "thresholds", "recall", "precision", "f", ...]}``: float64.

    Example:
        >>> gt = torch.zeros(1, 2, 32, 32, dtype=torch.bool); gt[0, :, 16, 4:28] = True
        >>> pb = torch.zeros(1, 2, 32, 32); pb[0, 0, 17, 4:28] = 0.8
        >>> metric = SemanticBoundaryPR(2, thresholds=9, max_dist=2)
        >>> metric.update(pb, gt)
        >>> metric.compute()["ods_f"].tolist()
        [1.0, 0.0]
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    cnt_r: Tensor
    sum_r: Tensor
    cnt_p: Tensor
    sum_p: Tensor
    ois: Tensor
    count: Tensor

    def __init__(
        self,
        num_classes: int,
        thresholds: int | Sequence[float] | Tensor = 99,
        *,
        max_dist: float = 0.02,
        thin: bool = True,
        kill_internal: bool = False,
        skip_if_nonexistent: bool = False,
        ignore_border: int = 0,
        protocol: SemanticBoundaryProtocol | None = None,
        unique_occurrence: UniqueOccurrence = "last",
        backend: Backend = "auto",
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_num_classes(num_classes, 1)
        if protocol is not None:
            if not isinstance(protocol, SemanticBoundaryProtocol):
                raise TypeError(f"Expected `protocol` to be a SemanticBoundaryProtocol, but got {protocol!r}.")
            levels = protocol_thresholds(protocol)
            max_dist, thin, kill_internal = protocol.max_dist, protocol.thin, protocol.kill_internal
            skip_if_nonexistent, ignore_border = protocol.skip_if_nonexistent, protocol.ignore_border
        else:
            levels = default_thresholds(thresholds)
        for name, value in (
            ("thin", thin),
            ("kill_internal", kill_internal),
            ("skip_if_nonexistent", skip_if_nonexistent),
            ("validate_args", validate_args),
        ):
            check_bool(value, name)
        if isinstance(ignore_border, bool) or not isinstance(ignore_border, int) or ignore_border < 0:
            raise ValueError(f"Expected `ignore_border` to be a non-negative int, but got {ignore_border!r}.")
        check_unique_occurrence(unique_occurrence)
        check_choice(backend, "backend", BACKENDS)
        self.num_classes = num_classes
        self.levels = levels
        self.max_dist = check_positive_float(max_dist, "max_dist")
        self.thin = thin
        self.kill_internal = kill_internal
        self.skip_if_nonexistent = skip_if_nonexistent
        self.ignore_border = ignore_border
        self.unique_occurrence = unique_occurrence
        self.backend = backend
        self.validate_args = validate_args
        k, t = num_classes, levels.numel()
        for name in ("cnt_r", "sum_r", "cnt_p", "sum_p"):
            self.add_state(name, default=torch.zeros(k, t, dtype=torch.int64), dist_reduce_fx="sum")
        self.add_state("ois", default=torch.zeros(k, 4, dtype=torch.int64), dist_reduce_fx="sum")
        self.add_state("count", default=torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")

    def update(self, preds: ImageBatch, target: ImageBatch, segmentation: ImageBatch | None = None) -> None:
        """Add a batch (see the class doc). Host synchronisation: the exact matching runs in a compiled CPU kernel, as
        :class:`~segmetrics_torch.BoundaryPR`'s."""
        c = semantic_boundary_counts(
            preds,
            target,
            segmentation,
            thresholds=self.levels,
            max_dist=self.max_dist,
            thin=self.thin,
            kill_internal=self.kill_internal,
            skip_if_nonexistent=self.skip_if_nonexistent,
            ignore_border=self.ignore_border,
            backend=self.backend,
            validate_args=self.validate_args,
        )
        if c.cnt_r.shape[1] != self.num_classes:
            raise ValueError(f"Expected {self.num_classes} classes in `preds`, but got {c.cnt_r.shape[1]}.")
        device = self.cnt_r.device
        self.cnt_r += c.cnt_r.sum(0).to(device)
        self.sum_r += c.sum_r.sum(0).to(device)
        self.cnt_p += c.cnt_p.sum(0).to(device)
        self.sum_p += c.sum_p.sum(0).to(device)
        for k in range(self.num_classes):
            self.ois[k] += ois_counts(c.cnt_r[:, k], c.sum_r[:, k], c.cnt_p[:, k], c.sum_p[:, k]).to(device)
        self.count += c.cnt_r.shape[0]

    def compute(self) -> dict[str, Any]:
        """Per-class ODS, OIS, AP and PR curves, and the class mean, of the images seen so far."""
        levels = self.levels.to(self.cnt_r.device)
        per_class: list[dict[str, Any]] = [
            boundary_summary(
                self.cnt_r[k], self.sum_r[k], self.cnt_p[k], self.sum_p[k], levels, self.ois[k],
                unique_occurrence=self.unique_occurrence,
            )
            for k in range(self.num_classes)
        ]  # fmt: skip
        ods = torch.stack([r["ods"]["f"] for r in per_class])
        ois = torch.stack([r["ois"]["f"] for r in per_class])
        ap = torch.stack([r["ap"] for r in per_class])
        if int(self.count) == 0:
            warnings.warn(
                "SemanticBoundaryPR.compute() saw no image (no update() since construction or reset()): its values "
                "are NaN.",
                RuntimeWarning,
                stacklevel=2,
            )
            ods, ois, ap = (torch.full_like(x, math.nan) for x in (ods, ois, ap))
        return {
            "ods_f": ods,
            "ois_f": ois,
            "ap": ap,
            "mean": {"ods_f": ods.mean(), "ois_f": ois.mean(), "ap": ap.mean()},
            "classes": per_class,
        }
