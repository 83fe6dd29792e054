r"""Every region-based partition measure of SEISM, derived from one batch of contingency tables.

Notation (per table: one partition S against one annotation G of ``N`` pixels): ``n_ij`` pixels in partition region
``i`` and annotation region ``j``, ``a_i = sum_j n_ij``, ``b_j = sum_i n_ij``, ``J_ij = n_ij / (a_i + b_j - n_ij)``.
Only ``n_ij > 0`` cells are stored; every formula below vanishes on empty cells. Reference: Pont-Tuset & Marques,
CVPR 2013 (Table 2) and their SEISM code (``src/measures/*.hpp``, ``mex_eval_segm.cpp``, ``eval_segm.m``), whose
conventions these follow key by key. Distances are turned into similarities (1 = best) as in SEISM, except ``voi``.

========  ==========================================================================  ==========================
key       per annotation                                                               several annotations
========  ==========================================================================  ==========================
fr        pairs of pixels: ``n11 = (sum n^2 - N)/2``, ``n10 = (sum a^2 - sum n^2)/2``,  mean Pr, mean Rr, then F
          ``n01 = (sum b^2 - sum n^2)/2``; ``Pr = n11/(n11+n10)``, ``Rr = n11/(n11+n01)``
pri       Rand index ``1 - (n10 + n01) / C(N, 2)``                                     mean (PRI)
voi       variation of information in bits ``H(S) + H(G) - 2 I(S; G)``                   mean (a distance, >= 0)
nvoi      ``1 - VoI / (2 log2 max(K_S, K_G))`` (1 when both have one region)          mean
sc        covering of the annotation by ... summed over partition regions:             mean
          ``(1/N) sum_i a_i max_j J_ij``  (CVPR'13 C({G_i} -> S))
ssc       the same summed over annotation regions (BSDS covering, C(S -> {G_i}))       mean
dhd       ``1 - D_H(S => G)/N``, ``D_H = N - sum_j max_i n_ij``                          mean
sdhd      ``1 - D_H(G => S)/N``, ``D_H = N - sum_i max_j n_ij``                          mean
vd        van Dongen ``(dhd + sdhd) / 2``                                                ---
bgm       ``1 - (N - max_M sum_{(i,j) in M} n_ij)/N``, M a matching of regions           mean
bce       ``1 - (1/N) sum_ij n_ij max((a_i - n_ij)/a_i, (b_j - n_ij)/b_j)``                mean of the errors
gce       ``1 - min(sum n_ij (b_j - n_ij)/b_j, sum n_ij (a_i - n_ij)/a_i) / N``              mean of the errors
lce       ``1 - (1/N) sum_ij min(n_ij (b_j - n_ij)/b_j, n_ij (a_i - n_ij)/a_i)``             mean of the errors
fop       objects and parts, see :mod:`.fop`                                            pooled annotation regions
========  ==========================================================================  ==========================

Edge cases (SEISM divides by zero there; we define): ``Pr = 1`` when S has no pair of pixels in one region (every
region a single pixel), ``Rr = 1`` likewise for G; ``RI = 1`` for a one-pixel image; ``F = 0`` when ``P = R = 0``.
``voi`` is clamped at 0 (its closed form can give -1e-16 for identical partitions).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal

import torch
from torch import Tensor

from ...ops.contingency import ContingencyTables, TableSlots, max_matching_weights
from ...registry import PARTITION, PARTITION_TABLES
from .fop import objects_and_parts

__all__ = ["MEASURES", "TABLE_MEASURES", "measures_from_tables"]

# Measures computed from the tables (Fb needs the boundary matching and is handled by the callers): the registry's.
TABLE_MEASURES = PARTITION_TABLES
MEASURES = PARTITION


def check_measures(measures: object) -> tuple[str, ...]:
    """Normalise ``measures`` (None = all) to a tuple of keys of :data:`MEASURES`, or raise ``ValueError``."""
    if measures is None:
        return MEASURES
    if isinstance(measures, str):
        measures = (measures,)
    if not isinstance(measures, Iterable):
        raise TypeError(f"Expected `measures` to be a measure name or a list of names, but got {measures!r}.")
    measures = tuple(measures)
    bad = [m for m in measures if m not in MEASURES]
    if bad or not measures:
        raise ValueError(f"Expected `measures` to name some of {MEASURES}, but got {measures!r}.")
    return measures


def check_fop_constants(gamma_obj: float, gamma_part: float, beta: float) -> None:
    """Raise ``ValueError`` unless each Fop constant is a number in [0, 1]."""
    for name, value in (("gamma_obj", gamma_obj), ("gamma_part", gamma_part), ("beta", beta)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise ValueError(f"Expected `{name}` to be a number in [0, 1], but got {value!r}.")


def _table_sum(ct: ContingencyTables, values: Tensor) -> Tensor:
    return torch.zeros(ct.num_tables, dtype=values.dtype, device=values.device).index_add_(0, ct.tables, values)


def _annotator_mean(ct: ContingencyTables, per_table: Tensor) -> Tensor:
    n_tab = torch.bincount(ct.table_partition, minlength=ct.num_partitions).to(per_table.dtype)
    total = torch.zeros(ct.num_partitions, dtype=per_table.dtype, device=per_table.device)
    return total.index_add_(0, ct.table_partition, per_table) / n_tab


def _f(p: Tensor, r: Tensor) -> Tensor:
    s = p + r
    return torch.where(s > 0, 2 * p * r / torch.where(s > 0, s, torch.ones_like(s)), torch.zeros_like(s))


def _xlogx(x: Tensor) -> Tensor:
    return x * torch.log(x)


def bgm_weights(ct: ContingencyTables) -> Tensor:
    """(T,) maximum total ``n_ij`` of a one-to-one matching of regions per table (exact; compiled CPU kernel)."""
    return max_matching_weights(ct)


def measures_from_tables(
    ct: ContingencyTables,
    measures: tuple[str, ...] = TABLE_MEASURES,
    *,
    gamma_obj: float = 0.9,
    gamma_part: float = 0.25,
    beta: float = 0.1,
) -> dict[str, Tensor]:
    """Per-partition values (P,) float64 of the requested table measures (see the module doc for the keys).

    ``fop`` and ``fr`` also give ``<key>_precision`` and ``<key>_recall``.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import measures_from_tables, partition_tables
        >>> gt = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1]]])  # (K=1, H, W): left and right halves
        >>> levels = torch.stack([torch.zeros_like(gt[0]), gt[0]])  # (L=2, H, W): one region, then the halves
        >>> out = measures_from_tables(partition_tables([levels], [gt]), ("pri", "voi", "sc"))
        >>> {k: [round(v, 4) for v in out[k].tolist()] for k in ("pri", "voi", "sc")}  # one value per level
        {'pri': [0.4286, 1.0], 'voi': [1.0, 0.0], 'sc': [0.5, 1.0]}
    """
    out: dict[str, Tensor] = {}
    want = set(measures)
    n = ct.counts.double()
    a = ct.row_sizes.double()[ct.rows]
    b = ct.col_sizes.double()[ct.cols]
    big_n = ct.num_pixels.double()

    if "fop" in want:
        f, p, r = objects_and_parts(ct, gamma_obj=gamma_obj, gamma_part=gamma_part, beta=beta)
        out.update(fop=f, fop_precision=p, fop_recall=r)

    if want & {"fr", "pri"}:
        # exact integer pair counts
        sum_n2 = torch.zeros(ct.num_tables, dtype=torch.int64, device=n.device).index_add_(
            0, ct.tables, ct.counts * ct.counts
        )
        sum_a2 = torch.zeros(ct.num_partitions, dtype=torch.int64, device=n.device).index_add_(
            0, ct.row_partition, ct.row_sizes * ct.row_sizes
        )[ct.table_partition]
        n_ann = ct.annotation_regions.numel()
        sum_b2 = torch.zeros(n_ann, dtype=torch.int64, device=n.device).index_add_(
            0, ct.col_annotation, ct.col_sizes * ct.col_sizes
        )[ct.table_annotation]
        n11 = (sum_n2 - ct.num_pixels) // 2
        n10 = (sum_a2 - sum_n2) // 2
        n01 = (sum_b2 - sum_n2) // 2
        if "fr" in want:
            pr = torch.where(n11 + n10 > 0, n11.double() / (n11 + n10).clamp_min(1).double(), 1.0)
            rr = torch.where(n11 + n01 > 0, n11.double() / (n11 + n01).clamp_min(1).double(), 1.0)
            mp, mr = _annotator_mean(ct, pr), _annotator_mean(ct, rr)
            out.update(fr=_f(mp, mr), fr_precision=mp, fr_recall=mr)
        if "pri" in want:
            pairs = ct.num_pixels * (ct.num_pixels - 1) // 2
            ri = torch.where(pairs > 0, 1.0 - (n10 + n01).double() / pairs.clamp_min(1).double(), 1.0)
            out["pri"] = _annotator_mean(ct, ri)

    if want & {"voi", "nvoi"}:
        ent_a = torch.zeros(ct.num_partitions, dtype=torch.float64, device=n.device).index_add_(
            0, ct.row_partition, _xlogx(ct.row_sizes.double())
        )[ct.table_partition]
        ent_b = torch.zeros(ct.annotation_regions.numel(), dtype=torch.float64, device=n.device).index_add_(
            0, ct.col_annotation, _xlogx(ct.col_sizes.double())
        )[ct.table_annotation]
        voi = ((ent_a + ent_b - 2 * _table_sum(ct, _xlogx(n))) / (big_n * math.log(2))).clamp_min(0)
        if "voi" in want:
            out["voi"] = _annotator_mean(ct, voi)
        if "nvoi" in want:
            k = torch.maximum(ct.partition_regions[ct.table_partition], ct.annotation_regions[ct.table_annotation])
            denom = 2 * torch.log2(k.double())
            out["nvoi"] = _annotator_mean(ct, torch.where(k > 1, 1 - voi / torch.where(k > 1, denom, 1.0), 1.0))

    # covering (sc / ssc) and Hamming (sdhd / dhd) from the best match of each row (partition region) or column
    # (annotation region); van Dongen needs both sides
    hamming: dict[str, Tensor] = {}
    jac = n / (a + b - n) if want & {"sc", "ssc"} else n  # the Jaccard index of each cell, for covering only
    sides: tuple[tuple[Literal["row", "col"], str, str], ...] = (("row", "sc", "sdhd"), ("col", "ssc", "dhd"))
    for side, covering, directional in sides:
        if not want & {covering, directional, "vd"}:
            continue
        slots = TableSlots(ct, side)
        if covering in want:
            out[covering] = _annotator_mean(ct, slots.per_table(slots.size.double() * slots.amax(jac)) / big_n)
        if want & {directional, "vd"}:
            hamming[directional] = 1 - _annotator_mean(ct, 1 - slots.per_table(slots.amax(n)) / big_n)
    out.update({key: hamming[key] for key in ("dhd", "sdhd") if key in want})
    if "vd" in want:
        out["vd"] = 0.5 * (hamming["dhd"] + hamming["sdhd"])

    if "bgm" in want:
        out["bgm"] = 1 - _annotator_mean(ct, 1 - bgm_weights(ct).double() / big_n)

    if want & {"bce", "gce", "lce"}:
        err_a = n * (a - n) / a  # pixels of the pair's partition region outside the annotation region
        err_b = n * (b - n) / b
        if "bce" in want:
            out["bce"] = 1 - _annotator_mean(ct, _table_sum(ct, torch.maximum(err_a, err_b)) / big_n)
        if "gce" in want:
            out["gce"] = 1 - _annotator_mean(ct, torch.minimum(_table_sum(ct, err_b), _table_sum(ct, err_a)) / big_n)
        if "lce" in want:
            out["lce"] = 1 - _annotator_mean(ct, _table_sum(ct, torch.minimum(err_b, err_a)) / big_n)
    return out
