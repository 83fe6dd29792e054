"""torchmetrics ``Metric`` of the object-proposal evaluation (MCG protocol, see
:mod:`segmetrics_torch.functional.proposals`).

States: per N the sum of the objects' best J, the counts of objects above each recall / average-recall threshold,
the summed ``min(N, P)`` and, with ``num_classes``, the per-class sums of the best proposals' intersection, FP and FN
(all reduced with ``"sum"``); the median needs every object's best J, kept in a ``"cat"`` list state (O x L
float64 values; documented as the one state that grows with the dataset).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor
from torchmetrics import Metric
from torchmetrics.utilities import dim_zero_cat

from ..functional.proposals import (
    AR_THRESHOLDS,
    MCG_PROPOSAL_COUNTS,
    RECALL_THRESHOLDS,
    best_overlaps,
    proposal_overlaps,
)

__all__ = ["ProposalRecall"]


class ProposalRecall(Metric):
    """Best overlap per annotated object vs the number of proposals, over a dataset (Pont-Tuset & Marques, PAMI 2016).

    Args:
        counts: the numbers of proposals N (default the MCG sweep 10..6000 and all).
        num_classes: number of object classes (ids 0..C-1) for the class-averaged J_c; None to skip it.
        chunk_size: proposals per matrix product (memory bound), see :func:`proposal_overlaps`.
        validate_args: check binary masks and class ids (synchronises CUDA).

    ``update(proposals, objects, void=None, classes=None)``: one image (its ranked pool, (K, H, W) objects, optional
    (H, W) void and (K,) class ids) or lists of those for several images.

    ``compute()``: dict of (L,) float64 curves ``num_proposals`` (mean per image), ``jaccard_object``,
    ``jaccard_median``, ``recall_50``, ``recall_70``, ``recall_85``, ``average_recall`` (and ``jaccard_class``),
    plus ``counts`` (L,).
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False

    def __init__(
        self,
        counts: Sequence[int] | Tensor = MCG_PROPOSAL_COUNTS,
        *,
        num_classes: int | None = None,
        chunk_size: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.counts = torch.as_tensor(counts, dtype=torch.int64).flatten()
        if self.counts.numel() == 0 or bool((self.counts < 1).any()):
            raise ValueError(f"Expected `counts` to be positive numbers of proposals, but got {counts!r}.")
        if num_classes is not None and (isinstance(num_classes, bool) or not isinstance(num_classes, int)
                                        or num_classes < 1):  # fmt: skip
            raise ValueError(f"Expected `num_classes` to be a positive int or None, but got {num_classes!r}.")
        self.num_classes = num_classes
        self.chunk_size = chunk_size
        self.validate_args = validate_args
        n = self.counts.numel()
        self.add_state("jaccard_sum", torch.zeros(n, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("recall_hits", torch.zeros(len(RECALL_THRESHOLDS), n, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("ar_hits", torch.zeros(n, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("proposals_sum", torch.zeros(n, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("objects", torch.zeros((), dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("images", torch.zeros((), dtype=torch.float64), dist_reduce_fx="sum")
        if num_classes is not None:
            self.add_state("class_counts", torch.zeros(num_classes, 3, n, dtype=torch.float64), dist_reduce_fx="sum")
            self.add_state("class_objects", torch.zeros(num_classes, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("best", default=[], dist_reduce_fx="cat")

    def _update_one(self, proposals, objects: Tensor, void, classes) -> None:
        ov = proposal_overlaps(proposals, objects, void=void, chunk_size=self.chunk_size,
                               validate_args=self.validate_args)  # fmt: skip
        best = best_overlaps(ov, self.counts.to(ov.inter.device))
        j = best["jaccard"].to(self.jaccard_sum.device)  # (L, K)
        self.jaccard_sum += j.sum(1)
        for i, t in enumerate(RECALL_THRESHOLDS):
            self.recall_hits[i] += (j > t).double().sum(1)
        levels = torch.tensor(AR_THRESHOLDS, dtype=torch.float64, device=j.device)
        self.ar_hits += (j[..., None] >= levels).double().mean(-1).sum(1)
        self.proposals_sum += best["num_proposals"].to(j.device, torch.float64)
        self.objects += j.shape[1]
        self.images += 1
        self.best.append(j.T.contiguous())
        if self.num_classes is not None:
            if classes is None:
                raise ValueError("Expected `classes` (K,) class ids: this metric was built with `num_classes`.")
            classes = torch.as_tensor(classes, device=j.device).long().flatten()
            if classes.numel() != j.shape[1]:
                raise ValueError(f"Expected {j.shape[1]} class ids (one per object), but got {classes.numel()}.")
            if self.validate_args and (bool((classes < 0).any()) or bool((classes >= self.num_classes).any())):
                raise ValueError(f"Expected class ids in [0, {self.num_classes}), but got {classes.tolist()}.")
            self.class_objects.index_add_(0, classes, torch.ones_like(classes, dtype=torch.float64))
            for c, key in enumerate(("inter", "fp", "fn")):
                self.class_counts[:, c].index_add_(0, classes, best[key].to(j.device, torch.float64).T)

    def update(self, proposals, objects, void=None, classes=None) -> None:
        """Add one image, or lists of images (pools, objects, voids, class ids)."""
        if isinstance(objects, Tensor):
            self._update_one(proposals, objects, void, classes)
            return
        if not isinstance(proposals, Sequence) or len(proposals) != len(objects):
            raise ValueError("Expected `proposals` and `objects` lists of the same length (one entry per image).")
        for i in range(len(objects)):
            self._update_one(proposals[i], objects[i], None if void is None else void[i],
                             None if classes is None else classes[i])  # fmt: skip

    def compute(self) -> dict[str, Tensor]:
        """The curves vs N of the images seen so far."""
        if float(self.objects) == 0:
            raise ValueError("No objects were evaluated: the proposal curves of an empty dataset are undefined.")
        best = dim_zero_cat(self.best)  # (O, L)
        out = {
            "counts": self.counts.to(best.device),
            "num_proposals": self.proposals_sum / self.images,
            "jaccard_object": self.jaccard_sum / self.objects,
            "jaccard_median": torch.quantile(best, 0.5, dim=0),
            "average_recall": self.ar_hits / self.objects,
        }
        for i, t in enumerate(RECALL_THRESHOLDS):
            out[f"recall_{round(t * 100)}"] = self.recall_hits[i] / self.objects
        if self.num_classes is not None:
            inter, fp, fn = self.class_counts.unbind(1)
            den = inter + fp + fn
            present = self.class_objects > 0  # the mean runs over the classes that have objects
            jc = torch.where(den > 0, inter / den.clamp_min(1), 0.0)
            out["jaccard_class"] = jc[present].mean(0)
        return out
