"""The DAVIS 2017 protocol of one sequence: which frames, which objects, which pairs (``davis2017-evaluation``).

* **Objects.** The ground truth's objects are the ids ``1..K``, K the largest id of the sequence's *first*
  annotation (void 255 apart; an id missing in between is an object, empty; ids above K in later frames are no
  object). A result's objects are ``1..P``, P its largest id over the evaluated frames.
* **Semi-supervised** (``task="semi-supervised"``): the first and the last frame are left out; result object ``k`` is
  compared with ground-truth object ``k``; a result with fewer objects is padded with empty masks, one with a larger id
  is a ``ValueError`` naming the sequence and frame; **no void mask** (the reference passes ``None``: void pixels are
  background, a prediction on them is a false positive).
* **Unsupervised** (``task="unsupervised"``): every frame; at most ``max_proposals`` (20) proposals, more is a
  ``ValueError`` naming the sequence and frame; padded to K with empty masks; J and F of every (proposal, object)
  pair **with the void mask**; proposals matched to objects one-to-one by the Hungarian algorithm
  (``scipy.optimize.linear_sum_assignment``) maximising the mean over frames of ``(J + F) / 2``. The matched pairs are
  listed, as the reference lists them, in proposal order (``row_ind`` ascending), not in object order: the
  reference's per-object row ``<seq>_i`` is the i-th matched proposal's pair (:attr:`DavisObject.object_id` says
  which object it is).

Frames arrive in chunks (:class:`DavisSequence`), so a sequence of any length is evaluated in bounded memory: only
the per-frame J and F of its objects (or pairs) are kept.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from ..._checks import BACKENDS, Backend, check_choice
from ...ops.davis import davis_counts
from .jf import check_label_video, davis_radius, jf_from_counts
from .statistics import DECAY_EDGES, davis_decay_edges, davis_statistics

__all__ = ["MAX_PROPOSALS", "TASKS", "DavisObject", "DavisSequence", "davis_sequence"]

#: the two tasks of DAVIS 2017
TASKS = ("semi-supervised", "unsupervised")
#: the unsupervised task's limit on proposals per sequence
MAX_PROPOSALS = 20


@dataclass(frozen=True)
class DavisObject:
    """One row of the per-object table: a ground-truth object of a sequence and its statistics.

    Attributes:
        sequence: the sequence's name.
        index: the row's number within the sequence, 1-based: the reference's ``<sequence>_<index>`` name.
        object_id: the ground-truth object's id (equal to ``index`` in the semi-supervised task).
        proposal_id: the result's id compared with it (matched; may exceed the result's largest id: an empty mask).
        j, f: (N,) float64 per-frame J and F over the evaluated frames.
        stats: ``{"j_mean", "j_recall", "j_decay", "f_mean", "f_recall", "f_decay"}`` floats.

    Example:
        >>> gt = torch.zeros(4, 30, 30, dtype=torch.uint8); gt[:, 5:20, 5:20] = 1
        >>> res = gt.clone(); res[:, 5:20, 10:20] = 0  # a third of the object found, in every frame
        >>> obj = davis_sequence(res, gt, name="cows")[0]  # frames 1 and 2 are evaluated
        >>> obj.name, obj.object_id, obj.proposal_id, [round(j, 4) for j in obj.j.tolist()]
        ('cows_1', 1, 1, [0.3333, 0.3333])
        >>> round(obj.stats["j_mean"], 4), obj.stats["j_recall"]
        (0.3333, 0.0)
    """

    sequence: str
    index: int
    object_id: int
    proposal_id: int
    j: Tensor
    f: Tensor
    stats: dict[str, float] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The reference's row name, ``<sequence>_<index>``."""
        return f"{self.sequence}_{self.index}"


