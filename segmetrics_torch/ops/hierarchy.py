"""Hierarchies of partitions from ultrametric contour maps (UCM), batched over levels.

A ``ucm2`` is the double-size (2H+1, 2W+1) grid of Arbelaez et al. (TPAMI 2011): pixel cells at odd (row, col),
boundary cells between them, grid corners at even (row, col). The partition at threshold ``t`` has two published
definitions, selected by ``rule``:

* ``"seism"`` (SEISM ``gridbmap2seg(ucm2 > t)``): cells with ``ucm2 > t`` and all grid corners are walls; regions are
  the 4-connected components of the other cells, sampled at the pixel cells.
* ``"bsr"`` (BSR ``evaluation_reg_image.m``: ``bwlabel(ucm2 <= t)``): the 8-connected components of the cells with
  ``ucm2 <= t``.

Both give the same partitions on genuine ultrametric maps (checked on the BSDS500 gPb-owt-ucm sample); they can
differ on arbitrary grid maps. A pixel whose own cell exceeds ``t`` gets the background label 0 of ``bwlabel``, one
region shared by all such pixels, as in the references.

Levels are computed in one union-find sweep per image (cells opened in order of value), so all levels cost about as
much as one. Every level is a union of *atoms* (the regions at the lowest threshold, closed pixels on their own):
the result is the (H, W) atom map plus, per level, the label of every atom, labels numbered in order of first
appearance in a row-major scan (SEISM's relabelling).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple, get_args

import numpy as np
import torch
from torch import Tensor

from segmetrics_torch._checks import check_choice

__all__ = ["RULES", "Hierarchy", "Rule", "gridbmap2seg", "region_count_thresholds", "ucm_hierarchy"]

#: the partition of a ucm2 at a threshold: SEISM's 4-connected ``gridbmap2seg`` or BSR's 8-connected ``bwlabel``
Rule = Literal["seism", "bsr"]
RULES: tuple[str, ...] = get_args(Rule)


class Hierarchy(NamedTuple):
    """Partitions of B images at L levels.

    Attributes:
        atoms: list of B (H, W) int64 atom maps, atoms numbered by first appearance.
        atom_labels: list of B (L, n_atoms) int64 level labels of the atoms (first-appearance order per level).
        level_regions: (B, L) int64 number of regions per level.
    """

    atoms: list[Tensor]
    atom_labels: list[Tensor]
    level_regions: Tensor

    def partitions(self, index: int) -> Tensor:
        """(L, H, W) label maps of image ``index``."""
        return self.atom_labels[index][:, self.atoms[index]]


def ucm_hierarchy(ucm2: Sequence[Tensor], thresholds: Tensor, *, rule: Rule = "seism") -> Hierarchy:
    """Partitions of each ``ucm2`` at every threshold (see the module doc for ``rule``).

    Args:
        ucm2: list of B (2H+1, 2W+1) floating maps (checked by the caller: finite, odd sizes >= 3).
        thresholds: (L,) float64 thresholds for every image, or (B, L) per image; any order, results follow it.
        rule: "seism" (default) or "bsr".

    Returns:
        :class:`Hierarchy` on the device of ``ucm2[0]``. Runs in a compiled CPU kernel (union-find is sequential).
    """
    from ._kernels.labels import hierarchy_atoms, hierarchy_levels

    check_choice(rule, "rule", RULES)
    device = ucm2[0].device
    thr = thresholds.detach().to("cpu", torch.float64).numpy()
    thr = np.broadcast_to(thr, (len(ucm2), thr.shape[-1]))
    order = np.argsort(thr, axis=1, kind="stable")
    thr_sorted = np.ascontiguousarray(np.take_along_axis(thr, order, 1))
    dims = np.array([[(u.shape[0] - 1) // 2, (u.shape[1] - 1) // 2] for u in ucm2], np.int64)
    hmax, wmax = (int(v) for v in dims.max(0))
    stack = np.zeros((len(ucm2), 2 * hmax + 1, 2 * wmax + 1), np.float64)
    for b, u in enumerate(ucm2):
        stack[b, : u.shape[0], : u.shape[1]] = u.detach().to("cpu", torch.float64).numpy()
    eight = rule == "bsr"
    atoms = np.zeros((len(ucm2), hmax, wmax), np.int64)
    n_atoms = np.zeros(len(ucm2), np.int64)
    hierarchy_atoms(stack, dims, thr_sorted, eight, not eight, atoms, n_atoms)
    n_levels = thr.shape[1]
    levels = np.zeros((len(ucm2), n_levels, int(n_atoms.max())), np.int64)
    counts = np.zeros((len(ucm2), n_levels), np.int64)
    hierarchy_levels(stack, dims, thr_sorted, eight, not eight, atoms, n_atoms, levels, counts)
    inverse = np.argsort(order, axis=1)
    atom_maps = [torch.from_numpy(atoms[b, : dims[b, 0], : dims[b, 1]].copy()).to(device) for b in range(len(ucm2))]
    atom_labels = [torch.from_numpy(levels[b][inverse[b], : n_atoms[b]].copy()).to(device) for b in range(len(ucm2))]
    counts = np.take_along_axis(counts, inverse, 1)
    return Hierarchy(atom_maps, atom_labels, torch.from_numpy(counts).to(device))


def gridbmap2seg(grid: Tensor, *, rule: Rule = "seism") -> Tensor:
    """The partition of one (2H+1, 2W+1) boolean boundary grid (SEISM ``gridbmap2seg``; ``rule="bsr"`` labels the
    non-boundary cells 8-connected). Labels are numbered 0.. by first appearance."""
    if grid.ndim != 2 or grid.shape[0] % 2 == 0 or grid.shape[1] % 2 == 0 or min(grid.shape) < 3:
        raise ValueError(f"Expected `grid` of odd shape (2H+1, 2W+1) with H, W >= 1, but got {tuple(grid.shape)}.")
    h = ucm_hierarchy([grid.double()], torch.tensor([0.5], dtype=torch.float64), rule=rule)
    return h.partitions(0)[0]


def region_count_thresholds(ucm2: Tensor, num_regions: Sequence[int] | Tensor) -> Tensor:
    """SEISM's threshold for "``n`` regions" (``read_one_ucm.m``): over the distinct non-zero values of ``ucm2``,
    ascending, the ``n``-th largest (``all_th(end-n+1)``); 0 if there are fewer than ``n`` values. The partition at
    that threshold keeps the boundaries strictly above it, so it has at most ``n`` regions on a true ultrametric map.

    Returns:
        (len(num_regions),) float64 thresholds.
    """
    n = torch.as_tensor(num_regions, dtype=torch.int64, device=ucm2.device).flatten()
    values = torch.unique(ucm2.double())
    values = values[values != 0]
    idx = values.numel() - n
    out = torch.zeros(n.numel(), dtype=torch.float64, device=ucm2.device)
    ok = (n <= values.numel()) & (n >= 1)
    out[ok] = values[idx[ok]]
    return out
