"""torchmetrics ``Metric`` of the object-proposal evaluation (MCG protocol, see
:mod:`segmetrics_torch.functional.proposals`).

States: per N the sum of the objects' best J, the counts of objects above each recall / average-recall threshold,
the summed ``min(N, P)`` and, with ``num_classes``, the per-class sums of the best proposals' intersection, FP and FN
(all reduced with ``"sum"``); with ``boundary=True`` the same sums for the best morphological boundary F (per class:
the sum of the objects' best F). The medians need every object's best value, kept in ``"cat"`` list states (O x L
float64 values each; documented as the states that grow with the dataset).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor
from torchmetrics.utilities import dim_zero_cat

from .._checks import check_bool, check_positive_float
from ..functional.proposals import (
    AR_THRESHOLDS,
    MCG_PROPOSAL_COUNTS,
    RECALL_THRESHOLDS,
    best_boundary_f,
    best_overlaps,
    check_counts,
    proposal_boundary_overlaps,
    proposal_overlaps,
)
from ._base import ExactMetric

__all__ = ["ProposalRecall"]


def _length(x: object) -> object:
    return len(x) if isinstance(x, Sequence) else "n/a"


def _class_ids(classes: object, num_objects: int, num_classes: int, device: torch.device) -> Tensor:
    """``classes`` as (K,) int64 ids in [0, num_classes): whole numbers, one per object (checked whatever
    ``validate_args``: an id outside the range would index outside the class states)."""
    try:
        raw = torch.as_tensor(classes, device=device).flatten()
        if raw.is_floating_point() and not isinstance(classes, Tensor):
            # Python floats take the default dtype, bfloat16 in a Lightning "bf16-true" step: id 257.0 would read 256
            raw = torch.as_tensor(classes, dtype=torch.float64, device=device).flatten()
    except (TypeError, ValueError, RuntimeError) as err:
        raise TypeError(f"Expected `classes` to be (K,) integer class ids, but got {classes!r}.") from err
    if (
        raw.dtype == torch.bool
        or raw.is_complex()
        or (raw.is_floating_point() and not bool((torch.isfinite(raw) & (raw == raw.floor())).all()))
    ):
        raise ValueError(f"Expected `classes` to be whole-number class ids, but got {classes!r}.")
    if raw.numel() != num_objects:
        raise ValueError(f"Expected `classes` to hold {num_objects} class ids (one per object), but got {raw.numel()}.")
    raw = raw.long()
    if raw.numel() and (int(raw.min()) < 0 or int(raw.max()) >= num_classes):
        raise ValueError(f"Expected `classes` to hold class ids in [0, {num_classes}), but got {raw.tolist()}.")
    return raw


class ProposalRecall(ExactMetric):
    """Best overlap per annotated object vs the number of proposals, over a dataset (Pont-Tuset & Marques, PAMI 2016).

    Args:
        counts: the numbers of proposals N (default the MCG sweep 10..6000 and all).
        num_classes: number of object classes (ids 0..C-1) for the class-averaged J_c; None to skip it.
        chunk_size: proposals per matrix product (memory bound), see :func:`proposal_overlaps`.
        boundary: also the boundary-based curves (best morphological boundary F per object, DAVIS ``f_boundary``;
            :func:`~segmetrics_torch.functional.proposals.proposal_boundary_overlaps`).
        bound_th: the boundary tolerance, a fraction of the diagonal (< 1; DAVIS 0.008) or pixels (>= 1).
        validate_args: check binary masks and class ids (synchronises CUDA).

    ``update(proposals, objects, void=None, classes=None)``: one image (its ranked pool, (K, H, W) objects, optional
    (H, W) void and (K,) class ids) or lists of those for several images.

    ``compute()``: dict of (L,) float64 curves ``num_proposals`` (mean per image), ``jaccard_object``,
    ``jaccard_median``, ``recall_50``, ``recall_70``, ``recall_85``, ``average_recall`` (and ``jaccard_class``),
    plus ``counts`` (L,); with ``boundary=True`` also ``boundary_f_object``, ``boundary_f_median``,
    ``boundary_recall_50/70/85``, ``boundary_average_recall`` (and ``boundary_f_class``, the mean over classes of
    the class's mean best F), as :func:`~segmetrics_torch.functional.proposals.proposal_boundary_summary`.

    As input to ``update`` (and ``forward``):

    - ``proposals``: one image's ranked pool, (P, H, W) bool masks (best first) or an (H, W) label map; or a list
      of pools, one per image.
    - ``objects``: (K, H, W) bool masks of the annotated objects (or a list); optional ``void`` (H, W) masks and
      ``classes`` (K,) class ids (or lists).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a dict of (L,) float64 curves over the numbers of proposals ``counts``: ``num_proposals``,
      ``jaccard_object``, ``jaccard_median``, ``recall_50``, ``recall_70``, ``recall_85``, ``average_recall`` (and
      the class and boundary variants when enabled), plus ``counts``.

    Example:
        >>> import torch
        >>> from segmetrics_torch import ProposalRecall
        >>> objects = torch.zeros(1, 8, 8, dtype=torch.bool)
        >>> objects[0, 2:6, 2:6] = True
        >>> proposals = torch.zeros(2, 8, 8, dtype=torch.bool)
        >>> proposals[0, 0:4, 0:4] = True  # ranked first, J = 4/28
        >>> proposals[1, 2:6, 2:7] = True  # second, J = 16/20
        >>> metric = ProposalRecall(counts=[1, 2])
        >>> metric.update(proposals, objects)
        >>> res = metric.compute()
        >>> [round(v, 4) for v in res["jaccard_object"].tolist()], res["recall_50"].tolist()
        ([0.1429, 0.8], [0.0, 1.0])
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False

    proposals_sum: Tensor
    objects: Tensor
    images: Tensor
    value_sum: Tensor
    class_counts: Tensor
    class_objects: Tensor
    class_f_sum: Tensor
    best: list[Tensor]
    boundary_best: list[Tensor]

    def __init__(
        self,
        counts: Sequence[int] | Tensor = MCG_PROPOSAL_COUNTS,
        *,
        num_classes: int | None = None,
        chunk_size: int | None = None,
        boundary: bool = False,
        bound_th: float = 0.008,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.counts = check_counts(counts)
        if chunk_size is not None and (
            isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1
        ):
            raise ValueError(f"Expected `chunk_size` to be a positive int or None, but got {chunk_size!r}.")
        if num_classes is not None and (
            isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1
        ):
            raise ValueError(f"Expected `num_classes` to be a positive int or None, but got {num_classes!r}.")
        self.num_classes = num_classes
        self.chunk_size = chunk_size
        self.validate_args = check_bool(validate_args, "validate_args")
        if not isinstance(boundary, bool):
            raise TypeError(f"Expected `boundary` to be a bool, but got {type(boundary).__name__}.")
        check_positive_float(bound_th, "bound_th")
        self.boundary = boundary
        self.bound_th = bound_th
        n = self.counts.numel()
        self.add_state("proposals_sum", torch.zeros(n, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("objects", torch.zeros((), dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("images", torch.zeros((), dtype=torch.float64), dist_reduce_fx="sum")
        if num_classes is not None:
            self.add_state("class_counts", torch.zeros(num_classes, 3, n, dtype=torch.float64), dist_reduce_fx="sum")
            self.add_state("class_objects", torch.zeros(num_classes, dtype=torch.float64), dist_reduce_fx="sum")
        for prefix in ("", "boundary_") if boundary else ("",):
            self.add_state(f"{prefix}value_sum", torch.zeros(n, dtype=torch.float64), dist_reduce_fx="sum")
            self.add_state(
                f"{prefix}recall_hits",
                torch.zeros(len(RECALL_THRESHOLDS), n, dtype=torch.float64),
                dist_reduce_fx="sum",
            )
            self.add_state(f"{prefix}ar_hits", torch.zeros(n, dtype=torch.float64), dist_reduce_fx="sum")
            self.add_list_state(f"{prefix}best", (n,))  # (objects, N) per image: the medians need every value
        if boundary and num_classes is not None:
            self.add_state("class_f_sum", torch.zeros(num_classes, n, dtype=torch.float64), dist_reduce_fx="sum")

    def _accumulate(self, prefix: str, best: Tensor) -> None:
        """Add the (L, K) best values of one image to the sums of ``prefix`` ("" Jaccard, "boundary_" F)."""
        getattr(self, f"{prefix}value_sum").add_(best.sum(1))
        hits = getattr(self, f"{prefix}recall_hits")
        for i, t in enumerate(RECALL_THRESHOLDS):
            hits[i] += (best > t).double().sum(1)
        levels = torch.tensor(AR_THRESHOLDS, dtype=torch.float64, device=best.device)
        getattr(self, f"{prefix}ar_hits").add_((best[..., None] >= levels).double().mean(-1).sum(1))
        getattr(self, f"{prefix}best").append(best.T.contiguous())

    def _update_one(self, proposals: Tensor, objects: Tensor, void: Tensor | None, classes: Tensor | None) -> None:
        ov = proposal_overlaps(
            proposals, objects, void=void, chunk_size=self.chunk_size, validate_args=self.validate_args
        )
        best = best_overlaps(ov, self.counts.to(ov.inter.device))
        j = best["jaccard"].to(self.value_sum.device)  # (L, K)
        if self.num_classes is not None:
            if classes is None:
                raise ValueError("Expected `classes` (K,) class ids: this metric was built with `num_classes`.")
            classes = _class_ids(classes, j.shape[1], self.num_classes, j.device)
        if self.boundary:
            bc = proposal_boundary_overlaps(
                proposals,
                objects,
                void=void,
                bound_th=self.bound_th,
                chunk_size=self.chunk_size,
                validate_args=self.validate_args,
            )
            f = best_boundary_f(bc, self.counts.to(bc.fg_match.device))["f"].to(j.device)
            self._accumulate("boundary_", f)
        self._accumulate("", j)
        self.proposals_sum += best["num_proposals"].to(j.device, torch.float64)
        self.objects += j.shape[1]
        self.images += 1
        if self.num_classes is not None:
            assert classes is not None  # checked above: this metric was built with num_classes
            self.class_objects.index_add_(0, classes, torch.ones_like(classes, dtype=torch.float64))
            for c, key in enumerate(("inter", "fp", "fn")):
                self.class_counts[:, c].index_add_(0, classes, best[key].to(j.device, torch.float64).T)
            if self.boundary:
                self.class_f_sum.index_add_(0, classes, f.T)

    def update(self, proposals: Any, objects: Any, void: Any = None, classes: Any = None) -> None:
        """Add one image, or lists of images (pools, objects, voids, class ids).

        Host synchronisation (by design): a label-map pool's proposal count is its maximum label (``int(max)``);
        the objects' pixel signatures come from ``torch.unique``; the CPU kernels (and the boundary variant's
        boundary scan) read copies of the masks on the host; class ids are checked against ``num_classes`` on the
        host when ``validate_args=True``.
        """
        if isinstance(objects, Tensor):
            self._update_one(proposals, objects, void, classes)
            return
        if not isinstance(objects, Sequence) or isinstance(objects, (str, bytes)):
            raise TypeError(
                f"Expected `objects` to be a tensor or a list of tensors, but got {type(objects).__name__}."
            )
        if not isinstance(proposals, Sequence) or len(proposals) != len(objects):
            raise ValueError("Expected `proposals` and `objects` lists of the same length (one entry per image).")
        for name, extra in (("void", void), ("classes", classes)):
            if extra is not None and (not isinstance(extra, Sequence) or len(extra) != len(objects)):
                raise ValueError(
                    f"Expected `{name}` to be a list with one entry per image ({len(objects)}) like "
                    f"`objects`, but got {type(extra).__name__} of length {_length(extra)}."
                )
        for i in range(len(objects)):
            self._update_one(
                proposals[i], objects[i], None if void is None else void[i], None if classes is None else classes[i]
            )

    def compute(self) -> dict[str, Tensor]:
        """The curves vs N of the images seen so far."""
        if float(self.objects) == 0:
            raise ValueError("No objects were evaluated: the proposal curves of an empty dataset are undefined.")
        out = {"counts": self.counts.to(self.value_sum.device), "num_proposals": self.proposals_sum / self.images}
        for prefix, value in (("", "jaccard"), ("boundary_", "f")) if self.boundary else (("", "jaccard"),):
            best = dim_zero_cat(getattr(self, f"{prefix}best"))  # (O, L)
            out[f"{prefix}{value}_object"] = getattr(self, f"{prefix}value_sum") / self.objects
            out[f"{prefix}{value}_median"] = torch.quantile(best, 0.5, dim=0)
            for i, t in enumerate(RECALL_THRESHOLDS):
                out[f"{prefix}recall_{round(t * 100)}"] = getattr(self, f"{prefix}recall_hits")[i] / self.objects
            out[f"{prefix}average_recall"] = getattr(self, f"{prefix}ar_hits") / self.objects
        if self.num_classes is not None:
            present = self.class_objects > 0  # the means run over the classes that have objects
            inter, fp, fn = self.class_counts.unbind(1)
            den = inter + fp + fn
            out["jaccard_class"] = torch.where(den > 0, inter / den.clamp_min(1), 0.0)[present].mean(0)
            if self.boundary:
                out["boundary_f_class"] = (self.class_f_sum[present] / self.class_objects[present, None]).mean(0)
        return out
