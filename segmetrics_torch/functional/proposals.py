r"""Object proposals: the best overlap of every annotated object within the first N ranked proposals, for all N.

Protocol of Pont-Tuset & Marques (PAMI 2016, §2.3) and the MCG benchmark code (``benchmark/src/segmented/
eval_proposals.m``, ``eval_one.m``, ``aux/jaccard.m``, ``average_recall.m``):

* Jaccard of proposal ``p`` and object ``g`` over the valid pixels (void pixels, e.g. Pascal's 255, excluded from
  every count): ``J = |p ∩ g| / (|p ∩ g| + FP + FN)``, 0 when the denominator is 0.
* For each N of a sweep (default :data:`MCG_PROPOSAL_COUNTS`: 10..100 step 5, 125..1000 step 25, 1500..6000 step
  500, then all), each object's best J among the first ``min(N, P)`` proposals (ties: the first best proposal, as
  MATLAB's ``max``). All N come from one running maximum over the ranked pool.
* Summaries vs N (:func:`proposal_summary`): the mean best J over all objects (J_i, "jaccard_object"), its median,
  recall ``mean(J > t)`` for t = 0.5, 0.7, 0.85 (strict), average recall ``mean over t in 0.5:0.05:0.95 of
  mean(J >= t)``, and with class ids the class-averaged J_c (per class ``sum inter / (sum inter + sum FP + sum FN)``
  of the best proposals, then the mean over classes). The x axis is the mean number of proposals per image,
  ``mean min(N, P)``.

The counts of all proposals with all objects need one pass over each proposal mask: on the CPU a compiled kernel
counts each mask's pixels per *signature* (the set of objects containing the pixel, void apart) and a tiny integer
product turns those into object counts; on other devices a float32 matrix product per chunk (exact integer counts
up to 2^24 pixels per image). Either way at most ``chunk_size`` proposals are converted at a time.
Proposals come as a dense (P, H, W) bool stack, a list of (H, W) masks, or an (H, W) label map of non-overlapping
proposals (label ``i >= 1`` is the i-th ranked proposal, 0 none), whose intersections are one ``bincount``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import torch
from torch import Tensor

from .._checks import (
    BACKENDS,
    Backend,
    ImageBatch,
    as_binary_mask,
    check_choice,
    check_positive_counts,
    check_positive_float,
    check_tensor,
)
from ..ops.backend import resolve
from ..ops.masks import boundary_match_counts, overlap_counts, signature_counts
from ..ops.morphology import dilate_disk, seg2bmap
from .boundary.morphological import boundary_f_from_counts, boundary_radius

__all__ = [
    "AR_THRESHOLDS",
    "MCG_PROPOSAL_COUNTS",
    "RECALL_THRESHOLDS",
    "ProposalBoundaryCounts",
    "ProposalOverlaps",
    "best_boundary_f",
    "best_overlaps",
    "check_counts",
    "proposal_boundary_overlaps",
    "proposal_boundary_summary",
    "proposal_overlaps",
    "proposal_summary",
]

MCG_PROPOSAL_COUNTS: tuple[int, ...] = (*range(10, 101, 5), *range(125, 1001, 25), *range(1500, 6001, 500), 100000)
RECALL_THRESHOLDS = (0.5, 0.7, 0.85)
AR_THRESHOLDS = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))
# Proposal pixels turned to float32 per chunk: 2^26 values (256 MiB) unless chunk_size is given.
_CHUNK_VALUES = 2**26


class ProposalOverlaps(NamedTuple):
    """Counts of every (proposal, object) pair over the valid pixels: int64 (P, K) ``inter``, ``fp``, ``fn``.

    ``jaccard``: the (P, K) float64 ``inter / (inter + fp + fn)``, 0 where the denominator is 0.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import proposal_overlaps
        >>> obj = torch.zeros(1, 6, 6, dtype=torch.bool)
        >>> obj[0, 1:5, 1:5] = True  # one 4 x 4 object
        >>> props = torch.zeros(3, 6, 6, dtype=torch.bool)  # 3 ranked proposals
        >>> props[0] = True  # the whole image
        >>> props[1, 1:5, 1:5] = True  # the object itself
        >>> props[2, 1:5, 1:3] = True  # its left half
        >>> overlaps = proposal_overlaps(props, obj)  # a ProposalOverlaps
        >>> [round(j, 4) for j in overlaps.jaccard[:, 0].tolist()]  # 16/36, 16/16, 8/16
        [0.4444, 1.0, 0.5]
    """

    inter: Tensor
    fp: Tensor
    fn: Tensor

    @property
    def jaccard(self) -> Tensor:
        den = self.inter + self.fp + self.fn
        return torch.where(den > 0, self.inter.double() / den.clamp_min(1).double(), 0.0)


class ProposalBoundaryCounts(NamedTuple):
    """Morphological boundary-F counts of every (proposal, object) pair (DAVIS ``f_boundary``), int64:
    ``fg_match`` (P, K) proposal boundary pixels within the tolerance of the object's boundary, ``fg_count`` (P,)
    proposal boundary pixels, ``gt_match`` (P, K) object boundary pixels within the tolerance of the proposal's
    boundary, ``gt_count`` (K,) object boundary pixels.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import proposal_boundary_overlaps
        >>> obj = torch.zeros(1, 6, 6, dtype=torch.bool)
        >>> obj[0, 1:5, 1:5] = True  # one 4 x 4 object
        >>> props = torch.zeros(3, 6, 6, dtype=torch.bool)  # 3 ranked proposals
        >>> props[0] = True  # the whole image
        >>> props[1, 1:5, 1:5] = True  # the object itself
        >>> props[2, 1:5, 1:3] = True  # its left half
        >>> counts = proposal_boundary_overlaps(props, obj, bound_th=1)  # a ProposalBoundaryCounts
        >>> counts.gt_count.tolist(), counts.fg_count.tolist()  # the whole image has no boundary pixel
        ([16], [0, 16, 12])
        >>> precision, recall, f = counts.precision_recall_f()
        >>> [round(v, 4) for v in f[:, 0].tolist()]
        [0.0, 1.0, 0.7857]
    """

    fg_match: Tensor
    fg_count: Tensor
    gt_match: Tensor
    gt_count: Tensor

    def precision_recall_f(self) -> tuple[Tensor, Tensor, Tensor]:
        """(P, K) float64 precision, recall and F with DAVIS' cases: no proposal boundary but an object boundary ->
        (P, R) = (1, 0); a proposal boundary but no object boundary -> (0, 1); neither -> (1, 1); F = 0 at P + R = 0."""

        f, precision, recall = boundary_f_from_counts(
            self.fg_match, self.fg_count[:, None], self.gt_match, self.gt_count[None, :]
        )
        return precision, recall, f

    @property
    def f(self) -> Tensor:
        return self.precision_recall_f()[2]


def _check_objects(objects: Tensor, void: Tensor | None, validate_args: bool) -> tuple[Tensor, Tensor]:
    objects = check_tensor(objects, "objects")
    if objects.ndim == 2:
        objects = objects[None]
    if objects.ndim != 3:
        raise ValueError(f"Expected `objects` of shape (K, H, W), but got {tuple(objects.shape)}.")
    if objects.shape[0] == 0:
        raise ValueError("Expected at least one object in `objects`, but got an empty stack (K = 0).")
    if objects.shape[1] == 0 or objects.shape[2] == 0:
        raise ValueError(f"Expected `objects` to have non-empty images, but got shape {tuple(objects.shape)}.")
    objects = as_binary_mask(objects, "objects", validate_args)
    if void is None:
        valid = torch.ones(objects.shape[1:], dtype=torch.bool, device=objects.device)
    else:
        void = check_tensor(void, "void")
        if void.shape != objects.shape[1:]:
            raise ValueError(f"Expected `void` of shape {tuple(objects.shape[1:])}, but got {tuple(void.shape)}.")
        valid = ~as_binary_mask(void, "void", validate_args).to(objects.device)
    return objects, valid


#: ranks a label map may name beyond its pixel count (necessarily empty proposals, e.g. fully covered ones)
_SPARE_RANKS = 1024


def _pool(proposals: ImageBatch, h: int, w: int, validate_args: bool) -> tuple[str, Any, int]:
    """``("labels", (H, W) map, P)`` or ``("stack", (P, H, W) tensor or list, P)``, with the pool's checks.

    Shapes and types are checked here, before any chunk is built: a list of masks of the wrong size is a
    ``ValueError`` naming the mask, not an error of ``torch.stack`` later.
    """
    if isinstance(proposals, Tensor) and proposals.ndim == 2 and not proposals.dtype == torch.bool:
        labels = check_tensor(proposals, "proposals")
        if labels.is_floating_point() or labels.is_complex():
            raise TypeError(
                f"Expected `proposals` as a label map to be an integer tensor, but got dtype {labels.dtype}."
            )
        if labels.shape != (h, w):
            raise ValueError(f"Expected `proposals` of size {(h, w)} like `objects`, but got {tuple(labels.shape)}.")
        # one reduction reads both ends: the maximum is needed anyway (P), so the minimum costs no extra sync and
        # negative labels, which would index outside the counts, are rejected whatever ``validate_args``
        lo, hi = torch.aminmax(labels)
        if int(lo) < 0:
            raise ValueError(f"Expected `proposals` labels >= 0 (0 = no proposal), but got a minimum of {int(lo)}.")
        n_prop = int(hi)
        if n_prop == 0:
            raise ValueError("Expected at least one proposal in `proposals`, but the label map holds none (all 0).")
        if n_prop > h * w + _SPARE_RANKS:
            # a label is a rank: a map holds at most H*W non-empty proposals, so a maximum far beyond the pixel count
            # names mostly empty ones, and evaluating them would loop and allocate by the label's value (2**40)
            raise ValueError(
                f"Expected proposal labels to be ranks 1..P with P at most the pixel count {h * w} of a {h}x{w} label "
                f"map (+ {_SPARE_RANKS}), but got a maximum label of {n_prop}. Renumber the proposals 1, 2, ... in "
                "rank order."
            )
        return "labels", labels, n_prop
    if isinstance(proposals, Tensor):
        proposals = check_tensor(proposals, "proposals")
        if proposals.ndim == 2:  # bool (the label-map branch above took the others): the dtype is the problem
            raise TypeError(
                "Expected `proposals` as an (H, W) label map to be an integer tensor (0 = no proposal, 1..P in rank "
                "order), but got dtype torch.bool; one mask is a (1, H, W) stack: proposals[None]."
            )
        if proposals.ndim != 3:
            raise ValueError(
                f"Expected `proposals` of shape (P, H, W) or an (H, W) label map, but got {tuple(proposals.shape)}."
            )
        if proposals.shape[1:] != (h, w):
            raise ValueError(
                f"Expected `proposals` of size {(h, w)} like `objects`, but got {tuple(proposals.shape[1:])}."
            )
    elif not isinstance(proposals, Sequence) or isinstance(proposals, (str, bytes)):
        raise TypeError(
            f"Expected `proposals` to be a tensor or a list of tensors, but got {type(proposals).__name__}."
        )
    else:
        items = [check_tensor(m, f"proposals[{i}]") for i, m in enumerate(proposals)]
        for i, m in enumerate(items):
            if m.shape != (h, w):
                raise ValueError(
                    f"Expected `proposals[{i}]` to be an (H, W) mask of size {(h, w)} like `objects`, "
                    f"but got shape {tuple(m.shape)}."
                )
        proposals = items
    if len(proposals) == 0:
        raise ValueError("Expected at least one proposal in `proposals`, but got an empty pool.")
    return "stack", proposals, len(proposals)


def _chunks(
    kind: str,
    pool: Any,
    n_prop: int,
    shape: tuple[int, int],
    device: torch.device,
    chunk_size: int | None,
    validate_args: bool,
) -> Iterator[Tensor]:
    """The pool as (C, H, W) bool chunks on ``device``, at most ``chunk_size`` proposals converted at a time."""
    h, w = shape
    step = max(1, _CHUNK_VALUES // max(1, h * w)) if chunk_size is None else chunk_size
    if isinstance(step, bool) or not isinstance(step, int) or step < 1:
        raise ValueError(f"Expected `chunk_size` to be a positive int, but got {chunk_size!r}.")
    for lo in range(0, n_prop, step):
        if kind == "labels":
            ids = torch.arange(lo + 1, min(lo + step, n_prop) + 1, device=pool.device)
            yield (pool[None] == ids[:, None, None]).to(device)
            continue
        chunk = pool[lo : lo + step]
        chunk = (
            torch.stack(
                [as_binary_mask(m, f"proposals[{lo + i}]", validate_args).to(device) for i, m in enumerate(chunk)]
            )
            if not isinstance(chunk, Tensor)
            else chunk
        )
        yield as_binary_mask(chunk, "proposals", validate_args).to(device)


def _signatures(member: Tensor) -> tuple[Tensor, Tensor]:
    """Group pixels by their column of the (M, HW) bool ``member``: ``(values (S, M) bool, signature (HW,))``."""
    if member.shape[0] <= 62:  # pack each pixel's memberships into one int64
        bits = torch.ones(member.shape[0], dtype=torch.int64, device=member.device).bitwise_left_shift_(
            torch.arange(member.shape[0], dtype=torch.int64, device=member.device)
        )
        keys, signature = torch.unique((member.long() * bits[:, None]).sum(0), return_inverse=True)
        return (keys[:, None] & bits[None]) != 0, signature
    values, signature = torch.unique(member.T, dim=0, return_inverse=True)
    return values, signature


def _backend(backend: Backend, device: torch.device) -> Backend:
    check_choice(backend, "backend", BACKENDS)
    return resolve(backend, device)  # "auto": the package's one backend decision (ops.backend)


def proposal_overlaps(
    proposals: ImageBatch,
    objects: Tensor,
    *,
    void: Tensor | None = None,
    chunk_size: int | None = None,
    backend: Backend = "auto",
    validate_args: bool = True,
) -> ProposalOverlaps:
    """Intersection, false-positive and false-negative pixel counts of every proposal with every object.

    Args:
        proposals: (P, H, W) bool / {0, 1} ranked masks, a list of P (H, W) masks, or an (H, W) integer label map of
            non-overlapping proposals (label i >= 1 = proposal i, ranked by label; P = max label).
        objects: (K, H, W) ground-truth object masks, K >= 1.
        void: optional (H, W) mask of pixels excluded from every count.
        chunk_size: proposals converted at a time (default: 2^26 pixel values' worth).
        backend: "numba" (the CPU signature kernel), "torch" (float32 matrix products on the objects' device; the
            GPU path) or "auto" (numba for CPU tensors).
        validate_args: check that masks are binary (synchronises a CUDA device).

    Returns:
        :class:`ProposalOverlaps` of int64 (P, K) tensors on the objects' device.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import proposal_overlaps
        >>> obj = torch.zeros(1, 6, 6, dtype=torch.bool)
        >>> obj[0, 1:5, 1:5] = True  # one 4 x 4 object
        >>> props = torch.zeros(3, 6, 6, dtype=torch.bool)  # 3 ranked proposals
        >>> props[0] = True  # the whole image
        >>> props[1, 1:5, 1:5] = True  # the object itself
        >>> props[2, 1:5, 1:3] = True  # its left half
        >>> overlaps = proposal_overlaps(props, obj)
        >>> overlaps.inter.tolist(), overlaps.fp.tolist(), overlaps.fn.tolist()
        ([[16], [16], [8]], [[20], [0], [0]], [[0], [0], [8]])
        >>> labels = torch.zeros(6, 6, dtype=torch.int64)  # or non-overlapping proposals as a label map
        >>> labels[1:5, 1:3], labels[1:5, 3:5] = 1, 2  # the object's left and right halves
        >>> proposal_overlaps(labels, obj).jaccard.tolist()
        [[0.5], [0.5]]
    """
    objects, valid = _check_objects(objects, void, validate_args)
    backend = _backend(backend, objects.device)
    h, w = objects.shape[1:]
    dev = objects.device
    g = (objects & valid).flatten(1)
    g_area = g.sum(1)
    kind, pool, n_prop = _pool(proposals, h, w, validate_args)
    if kind == "labels":
        lab = pool.to(dev).flatten()[valid.flatten()]
        gv = g[:, valid.flatten()]
        # (label, object) counts in one bincount; label 0 (no proposal) dropped
        key = lab[None, :] * g.shape[0] + torch.arange(g.shape[0], device=dev)[:, None]
        inter = torch.bincount(key[gv], minlength=(n_prop + 1) * g.shape[0]).view(n_prop + 1, -1)[1:]
        p_area = torch.bincount(lab, minlength=n_prop + 1)[1:]
    else:
        if backend == "numba":
            # pixels grouped by signature (the objects containing them; void apart): each proposal's counts per
            # signature come from one pass over its bool mask, and the object counts from a tiny product
            sig_values, signature = _signatures(torch.cat([g, (~valid).flatten()[None]]))  # (S, K + 1), (HW,)
            to_objects = sig_values[:, :-1].long()
            counted = ~sig_values[:, -1]  # signatures of valid pixels
            signature = signature.view(h, w)
        else:
            gf = g.to(torch.float32).T.contiguous()  # (HW, K)
            vf = valid.flatten().to(torch.float32)
        inter_parts, area_parts = [], []
        for chunk in _chunks(kind, pool, n_prop, (h, w), dev, chunk_size, validate_args):
            m = chunk.flatten(1)
            if backend == "numba":
                per_sig = signature_counts(chunk, signature, sig_values.shape[0])
                inter_parts.append(per_sig @ to_objects)
                area_parts.append(per_sig[:, counted].sum(1))
            else:
                mf = m.to(torch.float32)
                inter_parts.append(overlap_counts(mf, gf))
                area_parts.append(overlap_counts(mf, vf))
        inter = torch.cat(inter_parts)
        p_area = torch.cat(area_parts)
    fp = p_area[:, None] - inter
    fn = g_area[None, :] - inter
    return ProposalOverlaps(inter.long(), fp.long(), fn.long())


def proposal_boundary_overlaps(
    proposals: ImageBatch,
    objects: Tensor,
    *,
    void: Tensor | None = None,
    bound_th: float = 0.008,
    chunk_size: int | None = None,
    backend: Backend = "auto",
    validate_args: bool = True,
) -> ProposalBoundaryCounts:
    """Morphological boundary-F counts (DAVIS ``f_boundary``) of every proposal with every object.

    Boundaries are ``seg2bmap`` of each full mask, matched within the disk of radius
    :func:`~segmetrics_torch.functional.boundary.boundary_radius` ``(bound_th, H, W)``; with ``void``, boundary
    pixels lying on void pixels are left out of the four counts (the dilations still start from every boundary
    pixel). Without void pixels the F of a pair equals :func:`~segmetrics_torch.functional.boundary.
    morphological_boundary_f` of the two masks.

    Args:
        proposals, objects, void, chunk_size, validate_args: as :func:`proposal_overlaps`.
        bound_th: tolerance, a fraction of the image diagonal (< 1; DAVIS 0.008) or pixels (>= 1).
        backend: "numba" (a CPU kernel stamping the disk around each proposal's boundary pixels), "torch" (disk
            dilation by the exact distance transform and float32 products per chunk; the GPU path) or "auto".

    Returns:
        :class:`ProposalBoundaryCounts` on the objects' device.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import proposal_boundary_overlaps
        >>> obj = torch.zeros(1, 6, 6, dtype=torch.bool)
        >>> obj[0, 1:5, 1:5] = True  # one 4 x 4 object
        >>> props = torch.zeros(3, 6, 6, dtype=torch.bool)  # 3 ranked proposals
        >>> props[0] = True  # the whole image
        >>> props[1, 1:5, 1:5] = True  # the object itself
        >>> props[2, 1:5, 1:3] = True  # its left half
        >>> counts = proposal_boundary_overlaps(props, obj, bound_th=1)  # 1 pixel of tolerance
        >>> counts.fg_match.tolist(), counts.fg_count.tolist()
        ([[0], [16], [11]], [0, 16, 12])
        >>> counts.gt_match.tolist(), counts.gt_count.tolist()
        ([[0], [16], [11]], [16])
        >>> [round(v, 4) for v in counts.f[:, 0].tolist()]  # no proposal boundary: (P, R) = (1, 0), F = 0
        [0.0, 1.0, 0.7857]
    """

    check_positive_float(bound_th, "bound_th")
    objects, valid = _check_objects(objects, void, validate_args)
    backend = _backend(backend, objects.device)
    h, w = objects.shape[1:]
    dev = objects.device
    radius = boundary_radius(bound_th, h, w)
    kind, pool, n_prop = _pool(proposals, h, w, validate_args)
    gt_b = seg2bmap(objects)
    gt_dil = dilate_disk(gt_b, radius)
    gt_bv = (gt_b & valid).flatten(1)  # (K, HW)
    gt_count = gt_bv.sum(1)
    fg_parts, match_parts, count_parts = [], [], []
    if backend == "numba":
        sig_values, signature = _signatures(gt_dil.flatten(1))  # (S, K)
        signature = signature.view(h, w)
        obj_idx, pix = gt_bv.nonzero(as_tuple=True)
        r = math.floor(radius)
        yy, xx = torch.meshgrid(torch.arange(-r, r + 1), torch.arange(-r, r + 1), indexing="ij")
        inside = (yy**2 + xx**2) <= radius**2
        off_y, off_x = yy[inside], xx[inside]
        near = gt_dil.any(0)
    else:
        gt_dil_f = gt_dil.flatten(1).to(torch.float32).T.contiguous()  # (HW, K)
        gt_bv_f = gt_bv.to(torch.float32).T.contiguous()
    for chunk in _chunks(kind, pool, n_prop, (h, w), dev, chunk_size, validate_args):
        if backend == "numba":
            per_sig, match, count = boundary_match_counts(
                chunk, valid, near, signature, sig_values.shape[0], pix, obj_idx, objects.shape[0], off_y, off_x
            )
            fg_parts.append(per_sig @ sig_values.long())
            match_parts.append(match)
            count_parts.append(count)
        else:
            fg_b = seg2bmap(chunk)
            fg_dil = dilate_disk(fg_b, radius).flatten(1).to(torch.float32)
            fg_bv = (fg_b & valid).flatten(1)
            fg_parts.append(overlap_counts(fg_bv, gt_dil_f))
            match_parts.append(overlap_counts(fg_dil, gt_bv_f))
            count_parts.append(fg_bv.sum(1))
    return ProposalBoundaryCounts(torch.cat(fg_parts), torch.cat(count_parts), torch.cat(match_parts), gt_count)


def check_counts(counts: object) -> Tensor:
    """The N of a proposal sweep as a (L,) int64 tensor: whole numbers >= 1, at least one (``ValueError`` else).

    Example:
        >>> from segmetrics_torch.functional import check_counts
        >>> check_counts([10, 100])
        tensor([ 10, 100])
        >>> check_counts([2.5])
        Traceback (most recent call last):
            ...
        ValueError: Expected `counts` to be positive whole numbers of proposals, but got [2.5].
    """
    return check_positive_counts(counts, "counts", "positive whole numbers of proposals")


def _running_best(score: Tensor, counts: Sequence[int] | Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Best (P, K) ``score`` per object among the first ``min(N, P)`` proposals for every N: ``(values (L, K),
    proposal index (L, K) of the first best, min(N, P) (L,))``, from one running maximum."""
    n = check_counts(counts).to(score.device)
    p = score.shape[0]
    running = torch.cummax(score, 0).values
    # the first best proposal: the last position where the running maximum strictly increased
    previous = torch.cat([torch.full_like(running[:1], -1.0), running[:-1]])
    rows = torch.arange(p, device=score.device)[:, None].expand_as(score)
    last_rise = torch.cummax(torch.where(score > previous, rows, torch.zeros_like(rows)), 0).values
    take = n.clamp(max=p) - 1
    return running[take], last_rise[take], take + 1


def best_overlaps(
    overlaps: ProposalOverlaps, counts: Sequence[int] | Tensor = MCG_PROPOSAL_COUNTS
) -> dict[str, Tensor]:
    """Each object's best proposal by Jaccard among the first ``min(N, P)`` for every N (ties: the first best).

    Returns:
        ``jaccard`` (L, K) float64 best J, ``inter``, ``fp``, ``fn`` (L, K) int64 counts of the best proposal (the
        first one reaching the maximum), ``num_proposals`` (L,) int64 ``min(N, P)``.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import best_overlaps, proposal_overlaps
        >>> obj = torch.zeros(1, 6, 6, dtype=torch.bool)
        >>> obj[0, 1:5, 1:5] = True  # one 4 x 4 object
        >>> props = torch.zeros(3, 6, 6, dtype=torch.bool)  # 3 ranked proposals
        >>> props[0] = True  # the whole image
        >>> props[1, 1:5, 1:5] = True  # the object itself
        >>> props[2, 1:5, 1:3] = True  # its left half
        >>> best = best_overlaps(proposal_overlaps(props, obj), counts=[1, 2, 10])
        >>> [round(j, 4) for j in best["jaccard"][:, 0].tolist()], best["num_proposals"].tolist()
        ([0.4444, 1.0, 1.0], [1, 2, 3])
        >>> best["fp"].tolist()  # of the best proposal: the whole image, then the object itself
        [[20], [0], [0]]
    """
    values, best, num = _running_best(overlaps.jaccard, counts)
    cols = torch.arange(values.shape[1], device=values.device)[None].expand_as(best)
    return {
        "jaccard": values,
        "inter": overlaps.inter[best, cols],
        "fp": overlaps.fp[best, cols],
        "fn": overlaps.fn[best, cols],
        "num_proposals": num,
    }


def best_boundary_f(
    counts_f: ProposalBoundaryCounts, counts: Sequence[int] | Tensor = MCG_PROPOSAL_COUNTS
) -> dict[str, Tensor]:
    """Each object's best proposal by morphological boundary F among the first ``min(N, P)`` (ties: the first best).

    Returns:
        ``f``, ``precision``, ``recall`` (L, K) float64 of the best proposal, ``num_proposals`` (L,) int64.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import best_boundary_f, proposal_boundary_overlaps
        >>> obj = torch.zeros(1, 6, 6, dtype=torch.bool)
        >>> obj[0, 1:5, 1:5] = True  # one 4 x 4 object
        >>> props = torch.zeros(3, 6, 6, dtype=torch.bool)  # 3 ranked proposals
        >>> props[0] = True  # the whole image
        >>> props[1, 1:5, 1:5] = True  # the object itself
        >>> props[2, 1:5, 1:3] = True  # its left half
        >>> best = best_boundary_f(proposal_boundary_overlaps(props, obj, bound_th=1), counts=[1, 2, 10])
        >>> best["f"].tolist(), best["recall"].tolist(), best["num_proposals"].tolist()
        ([[0.0], [1.0], [1.0]], [[0.0], [1.0], [1.0]], [1, 2, 3])
    """
    precision, recall, f = counts_f.precision_recall_f()
    values, best, num = _running_best(f, counts)
    cols = torch.arange(values.shape[1], device=values.device)[None].expand_as(best)
    return {"f": values, "precision": precision[best, cols], "recall": recall[best, cols], "num_proposals": num}


def _curves(best: Tensor, prefix: str, value: str) -> dict[str, Tensor]:
    """Mean, median, recall at the strict thresholds and average recall of (L, O) best values."""
    if best.ndim != 2 or best.shape[1] == 0:
        raise ValueError(f"Expected (L, O) best overlaps with O >= 1 objects, but got {tuple(best.shape)}.")
    out = {
        f"{prefix}{value}_object": best.mean(1),
        # the median of an even count is the mean of the middle two (MATLAB / numpy), not torch's lower one
        f"{prefix}{value}_median": torch.quantile(best, 0.5, dim=1),
    }
    for t in RECALL_THRESHOLDS:
        out[f"{prefix}recall_{round(t * 100)}"] = (best > t).double().mean(1)
    levels = torch.tensor(AR_THRESHOLDS, dtype=best.dtype, device=best.device)
    out[f"{prefix}average_recall"] = (best[..., None] >= levels).double().mean(dim=(1, 2))
    return out


def _mean_per_image(num_proposals: Tensor) -> Tensor:
    return num_proposals.double().mean(-1) if num_proposals.ndim == 2 else num_proposals.double()


def proposal_summary(
    best_jaccard: Tensor,
    num_proposals: Tensor,
    *,
    inter: Tensor | None = None,
    fp: Tensor | None = None,
    fn: Tensor | None = None,
    classes: Tensor | None = None,
) -> dict[str, Tensor]:
    """Curves vs N from the best overlaps (Jaccard) of all objects of a dataset.

    Args:
        best_jaccard: (L, O) best J of every object (all images' objects concatenated).
        num_proposals: (L, I) ``min(N, P)`` of every image (or (L,) already averaged).
        inter, fp, fn, classes: (L, O) counts of the best proposals and (O,) class ids, for J_c.

    Returns:
        dict of (L,) float64: ``num_proposals`` (mean per image), ``jaccard_object`` (mean), ``jaccard_median``,
        ``recall_50``, ``recall_70``, ``recall_85`` (strict >), ``average_recall``; ``jaccard_class`` with classes.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import proposal_summary
        >>> best = torch.tensor([[0.3, 0.6, 0.8, 0.9], [0.6, 0.75, 0.9, 1.0]], dtype=torch.float64)  # (L=2, O=4)
        >>> num = torch.tensor([[10, 10], [20, 15]])  # (L, I=2 images): min(N, P) per image
        >>> out = proposal_summary(best, num)
        >>> out["num_proposals"].tolist(), [round(v, 4) for v in out["jaccard_object"].tolist()]
        ([10.0, 17.5], [0.65, 0.8125])
        >>> out["recall_50"].tolist(), out["recall_70"].tolist()  # J > 0.5, J > 0.7
        ([0.75, 1.0], [0.5, 0.75])
    """
    out = {"num_proposals": _mean_per_image(num_proposals), **_curves(best_jaccard, "", "jaccard")}
    if classes is not None:
        if inter is None or fp is None or fn is None:
            raise ValueError("`classes` needs the best proposals' `inter`, `fp` and `fn` counts.")
        ids, inverse = torch.unique(classes, return_inverse=True)
        sums = [
            torch.zeros(best_jaccard.shape[0], ids.numel(), dtype=torch.float64, device=best_jaccard.device).index_add_(
                1, inverse, v.double()
            )
            for v in (inter, fp, fn)
        ]
        den = sums[0] + sums[1] + sums[2]
        out["jaccard_class"] = torch.where(den > 0, sums[0] / den.clamp_min(1), 0.0).mean(1)
    return out


def proposal_boundary_summary(
    best_f: Tensor, num_proposals: Tensor, *, classes: Tensor | None = None
) -> dict[str, Tensor]:
    """Curves vs N from the best morphological boundary F of all objects: the Jaccard summaries with F in place of J.

    Returns:
        dict of (L,) float64: ``num_proposals``, ``boundary_f_object`` (mean), ``boundary_f_median``,
        ``boundary_recall_50/70/85`` (F > t), ``boundary_average_recall`` (mean over t in 0.5:0.05:0.95 of F >= t);
        with classes ``boundary_f_class``, the mean over classes of each class's mean best F (F is no ratio of
        pooled counts, unlike J_c).

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import proposal_boundary_summary
        >>> best_f = torch.tensor([[0.2, 0.6, 0.9, 0.9]], dtype=torch.float64)  # (L=1, O=4)
        >>> out = proposal_boundary_summary(best_f, torch.tensor([[100, 80]]), classes=torch.tensor([0, 1, 1, 1]))
        >>> # the mean over objects 2.6 / 4; over classes (0.2 + 0.8) / 2
        >>> round(float(out["boundary_f_object"][0]), 4), round(float(out["boundary_f_class"][0]), 4)
        (0.65, 0.5)
        >>> out["boundary_recall_50"].tolist(), out["num_proposals"].tolist()
        ([0.75], [90.0])
    """
    out = {"num_proposals": _mean_per_image(num_proposals), **_curves(best_f, "boundary_", "f")}
    if classes is not None:
        ids, inverse = torch.unique(classes, return_inverse=True)
        sums = torch.zeros(best_f.shape[0], ids.numel(), dtype=torch.float64, device=best_f.device)
        sums.index_add_(1, inverse, best_f.double())
        sizes = torch.bincount(inverse, minlength=ids.numel()).double()
        out["boundary_f_class"] = (sums / sizes).mean(1)
    return out
