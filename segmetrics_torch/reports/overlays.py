"""Error overlays of one image, one per family: what the HTML report's gallery shows beside the prediction.

Each function takes the arrays the command evaluated (as :mod:`segmetrics_torch.datasets.decoding` and
:func:`segmetrics_torch.io.read_label_volume` read them) and returns an (H, W, 3) uint8 RGB picture, with the
rule of the family's own measures, computed by the library's own building blocks (never a second copy of a rule):

* foreground (:func:`foreground_overlay`): the map binarised as the adaptive threshold of the F-measure does
  (PySODMetrics: the map min-max normalised, then ``p >= min(2 mean(p), 1)``: :func:`~segmetrics_torch.ops.thresholds.
  adaptive_threshold`); true positives white, false positives red, false negatives blue, true negatives black;
* boundary (:func:`boundary_overlay`): the machine map ``thin(pb >= t)`` at the image's best threshold, matched to
  every annotator's boundary within ``max_dist`` by the BSDS correspondence
  (:func:`~segmetrics_torch.ops.matching.correspond_pixels`); a machine pixel is matched when it matches some
  annotator (BSR's ``cntP``), an annotator pixel when it is matched in an annotator that has it;
* partition (:func:`partition_overlay`): each ground-truth region coloured by ``1 - its best Jaccard overlap`` with a
  machine segment (the overlap of the segmentation covering), green (overlap 1) to red (no overlap), from the
  contingency table of :func:`~segmetrics_torch.ops.contingency.contingency_tables`; region borders white;
* surface (:func:`surface_overlay`): the boundary-distance map (each surface voxel's distance, in spacing units, to
  the other mask's surface: :func:`~segmetrics_torch.functional.surface.edges.inner_boundary` and
  :func:`~segmetrics_torch.ops.distance.distance_to_features`) on the slice (last axis) of the largest distance.

Example:
    >>> import numpy as np

    >>> pred = np.zeros((4, 4), np.uint8); pred[0, :2] = 255
    >>> gt = np.zeros((4, 4), bool); gt[0, 1:3] = True
    >>> rgb = foreground_overlay(pred, gt)
    >>> [tuple(int(c) for c in rgb[0, x]) for x in range(3)] == [FP_COLOUR, TP_COLOUR, FN_COLOUR]
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..functional.boundary.bsds import boundary_pr_counts
from ..functional.boundary.summary import best_f_interpolated, precision_recall_f
from ..functional.foreground._prepare import prepare_maps
from ..functional.surface.edges import inner_boundary
from ..ops.contingency import contingency_tables, relabel
from ..ops.distance import distance_to_features
from ..ops.matching import correspond_pixels
from ..ops.morphology import seg2bmap, thin as thin_maps
from ..ops.thresholds import adaptive_threshold

__all__ = [
    "FN_COLOUR",
    "FP_COLOUR",
    "MATCHED_GT_COLOUR",
    "MATCHED_PRED_COLOUR",
    "TN_COLOUR",
    "TP_COLOUR",
    "BoundaryOverlay",
    "HierarchyOverlay",
    "SurfaceOverlay",
    "boundary_overlay",
    "covering_per_level",
    "error_colour",
    "foreground_overlay",
    "foreground_overlays",
    "hierarchy_overlay",
    "partition_overlay",
    "surface_overlay",
]

RGB = tuple[int, int, int]
#: foreground: true positive, false positive, false negative, true negative
TP_COLOUR: RGB = (255, 255, 255)
FP_COLOUR: RGB = (220, 40, 40)
FN_COLOUR: RGB = (40, 110, 230)
TN_COLOUR: RGB = (0, 0, 0)
#: boundary: matched machine pixels and matched annotator pixels (unmatched ones: FP_COLOUR / FN_COLOUR)
MATCHED_PRED_COLOUR: RGB = (40, 200, 40)
MATCHED_GT_COLOUR: RGB = (20, 90, 20)
#: partition: region borders
BORDER_COLOUR: RGB = (255, 255, 255)


def error_colour(error: np.ndarray | float) -> np.ndarray:
    """Colours of errors in [0, 1] (any shape -> shape + (3,) uint8): green (0) through yellow (0.5) to red (1)."""
    e = np.clip(np.asarray(error, dtype=np.float64), 0.0, 1.0)
    red = np.minimum(1.0, 2.0 * e)
    green = np.minimum(1.0, 2.0 * (1.0 - e)) * 0.8
    return np.stack([red * 255, green * 255, np.full_like(e, 30.0)], axis=-1).round().astype(np.uint8)


def _paint(shape: tuple[int, ...], layers: Sequence[tuple[np.ndarray, RGB]]) -> np.ndarray:
    """An RGB picture of ``shape``: black, then each ``(mask, colour)`` painted in turn (later layers on top)."""
    rgb = np.zeros((*shape, 3), np.uint8)
    for mask, colour in layers:
        rgb[mask] = colour
    return rgb


def foreground_overlay(pred: np.ndarray, gt: np.ndarray) -> np.ndarray:
    """FP / FN picture of a foreground map at the adaptive threshold of the F-measure.

    Args:
        pred: (H, W) map, uint8 0..255 or float in [0, 1]; min-max normalised as PySODMetrics does.
        gt: (H, W) mask: bool, or uint8 binarised ``> 128`` (the library's rule, ``binarize_target``).

    Returns:
        (H, W, 3) uint8: TP :data:`TP_COLOUR`, FP :data:`FP_COLOUR`, FN :data:`FN_COLOUR`, TN :data:`TN_COLOUR`.
    """
    if pred.shape != gt.shape or pred.ndim != 2:
        raise ValueError(f"Expected `pred` and `gt` of one (H, W) shape, but got {pred.shape} and {gt.shape}.")
    return foreground_overlays(pred[None], gt[None])[0]


def foreground_overlays(preds: np.ndarray, gts: np.ndarray) -> np.ndarray:
    """:func:`foreground_overlay` of a (B, H, W) batch in one pass (the thresholds are per image): (B, H, W, 3)."""

    if preds.shape != gts.shape or preds.ndim != 3:
        raise ValueError(f"Expected `preds` and `gts` of one (B, H, W) shape, but got {preds.shape} and {gts.shape}.")
    p, g = prepare_maps(torch.from_numpy(np.ascontiguousarray(preds)), torch.from_numpy(np.ascontiguousarray(gts)))
    binary = (p >= adaptive_threshold(p).view(-1, 1, 1)).numpy()
    truth = g.numpy()
    return _paint(
        binary.shape,
        [(binary & truth, TP_COLOUR), (binary & ~truth, FP_COLOUR), (~binary & truth, FN_COLOUR)],
    )


@dataclass(frozen=True)
class BoundaryOverlay:
    """A boundary overlay: the picture, the threshold it shows and BSR's counts there (``cnt_r`` and ``sum_r``
    summed over the annotators, ``cnt_p`` and ``sum_p`` of the machine map)."""

    rgb: np.ndarray
    threshold: float
    counts: tuple[int, int, int, int]


def _best_threshold(
    pb: np.ndarray, boundaries: np.ndarray, max_dist: float, thin: bool, thresholds: int | Sequence[float]
) -> float:
    """The image's own best threshold (BSR's OIS per image: the F-maximising, interpolated threshold)."""

    counts = boundary_pr_counts(
        torch.from_numpy(pb)[None],
        torch.from_numpy(boundaries)[None],
        thresholds=thresholds,
        max_dist=max_dist,
        thin=thin,
    )
    r, p, _ = precision_recall_f(counts.cnt_r[0], counts.sum_r[0], counts.cnt_p[0], counts.sum_p[0])
    return float(best_f_interpolated(counts.thresholds, r, p)[0])


def boundary_overlay(
    pb: np.ndarray,
    boundaries: np.ndarray,
    *,
    threshold: float | None = None,
    max_dist: float = 0.0075,
    thin: bool = True,
    thresholds: int | Sequence[float] = 99,
) -> BoundaryOverlay:
    """Matched and unmatched boundary pixels of one image at one threshold, BSDS matching.

    Args:
        pb: (H, W) soft boundary map in [0, 1] (float64; a uint8 map is read ``/ 255`` as the benchmark does).
        boundaries: (A, H, W) bool annotator boundaries.
        threshold: the level shown; None: the image's best (OIS) threshold, computed with ``thresholds`` levels.
        max_dist: the matching tolerance (fraction of the diagonal when < 1, else pixels), as the run's.
        thin: thin the thresholded map (BSR's default), as the run did.
        thresholds: the levels searched when ``threshold`` is None: a count K (MATLAB's ``linspace``) or the values.

    Returns:
        :class:`BoundaryOverlay`: matched machine pixels :data:`MATCHED_PRED_COLOUR`, unmatched :data:`FP_COLOUR`;
        matched annotator pixels :data:`MATCHED_GT_COLOUR`, unmatched :data:`FN_COLOUR` (machine pixels on top).
    """

    if pb.dtype == np.uint8:
        pb = pb.astype(np.float64) / 255.0
    pb = np.asarray(pb, dtype=np.float64)
    boundaries = np.asarray(boundaries, dtype=bool)
    if boundaries.ndim == 2:
        boundaries = boundaries[None]
    if boundaries.shape[1:] != pb.shape or pb.ndim != 2:
        raise ValueError(f"Expected `pb` (H, W) and `boundaries` (A, H, W), but got {pb.shape} and {boundaries.shape}.")
    if threshold is None:
        threshold = _best_threshold(pb, boundaries, max_dist, thin, thresholds)
    machine = torch.from_numpy(pb >= threshold)
    if thin:
        machine = thin_maps(machine)
    matched_pred = torch.zeros_like(machine)
    matched_gt = np.zeros(pb.shape, bool)
    unmatched_gt = np.zeros(pb.shape, bool)
    cnt_r = sum_r = 0
    for annotator in boundaries:
        target = torch.from_numpy(np.ascontiguousarray(annotator))
        match1, match2 = correspond_pixels(machine, target, max_dist)
        matched_pred |= match1 >= 0
        hit = match2.numpy() >= 0
        matched_gt |= hit
        unmatched_gt |= annotator & ~hit
        cnt_r += int(np.count_nonzero(hit))
        sum_r += int(np.count_nonzero(annotator))
    on = machine.numpy()
    hit_pred = matched_pred.numpy()
    rgb = _paint(
        pb.shape,
        [
            (unmatched_gt & ~matched_gt, FN_COLOUR),
            (matched_gt, MATCHED_GT_COLOUR),
            (on & ~hit_pred, FP_COLOUR),
            (hit_pred, MATCHED_PRED_COLOUR),
        ],
    )
    counts = (cnt_r, sum_r, int(np.count_nonzero(hit_pred)), int(np.count_nonzero(on)))
    return BoundaryOverlay(rgb, float(threshold), counts)


def partition_overlay(pred: np.ndarray, gt: np.ndarray) -> np.ndarray:
    """Each ground-truth region coloured by ``1 - max_j J(G_i, S_j)`` (:func:`error_colour`), borders white.

    Args:
        pred: (H, W) integer labels of the machine segmentation.
        gt: (H, W) integer labels of one annotation (the report passes the first annotator of a BSDS file).

    Returns:
        (H, W, 3) uint8.
    """

    if pred.shape != gt.shape or pred.ndim != 2:
        raise ValueError(f"Expected `pred` and `gt` of one (H, W) shape, but got {pred.shape} and {gt.shape}.")
    s, ks = relabel(torch.from_numpy(np.ascontiguousarray(pred, dtype=np.int64)).reshape(1, -1))
    g, kg = relabel(torch.from_numpy(np.ascontiguousarray(gt, dtype=np.int64)).reshape(1, -1))
    one = torch.zeros(1, dtype=torch.int64)
    ct = contingency_tables(s, ks, g, kg, one, one)
    jaccard = ct.counts.double() / (ct.row_sizes[ct.rows] + ct.col_sizes[ct.cols] - ct.counts).double()
    best = torch.zeros(int(kg[0]), dtype=torch.float64).scatter_reduce_(0, ct.cols, jaccard, reduce="amax")
    rgb = error_colour((1.0 - best)[g[0]].reshape(gt.shape).numpy())
    rgb[seg2bmap(torch.from_numpy(np.ascontiguousarray(gt))).numpy()] = BORDER_COLOUR
    return rgb


@dataclass(frozen=True)
class HierarchyOverlay:
    """The overlay of the best level of a hierarchy: the picture, the level's index and its covering."""

    rgb: np.ndarray
    level: int
    covering: float


def covering_per_level(levels: np.ndarray, gt: np.ndarray) -> np.ndarray:
    """The segmentation covering of one annotation by each level, ``sum_j |G_j| max_i J(G_j, S_i) / N``: (L,).

    Args:
        levels: (L, H, W) integer label maps (the levels of a hierarchy, or any L segmentations).
        gt: (H, W) integer labels of one annotation.
    """

    if levels.ndim != 3 or levels.shape[1:] != gt.shape:
        raise ValueError(f"Expected `levels` (L, H, W) and `gt` (H, W), but got {levels.shape} and {gt.shape}.")
    n_levels = levels.shape[0]
    s, ks = relabel(torch.from_numpy(np.ascontiguousarray(levels, dtype=np.int64)).reshape(n_levels, -1))
    g, kg = relabel(torch.from_numpy(np.ascontiguousarray(gt, dtype=np.int64)).reshape(1, -1))
    ct = contingency_tables(s, ks, g, kg, torch.arange(n_levels), torch.zeros(n_levels, dtype=torch.int64))
    jaccard = ct.counts.double() / (ct.row_sizes[ct.rows] + ct.col_sizes[ct.cols] - ct.counts).double()
    regions = int(kg[0])
    best = torch.zeros(n_levels * regions, dtype=torch.float64)
    best.scatter_reduce_(0, ct.tables * regions + ct.cols, jaccard, reduce="amax")
    covered = (best.view(n_levels, regions) * ct.col_sizes.double()[None]).sum(1) / gt.size
    return covered.numpy()


def hierarchy_overlay(levels: np.ndarray, gt: np.ndarray) -> HierarchyOverlay:
    """:func:`partition_overlay` of the level that covers ``gt`` best (:func:`covering_per_level`; the first of
    equal ones), for a ucm2 or a stack of segmentations: the image's own best scale, as OIS picks it."""
    covered = covering_per_level(levels, gt)
    level = int(np.argmax(covered))
    return HierarchyOverlay(partition_overlay(levels[level], gt), level, float(covered[level]))


@dataclass(frozen=True)
class SurfaceOverlay:
    """A surface overlay: the picture, the slice shown (index on the last axis; None for a 2-D image) and the
    largest distance (spacing units) the colours run to."""

    rgb: np.ndarray
    slice_index: int | None
    max_distance: float


def surface_overlay(
    pred: np.ndarray, gt: np.ndarray, spacing: Sequence[float] | None = None, *, connectivity: int = 1
) -> SurfaceOverlay:
    """The boundary-distance map on the slice of largest error.

    Each voxel on either mask's surface (its inner boundary) gets its distance to the other mask's surface; the
    slice (last axis of a 3-D volume) holding the largest such distance is drawn: ground truth only dark blue,
    prediction only dark red, both grey, surface voxels by :func:`error_colour` of distance / largest distance.
    Label maps are compared as masks ``labels > 0`` (the union of the classes).

    Args:
        pred, gt: (H, W) or (X, Y, Z) label arrays of one shape.
        spacing: one spacing per axis (None: 1).
        connectivity: the erosion's connectivity of the inner boundary (1: the cross, MONAI's default).

    Returns:
        :class:`SurfaceOverlay`; an empty mask leaves its surface's distances infinite: they are drawn red and the
        largest *finite* distance is reported (0 when none is finite).
    """

    if pred.shape != gt.shape or pred.ndim not in (2, 3):
        raise ValueError(f"Expected `pred` and `gt` of one 2-D or 3-D shape, but got {pred.shape} and {gt.shape}.")
    spacing = tuple(float(s) for s in spacing) if spacing is not None else (1.0,) * pred.ndim
    p, g = np.asarray(pred) > 0, np.asarray(gt) > 0
    edges = inner_boundary(torch.from_numpy(np.stack([p, g])), connectivity).numpy()
    dist = np.zeros(p.shape, np.float64)
    dist[edges[0]] = distance_to_features(edges[1], spacing, edges[0])
    dist[edges[1]] = np.maximum(dist[edges[1]], distance_to_features(edges[0], spacing, edges[1]))
    on = edges[0] | edges[1]
    finite = np.isfinite(dist) & on
    largest = float(dist[finite].max()) if finite.any() else 0.0
    index: int | None = None
    if p.ndim == 3:
        per_slice = np.where(on, np.minimum(dist, np.finfo(np.float64).max), -1.0).max(axis=(0, 1))  # inf: largest
        index = int(np.argmax(per_slice))
        p, g, dist, on = p[..., index], g[..., index], dist[..., index], on[..., index]
    rgb = _paint(p.shape, [(g & ~p, (20, 40, 110)), (p & ~g, (110, 30, 30)), (p & g, (90, 90, 90))])
    scaled = np.where(np.isfinite(dist), dist / largest if largest > 0 else 0.0, 1.0)
    rgb[on] = error_colour(scaled[on])
    return SurfaceOverlay(rgb, index, largest)
