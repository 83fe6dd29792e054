"""The BSDS boundary benchmark (Martin, Fowlkes & Malik, TPAMI 2004; Arbelaez et al., TPAMI 2011), batched.

Per image and threshold ``t`` (BSR ``evaluation_bdry_image.m``)::

    machine = thin(pb >= t)                       # soft map; or a given binary map per level ("stack")
    for each annotator g:  m1, m2 = correspond(machine, B_g, max_dist)
                           sumR += |B_g|;  cntR += |m2 matched|;  acc |= m1 matched
    sumP = |machine|;  cntP = |acc|

Recall counts are summed over annotators (every annotator's boundary pixel counts once); a machine pixel is a true
positive if it matches any annotator. The correspondence is the deterministic maximum matching of
:mod:`segmetrics_torch.ops.matching` (the official CSA solver is randomised); annotator boundaries are used as
given (BSDS ``Boundaries`` = ``thin(seg2bmap(Segmentation))``, see :func:`annotator_boundaries`).

Input formats (``input_format``):

* ``"soft"``: (B, H, W) maps; floating in [0, 1] (compared in float64) or uint8 read as ``value / 255`` in float64,
  MATLAB's ``double(imread(f)) / 255``. Thresholds: an int K gives MATLAB's
  ``linspace(1/(K+1), 1 - 1/(K+1), K)`` (default 99 -> 0.01 ... 0.99), or pass the values.
* ``"ucm2"``: (B, 2H+1, 2W+1) double-size ultrametric contour maps in [0, 1]; the soft map is
  ``ucm2[..., 2::2, 2::2]`` (BSR ``ucm2(3:2:end, 3:2:end)``).
* ``"stack"``: (B, K, H, W) binary machine maps, one per level, e.g. the boundaries of K segmentations
  (``seg2bmap``, equal to BSR's ``seg2bdry(seg, 'imageSize')``); an int K labels the levels 1..K as BSR does.

Edge NMS (``nms=True``, soft maps only): each soft map first goes through
:func:`~segmetrics_torch.ops.edge_nms.edge_nms` (Dollar's ``edgesNms``: ``convTri(E, 1)``, orientation from
``convTri(E, 4)``, r = 1, s = 5, m = 1.01), then is thresholded and thinned as above: pyEdgeEval's
``apply_nms=True`` order (NMS, then ``pred >= t``, then thinning), the protocol of HED / RCF / BDCN / PiDiNet
outputs. A ucm2 or a stack of binary maps is already a set of one-pixel contours (BSDS evaluates gPb-owt-ucm
without NMS), so ``nms=True`` with those formats is a ``ValueError``.

Lists of differently sized images are accepted (padded internally with zeros, which changes nothing: no threshold
is <= 0 and thinning treats the outside as off). Target: (B, A, H, W) or a list of (A, H, W) annotator boundary
maps, bool or {0, 1}.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple, get_args

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor

from ..._checks import (
    Backend,
    ImageBatch,
    as_binary_mask,
    check_bool,
    check_choice,
    check_positive_float,
    check_tensor,
    tensor_items,
)
from ..._constants import MAX_THRESHOLDS
from ...ops.edge_nms import edge_nms
from ...ops.matching import correspondence_counts
from ...ops.morphology import resolve_backend, seg2bmap, thin as thin_maps
from ...ops.unit_maps import as_ucm2, as_unit_map
from .summary import (
    UniqueOccurrence,
    best_f_interpolated,
    boundary_summary,
    matlab_linspace,
    ois_counts,
    precision_recall_f,
)

__all__ = [
    "INPUT_FORMATS",
    "BoundaryCounts",
    "InputFormat",
    "annotator_boundaries",
    "boundary_pr",
    "boundary_pr_counts",
    "default_thresholds",
    "segmentation_boundaries",
    "summarize_counts",
]

#: the machine maps of the boundary benchmark: soft maps, ucm2 grids, or stacks of binary maps per level
InputFormat = Literal["soft", "ucm2", "stack"]
INPUT_FORMATS: tuple[str, ...] = get_args(InputFormat)
# Bound on the annotator index grids the kernel builds per call (4 bytes per padded pixel per annotator).
_GRID_BYTES = 256 * 2**20


class BoundaryCounts(NamedTuple):
    """Per image and level counts of the boundary benchmark; each (B, K) int64, plus the (K,) level values."""

    cnt_r: Tensor
    sum_r: Tensor
    cnt_p: Tensor
    sum_p: Tensor
    thresholds: Tensor


def default_thresholds(
    thresholds: int | Sequence[float] | Tensor, input_format: InputFormat = "soft", *, increasing: bool = True
) -> Tensor:
    """Level values as float64: MATLAB ``linspace(1/(K+1), 1-1/(K+1), K)`` for an int K (``1..K`` for "stack").

    Given values must lie in [0, 1] for soft maps and ucm2 (a ``ValueError`` names ``thresholds``; pyEdgeEval accepts
    any value, but outside the maps' range a threshold keeps every pixel or none, and the usual cause is a 0..255
    threshold for a uint8 map, which is read / 255); "stack" levels are labels, any finite values. Either way at
    most :data:`MAX_THRESHOLDS` of them, in strictly increasing order where a curve is read from them (``increasing``:
    ODS interpolates between neighbours and AP integrates along them; counts alone take any order).

    Example:
        >>> from segmetrics_torch.functional import default_thresholds
        >>> default_thresholds(3).tolist()  # linspace(1/4, 3/4, 3)
        [0.25, 0.5, 0.75]
        >>> t = default_thresholds(99)  # BSR's default: 0.01 ... 0.99
        >>> t.numel(), round(float(t[0]), 4), round(float(t[-1]), 4)
        (99, 0.01, 0.99)
        >>> default_thresholds(3, "stack").tolist()  # level labels 1..K
        [1.0, 2.0, 3.0]
    """
    if isinstance(thresholds, bool):
        raise TypeError(f"Expected `thresholds` to be a positive int or a 1-D sequence, but got {thresholds!r}.")
    if isinstance(thresholds, int):
        if not 1 <= thresholds <= MAX_THRESHOLDS:
            raise ValueError(
                f"Expected `thresholds` to be a positive int (at most {MAX_THRESHOLDS}), but got {thresholds}."
            )
        if input_format == "stack":
            return torch.arange(1, thresholds + 1, dtype=torch.float64)
        return matlab_linspace(1 / (thresholds + 1), 1 - 1 / (thresholds + 1), thresholds)
    try:
        t = torch.as_tensor(thresholds, dtype=torch.float64).cpu()
    except (TypeError, ValueError, RuntimeError) as err:  # a string, None, ragged lists: not numbers
        raise TypeError(
            f"Expected `thresholds` to be a positive int or a 1-D sequence of numbers, but got {thresholds!r}."
        ) from err
    if t.ndim != 1 or t.numel() == 0 or not bool(torch.isfinite(t).all()):
        raise ValueError(f"Expected `thresholds` to be a non-empty 1-D sequence of finite values, but got {t}.")
    low, high = float(t.min()), float(t.max())
    if input_format != "stack" and (low < 0 or high > 1):
        # a threshold outside the maps' range keeps every pixel or none: its P/R point means nothing, and the
        # likely mistake is a 0..255 threshold for a uint8 map, which is scaled to [0, 1] (read / 255)
        hint = (
            f"; thresholds are fractions of 255 for a uint8 map (e.g. {high:g} -> {high / 255:.4f})"
            if 1 < high <= 255 and low >= 0
            else ""
        )
        raise ValueError(
            f"Expected `thresholds` in [0, 1], the range of the maps (soft maps and ucm2 are compared as values in "
            f"[0, 1]), but got values from {low:g} to {high:g}{hint}."
        )
    if t.numel() > MAX_THRESHOLDS:
        raise ValueError(f"Expected at most {MAX_THRESHOLDS} `thresholds`, but got {t.numel()}.")
    if increasing and t.numel() > 1 and not bool((t[1:] > t[:-1]).all()):
        # the curves are read in threshold order (ODS interpolates between neighbours, AP integrates along them):
        # unsorted or repeated values moved ODS and gave AP 0.0
        raise ValueError(f"Expected `thresholds` in strictly increasing order, but got {t.tolist()[:20]}; sort them.")
    return t


def check_input_format(input_format: object) -> InputFormat:
    return check_choice(input_format, "input_format", get_args(InputFormat))


def check_nms(nms: object, input_format: str) -> None:
    """``nms`` must be a bool, and True only for soft maps (ucm2 and binary stacks are one-pixel contours already)."""
    check_bool(nms, "nms")
    if nms and input_format != "soft":
        raise ValueError(
            f"Expected `nms=False` with input_format={input_format!r}: edge NMS thins soft detector maps "
            "(input_format='soft'); a ucm2 or a stack of binary maps is already one-pixel contours (BSDS evaluates "
            "them without NMS)."
        )


def _as_list(x: object, name: str, ndim: int) -> list[Tensor]:
    """A (B, ...) tensor or a list of per-image tensors -> list of per-image tensors with ``ndim`` dims."""
    if isinstance(x, Tensor):
        if x.ndim != ndim + 1:
            raise ValueError(
                f"Expected `{name}` to have {ndim + 1} dims (batch first) or to be a list of {ndim}-D tensors, "
                f"but got shape {tuple(x.shape)}."
            )
        if x.shape[0] == 0:
            raise ValueError(f"Expected `{name}` to hold at least one image, but got an empty batch.")
        x = list(check_tensor(x, name).unbind(0))
    else:
        x = tensor_items(x, name)
    items = []
    for i, item in enumerate(x):
        if item.ndim != ndim:
            raise ValueError(f"Expected `{name}[{i}]` to have {ndim} dims, but got shape {tuple(item.shape)}.")
        if item.shape[-1] == 0 or item.shape[-2] == 0:
            raise ValueError(f"Expected `{name}[{i}]` to be a non-empty image, but got shape {tuple(item.shape)}.")
        items.append(item)
    return items


def _soft_map(x: Tensor, name: str, input_format: InputFormat, validate_args: bool) -> Tensor:
    if input_format == "ucm2":
        return as_ucm2(x, name, validate_args)[..., 2::2, 2::2]
    return as_unit_map(x, name, validate_args)


def _pad_stack(items: list[Tensor], shape: tuple[int, ...], dtype: npt.DTypeLike) -> np.ndarray:
    out = np.zeros((len(items), *shape), dtype)
    for i, x in enumerate(items):
        index: tuple[int | slice, ...] = (i, *(slice(0, s) for s in x.shape))
        out[index] = x.cpu().numpy()
    return out


def annotator_boundaries(segmentations: Tensor, *, backend: Backend = "auto") -> Tensor:
    """Ground-truth boundary maps from annotators' label maps: ``thin(seg2bmap(seg))`` (== BSDS ``Boundaries``).

    Args:
        segmentations: integer (..., H, W) label maps (e.g. (A, H, W) for A annotators).

    Returns:
        bool tensor of the same shape.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import annotator_boundaries
        >>> seg = torch.zeros(1, 4, 6, dtype=torch.int64)
        >>> seg[0, :, 3:] = 1  # two regions side by side
        >>> annotator_boundaries(seg).int()
        tensor([[[0, 0, 1, 0, 0, 0],
                 [0, 0, 1, 0, 0, 0],
                 [0, 0, 1, 0, 0, 0],
                 [0, 0, 1, 0, 0, 0]]], dtype=torch.int32)
    """
    return thin_maps(seg2bmap(segmentations), backend=backend)


def segmentation_boundaries(segmentations: Tensor) -> Tensor:
    """Machine boundary maps of segmentations, one level per segmentation: ``seg2bmap`` (BSR ``seg2bdry``).

    Pass the result with ``input_format="stack"``; BSR's benchmark thins them afterwards (``thin=True``).

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import segmentation_boundaries
        >>> seg = torch.zeros(1, 4, 6, dtype=torch.int64)
        >>> seg[0, :, 3:] = 1
        >>> segmentation_boundaries(seg).int()
        tensor([[[0, 0, 1, 0, 0, 0],
                 [0, 0, 1, 0, 0, 0],
                 [0, 0, 1, 0, 0, 0],
                 [0, 0, 1, 0, 0, 0]]], dtype=torch.int32)
    """
    return seg2bmap(segmentations)


def boundary_pr_counts(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    thresholds: int | Sequence[float] | Tensor = 99,
    max_dist: float = 0.0075,
    thin: bool = True,
    input_format: InputFormat = "soft",
    nms: bool = False,
    backend: Backend = "auto",
    validate_args: bool = True,
) -> BoundaryCounts:
    """Per image and threshold correspondence counts ``cntR, sumR, cntP, sumP`` (BSR ``*_ev1.txt``).

    Args:
        preds: machine maps, see the module doc for ``input_format``.
        target: (B, A, H, W) or list of (A, H, W) annotator boundary maps (bool or {0, 1}), A >= 1.
        thresholds: int K or the K threshold values (level labels for "stack").
        max_dist: tolerance as a fraction of the image diagonal (< 1; BSR 0.0075) or in pixels (>= 1).
        thin: thin the binarised machine maps (BSR ``thinpb``, default on).
        input_format: "soft", "ucm2" or "stack".
        nms: apply edge non-maximum suppression (:func:`~segmetrics_torch.ops.edge_nms.edge_nms`, pyEdgeEval's
            ``apply_nms=True``) to every soft map before thresholding; "soft" input only (``ValueError`` otherwise).
        backend: where thresholding and thinning run: "numba" (compiled CPU kernel), "torch" (on the input's device;
            the CUDA path) or "auto" (numba for CPU input, torch otherwise). The matching always runs in the
            compiled CPU kernel; results do not depend on the backend.
        validate_args: check values (NaN, range, binary targets); these checks synchronise a CUDA device.

    Returns:
        :class:`BoundaryCounts` with (B, K) int64 counts on the input's device and the (K,) float64 levels.

    Edge cases: an image without annotator boundary pixels has ``sumR = 0`` (R = 0 in the summaries); a level
    without machine pixels has ``sumP = 0`` (P = 0).

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import boundary_pr_counts, boundary_pr
        >>> gt = torch.zeros(1, 1, 32, 32, dtype=torch.bool)
        >>> gt[0, 0, 16, 4:28] = True  # one annotator's boundary
        >>> pb = torch.zeros(1, 32, 32)
        >>> pb[0, 17, 4:28] = 0.8  # one pixel off, within the tolerance
        >>> counts = boundary_pr_counts(pb, gt, thresholds=3, max_dist=2)
        >>> counts.thresholds.tolist()
        [0.25, 0.5, 0.75]
        >>> counts.cnt_r.tolist(), counts.sum_r.tolist(), counts.cnt_p.tolist(), counts.sum_p.tolist()
        ([[24, 24, 24]], [[24, 24, 24]], [[24, 24, 24]], [[24, 24, 24]])
    """
    check_input_format(input_format)
    check_positive_float(max_dist, "max_dist")
    check_bool(thin, "thin")
    check_bool(validate_args, "validate_args")
    check_nms(nms, input_format)
    levels = default_thresholds(thresholds, input_format, increasing=False)  # counts: any order
    pred_list = _as_list(preds, "preds", 3 if input_format == "stack" else 2)
    target_list = _as_list(target, "target", 3)
    if len(pred_list) != len(target_list):
        raise ValueError(
            f"Expected `preds` and `target` to hold the same number of images, but got {len(pred_list)} and "
            f"{len(target_list)}."
        )
    device = pred_list[0].device
    backend = resolve_backend(backend, device)

    gts: list[Tensor] = []
    for i, g in enumerate(target_list):
        if g.shape[0] == 0:
            raise ValueError(
                f"Expected at least one annotator in `target[{i}]`, but got an empty stack {tuple(g.shape)}."
            )
        gts.append(as_binary_mask(g, f"target[{i}]", validate_args))

    machine: list[Tensor] = []
    for i, x in enumerate(pred_list):
        name = f"preds[{i}]"
        if input_format == "stack":
            m = as_binary_mask(x, name, validate_args)
            if m.shape[0] != levels.numel():
                raise ValueError(
                    f"Expected `{name}` to hold {levels.numel()} levels (one per threshold), but got {m.shape[0]}."
                )
        else:
            m = _soft_map(x, name, input_format, validate_args)
            if nms:
                m = edge_nms(m.unsqueeze(0), backend=backend, validate_args=False)[0]
        if m.shape[-2:] != gts[i].shape[-2:]:
            raise ValueError(
                f"Expected `{name}` and `target[{i}]` to have the same image size, but got {tuple(m.shape[-2:])} "
                f"and {tuple(gts[i].shape[-2:])}."
            )
        if m.shape[-2] == 0 or m.shape[-1] == 0:
            raise ValueError(f"Expected `{name}` to be a non-empty image, but got shape {tuple(m.shape)}.")
        machine.append(m)

    if backend == "torch":
        # Threshold and thin on the device (all levels of an image at once), then match the thin maps on the host.
        stacked = []
        for m in machine:
            if input_format != "stack":
                m = m.unsqueeze(0) >= levels.to(m.device).view(-1, 1, 1)
            stacked.append(thin_maps(m, backend="torch") if thin else m)
        machine, run_thin, run_levels = stacked, False, None
    else:
        run_thin, run_levels = thin, (None if input_format == "stack" else levels.numpy())

    dims = np.array([m.shape[-2:] for m in machine], np.int64)
    n_gt = np.array([g.shape[0] for g in gts], np.int64)
    out = np.zeros((3, len(machine), levels.numel()), np.int64)
    sum_r = np.zeros(len(machine), np.int64)
    for lo, hi in _chunks(dims, n_gt, max_dist):
        hh, ww = (int(v) for v in dims[lo:hi].max(0))
        gt_np = _pad_stack(gts[lo:hi], (int(n_gt[lo:hi].max()), hh, ww), np.uint8)
        sum_r[lo:hi] = [np.count_nonzero(g) for g in gt_np]  # on the host copy: cheaper than torch sums
        if run_levels is None:
            m_np = _pad_stack(machine[lo:hi], (levels.numel(), hh, ww), np.uint8)
        else:
            m_np = _pad_stack(machine[lo:hi], (hh, ww), np.float64)
        out[:, lo:hi] = correspondence_counts(
            m_np, gt_np, n_gt[lo:hi], dims[lo:hi], max_dist, thresholds=run_levels, thin=run_thin
        )
    counts = torch.from_numpy(out).to(device)
    return BoundaryCounts(
        cnt_r=counts[0],
        sum_r=torch.from_numpy(np.repeat(sum_r[:, None], levels.numel(), axis=1)).to(device),
        cnt_p=counts[1],
        sum_p=counts[2],
        thresholds=levels.to(device),
    )


def _chunks(dims: np.ndarray, n_gt: np.ndarray, max_dist: float) -> list[tuple[int, int]]:
    """Split the batch so that the kernel's annotator index grids stay under ``_GRID_BYTES``."""
    diagonal = float(np.hypot(dims[:, 0], dims[:, 1]).max())
    # a tolerance beyond the diagonal reaches what the diagonal reaches (check_tolerance): 1e300 pixels is no pad
    pad = 2 * int(np.ceil(min(max_dist * diagonal if max_dist < 1 else max_dist, diagonal)))
    per_image = 4 * int(n_gt.max()) * int((dims[:, 0].max() + pad) * (dims[:, 1].max() + pad))
    step = max(1, _GRID_BYTES // per_image)
    return [(lo, min(lo + step, len(dims))) for lo in range(0, len(dims), step)]


def boundary_pr(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    thresholds: int | Sequence[float] | Tensor = 99,
    max_dist: float = 0.0075,
    thin: bool = True,
    input_format: InputFormat = "soft",
    nms: bool = False,
    unique_occurrence: UniqueOccurrence = "last",
    backend: Backend = "auto",
    validate_args: bool = True,
) -> dict[str, object]:
    """The BSDS boundary benchmark over a batch taken as the dataset: ODS, OIS, AP, R50, the PR curve, per image.

    Same arguments as :func:`boundary_pr_counts`; ``unique_occurrence`` as in
    :func:`~segmetrics_torch.functional.boundary.summary.average_precision`.

    Returns:
        ``{"ods": {"threshold", "recall", "precision", "f"}, "ois": {"recall", "precision", "f"}, "ap", "r50",
        "thresholds", "recall", "precision", "f", "per_image": {"threshold", "recall", "precision", "f"}}``;
        ``per_image`` holds (B,) interpolated best values per image (BSR ``eval_bdry_img.txt``).

    Example:
        >>> gt = torch.zeros(1, 1, 32, 32, dtype=torch.bool)
        >>> gt[0, 0, 16, 4:28] = True
        >>> pb = torch.zeros(1, 32, 32)
        >>> pb[0, 17, 4:28] = 0.8
        >>> res = boundary_pr(pb, gt, thresholds=9, max_dist=2)  # 2 pixels
        >>> float(res["ods"]["f"]), float(res["ap"])
        (1.0, 0.505)
    """
    counts = boundary_pr_counts(
        preds,
        target,
        thresholds=default_thresholds(thresholds, check_input_format(input_format)),  # curves: increasing
        max_dist=max_dist,
        thin=thin,
        input_format=input_format,
        nms=nms,
        backend=backend,
        validate_args=validate_args,
    )
    res = summarize_counts(counts, unique_occurrence=unique_occurrence)
    warn_if_r50_nan(res, "boundary_pr", stacklevel=3)
    return res


def warn_if_r50_nan(res: dict[str, Any], who: str, stacklevel: int) -> None:
    """The documented warning of a NaN R50 (precision never reaches 0.5): no NaN leaves the package unannounced."""
    if math.isnan(float(res["r50"])):
        warnings.warn(
            f"{who}: precision never reaches 0.5 on this dataset, so R50 (recall at precision 0.5) is NaN.",
            RuntimeWarning,
            stacklevel=stacklevel + 1,
        )


def summarize_counts(counts: BoundaryCounts, *, unique_occurrence: UniqueOccurrence = "last") -> dict[str, Any]:
    """Dataset summary (and per-image bests) of per-image :class:`BoundaryCounts`, as ``collect_eval_bdry.m``.

    Returns:
        the dict of :func:`~segmetrics_torch.functional.boundary.summary.boundary_summary` plus ``per_image``:
        ``{"threshold", "recall", "precision", "f"}``, (B,) interpolated best values per image.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import BoundaryCounts, default_thresholds, summarize_counts
        >>> counts = BoundaryCounts(  # one image at 3 thresholds: R = 4/4, 3/4, 1/4 and P = 4/8, 3/3, 1/1
        ...     cnt_r=torch.tensor([[4, 3, 1]]),
        ...     sum_r=torch.tensor([[4, 4, 4]]),
        ...     cnt_p=torch.tensor([[4, 3, 1]]),
        ...     sum_p=torch.tensor([[8, 3, 1]]),
        ...     thresholds=default_thresholds(3),
        ... )
        >>> res = summarize_counts(counts)
        >>> [round(f, 4) for f in res["f"].tolist()]  # F = 2PR / (P + R) per threshold
        [0.6667, 0.8571, 0.4]
        >>> round(float(res["ois"]["f"]), 4), round(float(res["per_image"]["f"][0]), 4)
        (0.8571, 0.8571)
    """
    cr, sr, cp, sp, levels = counts
    res = boundary_summary(
        cr.sum(0),
        sr.sum(0),
        cp.sum(0),
        sp.sum(0),
        levels,
        ois_counts(cr, sr, cp, sp),
        unique_occurrence=unique_occurrence,
    )
    r, p, _ = precision_recall_f(cr, sr, cp, sp)
    t, br, bp, bf = best_f_interpolated(levels, r, p)
    res["per_image"] = {"threshold": t, "recall": br, "precision": bp, "f": bf}
    return res