class DavisSequence:
    """The running evaluation of one sequence, fed chunks of its evaluated frames (see the module doc).

    Args:
        name: the sequence's name (error messages and rows).
        num_objects: K, the largest id of its first ground-truth frame (255 apart).
        task: "semi-supervised" or "unsupervised".
        max_proposals: the unsupervised limit (20).
        bound_th: boundary tolerance (fraction of the diagonal, or whole pixels).
        backend: "auto", "numba" or "torch".

    Example:
        >>> gt = torch.zeros(10, 20, 20, dtype=torch.uint8); gt[:, 5:15, 5:15] = 1
        >>> seq = DavisSequence("cows", 1)
        >>> for start in range(0, 10, 4):  # chunks of frames, e.g. as they are read
        ...     seq.add(gt[start : start + 4].clone(), gt[start : start + 4])
        >>> [(o.name, o.stats["j_mean"]) for o in seq.finish()]
        [('cows_1', 1.0)]
    """

    def __init__(
        self,
        name: str,
        num_objects: int,
        *,
        task: str = "semi-supervised",
        max_proposals: int = MAX_PROPOSALS,
        bound_th: float = 0.008,
        backend: Backend = "auto",
    ) -> None:
        self.name = name
        self.task = check_choice(task, "task", TASKS)
        check_choice(backend, "backend", BACKENDS)
        if not 0 <= int(num_objects) <= 254:
            raise ValueError(f"sequence {name!r}: expected 0..254 objects, but its first frame gives {num_objects}.")
        if not 1 <= int(max_proposals) <= 254:
            raise ValueError(f"Expected `max_proposals` in [1, 254], but got {max_proposals}.")
        self.num_objects = int(num_objects)
        self.max_proposals = int(max_proposals)
        self.bound_th = bound_th
        self.backend = backend
        self._j: list[Tensor] = []
        self._f: list[Tensor] = []
        self._largest = 0
        self.frames = 0

    @property
    def _num_preds(self) -> int:
        if self.task == "semi-supervised":
            return self.num_objects
        return max(self.max_proposals, self.num_objects)

    def add(self, preds: Tensor, target: Tensor, frame_names: Sequence[str] | None = None) -> None:
        """Add a chunk of evaluated frames: (T, H, W) label maps of the result and the ground truth.

        Raises:
            ValueError: a result id above K (semi-supervised) or above ``max_proposals`` (unsupervised), naming the
                sequence and the frame.
        """
        if preds.ndim != 3 or preds.shape != target.shape:
            raise ValueError(
                f"sequence {self.name!r}: expected result and ground-truth frames of one (T, H, W) shape, but got "
                f"{tuple(preds.shape)} and {tuple(target.shape)}."
            )
        semi = self.task == "semi-supervised"
        counts = davis_counts(
            preds,
            target,
            num_preds=self._num_preds,
            num_targets=self.num_objects,
            radius=davis_radius(self.bound_th, preds.shape[-2], preds.shape[-1]),
            void=not semi,
            diagonal=semi,
            backend=self.backend,
            check_ids=False,
        )
        largest = counts["pred_max"]
        limit = self.num_objects if semi else self.max_proposals
        worst = int(largest.max()) if largest.numel() else 0  # one host sync per chunk
        if worst > limit:
            t = int(torch.nonzero(largest > limit)[0, 0])
            frame = frame_names[t] if frame_names is not None else str(self.frames + t)
            got = int(largest[t])
            if semi:
                raise ValueError(
                    f"sequence {self.name!r}, frame {frame}: the result has object id {got} but the ground truth has "
                    f"{self.num_objects} object(s) (ids 1..{self.num_objects}, from its first frame): in the "
                    "semi-supervised task a result may not hold more objects than the ground truth."
                )
            raise ValueError(
                f"sequence {self.name!r}, frame {frame}: proposal id {got} exceeds the unsupervised task's limit "
                f"of {self.max_proposals} proposals per sequence."
            )
        self._largest = max(self._largest, worst)
        j, f = jf_from_counts(counts, diagonal=semi)
        self._j.append(j)
        self._f.append(f)
        self.frames += preds.shape[0]

    def finish(self, *, decay_edges: str = "reference") -> list[DavisObject]:
        """The sequence's rows (in the reference's order), with their statistics.

        Raises:
            ValueError: no evaluated frame (a semi-supervised sequence of fewer than 3 frames).
        """
        check_choice(decay_edges, "decay_edges", DECAY_EDGES)
        if self.frames == 0:
            raise ValueError(
                f"sequence {self.name!r}: no evaluated frame (the semi-supervised task leaves out the first and the "
                "last frame: a sequence needs at least 3)."
            )
        k = self.num_objects
        if k == 0:
            return []
        j = torch.cat(self._j)  # (N, K) or (N, P, K)
        f = torch.cat(self._f)
        if self.task == "semi-supervised":
            jo, fo = j.T, f.T
            rows = list(range(k))
            cols = list(range(k))
        else:
            used = max(self._largest, k)  # the result's proposals, padded to the objects with empty masks
            jp = np.ascontiguousarray(j[:, :used].permute(1, 2, 0).cpu().numpy())  # (P, K, N), the reference's layout
            fp = np.ascontiguousarray(f[:, :used].permute(1, 2, 0).cpu().numpy())

            score = (np.mean(jp, axis=2) + np.mean(fp, axis=2)) / 2
            # scipy.optimize is imported here: at the top it added 0.13 s to every `import segmetrics_torch.functional`
            from scipy.optimize import linear_sum_assignment

            r, c = linear_sum_assignment(-score)
            rows, cols = [int(v) for v in r], [int(v) for v in c]
            jo = torch.from_numpy(jp[r, c]).to(j.device)
            fo = torch.from_numpy(fp[r, c]).to(f.device)
        sj = davis_statistics(jo, decay_edges=decay_edges, warn=False)
        sf = davis_statistics(fo, decay_edges=decay_edges, warn=False)
        host = {f"{m}_{s}": v.cpu().tolist() for m, st in (("j", sj), ("f", sf)) for s, v in st.items()}
        return [
            DavisObject(
                self.name,
                i + 1,
                cols[i] + 1,
                rows[i] + 1,
                jo[i].contiguous(),
                fo[i].contiguous(),
                {key: float(values[i]) for key, values in host.items()},
            )
            for i in range(len(rows))
        ]


