"""Hierarchies of partitions (UCMs or stacks of segmentations) evaluated at every level in one batch.

For a ``ucm2`` all levels come from one union-find sweep (:func:`segmetrics_torch.ops.hierarchy.ucm_hierarchy`) as
merges of *atoms* (the finest regions), so the pixels are tabulated once per annotation (atoms x annotation regions)
and every level's table is an aggregation of that small table: L levels cost little more than one. A ``"stack"`` of
L label maps per image (e.g. BSR ``segs``) need not be nested and is tabulated pixel by pixel.

Per level the results are those of :func:`.segmentation.partition_measures` plus the Berkeley region benchmark's
covering counts (BSR ``evaluation_reg_image.m``): ``reg_cnt_r = sum_k sum_j |G_kj| max_i J``,
``reg_sum_r = K N``, ``reg_cnt_p = sum_i |S_i| max_{k, j} J``, ``reg_sum_p = N``, and per image
``reg_cnt_r_best = sum_k sum_j |G_kj| max_levels max_i J``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

import torch
from torch import Tensor

from ..._checks import (
    ImageBatch,
    batch_items,
    check_bool,
    check_choice,
    check_positive_counts,
    check_positive_float,
    check_tensor,
)
from ...ops.contingency import (
    ContingencyTables,
    TableSlots,
    accumulate_tables,
    contingency_tables,
    pair_tables,
    relabel,
)
from ...ops.hierarchy import RULES, Rule, region_count_thresholds, ucm_hierarchy
from ...ops.unit_maps import as_ucm2
from ..boundary.bsds import default_thresholds
from .segmentation import _by_size, _reassemble, as_label_list, partition_fb, partition_tables
from .tables import TABLE_MEASURES, check_fop_constants, check_measures, measures_from_tables

__all__ = ["HIERARCHY_FORMATS", "HierarchyFormat", "hierarchy_measures", "region_benchmark_counts"]

#: hierarchies as ucm2 grids (thresholded) or as stacks of label maps (one per level)
HierarchyFormat = Literal["ucm2", "stack"]
HIERARCHY_FORMATS: tuple[str, ...] = get_args(HierarchyFormat)


def check_num_regions(num_regions: object) -> Tensor:
    """SEISM's "number of regions" parameters as a (L,) int64 tensor: whole numbers >= 1, at least one.

    Raises:
        ValueError: an empty list, a fraction, zero, a negative count, a bool or a non-numeric value.
    """
    return check_positive_counts(num_regions, "num_regions", "a list of positive whole numbers")


def _ucm_list(x: object, validate_args: bool) -> list[Tensor]:
    out = []
    for i, u in enumerate(batch_items(x, "preds", 2, "ucm2 maps of shape (B, 2H+1, 2W+1)")):
        u = check_tensor(u, f"preds[{i}]")
        if u.ndim != 2:
            raise ValueError(f"Expected `preds[{i}]` to be a (2H+1, 2W+1) ucm2, but got shape {tuple(u.shape)}.")
        out.append(as_ucm2(u, f"preds[{i}]", validate_args))
    return out


def _coarsen(base: ContingencyTables, atom_labels: list[Tensor], level_regions: Tensor) -> ContingencyTables:
    """Tables of every level from the atoms x annotations tables (one partition = one image's atom map)."""
    dev = base.counts.device
    n_img, n_lev = level_regions.shape
    n_atoms = base.partition_regions
    # the level-l label of every atom, all images in one flat tensor
    flat = torch.cat([a.flatten() for a in atom_labels])
    lab_start = torch.cumsum(n_atoms * n_lev, 0) - n_atoms * n_lev
    atom_offset = torch.cumsum(n_atoms, 0) - n_atoms
    img = base.table_partition[base.tables]
    atom_local = base.rows - atom_offset[img]
    levels = torch.arange(n_lev, device=dev)
    rows_local = flat[lab_start[img][None] + levels[:, None] * n_atoms[img][None] + atom_local[None]]
    p_image = torch.arange(n_img, device=dev).repeat_interleave(n_lev)
    # base tables have one partition per image, so an annotation's image is its tables' partition
    ann_image = torch.zeros(base.annotation_regions.numel(), dtype=torch.int64, device=dev).scatter_(
        0, base.table_annotation, base.table_partition
    )
    t_part, t_ann = pair_tables(p_image, ann_image)
    per_img = torch.bincount(base.table_partition, minlength=n_img)
    base_start = torch.cumsum(per_img, 0) - per_img
    new_start = torch.cumsum(per_img.repeat_interleave(n_lev), 0) - per_img.repeat_interleave(n_lev)
    part = img[None] * n_lev + levels[:, None]
    tables = new_start[part] + (base.tables - base_start[img])[None]
    col_offset = torch.cumsum(base.annotation_regions, 0) - base.annotation_regions
    cols_local = base.cols - col_offset[base.table_annotation[base.tables]]
    return accumulate_tables(
        tables.flatten(),
        rows_local.flatten(),
        cols_local.expand(n_lev, -1).flatten(),
        base.counts.expand(n_lev, -1).flatten(),
        t_part,
        t_ann,
        level_regions.flatten(),
        base.annotation_regions,
    )


def region_benchmark_counts(ct: ContingencyTables, num_levels: int) -> dict[str, Tensor]:
    """BSR region-benchmark covering counts per partition (see the module doc), partitions ordered image-major with
    ``num_levels`` per image: (B, L) float64 ``reg_cnt_r, reg_sum_r, reg_cnt_p, reg_sum_p`` and (B,)
    ``reg_cnt_r_best``.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import partition_tables, region_benchmark_counts
        >>> gt = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1]]])  # (K=1, H, W): left and right halves
        >>> levels = torch.stack([torch.zeros_like(gt[0]), gt[0]])  # (L=2, H, W): one region, then the halves
        >>> counts = region_benchmark_counts(partition_tables([levels], [gt]), num_levels=2)
        >>> counts["reg_cnt_r"].tolist(), counts["reg_sum_r"].tolist()  # covering 4/8 by one region, 8/8 by two
        ([[4.0, 8.0]], [[8.0, 8.0]])
        >>> counts["reg_cnt_p"].tolist(), counts["reg_cnt_r_best"].tolist()
        ([[4.0, 8.0]], [8.0])
    """
    dev = ct.counts.device
    n = ct.counts.double()
    jac = n / (ct.row_sizes.double()[ct.rows] + ct.col_sizes.double()[ct.cols] - n)
    n_part = ct.num_partitions

    def per_partition(values: Tensor, owner: Tensor) -> Tensor:
        return torch.zeros(n_part, dtype=torch.float64, device=dev).index_add_(0, owner, values)

    cs = TableSlots(ct, "col")
    cnt_r = per_partition(cs.size.double() * cs.amax(jac), ct.table_partition[cs.table])
    sum_r = per_partition(ct.num_pixels.double(), ct.table_partition)
    best_row = torch.zeros(ct.row_sizes.numel(), dtype=torch.float64, device=dev).scatter_reduce_(
        0, ct.rows, jac, reduce="amax", include_self=True
    )
    cnt_p = per_partition(ct.row_sizes.double() * best_row, ct.row_partition)
    sum_p = per_partition(ct.row_sizes.double(), ct.row_partition)
    best_col = torch.zeros(ct.col_sizes.numel(), dtype=torch.float64, device=dev).scatter_reduce_(
        0, ct.cols, jac, reduce="amax", include_self=True
    )
    # each annotation belongs to one image: its tables' partitions are that image's levels
    ann_part = torch.zeros(ct.annotation_regions.numel(), dtype=torch.int64, device=dev).scatter_reduce_(
        0, ct.table_annotation, ct.table_partition, reduce="amax", include_self=False
    )
    ann_image = torch.div(ann_part, num_levels, rounding_mode="floor")
    n_img = n_part // num_levels
    best = torch.zeros(n_img, dtype=torch.float64, device=dev).index_add_(
        0, ann_image[ct.col_annotation], ct.col_sizes.double() * best_col
    )
    shape = (n_img, num_levels)
    return {
        "reg_cnt_r": cnt_r.view(shape),
        "reg_sum_r": sum_r.view(shape),
        "reg_cnt_p": cnt_p.view(shape),
        "reg_sum_p": sum_p.view(shape),
        "reg_cnt_r_best": best,
    }


def hierarchy_measures(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    input_format: HierarchyFormat = "ucm2",
    thresholds: int | Sequence[float] | Tensor = 99,
    num_regions: Sequence[int] | Tensor | None = None,
    rule: Rule = "seism",
    measures: str | Sequence[str] | None = None,
    region_benchmark: bool = True,
    gamma_obj: float = 0.9,
    gamma_part: float = 0.25,
    beta: float = 0.1,
    max_dist: float = 0.0075,
    validate_args: bool = True,
) -> dict[str, Tensor]:
    """Partition measures of every level of each image's hierarchy.

    Args:
        preds: ``"ucm2"``: (B, 2H+1, 2W+1) double-size ultrametric contour maps or a list; ``"stack"``: (B, L, H, W)
            label maps or a list of (L, H, W), one partition per level.
        target: (B, K, H, W) human label maps or a list of (K_b, H, W).
        input_format: "ucm2" or "stack".
        thresholds: ucm2 levels: an int L gives MATLAB's ``linspace(1/(L+1), 1 - 1/(L+1), L)`` (99 -> 0.01 ... 0.99,
            SEISM's gPb-UCM parameters and BSR's default), or the values; the partition at ``t`` is
            ``gridbmap2seg(ucm2 > t)`` ("seism") or ``bwlabel(ucm2 <= t)`` ("bsr"), see ``rule``. For "stack", an int
            L labels the levels 1..L.
        num_regions: instead of thresholds, SEISM's "number of regions" parameters (ucm2 only): per image the
            threshold is the n-th largest distinct non-zero ucm2 value (``read_one_ucm.m``), 0 if there are fewer.
        rule: "seism" (4-connected, grid corners closed) or "bsr" (8-connected), see
            :mod:`segmetrics_torch.ops.hierarchy`.
        measures: keys of :func:`.segmentation.partition_measures` (default all; Fb is the costly one).
        region_benchmark: also return the BSR region-benchmark covering counts (``reg_*``).
        gamma_obj, gamma_part, beta, max_dist: as :func:`.segmentation.partition_measures`.

    Returns:
        dict of (B, L) tensors (float64; Fb counts int64) per key as :func:`.segmentation.partition_measures`, the
        ``reg_*`` counts, ``regions`` (B, L) int64 region counts per level, and ``thresholds``: (L,) float64 or, with
        ``num_regions``, (B, L) per image.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import hierarchy_measures
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])
        >>> stack = torch.stack([torch.zeros_like(seg), seg], dim=1)  # (B=1, L=2, H, W): coarse, fine
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])
        >>> out = hierarchy_measures(stack, gt, input_format="stack", thresholds=2, measures=["pri", "voi"])
        >>> [round(v, 4) for v in out["voi"][0].tolist()]
        [1.0, 1.2516]
        >>> out["regions"].tolist()
        [[1, 3]]
    """
    check_choice(input_format, "input_format", HIERARCHY_FORMATS)
    check_choice(rule, "rule", RULES)
    keys = check_measures(measures)
    check_fop_constants(gamma_obj, gamma_part, beta)
    check_positive_float(max_dist, "max_dist")
    check_bool(region_benchmark, "region_benchmark")
    check_bool(validate_args, "validate_args")
    g_list = as_label_list(target, "target", 3, validate_args)
    if input_format == "ucm2":
        u_list = _ucm_list(preds, validate_args)
        shapes = [((u.shape[0] - 1) // 2, (u.shape[1] - 1) // 2) for u in u_list]
        if num_regions is not None:
            regions = check_num_regions(num_regions)
            levels = torch.stack([region_count_thresholds(u, regions) for u in u_list]).cpu()
        else:
            levels = default_thresholds(thresholds, "soft", increasing=False)  # per-level tables: any order
    else:
        if num_regions is not None:
            raise ValueError("`num_regions` applies to ucm2 input only.")
        s_list = as_label_list(preds, "preds", 3, validate_args)
        shapes = [(s.shape[-2], s.shape[-1]) for s in s_list]
        levels = default_thresholds(thresholds, "stack", increasing=False)
        for i, s in enumerate(s_list):
            if s.shape[0] != levels.numel():
                raise ValueError(f"Expected `preds[{i}]` to hold {levels.numel()} levels, but got {s.shape[0]}.")
    if len(shapes) != len(g_list):
        raise ValueError(
            f"Expected `preds` and `target` to hold the same number of images, but got {len(shapes)} and {len(g_list)}."
        )
    for i, (shape, g) in enumerate(zip(shapes, g_list, strict=True)):
        if tuple(shape) != tuple(g.shape[-2:]):
            raise ValueError(
                f"Expected `preds[{i}]` to describe {tuple(g.shape[-2:])} images like `target[{i}]`, "
                f"but got {tuple(shape)}."
            )
    n_lev = levels.shape[-1]
    table_keys = tuple(k for k in keys if k in TABLE_MEASURES)
    pieces: dict[str, list[tuple[list[int], Tensor]]] = {}
    for idx in _by_size([tuple(s) for s in shapes]):
        anns = [g_list[i] for i in idx]
        values: dict[str, Tensor] = {}
        if input_format == "ucm2":
            lev = levels[idx] if levels.ndim == 2 else levels
            h = ucm_hierarchy([u_list[i] for i in idx], lev, rule=rule)
            atoms = torch.stack(h.atoms).flatten(1)
            a_flat = torch.cat([a.flatten(1).to(atoms.device) for a in anns])
            a_rel, a_regions = relabel(a_flat)
            a_image = torch.repeat_interleave(
                torch.arange(len(idx), device=atoms.device),
                torch.tensor([a.shape[0] for a in anns], device=atoms.device),
            )
            n_atoms = torch.tensor([a.shape[1] for a in h.atom_labels], device=atoms.device)
            t_part, t_ann = pair_tables(torch.arange(len(idx), device=atoms.device), a_image)
            base = contingency_tables(atoms, n_atoms, a_rel, a_regions, t_part, t_ann)
            ct = _coarsen(base, h.atom_labels, h.level_regions)
            values["regions"] = h.level_regions
            parts = [h.partitions(b) for b in range(len(idx))] if "fb" in keys else None
        else:
            parts = [s_list[i] for i in idx]
            ct = partition_tables(parts, anns)
            values["regions"] = ct.partition_regions.view(len(idx), n_lev)
        if table_keys:
            per = measures_from_tables(ct, table_keys, gamma_obj=gamma_obj, gamma_part=gamma_part, beta=beta)
            values.update({k: v.view(len(idx), n_lev) for k, v in per.items()})
        if region_benchmark:
            values.update(region_benchmark_counts(ct, n_lev))
        if "fb" in keys:
            assert parts is not None  # built above whenever "fb" is asked
            values.update(partition_fb(parts, anns, max_dist=max_dist))
        for k, v in values.items():
            pieces.setdefault(k, []).append((idx, v))
    out = _reassemble(pieces, len(shapes))
    out["thresholds"] = levels.to(out["regions"].device)
    return out
