"""Baselines of the meta-measure tests: partitions made without looking at the image (Pont-Tuset & Marques, CVPR
2013, §4), generic and noise foreground maps (Margolin et al., CVPR 2014; Fan et al., ICCV 2017 / IJCAI 2018), the
swapped-image pairing and the morphological ground-truth perturbation.

The quadtree hierarchy depends on the image size only: SEISM's ``src/baseline/create_quad_tree.m`` cuts each axis
into 32 cells at ``floor(linspace(1, n+1, 33))`` and keeps every second cut per coarser level (32, 16, 8, 4, 2 cells
per axis). Every segment of a cut line between two cuts of the perpendicular axis gets its own grid value, larger for
coarser levels and, within a level, in the order SEISM writes them (horizontal lines, then vertical ones, later
writes overwriting crossings), so thresholding removes the finest segments first. ``griducm2seg.m`` then keeps the
grid values strictly above the ``num_regs``-th largest distinct value (0 included; 0 if there are fewer values).

The random hierarchy merges neighbouring regions of a fine over-segmentation in a seeded random order (ours; SEISM
has none). Every random baseline takes a non-negative ``seed`` and is a deterministic function of its arguments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np
import torch
from torch import Tensor

from .._checks import as_binary_mask, check_choice, check_tensor
from ..functional.boundary.summary import matlab_linspace
from ..functional.partition.segmentation import as_label_list
from ..ops.hierarchy import gridbmap2seg, ucm_hierarchy
from ..ops.morphology import dilate_disk

__all__ = [
    "PERTURBATIONS",
    "Perturbation",
    "centered_circle_map",
    "centered_gaussian_map",
    "gaussian_noise_maps",
    "grid_oversegmentation",
    "match_size",
    "perturb_ground_truth",
    "quadtree_partition",
    "quadtree_partitions",
    "quadtree_ucm",
    "random_hierarchy_partition",
    "random_hierarchy_ucm",
    "switch_pairing",
]


def quadtree_ucm(height: int, width: int) -> Tensor:
    """SEISM's quadtree ``grid_ucm`` for an image of ``height`` x ``width`` pixels: a (2H+1, 2W+1) float64 ucm2.

    SEISM numbers the cut segments 1, 2, ... (coarser cuts get larger numbers); here they are divided by the largest
    number so that the result is a ucm2 in [0, 1] as the hierarchy and boundary families read it (the order of the
    levels, and so every partition it describes, is SEISM's).

    Sizes below 32 pixels per axis give repeated cuts (as in SEISM); BSDS images are 321 x 481 or 481 x 321.

    Example:
        >>> from segmetrics_torch.meta import quadtree_ucm
        >>> u = quadtree_ucm(64, 64)
        >>> u.shape, float(u.max())
        (torch.Size([129, 129]), 1.0)
    """
    for name, v in (("height", height), ("width", width)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 2:
            raise ValueError(f"Expected `{name}` to be an int >= 2, but got {v!r}.")
    bounds = []
    for n in (height, width):
        cuts = np.floor(matlab_linspace(1, n + 1, 33).numpy()).astype(np.int64)[1:-1]
        levels = [2 * cuts - 1]  # 1-based grid positions of the cut lines
        for _ in range(4):
            levels.append(levels[-1][1:-1:2])  # MATLAB (2:2:end-1)
        bounds.append(levels)
    rows, cols = bounds
    g = np.zeros((2 * height + 1, 2 * width + 1))
    h2, w2 = g.shape
    value = 1
    for lv in range(4):
        c = cols[lv]
        for r in rows[lv]:
            spans = [(1, c[0])] + [(c[k], c[k + 1]) for k in range(len(c) - 1)] + [(c[-1], w2 - 1)]
            for lo, hi in spans:  # 0-based [lo, hi): MATLAB 2:c(1), c(k)+1:c(k+1), c(end)+1:end-1
                g[r - 1, lo:hi] = value
                value += 1
        r_next = rows[lv + 1]
        for cc in c:
            spans = [(1, r_next[0])] + [(r_next[k], r_next[k + 1]) for k in range(len(r_next) - 1)]
            spans.append((r_next[-1], h2 - 1))
            for lo, hi in spans:
                g[lo:hi, cc - 1] = value
                value += 1
    g[rows[4] - 1, 1 : cols[4][0]] = value + 1
    g[rows[4] - 1, cols[4][0] :] = value + 2
    g[1:, cols[4] - 1] = value + 3
    g[:, 0] = g[:, 1]
    g[:, -1] = g[:, -2]
    g[0, :] = g[1, :]
    g[-1, :] = g[-2, :]
    return torch.from_numpy(g / g.max())


def quadtree_partition(height: int, width: int, num_regions: int, *, portrait: bool = True) -> Tensor:
    """SEISM's quadtree baseline partition: ``griducm2seg(create_quad_tree(rows, cols), num_regions)``, an (H, W)
    int64 label map.

    ``num_regions`` counts distinct grid values kept (SEISM's parameter), not exactly regions. With ``portrait``
    (default) the tree is built for the portrait size (rows = max(H, W)) and a landscape result is rotated by 90
    degrees counter-clockwise: SEISM stores one tree per dataset size and ``imrotate(partition, 90)`` when its size
    differs from the ground truth's, which is how its published BSDS500 QuadTree results were made (the landscape
    tree built directly puts the cuts elsewhere). ``portrait=False`` builds the tree for (H, W) as given.
    :func:`quadtree_partitions` gives several levels at once.

    Example:
        >>> from segmetrics_torch.meta import quadtree_partition
        >>> p = quadtree_partition(64, 64, 4)
        >>> p.shape, int(p.unique().numel())
        (torch.Size([64, 64]), 4)
    """
    if isinstance(num_regions, bool) or not isinstance(num_regions, int) or num_regions < 1:
        raise ValueError(f"Expected `num_regions` to be a positive int, but got {num_regions!r}.")
    return quadtree_partitions(height, width, [num_regions], portrait=portrait)[0]


def quadtree_partitions(height: int, width: int, num_regions: Sequence[int], *, portrait: bool = True) -> Tensor:
    """:func:`quadtree_partition` at several ``num_regions`` levels, an (L, H, W) int64 stack: the tree is built
    once and every level comes from one sweep of it (:func:`segmetrics_torch.ops.hierarchy.ucm_hierarchy`; the
    partition of a grid at a threshold is ``gridbmap2seg(grid > threshold)``).

    Example:
        >>> from segmetrics_torch.meta import quadtree_partitions
        >>> p = quadtree_partitions(64, 64, [2, 4, 16])
        >>> p.shape, [int(level.unique().numel()) for level in p]
        (torch.Size([3, 64, 64]), [2, 4, 16])
    """
    if isinstance(num_regions, (str, bytes)) or not isinstance(num_regions, Sequence) or not num_regions:
        raise ValueError(f"Expected `num_regions` to be a non-empty list of positive ints, but got {num_regions!r}.")
    for n in num_regions:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"Expected `num_regions` to hold positive ints, but got {num_regions!r}.")
    height, width = _check_int(height, "height", 2), _check_int(width, "width", 2)  # named before any swap
    rotate = portrait and height < width
    grid = quadtree_ucm(width, height) if rotate else quadtree_ucm(height, width)
    values = torch.unique(grid)
    # griducm2seg keeps the values strictly above the num_regions-th largest distinct value (0 if there are fewer)
    thresholds = torch.tensor(
        [float(values[values.numel() - n]) if n <= values.numel() else 0.0 for n in num_regions], dtype=torch.float64
    )
    levels = ucm_hierarchy([grid], thresholds).partitions(0)
    return torch.rot90(levels, 1, (1, 2)).contiguous() if rotate else levels


# ------------------------------------------------------------------------------------------------ shared checks


def _check_int(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"Expected `{name}` to be an int >= {minimum}, but got {value!r}.")
    return int(value)


def _check_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"Expected `seed` to be a non-negative int, but got {seed!r}.")
    return int(seed)


def _check_fraction(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < float(value) <= 1:
        raise ValueError(f"Expected `{name}` to be a number in (0, 1], but got {value!r}.")
    return float(value)


# ----------------------------------------------------------------------------------------- random hierarchy


def grid_oversegmentation(height: int, width: int, cells: int = 32) -> Tensor:
    """A regular over-segmentation: ``cells`` x ``cells`` rectangles cut where SEISM's quadtree cuts its finest level
    (``floor(linspace(1, n+1, cells+1))``), an (H, W) int64 label map numbered row-major from 0.

    With ``cells=32`` its rectangles are exactly the regions of the finest quadtree level (for the size as given), so
    a random hierarchy built on it and the quadtree start from the same atoms.

    Example:
        >>> from segmetrics_torch.meta import grid_oversegmentation
        >>> grid_oversegmentation(4, 6, cells=2)
        tensor([[0, 0, 0, 1, 1, 1],
                [0, 0, 0, 1, 1, 1],
                [2, 2, 2, 3, 3, 3],
                [2, 2, 2, 3, 3, 3]])
    """
    height, width = _check_int(height, "height", 1), _check_int(width, "width", 1)
    cells = _check_int(cells, "cells", 1)
    ids = []
    for n in (height, width):
        starts = np.floor(matlab_linspace(1, n + 1, cells + 1).numpy()).astype(np.int64)[:-1] - 1  # 0-based starts
        ids.append(np.searchsorted(starts, np.arange(n), side="right") - 1)
    rows, cols = ids
    return torch.from_numpy(rows[:, None] * cells + cols[None, :]).to(torch.int64)


def _neighbour_pairs(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (label, label) pairs across every horizontal and vertical pixel edge (as two flat arrays each)."""
    return (
        np.concatenate([labels[:, :-1].ravel(), labels[:-1, :].ravel()]),
        np.concatenate([labels[:, 1:].ravel(), labels[1:, :].ravel()]),
    )


def random_hierarchy_ucm(oversegmentation: Tensor, *, seed: int = 0) -> Tensor:
    """A seeded random hierarchy: the regions of a fine over-segmentation merged two neighbours at a time in random
    order, as a (2H+1, 2W+1) float64 ultrametric contour map.

    Construction: the 4-connected regions of ``oversegmentation`` (labels that are split into several pieces give
    several regions) are the R leaves. Every pair of regions sharing a pixel edge gets an independent random priority
    (a seeded permutation, ``numpy.random.default_rng(seed)``); walking the pairs in that order and merging the two
    regions whenever they are not yet in one region (Kruskal's order, so every step merges two *neighbouring*
    regions) gives R - 1 merges. A boundary between two leaves gets the value ``k / (R - 1)`` of the merge ``k``
    (1-based) that first put them into one region, so ``ucm > t`` keeps the boundaries of the regions still separate
    after the first ``floor(t (R - 1))`` merges: every threshold gives exactly ``R - floor(t (R - 1))`` regions, and
    the map is an ultrametric one (grid corners hold the maximum of their four edges, the outer frame copies its
    neighbours as BSDS ``ucm2`` maps do, so SEISM's 4-connected and BSR's 8-connected labelling agree).

    A random baseline in the spirit of the quadtree (Pont-Tuset & Marques, CVPR 2013 §4.2: partitions "created
    without taking into account the content of the image"); SEISM ships no random hierarchy, so this construction is
    ours (the issue's "random merging of neighbouring regions of a fine over-segmentation").

    Args:
        oversegmentation: (H, W) integer label map (e.g. :func:`grid_oversegmentation`, or superpixels).
        seed: non-negative int; the result is a deterministic function of (labels, seed).

    Returns:
        (2H+1, 2W+1) float64 tensor on the CPU with values in {0} U {k / (R-1)}; all zeros when R = 1.

    Example:
        >>> from segmetrics_torch.meta import grid_oversegmentation, random_hierarchy_ucm
        >>> u = random_hierarchy_ucm(grid_oversegmentation(8, 8, cells=4), seed=0)
        >>> u.shape, sorted(set(round(v, 4) for v in u.unique().tolist()))[:4]
        (torch.Size([17, 17]), [0.0, 0.0667, 0.1333, 0.2])
    """

    seed = _check_seed(seed)
    (labels,) = as_label_list([oversegmentation], "oversegmentation", 2)
    h, w = labels.shape
    # 4-connected leaves: walls wherever two neighbouring pixels carry different labels
    grid = torch.zeros((2 * h + 1, 2 * w + 1), dtype=torch.bool)
    grid[1::2, 2:-1:2] = labels[:, :-1] != labels[:, 1:]
    grid[2:-1:2, 1::2] = labels[:-1, :] != labels[1:, :]
    leaves = gridbmap2seg(grid).numpy()
    r = int(leaves.max()) + 1
    ucm = np.zeros((2 * h + 1, 2 * w + 1))
    if r > 1:
        a, b = _neighbour_pairs(leaves)
        cut = a != b
        lo, hi = np.minimum(a[cut], b[cut]), np.maximum(a[cut], b[cut])
        keys = np.unique(lo * r + hi)
        order = np.random.default_rng(seed).permutation(keys.size)
        level = _merge_levels(keys // r, keys % r, order, r)
        edge_value = level / (r - 1)
        hv = np.zeros(h * (w - 1) + (h - 1) * w)
        hv[cut] = edge_value[np.searchsorted(keys, lo * r + hi)]
        ucm[1::2, 2:-1:2] = hv[: h * (w - 1)].reshape(h, w - 1)
        ucm[2:-1:2, 1::2] = hv[h * (w - 1) :].reshape(h - 1, w)
        # an interior corner (2i, 2j) closes as soon as one of its four edges does
        ucm[2:-1:2, 2:-1:2] = np.maximum.reduce(
            [ucm[1:-2:2, 2:-1:2], ucm[3::2, 2:-1:2], ucm[2:-1:2, 1:-2:2], ucm[2:-1:2, 3::2]]
        )
        ucm[0, :], ucm[-1, :] = ucm[1, :], ucm[-2, :]
        ucm[:, 0], ucm[:, -1] = ucm[:, 1], ucm[:, -2]
    return torch.from_numpy(ucm)


def _merge_levels(u: np.ndarray, v: np.ndarray, order: np.ndarray, r: int) -> np.ndarray:
    """Kruskal merging of the region-adjacency edges (u, v) in ``order``: per edge, the 1-based merge step at which
    its two regions first belong to one region. Small-into-large member lists, O(E log R)."""
    members = [[i] for i in range(r)]
    owner = np.arange(r)
    incident: list[list[int]] = [[] for _ in range(r)]
    for e, (x, y) in enumerate(zip(u.tolist(), v.tolist(), strict=True)):
        incident[x].append(e)
        incident[y].append(e)
    level = np.zeros(u.size, dtype=np.int64)
    step = 0
    for e in order.tolist():
        a, b = owner[u[e]], owner[v[e]]
        if a == b:
            continue
        step += 1
        if len(members[a]) < len(members[b]):
            a, b = b, a
        for node in members[b]:  # edges from the smaller region into the larger one close at this step
            for f in incident[node]:
                if level[f] == 0:
                    other = v[f] if u[f] == node else u[f]
                    if owner[other] == a:
                        level[f] = step
        for node in members[b]:
            owner[node] = a
        members[a].extend(members[b])
        members[b] = []
    return level


def _partition_with_regions(grid: Tensor, num_regions: int) -> Tensor:
    values = torch.unique(grid)
    threshold = float(values[values.numel() - num_regions]) if num_regions <= values.numel() else 0.0
    return gridbmap2seg(grid > threshold)


def random_hierarchy_partition(oversegmentation: Tensor, num_regions: int, *, seed: int = 0) -> Tensor:
    """The partition of :func:`random_hierarchy_ucm` with ``num_regions`` regions (all leaves when there are fewer),
    an (H, W) int64 label map; the same selection rule as :func:`quadtree_partition` (SEISM ``griducm2seg``).

    Example:
        >>> from segmetrics_torch.meta import grid_oversegmentation, random_hierarchy_partition
        >>> p = random_hierarchy_partition(grid_oversegmentation(8, 8, cells=4), 5, seed=0)
        >>> p.shape, int(p.unique().numel())
        (torch.Size([8, 8]), 5)
    """
    num_regions = _check_int(num_regions, "num_regions", 1)
    return _partition_with_regions(random_hierarchy_ucm(oversegmentation, seed=seed), num_regions)


# ----------------------------------------------------------------------------------- generic foreground maps


def centered_gaussian_map(
    height: int,
    width: int,
    *,
    sigma: float = 0.25,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> Tensor:
    """Margolin et al.'s generic map (CVPR 2014 "How to evaluate foreground maps?", §6: a centred Gaussian that
    ignores the image content), an (H, W) map in (0, 1] with 1 at the centre.

    ``exp(-((y - cy)^2 / (2 (sigma H)^2) + (x - cx)^2 / (2 (sigma W)^2)))`` with the centre at ((H-1)/2, (W-1)/2)
    and a standard deviation of ``sigma`` times the side along each axis. The papers do not state the Gaussian's
    width (not verified here); 0.25 is our default.

    Example:
        >>> from segmetrics_torch.meta import centered_gaussian_map
        >>> m = centered_gaussian_map(5, 5)
        >>> m.shape, float(m[2, 2]), round(float(m[0, 0]), 4)
        (torch.Size([5, 5]), 1.0, 0.0773)
    """
    height, width = _check_int(height, "height", 1), _check_int(width, "width", 1)
    sigma = _check_fraction(sigma, "sigma")
    y = torch.arange(height, dtype=torch.float64, device=device) - (height - 1) / 2
    x = torch.arange(width, dtype=torch.float64, device=device) - (width - 1) / 2
    g = torch.exp(-((y[:, None] / (sigma * height)) ** 2 + (x[None, :] / (sigma * width)) ** 2) / 2)
    return g.to(dtype)


def centered_circle_map(
    height: int, width: int, *, radius: float = 0.25, device: torch.device | str | None = None
) -> Tensor:
    """A binary generic map: the disk of radius ``radius * min(H, W)`` around the image centre ((H-1)/2, (W-1)/2),
    an (H, W) bool tensor (the binary counterpart of :func:`centered_gaussian_map`, for binary-map measures such as
    Fan et al.'s E-measure, IJCAI 2018; the radius used there is not verified here, 0.25 is our default).

    Example:
        >>> from segmetrics_torch.meta import centered_circle_map
        >>> centered_circle_map(5, 7, radius=0.3).int()
        tensor([[0, 0, 0, 0, 0, 0, 0],
                [0, 0, 1, 1, 1, 0, 0],
                [0, 0, 1, 1, 1, 0, 0],
                [0, 0, 1, 1, 1, 0, 0],
                [0, 0, 0, 0, 0, 0, 0]], dtype=torch.int32)
    """
    height, width = _check_int(height, "height", 1), _check_int(width, "width", 1)
    radius = _check_fraction(radius, "radius") * min(height, width)
    y = torch.arange(height, dtype=torch.float64, device=device) - (height - 1) / 2
    x = torch.arange(width, dtype=torch.float64, device=device) - (width - 1) / 2
    return y[:, None] ** 2 + x[None, :] ** 2 <= radius**2


def gaussian_noise_maps(
    num: int,
    height: int,
    width: int,
    *,
    mean: float = 0.5,
    std: float = 0.25,
    seed: int = 0,
    device: torch.device | str | None = None,
) -> Tensor:
    """``num`` random Gaussian noise maps (Fan et al., IJCAI 2018 §4: "random Gaussian noise maps"), a
    (num, H, W) float64 tensor: i.i.d. ``N(mean, std^2)`` per pixel, clipped to [0, 1].

    Seeded with a ``torch.Generator`` on the CPU (``manual_seed(seed)``) and then moved to ``device``, so a seed gives
    the same maps on every device. The papers' mean and deviation are not verified here (0.5 / 0.25 are ours).

    Example:
        >>> from segmetrics_torch.meta import gaussian_noise_maps
        >>> maps = gaussian_noise_maps(3, 8, 8, seed=0)
        >>> maps.shape, maps.dtype, bool((maps >= 0).all() and (maps <= 1).all())
        (torch.Size([3, 8, 8]), torch.float64, True)
        >>> bool((gaussian_noise_maps(3, 8, 8, seed=0) == maps).all())  # seeded
        True
    """
    num = _check_int(num, "num", 1)
    height, width = _check_int(height, "height", 1), _check_int(width, "width", 1)
    seed = _check_seed(seed)
    for name, v in (("mean", mean), ("std", std)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v) or (name == "std" and v <= 0):
            raise ValueError(f"Expected `{name}` to be a finite number{' > 0' if name == 'std' else ''}, got {v!r}.")
    gen = torch.Generator().manual_seed(seed)
    noise = torch.randn((num, height, width), generator=gen, dtype=torch.float64) * std + mean
    return noise.clamp_(0, 1).to(device)


# ------------------------------------------------------------------------------------ switches and perturbation


def switch_pairing(num: int, *, seed: int = 0) -> Tensor:
    """A seeded random derangement of ``range(num)``: image ``i`` is paired with ``pairing[i] != i`` (Margolin's
    ground-truth switch, Pont-Tuset & Marques' swapped image). A (num,) int64 tensor; needs ``num >= 2``.

    Uniform over derangements by rejection (a random permutation is a derangement with probability ~1/e).

    Example:
        >>> from segmetrics_torch.meta import switch_pairing
        >>> switch_pairing(3)
        tensor([2, 0, 1])
    """
    num = _check_int(num, "num", 2)
    rng = np.random.default_rng(_check_seed(seed))
    while True:
        p = rng.permutation(num)
        if not np.any(p == np.arange(num)):
            return torch.from_numpy(p).to(torch.int64)


def match_size(x: Tensor, size: tuple[int, int]) -> Tensor:
    """``x`` (..., h, w) brought to ``size`` = (H, W) for a swapped-image comparison: unchanged when the sizes agree;
    when (h, w) = (W, H) a portrait ``x`` is rotated by 90 degrees counter-clockwise onto a landscape image (MATLAB
    ``imrotate(x, 90)``, SEISM's rule for a portrait result on a landscape image) and a landscape ``x`` clockwise onto
    a portrait one (the inverse), so that an image brought to another's size and that image brought to the first's
    stand in one relative orientation (a measure and its mirror then score a pair and its reverse alike); otherwise
    nearest-neighbour resampling (pixel centres, no new labels).

    Example:
        >>> import torch
        >>> from segmetrics_torch.meta import match_size
        >>> x = torch.arange(6).reshape(3, 2)
        >>> match_size(x, (2, 3))  # portrait onto landscape: rotated 90 degrees counter-clockwise
        tensor([[1, 3, 5],
                [0, 2, 4]])
        >>> match_size(match_size(x, (2, 3)), (3, 2)).equal(x)  # and back, clockwise
        True
        >>> match_size(x, (4, 3)).shape  # otherwise nearest-neighbour resampling
        torch.Size([4, 3])
    """
    check_tensor(x, "x")  # validation only: equal sizes return `x` itself
    if x.ndim < 2:
        raise ValueError(f"Expected `x` of shape (..., h, w), but got shape {tuple(x.shape)}.")
    if (
        not isinstance(size, Sequence)
        or isinstance(size, (str, bytes))
        or len(size) != 2
        or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1 for v in size)
    ):
        raise ValueError(f"Expected `size` to be two positive ints (H, W), but got {size!r}.")
    h, w = x.shape[-2:]
    H, W = int(size[0]), int(size[1])
    if (h, w) == (H, W):
        return x
    if (h, w) == (W, H):
        return torch.rot90(x, 1 if h > w else -1, (-2, -1)).contiguous()
    rows = ((torch.arange(H, dtype=torch.float64) + 0.5) * h / H).floor().long().clamp_(max=h - 1).to(x.device)
    cols = ((torch.arange(W, dtype=torch.float64) + 0.5) * w / W).floor().long().clamp_(max=w - 1).to(x.device)
    return x[..., rows[:, None], cols[None, :]]


#: the annotation errors of :func:`perturb_ground_truth`
Perturbation = Literal["dilate", "erode"]
PERTURBATIONS: tuple[str, ...] = get_args(Perturbation)


def perturb_ground_truth(target: Tensor, *, operation: Perturbation = "dilate", radius: float = 5.0) -> Tensor:
    """Morphologically perturbed binary ground truth (Margolin et al.'s "annotation errors" meta-measure):
    dilation or erosion by the disk ``u^2 + v^2 <= radius^2``, exact at any radius (distance transform).

    Erosion is ``~dilate(~target)`` with the outside of the image counted as foreground, i.e. the image border does
    not erode (MATLAB ``imerode``'s padding for binary images). The papers' structuring element is not verified
    here; the disk of radius 5 is our default.

    Args:
        target: (B, H, W) or (H, W) bool / {0, 1} / uint8 (binarised ``> 128``) masks.
        operation: ``"dilate"`` or ``"erode"``.
        radius: disk radius in pixels (> 0).

    Returns:
        bool tensor of ``target``'s shape and device.

    Example:
        >>> import torch
        >>> from segmetrics_torch.meta import perturb_ground_truth
        >>> gt = torch.zeros(1, 9, 9, dtype=torch.bool)
        >>> gt[0, 3:6, 3:6] = True
        >>> int(perturb_ground_truth(gt, radius=1).sum())  # the 3x3 square grows by the radius-1 disk
        21
        >>> int(perturb_ground_truth(gt, operation="erode", radius=1).sum())
        1
    """

    check_choice(operation, "operation", PERTURBATIONS)
    if isinstance(radius, bool) or not isinstance(radius, (int, float)) or not 0 < radius < math.inf:
        raise ValueError(f"Expected `radius` to be a finite number > 0, but got {radius!r}.")
    target = check_tensor(target, "target")
    if target.ndim not in (2, 3):
        raise ValueError(f"Expected `target` of shape (B, H, W) or (H, W), but got shape {tuple(target.shape)}.")
    # uint8 as an 8-bit image (> 128); other dtypes must be {0, 1}: 0.5 is no mask, not "True"
    mask = target > 128 if target.dtype == torch.uint8 else as_binary_mask(target, "target")
    batch = mask if mask.ndim == 3 else mask[None]
    out = dilate_disk(batch, radius) if operation == "dilate" else ~dilate_disk(~batch, radius)
    return out if mask.ndim == 3 else out[0]
