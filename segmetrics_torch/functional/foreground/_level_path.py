"""Confusion counts of uint8 maps from raw-level histograms (CPU fast path of the threshold / size-invariant measures).

A uint8 prediction has at most 256 levels ``v`` and the prepared map is a function of the level only:
``p(v) = v / 255``, stretched ``(p - lo) / (hi - lo)`` with ``lo``/``hi`` the values of the image's smallest and
largest level (the operations of ``_prepare.prepare_maps``, applied to the 256 levels instead of every pixel, so
``p(v)`` is bit-identical). One compiled pass builds the (2, 256) histogram of (GT, level) per image (and per target
box); every binary map of the measures -- ``trunc(255 p) >= 255 - i``, ``p > 0.5``, ``p >= thr`` -- is a set of
levels, so its counts are sums of histogram entries.

The adaptive threshold ``min(2 mean(p), 1)`` needs numpy's rounding of ``mean`` only when a present level lies on
the threshold: the mean is first taken from the histogram; for the (rare) images with a level within 1e-9 of that
threshold the exact numpy mean of the prepared map is computed (PySOD's ``pred.mean()``, pairwise summation), so
ties are decided exactly as the reference decides them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor

from ...ops.foreground_levels import level_histograms
from ._prepare import prepare_maps

_LEVELS = torch.arange(256, dtype=torch.float64)
_TIE = 1e-9


def target_threshold(target: Tensor) -> tuple[np.ndarray, int]:
    """The target as a uint8 array and the level above which it is foreground (``> 128`` for uint8, else ``> 0``)."""
    if target.dtype == torch.uint8:
        return target.contiguous().numpy(), 128
    return (target > 0.5 if target.dtype != torch.bool else target).to(torch.uint8).contiguous().numpy(), 0


def binary_target(target: Tensor) -> Tensor:
    """``_prepare.binarize_target`` of a CPU target by numpy (torch's two-thread comparison of a strided or large
    tensor cost more than the whole histogram pass on the shared test machine)."""
    t_arr, tthr = target_threshold(target)
    return torch.from_numpy(t_arr > tthr)


def numpy_levels(raw: np.ndarray, normalize: bool) -> np.ndarray:
    """(B, 256) float64 ``p(v)`` of a (B, H, W) uint8 array with numpy: the operations of ``prepare_maps`` applied to
    the 256 levels (``v / 255``, then the stretch by the image's extreme levels), so ``p(v)`` is bit-identical."""
    flat = raw.reshape(raw.shape[0], -1)
    lo = flat.min(axis=1).astype(np.float64)[:, None] / 255
    hi = flat.max(axis=1).astype(np.float64)[:, None] / 255
    levels = np.broadcast_to(np.arange(256, dtype=np.float64) / 255, (raw.shape[0], 256))
    if not normalize:
        return levels
    stretch = hi != lo
    return (levels - np.where(stretch, lo, 0.0)) / np.where(stretch, hi - lo, 1.0)


def level_values(image_hist: Tensor, normalize: bool) -> Tensor:
    """(B, 256) float64 ``p(v)`` of every level from the (B, 2, 256) level histograms (present levels define the
    stretch)."""
    present = image_hist.sum(dim=1) > 0
    idx = torch.arange(256).expand_as(present)
    lo = torch.where(present, idx, 256).amin(dim=1, keepdim=True).to(torch.float64) / 255
    hi = torch.where(present, idx, -1).amax(dim=1, keepdim=True).to(torch.float64) / 255
    p = (_LEVELS / 255).expand(present.shape[0], 256)
    if not normalize:
        return p.clone()
    stretch = hi != lo
    return (p - torch.where(stretch, lo, 0.0)) / torch.where(stretch, hi - lo, 1.0)


def curve_counts(hist: Tensor, p: Tensor) -> tuple[Tensor, Tensor]:
    """``(tp, pp)`` (K, 256) int64 of ``trunc(255 p) >= 255 - i`` from level histograms (K, 2, 256)."""
    bins = (p * 255).clamp(0, 255).to(torch.int64)[:, None].expand_as(hist)  # absent levels may lie outside [0, 1]
    binned = torch.zeros_like(hist).scatter_add_(2, bins, hist)
    cum = binned.flip(-1).cumsum(-1)
    return cum[:, 1], cum[:, 1] + cum[:, 0]


def set_counts(hist: Tensor, chosen: Tensor) -> tuple[Tensor, Tensor]:
    """``(tp, pp)`` (K,) int64 of the binary map made of the ``chosen`` (K, 256) levels."""
    sel = hist * chosen[:, None].to(hist.dtype)
    return sel[:, 1].sum(dim=1), sel.sum(dim=(1, 2))


def adaptive_thresholds(hist: Tensor, p: Tensor, numel: int, exact_mean: Callable[[int], float]) -> Tensor:
    """``min(2 mean, 1)`` per row; rows with a present level within 1e-9 of it get ``exact_mean(row)`` (numpy)."""
    total = (hist.sum(dim=1).to(torch.float64) * p).sum(dim=1)
    thr = torch.clamp(2 * (total / numel), max=1.0)
    present = hist.sum(dim=1) > 0
    near = (present & ((p - thr[:, None]).abs() <= _TIE)).any(dim=1)
    for row in near.nonzero().reshape(-1).tolist():
        thr[row] = min(2 * exact_mean(row), 1.0)
    return thr


def image_counts(
    preds: Tensor, target: Tensor, normalize: bool, modes: tuple[str, ...]
) -> dict[str, tuple[Tensor, Tensor, Tensor]]:
    """``(tp, pp, pos)`` per mode of a uint8 CPU block (whole images), as ``threshold_measures.block_counts``."""

    t_arr, tthr = target_threshold(target)
    starts = np.zeros(preds.shape[0] + 1, np.int64)
    hist, _, _ = level_histograms(preds.contiguous().numpy(), t_arr, tthr, starts, np.zeros((0, 4), np.int64))
    hist = torch.from_numpy(hist)
    p = level_values(hist, normalize)
    pos = hist[:, 1].sum(dim=1)
    numel = preds.shape[1] * preds.shape[2]
    out: dict[str, tuple[Tensor, Tensor, Tensor]] = {}
    if "dynamic" in modes:
        out["dynamic"] = (*curve_counts(hist, p), pos)
    if "binary" in modes:
        out["binary"] = (*set_counts(hist, p > 0.5), pos)
    if "adaptive" in modes:

        def exact_mean(row: int) -> float:
            return float(prepare_maps(preds[row : row + 1], target[row : row + 1], normalize)[0].numpy().mean())

        thr = adaptive_thresholds(hist, p, numel, exact_mean)
        out["adaptive"] = (*set_counts(hist, p >= thr[:, None]), pos)
    return out


def box_histograms(
    preds: Tensor, target: Tensor, image: Tensor, boxes: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Level histograms per image, per target box and outside all boxes; targets reordered by image.

    Returns ``(image_hist (B, 2, 256), box_hist (K, 2, 256), outside_hist (B, 2, 256), order (K,))``: ``box_hist[j]``
    belongs to target ``order[j]`` of the given ``image``/``boxes``.
    """

    order = torch.argsort(image, stable=True)
    starts = torch.zeros(preds.shape[0] + 1, dtype=torch.int64)
    starts[1:] = torch.bincount(image, minlength=preds.shape[0]).cumsum(0)
    t_arr, tthr = target_threshold(target)
    hist, box, outside = level_histograms(
        preds.contiguous().numpy(), t_arr, tthr, starts.numpy(), boxes.index_select(0, order).contiguous().numpy()
    )
    return torch.from_numpy(hist), torch.from_numpy(box), torch.from_numpy(outside), order


def confusion_counts(tp: Tensor, pp: Tensor, pos: Tensor, numel: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``(tp, fp, tn, fn)`` of targets from their true positives ``tp`` and predicted positives ``pp`` ((K,), or
    (K, T) per threshold), their ground-truth positives ``pos`` (K,) and the image's pixel count."""
    posb = pos if tp.ndim == 1 else pos[:, None]
    fp = pp - tp
    fn = posb - tp
    return tp, fp, numel - posb - fp, fn


def target_counts(
    preds: Tensor, target: Tensor, normalize: bool, image: Tensor, boxes: Tensor, modes: tuple[str, ...]
) -> dict[str, tuple]:
    """int64 ``(tp, fp, tn, fn)`` per mode of every target's masked map ``p * box``, ``g & box`` (whole image),
    in the order of ``image``/``boxes`` -- the size-invariant measures' counts (``size_invariance._target_counts``)."""
    hist, box, _, order = box_histograms(preds, target, image, boxes)
    img = image.index_select(0, order)
    p = level_values(hist, normalize).index_select(0, img)
    numel = preds.shape[1] * preds.shape[2]
    area = box.sum(dim=(1, 2))
    outside = numel - area  # p = 0, g = 0 there
    pos = box[:, 1].sum(dim=1)
    out: dict[str, tuple] = {}

    def split(tp: Tensor, pp: Tensor) -> tuple:
        return confusion_counts(tp, pp, pos, numel)

    if "dynamic" in modes:
        tp, pp = curve_counts(box, p)
        pp = pp.clone()
        pp[:, -1] += outside  # the last threshold (>= 0) keeps the zeros outside the box
        out["dynamic"] = split(tp, pp)
    if "binary" in modes:
        out["binary"] = split(*set_counts(box, p > 0.5))
    if "adaptive" in modes:
        boxes_sorted = boxes.index_select(0, order)

        def exact_mean(row: int) -> float:
            b = int(img[row])
            y0, y1, x0, x1 = (int(v) for v in boxes_sorted[row])
            pb = prepare_maps(preds[b : b + 1], target[b : b + 1], normalize)[0][0].numpy()
            masked = np.zeros_like(pb)
            masked[y0 : y1 + 1, x0 : x1 + 1] = pb[y0 : y1 + 1, x0 : x1 + 1]
            return float(masked.mean())

        thr = adaptive_thresholds(box, p, numel, exact_mean)
        tp, pp = set_counts(box, p >= thr[:, None])
        out["adaptive"] = split(tp, pp + torch.where(thr <= 0, outside, 0))
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(order.numel())
    return {mode: tuple(c.index_select(0, inverse) for c in counts) for mode, counts in out.items()}


def si_mae_parts(
    preds: Tensor, target: Tensor, normalize: bool, image: Tensor, boxes: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """``(err sum per box (K,), area per box (K,), background err sum (B,), background area (B,), plain MAE (B,))``
    of uint8 maps, boxes in the order of ``image``/``boxes``."""
    hist, box, outside, order = box_histograms(preds, target, image, boxes)
    p = level_values(hist, normalize)

    def err(h: Tensor, pv: Tensor) -> Tensor:
        return (h[:, 0].to(torch.float64) * pv).sum(dim=1) + (h[:, 1].to(torch.float64) * (1 - pv)).sum(dim=1)

    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(order.numel())
    box_err = err(box, p.index_select(0, image.index_select(0, order))).index_select(0, inverse)
    box_area = box.sum(dim=(1, 2)).index_select(0, inverse).to(torch.float64)
    numel = preds.shape[1] * preds.shape[2]
    return box_err, box_area, err(outside, p), outside.sum(dim=(1, 2)).to(torch.float64), err(hist, p) / numel
