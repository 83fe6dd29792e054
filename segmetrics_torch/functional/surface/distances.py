"""Boundary-to-boundary distances, computed once per (image, class) pair and shared by every measure of the family.

For each boundary point of one mask, the distance (in spacing units) to the nearest boundary point of the other
mask: the lists :math:`D_{PG} = \\{d(x, \\partial G) : x \\in \\partial P\\}` and :math:`D_{GP}`. Hausdorff, percentile
Hausdorff, (symmetric) average surface distance and surface Dice are all reductions of these two lists (with the
surfel sizes as weights under the DeepMind convention), so :func:`pair_distances` computes them once.

Exactness: the Euclidean distances are the exact EDT with spacing (:func:`segmetrics_torch.ops.distance.
distance_to_features`: scipy's ``distance_transform_edt(~b, sampling=spacing)`` in its float operations, a compiled
separable transform on every core) of one boundary, restricted to the bounding box of both boundaries, read at the other
boundary's points (what MedPy and DeepMind compute on the whole image, and MONAI's KDTree query): the nearest boundary
point always lies inside that box, so the box changes no value. When the boundaries are sparse in their box (smooth
surfaces), an exact nearest-neighbour query (``scipy.spatial.cKDTree``) on the point coordinates times the spacing is
cheaper and gives the same numbers (the points it finds measured in scipy's float operations); the chessboard and
taxicab distances are always that query with the L-inf / L1 norm."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Unpack

import numpy as np
import torch
from scipy.spatial import cKDTree
from torch import Tensor

from segmetrics_torch._checks import check_choice

from ...ops.distance import (
    distance_to_features,
    distance_to_features_device,
    spacing_scale,
    takes_device_transform,
)
from ._inputs import CONVENTIONS, DISTANCE_METRICS, Pairs, check_convention, prepare_pairs
from .edges import corner_codes, inner_boundary, surfel_size_table
from .options import DISTANCE_DEFAULTS, MASK_DEFAULTS, DistanceOptions, with_defaults

__all__ = ["SurfaceDistances", "point_set_distances", "surface_distances"]

# KDTree instead of the EDT when the boundary points fill less than this fraction of their bounding box (a 250^3
# sphere pair's inner edges fill 3.2 % of their box: the two KDTree queries took 115 ms, the two EDTs read at the
# points ~95 ms)
_KDTREE_FILL = 0.02


@dataclass
class SurfaceDistances:
    """The two distance lists of one (image, class) pair.

    ``pred_to_gt`` holds, for every boundary point of the prediction, the distance to the nearest boundary point of
    the ground truth (``inf`` when the ground truth is empty); ``gt_to_pred`` the reverse. ``pred_sizes`` /
    ``gt_sizes`` are the surfel lengths / areas of those points (corner surfels), or None when every point weighs 1
    (inner edges). All arrays are float64 numpy arrays, in the points' C order.

    Example:
        >>> p = torch.zeros(1, 6, 6, dtype=torch.bool); p[0, 1:3, 1:3] = True
        >>> sd = surface_distances(p, torch.zeros_like(p))[0][0]  # the ground truth is empty
        >>> sd.pred_to_gt.tolist(), sd.gt_to_pred.tolist(), sd.pred_sizes, sd.gt_empty
        ([inf, inf, inf, inf], [], None, True)
        >>> sd = surface_distances(p, p, convention="deepmind")[0][0]  # corner surfels, with their lengths
        >>> sd.pred_to_gt.tolist(), round(float(sd.pred_sizes.sum()), 4)
        ([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 6.8284)
    """

    pred_to_gt: np.ndarray
    gt_to_pred: np.ndarray
    pred_sizes: np.ndarray | None
    gt_sizes: np.ndarray | None
    pred_empty: bool
    gt_empty: bool
    _ranked: dict[bool, tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def ranked(self, from_pred: bool) -> tuple[np.ndarray, np.ndarray]:
        """One direction (``pred_to_gt`` if ``from_pred``, else ``gt_to_pred``) as DeepMind ranks it: the distances
        sorted by (distance, size) and the cumulative sizes over their sum (summed in that order, as DeepMind sums its
        sorted areas). Sorted once per direction, whatever number of percentiles reads it (HD and HD95)."""
        if from_pred not in self._ranked:
            d, w = (self.pred_to_gt, self.pred_sizes) if from_pred else (self.gt_to_pred, self.gt_sizes)
            if w is None:
                raise ValueError("The ranked lists need surfel sizes (the corner-surfel boundary).")
            order = np.lexsort((w, d))
            ws = w[order]
            self._ranked[from_pred] = d[order], np.cumsum(ws) / np.sum(ws)
        return self._ranked[from_pred]


def _box(points: np.ndarray) -> tuple[slice, ...]:
    """The bounding box of the True entries of ``points`` (at least one)."""
    box = []
    for axis in range(points.ndim):
        proj = np.flatnonzero(points.any(axis=tuple(a for a in range(points.ndim) if a != axis)))
        box.append(slice(int(proj[0]), int(proj[-1]) + 1))
    return tuple(box)


def point_set_distances(
    a: np.ndarray,
    b: np.ndarray,
    spacing: tuple[float, ...],
    metric: str = "euclidean",
    method: str = "auto",
) -> tuple[np.ndarray, np.ndarray]:
    """Distances from each True point of ``a`` to the nearest True point of ``b``, and from ``b`` to ``a``.

    ``a`` and ``b`` are bool arrays of one shape; points are returned in C order; spacing scales each axis (for the
    chessboard and taxicab metrics too: ``max_i s_i |dx_i|`` and ``sum_i s_i |dx_i|``). An empty side gives an empty
    list for itself and ``inf`` for every point of the other. ``method`` is ``"edt"``, ``"kdtree"`` or ``"auto"``
    (Euclidean only; the other metrics always use the KDTree): both are exact.

    Example:
        >>> import numpy as np
        >>> a = np.zeros((3, 4), bool); a[0, 0] = True
        >>> b = np.zeros((3, 4), bool); b[2, 3] = True
        >>> [x.tolist() for x in point_set_distances(a, b, (1.0, 1.0))]
        [[3.605551275463989], [3.605551275463989]]
    """
    metric = check_choice(metric, "distance_metric", DISTANCE_METRICS)
    method = check_choice(method, "method", ("auto", "edt", "kdtree"))
    na, nb = int(a.sum()), int(b.sum())
    if na == 0 or nb == 0:
        # one side empty: no nearest point for the other side's points (and an empty list for itself)
        return np.full(na, np.inf), np.full(nb, np.inf)
    box = _box(a | b)
    a, b = a[box], b[box]
    # the spacing over a power of two (exact; see spacing_scale): coordinates and distances stay in float64's range
    scale, scaled = spacing_scale(spacing, a.shape)
    if metric == "euclidean" and (method == "edt" or (method == "auto" and na + nb > _KDTREE_FILL * a.size)):
        d_ab = distance_to_features(b, spacing, at=a)
        d_ba = distance_to_features(a, spacing, at=b)
        return d_ab, d_ba
    axes = np.asarray(scaled, dtype=np.float64)
    ia, ib = np.argwhere(a), np.argwhere(b)
    if metric == "euclidean" and not bool(np.all(axes == 1.0)):
        d_ab, d_ba = _nearest_on_grid(ib, ia, axes), _nearest_on_grid(ia, ib, axes)
    else:  # (on a unit grid, after the scaling, the tree's distances are roots of exact integers: scipy's bits)
        p = {"euclidean": 2.0, "chessboard": np.inf, "taxicab": 1.0}[metric]
        pa, pb = ia * axes, ib * axes
        d_ab, d_ba = _nearest(pb, pa, p), _nearest(pa, pb, p)
    if scale != 1.0:
        d_ab *= scale
        d_ba *= scale
    return d_ab, d_ba


def _crop_to_union(stack: Tensor) -> Tensor:
    """``stack`` (N, *spatial) cut to the bounding box of all its foreground (unchanged when that is empty). Both
    boundary sets treat the outside of the image as background, and every voxel outside the box is background, so
    the cut changes no boundary point, code or C order (distances are translation-invariant): a 250^3 sphere pair's
    boundary work shrinks to its ~150^3 box."""
    # max-reductions of a uint8 view, each over contiguous memory (torch's `any` over several dims took 80 ms for a
    # (2, 250, 250, 250) stack): the first axis's projection from rows of the flattened rest, then the same on the
    # elementwise max over that axis
    level = stack.view(torch.uint8).amax(dim=0)
    box = []
    while level.ndim:
        proj = level.reshape(level.shape[0], -1).amax(dim=1).nonzero()
        if proj.numel() == 0:
            return stack  # no foreground anywhere
        box.append(slice(int(proj[0]), int(proj[-1]) + 1))
        level = level.amax(dim=0)
    return stack[(slice(None), *box)]


def _tree(points: np.ndarray) -> cKDTree:
    """A sliding-midpoint tree with 64-point leaves and no node shrinking: on grid points it took 0.12 s for the two
    directions of a 250^3 sphere pair (~55,000 points a side) against 0.28 s with scipy's defaults."""
    return cKDTree(points, leafsize=64, balanced_tree=False, compact_nodes=False)


def _nearest(points: np.ndarray, queries: np.ndarray, p: float) -> np.ndarray:
    """The distance from each query to its nearest point (Minkowski ``p``), exact, queried on torch's threads."""
    dist = _tree(points).query(queries, k=1, p=p, workers=max(1, torch.get_num_threads()))[0]
    return np.asarray(dist, dtype=np.float64)


#: tree distances within this relative band of a query's nearest are equal in real arithmetic (the tree's rounding
#: is ulps): the candidates among which scipy's lowest rounded value is taken
_TIE = 1e-12


def _nearest_on_grid(points: np.ndarray, queries: np.ndarray, spacing: np.ndarray) -> np.ndarray:
    """The Euclidean distance from each query to its nearest point, ``points`` and ``queries`` integer grid indices
    (N, ndim), in scipy's float operations (:func:`_grid_distances`): the tree finds the nearest; where another point
    is as near (within :data:`_TIE`, as 1 pixel at 0.3 and 3 pixels at 0.1 are) every such point is measured and the
    lowest rounded value taken, as scipy's transform gives (0.3, not 0.30000000000000004: on either side of a
    tolerance of 0.3)."""
    tree = _tree(points * spacing)
    located = queries * spacing
    workers = max(1, torch.get_num_threads())
    k = min(2, len(points))
    dist, index = tree.query(located, k=k, workers=workers)
    dist, index = dist.reshape(len(queries), k), index.reshape(len(queries), k)
    out = _grid_distances(queries - points[index[:, 0]], spacing)
    if k == 2:
        tied = np.flatnonzero(dist[:, 1] <= dist[:, 0] * (1 + _TIE))
        if tied.size:
            near = tree.query_ball_point(located[tied], dist[tied, 0] * (1 + _TIE), workers=workers)
            sizes = np.fromiter((len(x) for x in near), dtype=np.int64, count=tied.size)
            rows = np.repeat(tied, sizes)
            lengths = _grid_distances(queries[rows] - points[np.concatenate(near).astype(np.int64)], spacing)
            out[tied] = np.minimum.reduceat(lengths, np.cumsum(sizes) - sizes)
    return out


def _grid_distances(offsets: np.ndarray, spacing: np.ndarray) -> np.ndarray:
    """The Euclidean lengths of the integer ``offsets`` (N, ndim) on the grid ``spacing``, in scipy's float operations
    (``distance_transform_edt(sampling=)``: each offset times its spacing, squared, added in axis order, the root):
    the references' bits, where the tree's coordinates (index times spacing) subtracted round otherwise (9 pixels at
    0.1 mm: ``0.9`` against ``0.9000000000000001``, on the wrong side of an NSD tolerance of 9 pixels)."""
    scaled = offsets * spacing
    total = scaled[:, 0] * scaled[:, 0]
    for axis in range(1, scaled.shape[1]):
        total += scaled[:, axis] * scaled[:, axis]
    return np.sqrt(total)


def _device_distances(
    points: Tensor, counts: np.ndarray, spacings: Sequence[tuple[float, ...]]
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`point_set_distances` (Euclidean) of the boundary pairs of a group on their device: ``points`` (2n,
    *spatial) holds the predictions' boundary masks, then the targets'; ``counts`` their points per mask (host);
    ``spacings`` the n pairs' spacings. Returns each pair's ``(d_pg, d_gp)``. The pairs of one spacing take two
    batched transforms (the targets read at the predictions' points, then the reverse: views of ``points`` when every
    pair has that spacing, so no copy of the masks), not two per pair, and only the distance lists reach the host."""
    n = len(spacings)
    out: list[tuple[np.ndarray, np.ndarray]] = [(np.empty(0), np.empty(0))] * n
    for spacing in dict.fromkeys(spacings):
        rows = [r for r in range(n) if spacings[r] == spacing]
        if len(rows) == n:
            preds, targets = points[:n], points[n:]
        else:
            index = torch.tensor(rows, device=points.device)
            preds, targets = points[index], points[index + n]
        rows_np = np.asarray(rows)
        d_pg = distance_to_features_device(targets, spacing, preds).cpu().numpy()
        d_gp = distance_to_features_device(preds, spacing, targets).cpu().numpy()
        pg = np.split(d_pg, np.cumsum(counts[rows_np])[:-1])
        gp = np.split(d_gp, np.cumsum(counts[rows_np + n])[:-1])
        for k, r in enumerate(rows):
            out[r] = (pg[k], gp[k])
    return out


def pair_distances(
    pairs: Pairs, settings: Mapping[str, Any], *, corners: bool, on_device: bool | None = None
) -> list[tuple[int, int, SurfaceDistances]]:
    """(image, column, distances) for every computed pair under ``settings`` (``convention``, ``distance_metric``
    and ``connectivity`` of :func:`distance_settings`): the boundary set (``corners``), MedPy's ``connectivity``, and
    spacing applied to the distances (MONAI's chessboard / taxicab, which ignore it, refuse a spacing other than
    unit: :func:`check_metric_spacing`).

    The boundary sets of each group come from one batch of tensor operations, the distances from one EDT / KDTree per
    direction and pair. ``on_device`` computes the Euclidean distances with the device transform
    (:func:`~segmetrics_torch.ops.distance.distance_to_features_device`) where the masks are; by default the backend
    decides (:func:`~segmetrics_torch.ops.distance.takes_device_transform`: CUDA, or any device under the
    ``"tensor"`` setting; the host's exact KD-tree for CPU tensors otherwise); the other metrics always take the
    host's KDTree."""
    convention, distance_metric = settings["convention"], settings["distance_metric"]
    connectivity = check_connectivity(settings["connectivity"], convention, pairs.ndim, corners)
    check_metric_spacing(pairs, convention, distance_metric)
    out = []
    for group in pairs.groups:
        # predictions, then targets: one batch of boundary operations for both
        stack = _crop_to_union(torch.cat([group.preds, group.target]))
        on_tensors = takes_device_transform(stack.device) if on_device is None else on_device
        device_edt = on_tensors and distance_metric == "euclidean"
        n = group.preds.shape[0]
        nonempty = stack.flatten(1).any(dim=1).cpu().numpy()
        codes_t = None
        if corners:
            # the sizes are looked up at the surface points only (a full float64 map of the grid costs more)
            codes_t = corner_codes(stack)
            full = 2 ** (2**pairs.ndim) - 1
            points_t = (codes_t != 0) & (codes_t != full)
        else:
            points_t = inner_boundary(stack, connectivity)
        spacings = [pairs.spacing_of(image) for image in group.images]
        if device_edt:
            # on the device: only the point counts, the distance lists and the codes at the points reach the host
            counts = points_t.flatten(1).sum(dim=1).cpu().numpy()
            lists = _device_distances(points_t, counts, spacings)
            if codes_t is not None:
                at_points = np.split(codes_t[points_t].cpu().numpy(), np.cumsum(counts)[:-1])
        else:
            points = points_t.cpu().numpy()
            codes = None if codes_t is None else codes_t.cpu().numpy()
        for row in range(n):
            spacing = spacings[row]
            if device_edt:
                d_pg, d_gp = lists[row]
                if codes_t is not None:
                    p_codes, g_codes = at_points[row], at_points[n + row]
            else:
                p_pts, g_pts = points[row], points[n + row]
                d_pg, d_gp = point_set_distances(p_pts, g_pts, spacing, distance_metric)
                if codes is not None:
                    p_codes, g_codes = codes[row][p_pts], codes[n + row][g_pts]
            p_sizes = g_sizes = None
            if codes_t is not None:
                table = surfel_size_table(spacing)
                p_sizes, g_sizes = table[p_codes], table[g_codes]
            sd = SurfaceDistances(d_pg, d_gp, p_sizes, g_sizes, not nonempty[row], not nonempty[n + row])
            out.append((group.images[row], group.columns[row], sd))
    return out


def distance_settings(
    function: str, options: Mapping[str, object], conventions: Sequence[str], measure: str, named: Sequence[str]
) -> dict[str, Any]:
    """The shared keywords of a distance function (:class:`~.options.DistanceOptions`) with their defaults, the
    ``convention`` (one of ``conventions``, the references that define ``measure``) and the ``distance_metric`` it
    allows checked: the checks that need no image, made before any distance is computed. ``named``: the function's
    own keywords (hints for a misspelt one)."""
    settings = with_defaults(function, options, DISTANCE_DEFAULTS, named)
    settings["convention"] = check_convention(settings["convention"], conventions, measure)
    settings["distance_metric"] = check_metric(settings["distance_metric"], settings["convention"])
    return settings


def convention_distances(
    preds: object, target: object, settings: Mapping[str, Any], *, corners: bool
) -> tuple[Pairs, list[tuple[int, int, SurfaceDistances]]]:
    """The checked pairs of the inputs and their distance lists (:func:`pair_distances`) under ``settings`` (from
    :func:`distance_settings`): the one path of every measure function."""
    reading = {key: settings[key] for key in MASK_DEFAULTS}
    pairs = prepare_pairs(preds, target, spacing=settings["spacing"], **reading)
    return pairs, pair_distances(pairs, settings, corners=corners)


def surface_distances(
    preds: object, target: object, *, use_subvoxels: bool = False, **options: Unpack[DistanceOptions]
) -> list[list[SurfaceDistances | None]]:
    """The distance lists of every (image, class) pair, for reductions of one's own (one pass of EDTs).

    The boundary set follows ``convention``: voxel-centre inner edges for ``"monai"``, ``"medpy"`` and
    ``"torchmetrics"`` (``connectivity`` as MedPy), corner surfels with their sizes for ``"deepmind"`` and for
    ``use_subvoxels=True``. ``distance_metric`` other than ``"euclidean"`` is scaled by ``spacing`` under
    ``"torchmetrics"`` and refuses a spacing other than unit under ``"monai"`` (MONAI's ``distance_transform_cdt``
    ignores it). The other keywords
    (:class:`~.options.DistanceOptions`) as :func:`~segmetrics_torch.functional.surface.hausdorff_distance`.

    Returns:
        ``result[image][column]``: a :class:`SurfaceDistances`, or None for the class equal to ``ignore_index``.

    Example:
        >>> import torch
        >>> p = torch.zeros(1, 6, 6, dtype=torch.bool); p[0, 1:3, 1:3] = True
        >>> sd = surface_distances(p, p.roll(1, dims=2))[0][0]
        >>> sd.pred_to_gt.tolist(), sd.gt_to_pred.tolist()
        ([1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0])
    """
    settings = distance_settings("surface_distances", options, CONVENTIONS, "surface distances", ("use_subvoxels",))
    corners = check_corners(settings["convention"], use_subvoxels)
    pairs, results = convention_distances(preds, target, settings, corners=corners)
    table: list[list[SurfaceDistances | None]] = [[None] * len(pairs.class_ids) for _ in range(pairs.batch_size)]
    for image, column, sd in results:
        table[image][column] = sd
    return table


def check_metric(distance_metric: object, convention: str) -> str:
    metric = check_choice(distance_metric, "distance_metric", DISTANCE_METRICS)
    if metric != "euclidean" and convention in ("medpy", "deepmind"):
        raise ValueError(
            f"Expected `distance_metric`='euclidean' with convention={convention!r} (it has no other), "
            f"but got {metric!r}."
        )
    return metric


def check_metric_spacing(pairs: Pairs, convention: str, distance_metric: str) -> None:
    """MONAI's chessboard and taxicab distances (``distance_transform_cdt``) ignore the spacing, silently: under
    ``"monai"`` a spacing other than unit with them is a ``ValueError`` that names both fixes (TorchMetrics scales
    them: ``max_i s_i |dx_i|`` and ``sum_i s_i |dx_i|``)."""
    if convention != "monai" or distance_metric == "euclidean":
        return
    spacings = [pairs.spacing] if pairs.image_spacing is None else pairs.image_spacing
    other = next((s for s in spacings if any(v != 1.0 for v in s)), None)
    if other is not None:
        raise ValueError(
            f"Expected `spacing`=None (unit) with distance_metric={distance_metric!r} and convention='monai', but "
            f"got {other}: MONAI's {distance_metric} distance transform ignores the spacing, so its numbers would "
            f"be in voxels. Pass convention='torchmetrics' for {distance_metric} distances scaled by the spacing "
            "(max over the axes of spacing x offset for chessboard), or spacing=None for MONAI's voxel distances."
        )


def check_corners(convention: str, use_subvoxels: object) -> bool:
    if not isinstance(use_subvoxels, bool):
        raise TypeError(f"Expected argument `use_subvoxels` to be a bool, but got {use_subvoxels!r}.")
    return convention == "deepmind" or use_subvoxels


def check_connectivity(connectivity: object, convention: str, ndim: int, corners: bool) -> int:
    if isinstance(connectivity, bool) or not isinstance(connectivity, int) or not 1 <= connectivity <= ndim:
        raise ValueError(
            f"Expected `connectivity` to be an int in [1, {ndim}] for {ndim}-D images, but got {connectivity!r}."
        )
    if connectivity != 1 and (corners or convention != "medpy"):
        raise ValueError(
            f"Expected `connectivity`=1 with convention={convention!r}: only MedPy's edges take another "
            f"structuring element, but got {connectivity}."
        )
    return connectivity
