"""Morphological boundary F of binary masks (DAVIS ``f_boundary.m``, Perazzi, Pont-Tuset et al., CVPR 2016).

The fast approximation of the boundary benchmark used for object masks (video object segmentation, proposals): the
boundaries of both masks (``seg2bmap``, not thinned) are matched by dilation with a disk instead of a one-to-one
correspondence::

    r = ceil(bound_th * sqrt(H^2 + W^2))     (bound_th < 1; else r = bound_th pixels)
    P = |fg_b & dilate(gt_b, disk r)| / |fg_b|,   R = |gt_b & dilate(fg_b, disk r)| / |gt_b|,   F = 2PR / (P + R)

with ``disk = {(u, v): u^2 + v^2 <= r^2}`` and the reference's edge cases: no predicted boundary but a GT boundary ->
(P, R) = (1, 0); a predicted boundary but none in the GT -> (0, 1); neither -> (1, 1); F = 0 when P + R = 0.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ..._checks import (
    Backend,
    ImageBatch,
    as_binary_mask,
    as_image_list,
    check_image_stack,
    check_positive_float,
    check_tensor,
    check_tolerance,
)
from ...ops.morphology import dilate_disk, seg2bmap

__all__ = ["boundary_radius", "morphological_boundary_f"]


def boundary_radius(bound_th: float, height: int, width: int) -> float:
    """DAVIS tolerance in pixels: ``ceil(bound_th * diagonal)`` for ``bound_th < 1``, else ``bound_th``.

    Example:
        >>> from segmetrics_torch.functional import boundary_radius
        >>> boundary_radius(0.008, 480, 854)  # ceil(0.008 * 979.65): DAVIS' 480p frames
        8.0
        >>> boundary_radius(3, 480, 854)  # >= 1: pixels
        3.0
    """
    pixels = float(bound_th) if bound_th >= 1 else float(math.ceil(bound_th * math.hypot(height, width)))
    return check_tolerance(pixels, bound_th, "bound_th", height, width)


def _stack_f(preds: Tensor, target: Tensor, bound_th: float, backend: Backend) -> tuple[Tensor, Tensor, Tensor]:
    h, w = preds.shape[-2:]
    radius = boundary_radius(bound_th, h, w)
    fg_b = seg2bmap(preds)
    gt_b = seg2bmap(target)
    fg_dil = dilate_disk(fg_b, radius, backend=backend)
    gt_dil = dilate_disk(gt_b, radius, backend=backend)
    return boundary_f_from_counts(
        (fg_b & gt_dil).sum(dim=(-2, -1)),
        fg_b.sum(dim=(-2, -1)),
        (gt_b & fg_dil).sum(dim=(-2, -1)),
        gt_b.sum(dim=(-2, -1)),
    )


def boundary_f_from_counts(
    fg_match: Tensor, n_fg: Tensor, gt_match: Tensor, n_gt: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """``(F, precision, recall)`` in float64 from matched and total boundary pixel counts (broadcast), with DAVIS'
    cases: no predicted boundary but a GT one -> (P, R) = (1, 0); a predicted one but none in the GT -> (0, 1);
    neither -> (1, 1); F = 0 when P + R = 0."""
    counts = torch.broadcast_tensors(fg_match, n_fg, gt_match, n_gt)
    fg_match, n_fg, gt_match, n_gt = (x.to(torch.float64) for x in counts)
    no_fg, no_gt = n_fg == 0, n_gt == 0
    precision = torch.where(no_fg, 1.0, fg_match / n_fg.clamp_min(1))
    precision = torch.where(~no_fg & no_gt, 0.0, precision)
    recall = torch.where(no_gt, 1.0, gt_match / n_gt.clamp_min(1))
    recall = torch.where(no_fg & ~no_gt, 0.0, recall)
    s = precision + recall
    f = torch.where(s == 0, 0.0, 2 * precision * recall / torch.where(s == 0, 1.0, s))
    return f, precision, recall


def morphological_boundary_f(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    bound_th: float = 0.008,
    backend: Backend = "auto",
    validate_args: bool = True,
) -> dict[str, Tensor]:
    """Per-image boundary F, precision and recall of binary masks, as DAVIS ``f_boundary`` (see module doc).

    Args:
        preds: predicted masks (B, H, W) / (B, 1, H, W), or a list of (H, W) masks; bool or {0, 1}.
        target: ground-truth masks of the same shapes.
        bound_th: tolerance as a fraction of the image diagonal (< 1; DAVIS 0.008) or in pixels (>= 1).
        backend: distance-transform backend of the dilation ("auto", "torch", "numba").
        validate_args: check that non-bool masks hold only 0 and 1 (synchronises a CUDA device).

    Returns:
        ``{"f", "precision", "recall"}``: (B,) float64 tensors on the input's device.

    Example:
        >>> gt = torch.zeros(1, 40, 40, dtype=torch.bool); gt[0, 10:30, 10:30] = True
        >>> pred = torch.zeros(1, 40, 40, dtype=torch.bool); pred[0, 11:31, 10:30] = True
        >>> morphological_boundary_f(pred, gt)["f"]
        tensor([1.], dtype=torch.float64)
    """
    check_positive_float(bound_th, "bound_th")
    pred_list = as_image_list(preds, "preds")
    target_list = as_image_list(target, "target")
    if (pred_list is None) != (target_list is None):
        raise TypeError("Expected `preds` and `target` to be both tensors or both lists of tensors.")
    if pred_list is None:
        pred_list = list(check_image_stack(check_tensor(preds, "preds"), "preds"))
        target_list = list(check_image_stack(check_tensor(target, "target"), "target"))
    assert target_list is not None
    if len(pred_list) != len(target_list):
        raise ValueError(
            f"Expected as many `preds` as `target` images, but got {len(pred_list)} and {len(target_list)}."
        )
    for i, (p, t) in enumerate(zip(pred_list, target_list, strict=True)):
        if p.shape != t.shape:
            raise ValueError(
                f"Expected `preds[{i}]` and `target[{i}]` of the same shape, but got {tuple(p.shape)} and "
                f"{tuple(t.shape)}."
            )
    preds_b = [as_binary_mask(p, f"preds[{i}]", validate_args) for i, p in enumerate(pred_list)]
    target_b = [as_binary_mask(t, f"target[{i}]", validate_args) for i, t in enumerate(target_list)]
    # images of one size are evaluated together
    groups: dict[tuple[int, int], list[int]] = {}
    for i, p in enumerate(preds_b):
        groups.setdefault((p.shape[0], p.shape[1]), []).append(i)
    results: dict[int, tuple[Tensor, Tensor, Tensor]] = {}
    for idx in groups.values():
        f, p, r = _stack_f(
            torch.stack([preds_b[i] for i in idx]), torch.stack([target_b[i] for i in idx]), bound_th, backend
        )
        for k, i in enumerate(idx):
            results[i] = (f[k], p[k], r[k])
    ordered = [results[i] for i in range(len(preds_b))]
    f, p, r = (torch.stack([res[j] for res in ordered]) for j in range(3))
    return {"f": f, "precision": p, "recall": r}
