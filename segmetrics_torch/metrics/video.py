"""The DAVIS J&F of video object segmentation as a torchmetrics Metric (Pont-Tuset, Perazzi, Caelles et al. 2017)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from .._checks import BACKENDS, Backend, check_choice, check_positive_float
from ..functional.video.protocol import MAX_PROPOSALS, TASKS, davis_sequence
from ..functional.video.statistics import DECAY_EDGES
from ._base import ExactMetric

__all__ = ["VideoObjectSegmentation"]

#: the per-object statistics summed in the states, in the reference's global table's order
_STATS = ("j_mean", "j_recall", "j_decay", "f_mean", "f_recall", "f_decay")


class VideoObjectSegmentation(ExactMetric):
    """DAVIS 2017 J&F over sequences: per-object Mean, Recall and Decay of J and F, averaged over objects.

    Each ``update`` takes whole sequences (every frame; the semi-supervised task leaves out the first and the last
    itself), evaluated by :func:`~segmetrics_torch.functional.video.davis_sequence` with the protocol of ``task``
    (objects 1..K from the first ground-truth frame, padding, the Hungarian matching of the unsupervised task, the
    reference's void rules). The states are the sums over objects of the six statistics and the number of objects
    (float64, ``dist_reduce_fx="sum"``): the global row of ``davis2017-evaluation`` is their mean, the same in one
    process or across DDP ranks.

    Args:
        task: "semi-supervised" or "unsupervised".
        max_proposals: the unsupervised limit (20).
        decay_edges: "reference" (the reference's uint8 bin edges, wrapped beyond 256 evaluated frames) or
            "corrected" (see :mod:`segmetrics_torch.functional.video.statistics`).
        bound_th: boundary tolerance, a fraction of the diagonal (< 1; DAVIS 0.008) or whole pixels.
        backend: "auto", "numba" or "torch".

    As input to ``update`` (and ``forward``):

    - ``preds``: (T, H, W) integer label maps of one sequence's result (ids 1.., 0 background), or a list of them.
    - ``target``: (T, H, W) integer label maps of its ground truth (0 background, 255 void), or a list.

    As output of ``compute``: a dict of float64 scalars ``jf_mean``, ``j_mean``, ``j_recall``, ``j_decay``,
    ``f_mean``, ``f_recall``, ``f_decay`` (the reference's global columns) and ``num_objects``.

    Example:
        >>> import torch
        >>> from segmetrics_torch.metrics.video import VideoObjectSegmentation
        >>> gt = torch.zeros(5, 32, 32, dtype=torch.uint8); gt[:, 8:24, 8:24] = 1
        >>> pred = gt.clone(); pred[2] = 0  # the middle frame missed
        >>> metric = VideoObjectSegmentation()
        >>> metric.update(pred, gt)
        >>> res = metric.compute()
        >>> [round(float(res[k]), 4) for k in ("jf_mean", "j_mean", "j_recall")]
        [0.6667, 0.6667, 0.6667]
    """

    is_differentiable = False
    higher_is_better = None  # the means and recalls rise with quality, the decays fall (the registry's directions)
    full_state_update = False

    j_mean: Tensor
    j_recall: Tensor
    j_decay: Tensor
    f_mean: Tensor
    f_recall: Tensor
    f_decay: Tensor
    num_objects: Tensor

    def __init__(
        self,
        *,
        task: str = "semi-supervised",
        max_proposals: int = MAX_PROPOSALS,
        decay_edges: str = "reference",
        bound_th: float = 0.008,
        backend: Backend = "auto",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.task = check_choice(task, "task", TASKS)
        self.decay_edges = check_choice(decay_edges, "decay_edges", DECAY_EDGES)
        check_choice(backend, "backend", BACKENDS)
        self.backend: Backend = backend
        self.bound_th = check_positive_float(bound_th, "bound_th")
        if isinstance(max_proposals, bool) or not isinstance(max_proposals, int) or not 1 <= max_proposals <= 254:
            raise ValueError(f"Expected `max_proposals` to be an int in [1, 254], but got {max_proposals!r}.")
        self.max_proposals = max_proposals
        for name in (*_STATS, "num_objects"):
            self.add_state(name, torch.zeros((), dtype=torch.float64), dist_reduce_fx="sum")
        self._sequences = 0

    def _update_one(self, preds: Tensor, target: Tensor) -> None:
        self._sequences += 1
        rows = davis_sequence(
            preds,
            target,
            task=self.task,
            name=f"update {self._sequences}",
            max_proposals=self.max_proposals,
            decay_edges=self.decay_edges,
            bound_th=self.bound_th,
            backend=self.backend,
        )
        for name in _STATS:
            total = sum((o.stats[name] for o in rows), 0.0)
            setattr(self, name, getattr(self, name) + torch.tensor(total, dtype=torch.float64, device=self.device))
        self.num_objects = self.num_objects + len(rows)

    def update(self, preds: Any, target: Any) -> None:
        """Add one sequence ((T, H, W) label maps) or lists of sequences."""
        if isinstance(target, Tensor):
            if not isinstance(preds, Tensor):
                raise TypeError(f"Expected `preds` to be a tensor like `target`, but got {type(preds).__name__}.")
            self._update_one(preds, target)
            return
        if not isinstance(target, Sequence) or not isinstance(preds, Sequence) or len(preds) != len(target):
            raise ValueError("Expected `preds` and `target` to be tensors or lists of one length (one per sequence).")
        for p, t in zip(preds, target, strict=True):
            self._update_one(p, t)

    def compute(self) -> dict[str, Tensor]:
        """The global row over the objects seen so far."""
        if float(self.num_objects) == 0:
            raise ValueError("No object was evaluated: the DAVIS J&F of no object is undefined.")
        out = {name: getattr(self, name) / self.num_objects for name in _STATS}
        return {"jf_mean": (out["j_mean"] + out["f_mean"]) / 2, **out, "num_objects": self.num_objects.clone()}
