"""Baseline partitions of the meta-measure tests (Pont-Tuset & Marques, CVPR 2013, §4).

The quadtree hierarchy depends on the image size only: SEISM's ``src/baseline/create_quad_tree.m`` cuts each axis
into 32 cells at ``floor(linspace(1, n+1, 33))`` and keeps every second cut per coarser level (32, 16, 8, 4, 2 cells
per axis). Every segment of a cut line between two cuts of the perpendicular axis gets its own grid value, larger for
coarser levels and, within a level, in the order SEISM writes them (horizontal lines, then vertical ones, later
writes overwriting crossings), so thresholding removes the finest segments first. ``griducm2seg.m`` then keeps the
grid values strictly above the ``num_regs``-th largest distinct value (0 included; 0 if there are fewer values).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from ..functional.boundary.summary import matlab_linspace
from ..ops.hierarchy import gridbmap2seg

__all__ = ["quadtree_partition", "quadtree_ucm"]


def quadtree_ucm(height: int, width: int) -> Tensor:
    """SEISM's quadtree ``grid_ucm`` for an image of ``height`` x ``width`` pixels: a (2H+1, 2W+1) float64 grid.

    Sizes below 32 pixels per axis give repeated cuts (as in SEISM); BSDS images are 321 x 481 or 481 x 321.
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
    return torch.from_numpy(g)


def quadtree_partition(height: int, width: int, num_regions: int, *, portrait: bool = True) -> Tensor:
    """SEISM's quadtree baseline partition: ``griducm2seg(create_quad_tree(rows, cols), num_regions)``, an (H, W)
    int64 label map.

    ``num_regions`` counts distinct grid values kept (SEISM's parameter), not exactly regions. With ``portrait``
    (default) the tree is built for the portrait size (rows = max(H, W)) and a landscape result is rotated by 90
    degrees counter-clockwise: SEISM stores one tree per dataset size and ``imrotate(partition, 90)`` when its size
    differs from the ground truth's, which is how its published BSDS500 QuadTree results were made (the landscape
    tree built directly puts the cuts elsewhere). ``portrait=False`` builds the tree for (H, W) as given.
    """
    if isinstance(num_regions, bool) or not isinstance(num_regions, int) or num_regions < 1:
        raise ValueError(f"Expected `num_regions` to be a positive int, but got {num_regions!r}.")
    rotate = portrait and height < width
    grid = quadtree_ucm(width, height) if rotate else quadtree_ucm(height, width)
    values = torch.unique(grid)
    threshold = float(values[values.numel() - num_regions]) if num_regions <= values.numel() else 0.0
    seg = gridbmap2seg(grid > threshold)
    return torch.rot90(seg, 1, (0, 1)).contiguous() if rotate else seg
