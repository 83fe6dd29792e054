"""Batched contingency (intersection) tables between partitions and annotations, the one intermediate of every
partition measure.

A *partition* is a label map of the machine segmentation; an *annotation* is a human label map. Every partition is
compared with every annotation of its image: one table per (partition, annotation) pair, with ``n_ij`` the number of
pixels in partition region ``i`` (row) and annotation region ``j`` (column), as SEISM's ``intersection_matrix``.

Convention (SEISM ``src/misc/intersection_matrix.hpp``): labels are arbitrary integers; each map is relabelled
``0..K-1`` in order of first appearance in a row-major scan, so label 0 is an ordinary region and the region order
(which only Fop's tie rule can see) equals SEISM's. Tables are stored sparsely (only ``n_ij > 0``), all of them in
one set of flat tensors, so every measure is a handful of scatter/gather ops over the whole batch:

* entries ``counts, rows, cols, tables``: ``rows`` index all partition regions of the batch (``row_sizes`` = ``a_i``,
  ``row_partition``), ``cols`` all annotation regions (``col_sizes`` = ``b_j``, ``col_annotation``); entries are
  sorted by (table, row, column).
* tables: ``table_partition``, ``table_annotation``, ``num_pixels``.

Building runs on the input's device (``bincount`` over a dense per-table index when the tables are small enough,
``unique`` otherwise); relabelling uses a compiled kernel for CPU tensors and sorting on other devices.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
import torch
from torch import Tensor

from segmetrics_torch._checks import BACKENDS, Backend, check_choice

from .backend import resolve

__all__ = [
    "ContingencyTables",
    "TableSlots",
    "accumulate_tables",
    "contingency_tables",
    "max_matching_weights",
    "pair_tables",
    "relabel",
]

# The dense per-table index (sum over tables of K_S * K_G cells) is used up to this size; beyond, entries are
# aggregated by sorting.
_DENSE_CELLS = 2**25


class ContingencyTables(NamedTuple):
    """Sparse contingency tables of a batch; see the module doc. All tensors int64 on one device."""

    counts: Tensor
    rows: Tensor
    cols: Tensor
    tables: Tensor
    row_sizes: Tensor
    row_partition: Tensor
    col_sizes: Tensor
    col_annotation: Tensor
    table_partition: Tensor
    table_annotation: Tensor
    num_pixels: Tensor
    partition_regions: Tensor
    annotation_regions: Tensor

    @property
    def num_tables(self) -> int:
        return self.table_partition.numel()

    @property
    def num_partitions(self) -> int:
        return self.partition_regions.numel()


class TableSlots:
    """Per-table copies of one side's regions: slot (t, i) for every region i of table t's partition (``side="row"``)
    or annotation (``side="col"``), so that reductions "over the other side within one table" (a region's best
    overlap in one annotation, an annotation region's class in one table) are scatter-reductions into slots.

    Attributes: ``count`` slots; per slot its ``table``, global ``region`` and region ``size``; per entry of the
    tables its slot ``of_entry``.
    """

    def __init__(self, ct: ContingencyTables, side: Literal["row", "col"]) -> None:
        check_choice(side, "side", ("row", "col"))
        if side == "row":
            owner, regions, index, sizes = ct.table_partition, ct.partition_regions, ct.rows, ct.row_sizes
        else:
            owner, regions, index, sizes = ct.table_annotation, ct.annotation_regions, ct.cols, ct.col_sizes
        offset = torch.cumsum(regions, 0) - regions
        per_table = regions[owner]
        start = torch.cumsum(per_table, 0) - per_table
        self.count = int(per_table.sum())
        self.table = torch.repeat_interleave(torch.arange(owner.numel(), device=owner.device), per_table)
        local = torch.arange(self.count, device=owner.device) - start[self.table]
        self.region = offset[owner[self.table]] + local
        self.size = sizes[self.region]
        self.of_entry = start[ct.tables] + index - offset[owner[ct.tables]]
        self.num_tables = owner.numel()

    def amax(self, values: Tensor) -> Tensor:
        """Per slot the maximum of the entries' ``values`` (0 for a slot without entries)."""
        out = torch.zeros(self.count, dtype=values.dtype, device=values.device)
        return out.scatter_reduce_(0, self.of_entry, values, reduce="amax", include_self=True)

    def per_table(self, values: Tensor) -> Tensor:
        """Per table the sum of the slots' ``values``."""
        out = torch.zeros(self.num_tables, dtype=values.dtype, device=values.device)
        return out.index_add_(0, self.table, values)


def relabel(labels: Tensor, *, backend: Backend = "auto") -> tuple[Tensor, Tensor]:
    """Relabel each row of ``labels`` (M, N) to ``0..K-1`` in order of first appearance.

    Args:
        labels: (M, N) integer tensor, one flattened (row-major) label map per row.
        backend: "numba" (compiled CPU kernel), "torch" (sort-based, any device) or "auto" (numba for CPU tensors;
            :func:`segmetrics_torch.ops.backend.resolve`).

    Returns:
        (labels int64 (M, N), region counts int64 (M,)) on the input's device.
    """
    backend = resolve(backend, labels.device)
    if labels.ndim != 2:
        raise ValueError(f"Expected `labels` of shape (M, N), but got {tuple(labels.shape)}.")
    if labels.shape[1] == 0:
        raise ValueError("Expected non-empty label maps, but got N = 0 pixels.")
    labels = labels.long()
    if backend == "numba":
        from ._kernels.labels import relabel_maps

        src = labels.cpu().contiguous().numpy()
        out = np.empty_like(src)
        counts = np.empty(src.shape[0], np.int64)
        relabel_maps(src, out, counts)
        return torch.from_numpy(out).to(labels.device), torch.from_numpy(counts).to(labels.device)
    return _relabel_torch(labels)


def _relabel_torch(labels: Tensor) -> tuple[Tensor, Tensor]:
    m, n = labels.shape
    values, perm = torch.sort(labels, dim=1, stable=True)
    new = torch.ones_like(values, dtype=torch.bool)
    new[:, 1:] = values[:, 1:] != values[:, :-1]
    counts = new.sum(1)
    run = torch.cumsum(new.flatten(), 0) - 1  # global run id, row by row
    # stable sort: a run's first element holds the smallest position, i.e. the region's first appearance
    first = perm.flatten()[new.flatten()]
    run_map = torch.repeat_interleave(torch.arange(m, device=labels.device), counts)
    order = torch.argsort(run_map * n + first)
    rank = torch.empty_like(order)
    offsets = torch.cumsum(counts, 0) - counts
    rank[order] = torch.arange(order.numel(), device=labels.device) - offsets[run_map[order]]
    out = torch.empty_like(labels)
    out.scatter_(1, perm, rank[run].view(m, n))
    return out, counts


def pair_tables(partition_image: Tensor, annotation_image: Tensor) -> tuple[Tensor, Tensor]:
    """All (partition, annotation) pairs of the same image, ordered by partition then annotation.

    Args:
        partition_image: (P,) image index of every partition (several partitions per image for hierarchies).
        annotation_image: (A,) image index of every annotation, sorted.

    Returns:
        ``table_partition`` and ``table_annotation``, (T,) int64.
    """
    n_images = int(max(int(partition_image.max()), int(annotation_image.max()))) + 1
    per_image = torch.bincount(annotation_image, minlength=n_images)
    first = torch.cumsum(per_image, 0) - per_image
    n_tab = per_image[partition_image]
    table_partition = torch.repeat_interleave(torch.arange(partition_image.numel(), device=n_tab.device), n_tab)
    within = torch.arange(table_partition.numel(), device=n_tab.device) - torch.repeat_interleave(
        torch.cumsum(n_tab, 0) - n_tab, n_tab
    )
    table_annotation = first[partition_image[table_partition]] + within
    return table_partition, table_annotation


def _cells(
    table_partition: Tensor, table_annotation: Tensor, partition_regions: Tensor, annotation_regions: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """Per table: the column count K_G, the offset of its dense block of K_S x K_G cells, and the total."""
    k_g = annotation_regions[table_annotation]
    cells = partition_regions[table_partition] * k_g
    return k_g, torch.cumsum(cells, 0) - cells, cells.sum()


def accumulate_tables(
    tables: Tensor,
    rows_local: Tensor,
    cols_local: Tensor,
    weights: Tensor | None,
    table_partition: Tensor,
    table_annotation: Tensor,
    partition_regions: Tensor,
    annotation_regions: Tensor,
) -> ContingencyTables:
    """Aggregate (table, local row, local column, weight) items into :class:`ContingencyTables`.

    ``weights=None`` counts each item once (items are pixels); otherwise items are pre-aggregated cells (a coarser
    hierarchy level from a finer table). Local indices are in ``[0, K)`` of the table's partition / annotation.
    """
    k_g, cell_offset, total = _cells(table_partition, table_annotation, partition_regions, annotation_regions)
    flat = cell_offset[tables] + rows_local * k_g[tables] + cols_local
    return _from_flat(
        flat, weights, int(total), table_partition, table_annotation, partition_regions, annotation_regions
    )


def _from_flat(
    flat: Tensor,
    weights: Tensor | None,
    total: int,
    table_partition: Tensor,
    table_annotation: Tensor,
    partition_regions: Tensor,
    annotation_regions: Tensor,
) -> ContingencyTables:
    device = flat.device
    if total <= _DENSE_CELLS:
        dense = torch.bincount(flat, weights=None if weights is None else weights.double(), minlength=total)
        if weights is not None:
            dense = dense.round().long()
        return _from_dense(dense, table_partition, table_annotation, partition_regions, annotation_regions)
    if weights is None:
        idx, counts = torch.unique(flat, sorted=True, return_counts=True)
    else:
        idx, inverse = torch.unique(flat, sorted=True, return_inverse=True)
        counts = torch.zeros(idx.numel(), dtype=torch.int64, device=device).index_add_(0, inverse, weights.long())
    return _from_cells(idx, counts, table_partition, table_annotation, partition_regions, annotation_regions)


def _from_dense(
    dense: Tensor,
    table_partition: Tensor,
    table_annotation: Tensor,
    partition_regions: Tensor,
    annotation_regions: Tensor,
) -> ContingencyTables:
    idx = torch.nonzero(dense).flatten()
    return _from_cells(idx, dense[idx], table_partition, table_annotation, partition_regions, annotation_regions)


def _from_cells(
    idx: Tensor,
    counts: Tensor,
    table_partition: Tensor,
    table_annotation: Tensor,
    partition_regions: Tensor,
    annotation_regions: Tensor,
) -> ContingencyTables:
    """Tables from the non-zero cells: flat dense indices ``idx`` (sorted) and their counts."""
    device = idx.device
    k_g, cell_offset, _ = _cells(table_partition, table_annotation, partition_regions, annotation_regions)
    t = torch.searchsorted(cell_offset, idx, right=True) - 1
    rem = idx - cell_offset[t]
    r_local = torch.div(rem, k_g[t], rounding_mode="floor")
    c_local = rem - r_local * k_g[t]
    row_offset = torch.cumsum(partition_regions, 0) - partition_regions
    col_offset = torch.cumsum(annotation_regions, 0) - annotation_regions
    rows = row_offset[table_partition[t]] + r_local
    cols = col_offset[table_annotation[t]] + c_local
    n_rows = int(partition_regions.sum())
    n_cols = int(annotation_regions.sum())
    # every partition is compared with at least one annotation, so summing its first table's entries gives a_i
    first_table = torch.full((partition_regions.numel(),), -1, dtype=torch.int64, device=device)
    first_table.scatter_reduce_(
        0, table_partition, torch.arange(table_partition.numel(), device=device), reduce="amin", include_self=False
    )
    on_first = t == first_table[table_partition[t]]
    row_sizes = torch.zeros(n_rows, dtype=torch.int64, device=device).index_add_(0, rows[on_first], counts[on_first])
    first_table_a = torch.full((annotation_regions.numel(),), -1, dtype=torch.int64, device=device)
    first_table_a.scatter_reduce_(
        0, table_annotation, torch.arange(table_annotation.numel(), device=device), reduce="amin", include_self=False
    )
    on_first_a = t == first_table_a[table_annotation[t]]
    col_sizes = torch.zeros(n_cols, dtype=torch.int64, device=device).index_add_(
        0, cols[on_first_a], counts[on_first_a]
    )
    num_pixels = torch.zeros(table_partition.numel(), dtype=torch.int64, device=device).index_add_(0, t, counts)
    return ContingencyTables(
        counts=counts,
        rows=rows,
        cols=cols,
        tables=t,
        row_sizes=row_sizes,
        row_partition=torch.repeat_interleave(
            torch.arange(partition_regions.numel(), device=device), partition_regions
        ),
        col_sizes=col_sizes,
        col_annotation=torch.repeat_interleave(
            torch.arange(annotation_regions.numel(), device=device), annotation_regions
        ),
        table_partition=table_partition,
        table_annotation=table_annotation,
        num_pixels=num_pixels,
        partition_regions=partition_regions,
        annotation_regions=annotation_regions,
    )


def contingency_tables(
    partitions: Tensor,
    partition_regions: Tensor,
    annotations: Tensor,
    annotation_regions: Tensor,
    table_partition: Tensor,
    table_annotation: Tensor,
    *,
    partition_index: Tensor | None = None,
    annotation_index: Tensor | None = None,
    backend: Backend = "auto",
) -> ContingencyTables:
    """Pixel-level tables of relabelled maps.

    Args:
        partitions: (M_S, N) int64 (or int32) partition maps relabelled ``0..K_S-1`` (see :func:`relabel`); all maps
            of the batch flattened to the same N (images of one size).
        partition_regions: (M_S,) region counts K_S of the maps.
        annotations: (M_G, N) relabelled annotation maps; ``annotation_regions`` (M_G,) their K_G.
        table_partition, table_annotation: (T,) the pairs to tabulate (see :func:`pair_tables`), indices of the
            partitions and annotations of the result.
        partition_index, annotation_index: (P,) / (A,) the map of each partition / annotation of the result, when
            several of them share a map (the meta-measures compare a few hundred maps in thousands of pairs): the
            tables are those of ``partitions[partition_index]`` and ``annotations[annotation_index]``, counted
            without copying the maps. Default: one map each (P = M_S, A = M_G).
        backend: "numba" (a compiled kernel counts each table into its dense block; CPU tensors), "torch" (one
            ``bincount`` / ``unique`` over a (T, N) index on the input's device) or "auto" (numba on CPU:
            :func:`segmetrics_torch.ops.backend.resolve`).
    """
    check_choice(backend, "backend", BACKENDS)
    n = partitions.shape[1]
    if annotations.shape[1] != n:
        raise ValueError(f"Expected partitions and annotations of {n} pixels, but got {annotations.shape[1]}.")
    for name, index, maps in (
        ("partition_index", partition_index, partitions),
        ("annotation_index", annotation_index, annotations),
    ):
        if index is not None and index.numel() and (int(index.min()) < 0 or int(index.max()) >= maps.shape[0]):
            raise ValueError(
                f"Expected `{name}` to index the {maps.shape[0]} maps, but got values outside [0, {maps.shape[0]})."
            )
    part_map = table_partition if partition_index is None else partition_index[table_partition]
    ann_map = table_annotation if annotation_index is None else annotation_index[table_annotation]
    if partition_index is not None:
        partition_regions = partition_regions[partition_index]
    if annotation_index is not None:
        annotation_regions = annotation_regions[annotation_index]
    k_g, cell_offset, total = _cells(table_partition, table_annotation, partition_regions, annotation_regions)
    if resolve(backend, partitions.device) == "numba" and int(total) <= _DENSE_CELLS:
        from ._kernels.tables import dense_table_counts

        dense = np.zeros(int(total), np.int64)
        args = (partitions, annotations, part_map, ann_map, k_g, cell_offset)
        parts, anns, t_part, t_ann, k_np, offsets = (a.cpu().numpy() for a in args)
        dense_table_counts(parts, anns, t_part, t_ann, k_np, offsets, dense)
        return _from_dense(
            torch.from_numpy(dense).to(partitions.device),
            table_partition,
            table_annotation,
            partition_regions,
            annotation_regions,
        )
    # one (T, N) index, broadcast per table rather than gathered per pixel
    flat = partitions[part_map].long() * k_g[:, None] + cell_offset[:, None]
    flat += annotations[ann_map]
    return _from_flat(
        flat.flatten(), None, int(total), table_partition, table_annotation, partition_regions, annotation_regions
    )


def max_matching_weights(ct: ContingencyTables) -> Tensor:
    """Per table, the maximum total count ``sum n_ij`` of a one-to-one matching of its rows and columns (exact).

    A maximum-weight bipartite matching (no cardinality constraint) of every table, solved by the compiled CPU
    assignment kernel as a least-cost assignment of the smaller side (cost ``W - n_ij``, ``W`` the table's largest
    count, and ``W`` for staying unmatched). Sequential by nature: tables are copied to the host and the (T,) int64
    result back to ``ct``'s device.
    """
    if not isinstance(ct, ContingencyTables):
        raise TypeError(f"Expected `ct` to be ContingencyTables, but got {type(ct).__name__}.")
    from ._kernels.tables import max_weight_matchings

    tables = ct.tables.cpu().numpy()
    start = np.searchsorted(tables, np.arange(ct.num_tables + 1)).astype(np.int64)
    row_off = (torch.cumsum(ct.partition_regions, 0) - ct.partition_regions)[ct.table_partition]
    col_off = (torch.cumsum(ct.annotation_regions, 0) - ct.annotation_regions)[ct.table_annotation]
    rows = (ct.rows - row_off[ct.tables]).cpu().numpy()
    cols = (ct.cols - col_off[ct.tables]).cpu().numpy()
    out = np.zeros(ct.num_tables, np.int64)
    max_weight_matchings(
        start,
        rows,
        cols,
        ct.counts.cpu().numpy(),
        ct.partition_regions[ct.table_partition].cpu().numpy(),
        ct.annotation_regions[ct.table_annotation].cpu().numpy(),
        out,
    )
    return torch.from_numpy(out).to(ct.counts.device)