def davis_sequence(
    preds: Tensor,
    target: Tensor,
    *,
    task: str = "semi-supervised",
    name: str = "sequence",
    num_objects: int | None = None,
    max_proposals: int = MAX_PROPOSALS,
    decay_edges: str = "reference",
    bound_th: float = 0.008,
    backend: Backend = "auto",
) -> list[DavisObject]:
    """Evaluate one whole sequence held in memory by the DAVIS protocol of ``task`` (see the module doc).

    Args:
        preds: (T, H, W) integer label maps of the result, every frame of the sequence (the semi-supervised task
            leaves out the first and the last itself).
        target: (T, H, W) integer label maps of the ground truth (255 void).
        task: "semi-supervised" or "unsupervised".
        name: the sequence's name (rows, messages).
        num_objects: K; default the largest id of ``target[0]`` (void apart).
        max_proposals: the unsupervised limit (20).
        decay_edges: "reference" (uint8-wrapped, warned beyond 256 evaluated frames) or "corrected".
        bound_th: boundary tolerance.
        backend: "auto", "numba" or "torch".

    Returns:
        One :class:`DavisObject` per ground-truth object, in the reference's row order.

    Example:
        >>> gt = torch.zeros(4, 30, 30, dtype=torch.uint8); gt[:, 5:20, 5:20] = 1
        >>> [round(o.stats["j_mean"], 3) for o in davis_sequence(gt.clone(), gt)]
        [1.0]
    """
    check_label_video(preds, target)
    if num_objects is None:
        first = target[0].long()  # (check_label_video: a frame at least)
        num_objects = int(torch.where(first == 255, 0, first).max())
    seq = DavisSequence(name, num_objects, task=task, max_proposals=max_proposals, bound_th=bound_th, backend=backend)
    if task == "semi-supervised":
        preds, target = preds[1:-1], target[1:-1]
    if preds.shape[0]:
        seq.add(preds, target, [str(i + (1 if task == "semi-supervised" else 0)) for i in range(preds.shape[0])])
    objects = seq.finish(decay_edges=decay_edges)
    _warn_wrapped(seq.frames, decay_edges, name)
    return objects


def _warn_wrapped(frames: int, decay_edges: str, name: str) -> None:
    if decay_edges == "reference" and frames > 256:
        warnings.warn(
            f"sequence {name!r}: {frames} evaluated frames: the DAVIS reference's Decay bins are wrapped (its uint8 "
            f"edges {davis_decay_edges(frames)} instead of {davis_decay_edges(frames, 'corrected')}), as its "
            "published numbers are; pass decay_edges='corrected' for the true quarters.",
            UserWarning,
            stacklevel=3,
        )
