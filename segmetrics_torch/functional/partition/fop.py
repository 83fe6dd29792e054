r"""Precision-recall for objects and parts, Fop (Pont-Tuset & Marques, CVPR 2013, Algorithm 1), batched.

Reference: SEISM ``src/measures/fop.hpp`` (class ``ObjectsAndPartsF``), whose constants and rules are the default:

* Per cell of a table (partition region ``i``, region ``j`` of annotation ``k``): recall ``O_G = n_ij / b_j`` and
  precision ``O_S = n_ij / a_i``.
* Candidates: per map, regions sorted by area fraction descending (ties: higher first-appearance index first, the
  reverse iteration of SEISM's ``std::multimap``); a region is a candidate iff the fractions of the regions before it
  sum (in that order, float64) to less than 0.99, so the smallest regions covering the last 1% are ignored.
* Classification over candidate pairs, in SEISM's loop order (annotation, its region ``j``, partition region ``i``):
  ``O_G >= g_o and O_S >= g_o``: both OBJECT; else ``O_G >= g_p and O_S >= g_o``: ``i`` becomes PART if still
  unclassified; else ``O_G >= g_o and O_S >= g_p``: ``j`` becomes PART. Comparisons are ``>=`` (the paper writes
  ``>``). So a partition region is OBJECT if any annotation's region matches it, else PART if any contains it; an
  annotation region takes the class of the last partition region (in index order) that fired rule 1 or 3 (only one
  can when ``g_o > 0.5``).
* Fragmentation over all cells: ``O_S >= g_o > O_G`` adds ``O_G`` to annotation region ``j``; ``O_G >= g_o > O_S``
  adds ``O_S`` to partition region ``i`` (summed over all annotations, then divided by their number).
* ``P = (objects_S + frag_S + beta parts_S) / candidates_S`` and ``R`` likewise over the regions of all annotations
  pooled; ``F = 2PR/(P+R)``, 0 when both are 0.

Constants: ``gamma_obj = 0.9`` (SEISM's code and published results; the CVPR'13 text says 0.95, available as an
argument), ``gamma_part = 0.25``, ``beta = 0.1``, area percentile 0.99.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ...ops.contingency import ContingencyTables, TableSlots

__all__: list[str] = []

AREA_PERCENTILE = 0.99


def candidates(sizes: Tensor, owner: Tensor, regions: Tensor, num_pixels: Tensor) -> Tensor:
    """(R,) bool: SEISM's candidate rule for regions of several maps.

    Args:
        sizes: (R,) region areas, regions of one map contiguous and in first-appearance order.
        owner: (R,) map index of each region; ``regions`` (M,) regions per map; ``num_pixels`` (M,) pixels per map.
    """
    m = regions.numel()
    width = int(regions.max())
    offset = torch.cumsum(regions, 0) - regions
    local = torch.arange(sizes.numel(), device=sizes.device) - offset[owner]
    # visiting order: area descending, then index descending; padding (-1) sorts last
    key = torch.full((m, width), -1, dtype=torch.int64, device=sizes.device)
    key[owner, local] = sizes * width + local
    order = torch.argsort(key, dim=1, descending=True, stable=True)
    frac = torch.zeros((m, width), dtype=torch.float64, device=sizes.device)
    frac[owner, local] = sizes.double() / num_pixels[owner].double()
    frac_sorted = torch.gather(frac, 1, order)
    # SEISM adds the fractions one by one from 0; a row-wise cumsum keeps that order (sequential on the CPU)
    zero = torch.zeros((m, 1), dtype=torch.float64, device=sizes.device)
    before = torch.cat([zero, torch.cumsum(frac_sorted, 1)[:, :-1]], 1)
    cand_sorted = before < AREA_PERCENTILE
    cand = torch.zeros((m, width), dtype=torch.bool, device=sizes.device)
    cand.scatter_(1, order, cand_sorted)
    return cand[owner, local]


def objects_and_parts(
    ct: ContingencyTables, *, gamma_obj: float = 0.9, gamma_part: float = 0.25, beta: float = 0.1
) -> tuple[Tensor, Tensor, Tensor]:
    """(F, P, R), each (P,) float64 per partition, from the tables of every partition against its annotations."""
    dev = ct.counts.device
    n = ct.counts.double()
    og = n / ct.col_sizes.double()[ct.cols]
    os_ = n / ct.row_sizes.double()[ct.rows]
    n_parts = ct.num_partitions
    n_pix_p = torch.zeros(n_parts, dtype=torch.int64, device=dev).scatter_reduce_(
        0, ct.table_partition, ct.num_pixels, reduce="amax", include_self=False
    )
    n_ann = ct.annotation_regions.numel()
    n_pix_a = torch.zeros(n_ann, dtype=torch.int64, device=dev).scatter_reduce_(
        0, ct.table_annotation, ct.num_pixels, reduce="amax", include_self=False
    )
    cand_row = candidates(ct.row_sizes, ct.row_partition, ct.partition_regions, n_pix_p)
    cand_col = candidates(ct.col_sizes, ct.col_annotation, ct.annotation_regions, n_pix_a)

    both = cand_row[ct.rows] & cand_col[ct.cols]
    hi_g, hi_s = og >= gamma_obj, os_ >= gamma_obj
    rule1 = both & hi_g & hi_s
    rule2 = both & ~rule1 & (og >= gamma_part) & hi_s
    rule3 = both & ~rule1 & ~rule2 & hi_g & (os_ >= gamma_part)

    # partition regions: OBJECT if any annotation's region matches, else PART if any contains it
    n_rows = ct.row_sizes.numel()
    obj_row = torch.zeros(n_rows, dtype=torch.bool, device=dev).index_fill_(0, ct.rows[rule1], True)
    part_row = torch.zeros(n_rows, dtype=torch.bool, device=dev).index_fill_(0, ct.rows[rule2], True) & ~obj_row
    frag_row = torch.zeros(n_rows, dtype=torch.float64, device=dev).index_add_(
        0, ct.rows, torch.where(hi_g & ~hi_s, os_, 0.0)
    )

    # annotation regions are classified per table: slot (table, region)
    cs = TableSlots(ct, "col")
    slot, n_slots = cs.of_entry, cs.count
    fired = rule1 | rule3
    last = torch.full((n_slots,), -1, dtype=torch.int64, device=dev).scatter_reduce_(
        0, slot[fired], ct.rows[fired], reduce="amax", include_self=True
    )
    decisive = fired & (ct.rows == last[slot])
    obj_slot = torch.zeros(n_slots, dtype=torch.bool, device=dev).index_fill_(0, slot[decisive & rule1], True)
    part_slot = torch.zeros(n_slots, dtype=torch.bool, device=dev).index_fill_(0, slot[decisive & rule3], True)
    frag_slot = torch.zeros(n_slots, dtype=torch.float64, device=dev).index_add_(
        0, slot, torch.where(hi_s & ~hi_g, og, 0.0)
    )
    cand_slot = cand_col[cs.region]

    def per_partition(values: Tensor, owner: Tensor) -> Tensor:
        return torch.zeros(n_parts, dtype=torch.float64, device=dev).index_add_(0, owner, values.double())

    n_tab = torch.bincount(ct.table_partition, minlength=n_parts).double()
    unclassified_row = cand_row & ~obj_row & ~part_row
    num_s = (
        per_partition(obj_row, ct.row_partition)
        + per_partition(torch.where(unclassified_row, frag_row, 0.0), ct.row_partition) / n_tab
        + beta * per_partition(part_row, ct.row_partition)
    )
    precision = num_s / per_partition(cand_row, ct.row_partition)

    slot_partition = ct.table_partition[cs.table]
    unclassified_slot = cand_slot & ~obj_slot & ~part_slot
    num_g = (
        per_partition(obj_slot, slot_partition)
        + per_partition(torch.where(unclassified_slot, frag_slot, 0.0), slot_partition)
        + beta * per_partition(part_slot, slot_partition)
    )
    recall = num_g / per_partition(cand_slot, slot_partition)
    s = precision + recall
    f = torch.where(s > 0, 2 * precision * recall / torch.where(s > 0, s, 1.0), 0.0)
    return f, precision, recall
