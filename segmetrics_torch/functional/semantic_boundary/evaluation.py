"""Semantic boundary evaluation: the BSDS boundary benchmark per class, with each protocol's ground-truth rules.

Per image ``b``, class ``k`` and threshold ``t`` (SBD benchmark ``evaluation_bdry_image`` per category; pyEdgeEval
0.2.8 ``evaluate_boundaries_threshold``)::

    pb = preds[b, k];  pb[frame] = 0                        # ignore_border (SEAL on SBD: 5 px)
    if skip_if_nonexistent and not gt.any():  no counts      # the class is absent from the image's GT
    machine = thin(pb >= t)                                  # thin=True
    if kill_internal and gt.any():
        machine &= ~((dist_to_gt > max_dist_px) & (segmentation == k))
    cntR, sumR, cntP, sumP = correspond(machine, gt[b, k], max_dist)

``dist_to_gt`` is the exact Euclidean distance to the nearest GT edge pixel of the class; ``max_dist_px`` is
``max_dist * diagonal`` (``max_dist < 1``) or ``max_dist`` pixels. The correspondence is the package's exact,
deterministic maximum matching (:mod:`segmetrics_torch.ops.matching`, through
:func:`~segmetrics_torch.functional.boundary.boundary_pr_counts`); MATLAB's and pyEdgeEval's CSA matcher is randomised
(its reruns differ by up to ~0.002 in ODS F). Summaries per class are BSR's ``collect_eval_bdry`` (ODS, OIS, AP,
:func:`~segmetrics_torch.functional.boundary.summarize_counts`); the class mean averages ODS F, OIS F and AP over
the evaluated classes (mF, as CASENet / SEAL / pyEdgeEval report).

Class ``k`` of ``preds`` / ``target`` is region ``segmentation == k`` (trainIds: SBD class - 1, Cityscapes trainId;
255 or any other value: no class), the evaluated class itself (MATLAB). pyEdgeEval 0.2.8 on SBD compares its
``_labelIds.png`` map with ``k`` instead, the *previous* class's region; see ``docs/semantic-boundaries.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from ..._checks import Backend, ImageBatch, check_bool, check_positive_float, check_tensor, tensor_items
from ...io import bsr_result_files, open_image, read_gray
from ...ops.distance import distance_transform_edt
from ...ops.matching import max_dist_pixels
from ...ops.morphology import resolve_backend, thin as thin_maps
from ...ops.unit_maps import as_unit_map
from ...readers import reads
from ..boundary.bsds import BoundaryCounts, boundary_pr_counts, default_thresholds, summarize_counts
from ..boundary.summary import UniqueOccurrence, matlab_linspace
from .ground_truth import (
    CITYSCAPES_CLASSES,
    SBD_CLASSES,
    cityscapes_ground_truth,
    resize_nearest,
    sbd_ground_truth,
)
from .protocols import SemanticBoundaryProtocol

__all__ = [
    "PREDICTION_EXTENSIONS",
    "SemanticBoundaryResult",
    "bsr_files",
    "evaluate_semantic_boundary_folders",
    "protocol_thresholds",
    "semantic_boundary_counts",
    "semantic_boundary_pr",
    "summarize_semantic_counts",
]

#: file endings of per-class prediction maps in ``class_XXX/`` (pyEdgeEval's layout; the SBD benchmark writes .bmp)
PREDICTION_EXTENSIONS = (".png", ".bmp")
# Bound on the thresholded maps (bytes, one per pixel per level) that the thin + kill_internal count holds at once.
_STACK_BYTES = 1 << 26


def protocol_thresholds(protocol: SemanticBoundaryProtocol) -> Tensor:
    """The protocol's K threshold values: MATLAB's or numpy's ``linspace(1/(K+1), 1 - 1/(K+1), K)`` (float64).

    Example:
        >>> from segmetrics_torch.functional.semantic_boundary import semantic_boundary_protocol
        >>> levels = protocol_thresholds(semantic_boundary_protocol("matlab"))
        >>> levels.shape, round(float(levels[0]), 4), round(float(levels[-1]), 4)
        (torch.Size([99]), 0.01, 0.99)
        >>> protocol_thresholds(semantic_boundary_protocol("matlab").replace(thresholds=3)).tolist()
        [0.25, 0.5, 0.75]
    """
    k = protocol.thresholds
    if protocol.threshold_rule == "numpy":
        return torch.from_numpy(np.linspace(1.0 / (k + 1), 1.0 - 1.0 / (k + 1), k))
    return matlab_linspace(1 / (k + 1), 1 - 1 / (k + 1), k)


def _items(x: object, name: str, ndim: int) -> list[Tensor]:
    if isinstance(x, Tensor):
        x = check_tensor(x, name)
        if x.ndim != ndim + 1:
            raise ValueError(
                f"Expected `{name}` to have {ndim + 1} dims (batch first) or to be a list of {ndim}-D tensors, but "
                f"got shape {tuple(x.shape)}."
            )
        if x.shape[0] == 0:
            raise ValueError(f"Expected `{name}` to hold at least one image, but got an empty batch.")
        return list(x.unbind(0))
    items = tensor_items(x, name)
    for i, item in enumerate(items):
        if item.ndim != ndim:
            raise ValueError(f"Expected `{name}[{i}]` to have {ndim} dims, but got shape {tuple(item.shape)}.")
    return items


def _frame(h: int, w: int, border: int, device: torch.device) -> Tensor:
    frame = torch.zeros(h, w, dtype=torch.bool, device=device)
    if border:
        frame[:border] = frame[-border:] = True
        frame[:, :border] = frame[:, -border:] = True
    return frame


def semantic_boundary_counts(
    preds: ImageBatch,
    target: ImageBatch,
    segmentation: ImageBatch | None = None,
    *,
    thresholds: int | Sequence[float] | Tensor = 99,
    max_dist: float = 0.02,
    thin: bool = True,
    kill_internal: bool = False,
    skip_if_nonexistent: bool = False,
    ignore_border: int = 0,
    backend: Backend = "auto",
    validate_args: bool = True,
) -> BoundaryCounts:
    """Per image, class and threshold counts ``cntR, sumR, cntP, sumP`` of semantic boundaries (see module doc).

    Args:
        preds: (B, K, H, W) soft maps (floating in [0, 1] or uint8 read as ``/ 255``), or a list of (K, H, W).
        target: (B, K, H, W) GT edges per class (bool or {0, 1}), or a list of (K, H, W) of the same sizes.
        segmentation: (B, H, W) integer class maps (or a list of (H, W)), channel ``k``'s region ``== k``:
            0-based, as the channels of ``preds`` (SBD's 1-based ``GTcls.Segmentation`` minus 1); needed by
            ``kill_internal``.
        thresholds: int K (MATLAB ``linspace``; see :func:`protocol_thresholds` for numpy's) or the values.
        max_dist: tolerance, fraction of the diagonal (< 1) or pixels (>= 1).
        thin: thin the thresholded maps.
        kill_internal: drop machine pixels inside the class region farther than the tolerance from its GT edges.
        skip_if_nonexistent: an image without GT edges of a class adds no counts for it.
        ignore_border: predictions within this many pixels of the image border are set to 0.
        backend: thresholding / thinning / distance backend ("auto", "numba", "torch"); results do not depend on it.
        validate_args: value checks (range, binary targets); they synchronise a CUDA device.

    Returns:
        :class:`~segmetrics_torch.functional.boundary.BoundaryCounts` with (B, K, T) int64 counts and (T,) levels.

    Example:
        >>> gt = torch.zeros(1, 2, 32, 32, dtype=torch.bool); gt[0, 0, 16, 4:28] = True
        >>> pb = torch.zeros(1, 2, 32, 32); pb[0, 0, 17, 4:28] = 0.8; pb[0, 1, 5, 4:28] = 0.8
        >>> c = semantic_boundary_counts(pb, gt, thresholds=[0.5], max_dist=2, skip_if_nonexistent=True)
        >>> c.cnt_r.tolist(), c.sum_r.tolist(), c.sum_p.tolist()
        ([[[24], [0]]], [[[24], [0]]], [[[24], [0]]])
    """
    check_positive_float(max_dist, "max_dist")
    for name, value in (
        ("thin", thin),
        ("kill_internal", kill_internal),
        ("skip_if_nonexistent", skip_if_nonexistent),
        ("validate_args", validate_args),
    ):
        check_bool(value, name)
    if isinstance(ignore_border, bool) or not isinstance(ignore_border, int) or not 0 <= ignore_border < 2**31:
        raise ValueError(f"Expected `ignore_border` to be a non-negative int below 2^31, but got {ignore_border!r}.")
    levels = default_thresholds(thresholds)
    pred_list = _items(preds, "preds", 3)
    target_list = _items(target, "target", 3)
    if len(pred_list) != len(target_list):
        raise ValueError(
            f"Expected `preds` and `target` to hold the same number of images, but got {len(pred_list)} and "
            f"{len(target_list)}."
        )
    seg_list: list[Tensor] | None = None
    if segmentation is not None:
        seg_list = _items(segmentation, "segmentation", 2)
        if len(seg_list) != len(pred_list):
            raise ValueError(
                f"Expected `segmentation` to hold {len(pred_list)} images (as `preds`), but got {len(seg_list)}."
            )
    elif kill_internal:
        raise ValueError(
            "Expected `segmentation` (class maps) with kill_internal=True: it removes predictions inside "
            "the class's region."
        )
    n_classes = pred_list[0].shape[0]
    device = pred_list[0].device
    backend = resolve_backend(backend, device)
    nt = levels.numel()
    out = torch.zeros(4, len(pred_list), n_classes, nt, dtype=torch.int64)

    soft: list[tuple[int, int, Tensor, Tensor]] = []  # (image, class, soft map, gt)
    killed: list[tuple[int, int, Tensor, Tensor]] = []  # (image, class, soft map, pixels kill_internal drops)
    for b, (p, g) in enumerate(zip(pred_list, target_list, strict=True)):
        if p.shape[0] != n_classes:
            raise ValueError(f"Expected `preds[{b}]` to have {n_classes} classes (as preds[0]), got {p.shape[0]}.")
        if g.shape != p.shape:
            raise ValueError(
                f"Expected `target[{b}]` of the shape of `preds[{b}]` {tuple(p.shape)}, got {tuple(g.shape)}."
            )
        if p.shape[-1] == 0 or p.shape[-2] == 0:
            raise ValueError(f"Expected `preds[{b}]` to be non-empty maps, but got shape {tuple(p.shape)}.")
        h, w = p.shape[-2:]
        pb = as_unit_map(p, f"preds[{b}]", validate_args)
        gb = _binary(g, f"target[{b}]", validate_args)
        if ignore_border:
            pb = pb.masked_fill(_frame(h, w, ignore_border, pb.device), 0.0)
        has_gt = gb.flatten(1).any(1).tolist()
        kill = None
        if kill_internal:
            seg = seg_list[b] if seg_list is not None else None
            assert seg is not None
            if seg.shape != (h, w) or seg.dtype.is_floating_point:
                raise ValueError(
                    f"Expected `segmentation[{b}]` to be an integer ({h}, {w}) map, got {seg.dtype} {tuple(seg.shape)}."
                )
            kill = _kill_masks(gb, seg.to(gb.device), max_dist, backend)  # (K, H, W): pixels to drop
        for k in range(n_classes):
            if skip_if_nonexistent and not has_gt[k]:
                continue
            soft.append((b, k, pb[k], gb[k]))
            if kill is not None and has_gt[k]:  # the pixels kill_internal drops are counted below
                killed.append((b, k, pb[k], kill[k]))
    if soft:
        c = boundary_pr_counts(
            [s[2] for s in soft],
            [s[3][None] for s in soft],
            thresholds=levels,
            max_dist=max_dist,
            thin=thin,
            backend=backend,
            validate_args=False,
        )
        _scatter(out, [(s[0], s[1]) for s in soft], c)
    # Killed pixels lie farther than the tolerance from every GT edge: no candidate pair, never matched. So
    # kill_internal changes only sumP, by the (thinned) machine pixels it drops; cntR / cntP are those of the unkilled
    # map (above), and only the dropped pixels are counted here.
    lv = levels.to(device=device)
    for b, k, pb_k, kill_k in killed:
        if thin:
            out[3, b, k] -= _thin_pixels_in(pb_k, lv, kill_k, backend)
        else:
            out[3, b, k] -= (pb_k[kill_k][None, :] >= lv[:, None]).sum(1).cpu()
    out = out.to(device)
    return BoundaryCounts(out[0], out[1], out[2], out[3], levels.to(device))


def _binary(g: Tensor, name: str, validate_args: bool) -> Tensor:
    if g.dtype == torch.bool:
        return g
    if validate_args and g.numel() and not bool(((g == 0) | (g == 1)).all()):
        raise ValueError(f"Expected `{name}` to be boolean edge maps (bool, or only 0 and 1).")
    return g != 0


def _thin_pixels_in(pb: Tensor, levels: Tensor, region: Tensor, backend: Backend) -> Tensor:
    """(T,) int64 CPU: the pixels of ``thin(pb >= t)`` inside ``region``, per level.

    Thinning deletes a pixel by looking at its 8 neighbours only, so each 8-connected component of a map thins on its
    own; and every component of ``pb >= t`` lies inside one component of the lowest level's map. Only the lowest
    level's components that meet ``region`` are thinned (cropped to their bounding box): the same counts as thinning
    the whole maps, at a fraction of the cost when the region is a small part of them.
    """
    from scipy import ndimage

    low = (pb >= levels.min()).cpu().numpy()
    inside = region.cpu().numpy()
    labels, n = ndimage.label(low, structure=np.ones((3, 3), bool))
    hit = np.zeros(n + 1, bool)
    hit[labels[low & inside]] = True
    hit[0] = False
    if not hit.any():
        return torch.zeros(levels.numel(), dtype=torch.int64)
    keep = hit[labels]
    rows, cols = np.nonzero(keep.any(1))[0], np.nonzero(keep.any(0))[0]
    box = (slice(int(rows[0]), int(rows[-1]) + 1), slice(int(cols[0]), int(cols[-1]) + 1))
    crop = torch.from_numpy(keep[box]).to(pb.device)
    values = pb[box][crop]
    # levels whose map (restricted to the kept components) equals the previous level's copy its count: with
    # increasing thresholds the map changes only where a kept pixel's value lies in [t_prev, t)
    order = torch.argsort(levels)
    lv = levels[order]
    new = torch.ones(lv.numel(), dtype=torch.bool, device=lv.device)
    if lv.numel() > 1:
        between = (values[None, :] >= lv[:-1, None]) & (values[None, :] < lv[1:, None])
        new[1:] = between.any(1)
    new &= lv <= values.max()  # above every kept value the map is empty
    counts = torch.zeros(lv.numel(), dtype=torch.int64)
    idx = new.nonzero().flatten()
    ys, xs = (torch.from_numpy(a).to(pb.device) for a in np.nonzero(inside[box] & keep[box]))  # the counted pixels
    step = max(1, _STACK_BYTES // max(1, crop.numel()))  # levels thinned at once: bounded memory
    for lo in range(0, idx.numel(), step):
        part = idx[lo : lo + step]
        maps = (pb[box][None] >= lv[part][:, None, None]) & crop
        counts[part.cpu()] = thin_maps(maps, backend=backend)[:, ys, xs].sum(1).cpu()
    # a level that is not new repeats the last new level below it (or is empty above the kept values)
    last = torch.where(new.cpu(), torch.arange(lv.numel()), torch.zeros(lv.numel(), dtype=torch.int64))
    last = torch.cummax(last, 0).values
    filled = torch.where(lv.cpu() <= values.max().cpu(), counts[last], torch.zeros_like(counts))
    out = torch.empty_like(filled)
    out[order.cpu()] = filled
    return out


def _kill_masks(gt: Tensor, seg: Tensor, max_dist: float, backend: Backend) -> Tensor:
    """(K, H, W) pixels that kill_internal drops: inside class k's region, farther than the tolerance from its edges.

    "Farther" is the matcher's own rule negated (a pair is a candidate iff ``dy^2 + dx^2 <= max_dist_px^2``), on the
    exact integer squared distance to the nearest edge pixel, so a dropped pixel is never a candidate of any edge.
    """
    h, w = gt.shape[-2:]
    limit = max_dist_pixels(max_dist, h, w) ** 2
    # +inf for a class without edges (never killed: see the caller); the distances are correctly rounded square roots
    # of integers, so squaring and rounding gives back the integer squared distance exactly
    dist, _ = distance_transform_edt(gt, backend=backend)
    region = seg[None] == torch.arange(gt.shape[0], device=seg.device)[:, None, None]
    return (torch.round(dist * dist) > limit) & region & torch.isfinite(dist)


def _scatter(out: Tensor, where: list[tuple[int, int]], c: BoundaryCounts) -> None:
    b = torch.as_tensor([x[0] for x in where])
    k = torch.as_tensor([x[1] for x in where])
    for i, x in enumerate((c.cnt_r, c.sum_r, c.cnt_p, c.sum_p)):
        out[i, b, k] = x.cpu()


def summarize_semantic_counts(
    counts: BoundaryCounts, *, unique_occurrence: UniqueOccurrence = "last"
) -> dict[str, Any]:
    """Per-class BSR summaries of (B, K, T) counts and their class mean.

    Returns:
        ``{"classes": [K dicts of summarize_counts], "ods_f", "ois_f", "ap": (K,) float64, "mean": {"ods_f",
        "ois_f", "ap"}: 0-d float64}``.

    Example:
        >>> gt = torch.zeros(1, 2, 32, 32, dtype=torch.bool); gt[0, :, 16, 4:28] = True
        >>> pb = torch.zeros(1, 2, 32, 32); pb[0, :, 16, 4:16] = 0.8; pb[0, 1, 16, 16:28] = 0.3
        >>> counts = semantic_boundary_counts(pb, gt, thresholds=4, max_dist=2)
        >>> res = summarize_semantic_counts(counts)  # class 0: half its edge found; class 1: all of it at t = 0.2
        >>> [round(f, 4) for f in res["ods_f"].tolist()], round(float(res["mean"]["ods_f"]), 4)
        ([0.6667, 1.0], 0.8333)
    """
    per_class = []
    for k in range(counts.cnt_r.shape[1]):
        sub = BoundaryCounts(
            counts.cnt_r[:, k], counts.sum_r[:, k], counts.cnt_p[:, k], counts.sum_p[:, k], counts.thresholds
        )
        per_class.append(summarize_counts(sub, unique_occurrence=unique_occurrence))
    ods = torch.stack([r["ods"]["f"] for r in per_class])
    ois = torch.stack([r["ois"]["f"] for r in per_class])
    ap = torch.stack([r["ap"] for r in per_class])
    return {
        "classes": per_class,
        "ods_f": ods,
        "ois_f": ois,
        "ap": ap,
        "mean": {"ods_f": ods.mean(), "ois_f": ois.mean(), "ap": ap.mean()},
    }


def semantic_boundary_pr(
    preds: ImageBatch,
    target: ImageBatch,
    segmentation: ImageBatch | None = None,
    *,
    thresholds: int | Sequence[float] | Tensor = 99,
    max_dist: float = 0.02,
    thin: bool = True,
    kill_internal: bool = False,
    skip_if_nonexistent: bool = False,
    ignore_border: int = 0,
    unique_occurrence: UniqueOccurrence = "last",
    backend: Backend = "auto",
    validate_args: bool = True,
) -> dict[str, Any]:
    """ODS / OIS / AP per class and the class mean of a batch taken as the dataset.

    Same arguments as :func:`semantic_boundary_counts`; returns :func:`summarize_semantic_counts`'s dict.

    Example:
        >>> gt = torch.zeros(1, 2, 32, 32, dtype=torch.bool); gt[0, :, 16, 4:28] = True
        >>> pb = torch.zeros(1, 2, 32, 32); pb[0, 0, 17, 4:28] = 0.8
        >>> res = semantic_boundary_pr(pb, gt, thresholds=9, max_dist=2)
        >>> res["ods_f"].tolist(), float(res["mean"]["ods_f"])
        ([1.0, 0.0], 0.5)
    """
    counts = semantic_boundary_counts(
        preds,
        target,
        segmentation,
        thresholds=thresholds,
        max_dist=max_dist,
        thin=thin,
        kill_internal=kill_internal,
        skip_if_nonexistent=skip_if_nonexistent,
        ignore_border=ignore_border,
        backend=backend,
        validate_args=validate_args,
    )
    return summarize_semantic_counts(counts, unique_occurrence=unique_occurrence)


# ------------------------------------------------------------------------------------------- dataset folders


@dataclass
class SemanticBoundaryResult:
    """The evaluation of a dataset: per image, class and threshold counts and their summaries.

    Attributes:
        protocol: the protocol evaluated.
        ids: the image ids, in order (rows of the counts).
        classes: the 1-based class numbers evaluated (``class_XXX``), in order (columns of the counts).
        class_names: their names.
        counts: (B, K, T) :class:`~segmetrics_torch.functional.boundary.BoundaryCounts`.
        summary: :func:`summarize_semantic_counts` of the counts.

    Example:
        >>> import tempfile
        >>> from PIL import Image
        >>> from segmetrics_torch.functional.semantic_boundary import semantic_boundary_protocol
        >>> root = Path(tempfile.mkdtemp()); (root / "gt").mkdir(); (root / "pred/class_001").mkdir(parents=True)
        >>> labels = np.full((32, 32), 7, np.uint8); labels[:, 16:] = 8  # Cityscapes labelIds: road | sidewalk
        >>> Image.fromarray(labels).save(root / "gt/aachen_000000_000019_gtFine_labelIds.png")
        >>> pred = np.zeros((32, 32), np.uint8); pred[:, 15:17] = 200  # the road's edge, full size
        >>> Image.fromarray(pred).save(root / "pred/class_001/aachen_000000_000019_leftImg8bit.png")
        >>> protocol = semantic_boundary_protocol("pre-seal", "cityscapes")
        >>> result = evaluate_semantic_boundary_folders(root / "pred", root / "gt", protocol, classes=[1])
        >>> result.ids, result.class_names, float(result.summary["mean"]["ods_f"])
        (['aachen_000000_000019'], ['road'], 1.0)
    """

    protocol: SemanticBoundaryProtocol
    ids: list[str]
    classes: list[int]
    class_names: list[str]
    counts: BoundaryCounts
    summary: dict[str, Any] = field(repr=False)


def _class_folder(pred_dir: Path, c: int) -> Path:
    folder = pred_dir / f"class_{c:03d}"
    if not folder.is_dir():
        present = sorted(int(f.name[6:]) for f in pred_dir.glob("class_[0-9][0-9][0-9]") if f.is_dir())
        hint = (
            f"; the folder holds the classes {', '.join(map(str, present))} only: evaluate those with `classes` "
            "(--classes)"
            if present
            else ""
        )
        raise ValueError(
            f"{folder}: class folder missing (predictions of class {c} are expected in class_{c:03d}/){hint}."
        )
    return folder


def _list_predictions(folder: Path) -> dict[str, Path]:
    """Prediction files of a class folder by id (stem less a ``_leftImg8bit`` suffix); any other file is an error."""
    found: dict[str, Path] = {}
    for path in sorted(folder.rglob("*")):
        if path.name.startswith(".") or path.is_dir():
            continue
        if path.suffix.lower() not in PREDICTION_EXTENSIONS:
            raise ValueError(
                f"{path}: not a PNG or BMP prediction map; a class folder holds only {'/'.join(PREDICTION_EXTENSIONS)} "
                "files (one per image)."
            )
        stem = path.stem.removesuffix("_leftImg8bit")
        if stem in found:
            raise ValueError(f"{path}: a second prediction of image {stem!r} (first: {found[stem]}).")
        found[stem] = path
    return found


@reads(PREDICTION_EXTENSIONS, "per-class semantic boundary maps (class_XXX/<id>.png|bmp)")
def read_prediction(path: str | Path, size: tuple[int, int], full_size: tuple[int, int]) -> Tensor:
    """An 8-bit per-class map as (h, w) uint8 at the evaluation ``size``; a map of the dataset's ``full_size`` is
    resized (nearest, Pillow's rule, as pyEdgeEval); any other size is a ``ValueError`` naming the file."""

    pred = torch.from_numpy(read_gray(path))
    shape = tuple(pred.shape)
    if shape == size:
        return pred
    if shape == full_size:
        return resize_nearest(pred, size)
    sizes = f"{size}" if size == full_size else f"{size} (or the full size {full_size})"
    raise ValueError(f"{path}: prediction of size {shape}, expected the ground truth's {sizes}.")


def _sbd_ids(gt_dir: Path) -> list[str]:
    folder = gt_dir / "cls"
    if not folder.is_dir():
        raise ValueError(f"{folder}: SBD ground truth folder missing (expected cls/<id>.mat under --gt).")
    return sorted(p.stem for p in folder.glob("*.mat") if not p.name.startswith("."))


_CITYSCAPES_LABELS = "_gtFine_labelIds.png"
_CITYSCAPES_INSTANCES = "_gtFine_instanceIds.png"


def _cityscapes_files(gt_dir: Path) -> dict[str, Path]:
    files = {p.name.removesuffix(_CITYSCAPES_LABELS): p for p in sorted(gt_dir.rglob(f"*{_CITYSCAPES_LABELS}"))}
    if not files:
        raise ValueError(f"{gt_dir}: no Cityscapes ground truth (*{_CITYSCAPES_LABELS}) found.")
    return files


def evaluate_semantic_boundary_folders(
    pred_dir: str | Path,
    gt_dir: str | Path,
    protocol: SemanticBoundaryProtocol,
    *,
    classes: Sequence[int] | None = None,
    ids: Sequence[str] | None = None,
    unique_occurrence: UniqueOccurrence = "last",
    backend: Backend = "auto",
) -> SemanticBoundaryResult:
    """Evaluate a folder of per-class predictions against SBD or Cityscapes ground truth with ``protocol``.

    Layouts:
        * ``pred_dir/class_XXX/<id>.png|bmp``: XXX = 1-based class (SBD class, Cityscapes trainId + 1); Cityscapes
          names may end in ``_leftImg8bit`` and sit in city sub-folders. Maps at the evaluation size, or (Cityscapes
          half scale) at full size, resized as pyEdgeEval does.
        * SBD ``gt_dir/cls/<id>.mat`` (and ``gt_dir/inst/<id>.mat`` when instance-sensitive); Cityscapes
          ``gt_dir/**/<id>_gtFine_labelIds.png`` (and ``_gtFine_instanceIds.png``).

    Args:
        pred_dir, gt_dir: the two folders.
        protocol: see :func:`~segmetrics_torch.functional.semantic_boundary.semantic_boundary_protocol`.
        classes: 1-based classes to evaluate (default: all 20 / 19).
        ids: image ids (default: every GT image).
        unique_occurrence: AP's duplicate-recall rule (see :mod:`segmetrics_torch.functional.boundary.summary`).
        backend: see :func:`semantic_boundary_counts`.

    Images are evaluated one at a time (memory bounded per image), all classes of an image in one batch.

    Raises:
        ValueError: a class folder or a prediction missing, a file in a class folder that is not PNG / BMP, a
            prediction of the wrong size, bad ground truth (each message names the file or folder).

    Example:
        >>> import tempfile, scipy.io
        >>> from PIL import Image
        >>> from segmetrics_torch.functional.semantic_boundary import semantic_boundary_protocol
        >>> root = Path(tempfile.mkdtemp()); (root / "gt/cls").mkdir(parents=True)
        >>> seg = np.zeros((16, 16), np.uint8); seg[:, 8:] = 15  # a person (SBD class 15) on the right
        >>> bounds = np.empty((20, 1), object)
        >>> for k in range(20):
        ...     bounds[k, 0] = np.zeros((16, 16))
        >>> bounds[14, 0][:, 8] = 1  # the person's stored boundary
        >>> gtcls = {"Boundaries": bounds, "Segmentation": seg, "CategoriesPresent": np.array([[15]], np.uint8)}
        >>> scipy.io.savemat(root / "gt/cls/2008_000001.mat", {"GTcls": gtcls})
        >>> pred = np.zeros((16, 16), np.uint8); pred[:8, 8] = 255  # the upper half of the boundary
        >>> (root / "pred/class_015").mkdir(parents=True)
        >>> Image.fromarray(pred).save(root / "pred/class_015/2008_000001.png")
        >>> protocol = semantic_boundary_protocol("matlab")
        >>> result = evaluate_semantic_boundary_folders(root / "pred", root / "gt", protocol, classes=[15])
        >>> ods = result.summary["classes"][0]["ods"]
        >>> result.class_names, float(ods["recall"]), float(ods["precision"]), round(float(ods["f"]), 4)
        (['person'], 0.5, 1.0, 0.6667)
    """
    pred_dir, gt_dir = Path(pred_dir), Path(gt_dir)
    sbd = protocol.dataset == "sbd"
    names = SBD_CLASSES if sbd else CITYSCAPES_CLASSES
    classes = list(range(1, len(names) + 1)) if classes is None else [int(c) for c in classes]
    for c in classes:
        if not 1 <= c <= len(names):
            raise ValueError(f"Expected `classes` in 1..{len(names)} for {protocol.dataset}, but got {c}.")
    if not pred_dir.is_dir():
        raise ValueError(f"{pred_dir}: prediction folder missing.")
    folders = {c: _list_predictions(_class_folder(pred_dir, c)) for c in classes}
    if sbd:
        available = _sbd_ids(gt_dir)
        cs_files: dict[str, Path] = {}
    else:
        cs_files = _cityscapes_files(gt_dir)
        available = sorted(cs_files)
    wanted = list(available) if ids is None else [str(i) for i in ids]
    missing_gt = [i for i in wanted if i not in set(available)]
    if missing_gt:
        raise ValueError(
            f"{gt_dir}: no ground truth for images {missing_gt[:5]}{' ...' if len(missing_gt) > 5 else ''}."
        )
    if not wanted:
        raise ValueError(f"{gt_dir}: no images to evaluate.")
    for c, files in folders.items():
        absent = [i for i in wanted if i not in files]
        if absent:
            raise ValueError(
                f"{pred_dir / f'class_{c:03d}'}: no prediction for images {absent[:5]}"
                f"{' ...' if len(absent) > 5 else ''}."
            )
    levels = protocol_thresholds(protocol)
    chans = torch.as_tensor([c - 1 for c in classes])
    rows = []
    for image_id in wanted:
        if sbd:
            inst = gt_dir / "inst" / f"{image_id}.mat"
            gt = sbd_ground_truth(
                gt_dir / "cls" / f"{image_id}.mat",
                inst if protocol.instance_sensitive else None,
                regenerate=protocol.ground_truth == "regenerated",
                instance_sensitive=protocol.instance_sensitive,
                thin=protocol.thin,
                radius=protocol.radius,
                ignore_border=protocol.ignore_border,
                backend=backend,
            )
            size = full = tuple(gt.segmentation.shape)
        else:
            label_path = cs_files[image_id]
            gt = cityscapes_ground_truth(
                label_path,
                label_path.with_name(label_path.name.replace(_CITYSCAPES_LABELS, _CITYSCAPES_INSTANCES)),
                instance_sensitive=protocol.instance_sensitive,
                thin=protocol.thin,
                radius=protocol.radius,
                scale=protocol.scale,
                labels_first=protocol.labels_first,
                backend=backend,
            )
            size = tuple(gt.segmentation.shape)
            full = _image_size(label_path)
        preds = torch.stack([read_prediction(folders[c][image_id], size, full) for c in classes])  # type: ignore[arg-type]
        counts = semantic_boundary_counts(
            preds[None],
            gt.edges[chans][None],
            _select_classes(gt.segmentation, chans)[None],
            thresholds=levels,
            max_dist=protocol.max_dist,
            thin=protocol.thin,
            kill_internal=protocol.kill_internal,
            skip_if_nonexistent=protocol.skip_if_nonexistent,
            ignore_border=protocol.ignore_border,
            backend=backend,
        )
        rows.append(counts)
    counts = BoundaryCounts(
        cnt_r=torch.cat([r.cnt_r for r in rows]),
        sum_r=torch.cat([r.sum_r for r in rows]),
        cnt_p=torch.cat([r.cnt_p for r in rows]),
        sum_p=torch.cat([r.sum_p for r in rows]),
        thresholds=levels,
    )
    return SemanticBoundaryResult(
        protocol=protocol,
        ids=wanted,
        classes=classes,
        class_names=[names[c - 1] for c in classes],
        counts=counts,
        summary=summarize_semantic_counts(counts, unique_occurrence=unique_occurrence),
    )


def _image_size(label_path: Path) -> tuple[int, int]:
    """(H, W) of an image file, from its header."""

    with open_image(label_path) as image:
        w, h = image.size
    return (h, w)


def _select_classes(seg: Tensor, chans: Tensor) -> Tensor:
    """trainId map -> the index of each pixel's class among the evaluated ``chans`` (-1: none of them)."""
    lut = torch.full((256,), -1, dtype=torch.int64)
    lut[chans] = torch.arange(chans.numel())
    return lut[seg.clamp(0, 255)]


# ----------------------------------------------------------------------------------------------- BSR text files


def bsr_files(result: SemanticBoundaryResult, class_index: int) -> dict[str, str]:
    """The SBD / BSR benchmark's text files of one evaluated class, as strings (the caller writes them).

    ``class_index`` indexes ``result.classes``. Returns ``{"eval_bdry.txt", "eval_bdry_thr.txt",
    "eval_bdry_img.txt", "<id>_ev1.txt" for every image}``, in MATLAB's ``%10g`` formats: ``_ev1`` rows
    ``threshold cntR sumR cntP sumP``; ``eval_bdry_img`` rows ``image-number T R P F`` (per image best, interpolated);
    ``eval_bdry_thr`` rows ``T R P F``; ``eval_bdry`` ``ODS-T ODS-R ODS-P ODS-F OIS-R OIS-P OIS-F AP`` and pyEdgeEval's
    interpolated AP (the SBD benchmark's ninth column).

    Example:
        >>> from segmetrics_torch.functional.semantic_boundary import semantic_boundary_protocol
        >>> gt = torch.zeros(1, 1, 32, 32, dtype=torch.bool); gt[0, 0, 16, 4:28] = True
        >>> pb = torch.zeros(1, 1, 32, 32); pb[0, 0, 16, 4:16] = 0.8; pb[0, 0, 16, 16:28] = 0.5
        >>> counts = semantic_boundary_counts(pb, gt, thresholds=2, max_dist=2)
        >>> result = SemanticBoundaryResult(
        ...     semantic_boundary_protocol("matlab"), ["2008_000001"], [15], ["person"], counts,
        ...     summarize_semantic_counts(counts),
        ... )
        >>> files = bsr_files(result, 0)
        >>> sorted(files)
        ['2008_000001_ev1.txt', 'eval_bdry.txt', 'eval_bdry_img.txt', 'eval_bdry_thr.txt']
        >>> print(files["2008_000001_ev1.txt"], end="")  # threshold cntR sumR cntP sumP
          0.333333         24         24         24         24
          0.666667         12         24         12         12
    """
    if not 0 <= class_index < len(result.classes):
        raise ValueError(f"Expected `class_index` in 0..{len(result.classes) - 1}, but got {class_index}.")
    res = result.summary["classes"][class_index]
    c = result.counts
    t = c.thresholds.cpu().tolist()
    files: dict[str, str] = {}
    for b, image_id in enumerate(result.ids):
        rows = zip(
            t,
            c.cnt_r[b, class_index].tolist(),
            c.sum_r[b, class_index].tolist(),
            c.cnt_p[b, class_index].tolist(),
            c.sum_p[b, class_index].tolist(),
            strict=True,
        )
        files[f"{image_id}_ev1.txt"] = "".join(f"{x:10g} {a:10d} {s:10d} {d:10d} {e:10d}\n" for x, a, s, d, e in rows)
    return {**files, **bsr_result_files(res, extra=("ap_pyedgeeval",))}  # BSR's three files, the AP column added
