"""Partition measures of label maps against several human label maps (SEISM), batched: the functional API.

``preds`` are machine partitions, ``target`` the human partitions of the same image (BSDS500 has 4-9 per image).
Everything but Fb derives from the contingency tables of :mod:`segmetrics_torch.ops.contingency` (see
:mod:`.tables` for the formulas and the multi-annotator rules); Fb scores the partition's boundaries
(``seg2bmap``) against the annotators' (``thin(seg2bmap)``) with the BSDS correspondence, as SEISM's ``eval_segm.m``.

Labels: any integer values (negative, huge, non-contiguous); label 0 is an ordinary region (as SEISM). Floating
tensors are accepted when every value is an integer; fractions, NaN and inf raise ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from ..._checks import Backend, ImageBatch, batch_items, check_bool, check_positive_float, check_tensor
from ...ops.contingency import ContingencyTables, contingency_tables, pair_tables, relabel
from ..boundary.bsds import annotator_boundaries, boundary_pr_counts, segmentation_boundaries
from .tables import TABLE_MEASURES, check_fop_constants, check_measures, measures_from_tables

__all__ = ["fb_precision_recall", "partition_measures", "partition_tables"]


def _as_labels(x: Tensor, name: str, validate_args: bool) -> Tensor:
    if x.dtype == torch.bool:
        return x.long()
    if x.is_complex():
        raise TypeError(f"Expected `{name}` to hold integer labels, but got dtype {x.dtype}.")
    if x.is_floating_point():
        if validate_args:
            if not bool(torch.isfinite(x).all()):
                raise ValueError(f"Expected `{name}` to hold integer labels, but it contains NaN or inf.")
            if not bool((x == torch.round(x)).all()):
                raise ValueError(
                    f"Expected `{name}` to hold integer labels, but it holds fractional values (dtype {x.dtype})."
                )
            if x.numel() and float(x.abs().max()) >= 2**53:
                raise ValueError(f"Expected `{name}` labels below 2**53 in magnitude for a floating dtype.")
        return x.long()
    return x.long()


def as_label_list(x: object, name: str, ndim: int, validate_args: bool = True) -> list[Tensor]:
    """``x`` as a list of int64 label tensors with ``ndim`` dims each: a tensor with one more dim is split along its
    first; a list/tuple is taken item by item. Empty batches, empty images and wrong dims raise ``ValueError``."""
    layout = "of shape (B, H, W)" if ndim == 2 else "of shape (B, K, H, W)"
    out = []
    for i, item in enumerate(batch_items(x, name, ndim, layout)):
        item = check_tensor(item, f"{name}[{i}]")
        if item.ndim != ndim:
            raise ValueError(f"Expected `{name}[{i}]` to have {ndim} dims, but got shape {tuple(item.shape)}.")
        if item.shape[-1] == 0 or item.shape[-2] == 0 or (ndim == 3 and item.shape[0] == 0):
            raise ValueError(f"Expected `{name}[{i}]` to be non-empty, but got shape {tuple(item.shape)}.")
        out.append(_as_labels(item, f"{name}[{i}]", validate_args))
    return out


def _check_pairs(preds: list[Tensor], target: list[Tensor], level_dims: int) -> None:
    if len(preds) != len(target):
        raise ValueError(
            f"Expected `preds` and `target` to hold the same number of images, but got {len(preds)} and {len(target)}."
        )
    for i, (p, g) in enumerate(zip(preds, target, strict=True)):
        if p.shape[-2:] != g.shape[-2:]:
            raise ValueError(
                f"Expected `preds[{i}]` and `target[{i}]` to have the same image size, but got "
                f"{tuple(p.shape[-2:])} and {tuple(g.shape[-2:])}."
            )


def _relabel_stacks(stacks: list[Tensor], n: int, device: torch.device, backend: Backend) -> tuple[Tensor, Tensor]:
    """Relabel every map of every stack into one (M, N) tensor, without concatenating the inputs first."""
    if len(stacks) == 1 or device.type != "cpu" or backend == "torch":
        return relabel(torch.cat([s.reshape(-1, n).to(device) for s in stacks]), backend=backend)
    sizes = [s.shape[0] for s in stacks]
    out = torch.empty((sum(sizes), n), dtype=torch.int64)
    counts = torch.empty(sum(sizes), dtype=torch.int64)
    start = 0
    for s, k in zip(stacks, sizes, strict=True):
        out[start : start + k], counts[start : start + k] = relabel(s.reshape(k, n))
        start += k
    return out, counts


def partition_tables(
    partitions: list[Tensor], annotations: list[Tensor], *, backend: Backend = "auto"
) -> ContingencyTables:
    """Tables of every partition against every annotation of its image.

    Args:
        partitions: list of P (L_b, H, W) int64 label stacks (one or several partitions per image b).
        annotations: list of P (K_b, H, W) int64 annotation stacks, all images of one size H x W.
        backend: "auto", "numba" or "torch" (the GPU path, any device): see :func:`.contingency_tables`.

    Returns:
        :class:`~segmetrics_torch.ops.contingency.ContingencyTables`, one table per (partition, annotation) pair of an
        image, partitions numbered image-major.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import partition_tables
        >>> gt = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1]]])  # (K=1, H, W): left and right halves
        >>> levels = torch.stack([torch.zeros_like(gt[0]), gt[0]])  # (L=2, H, W): one region, then the halves
        >>> ct = partition_tables([levels], [gt])
        >>> ct.num_tables, ct.partition_regions.tolist(), ct.num_pixels.tolist()
        (2, [1, 2], [8, 8])
        >>> ct.tables.tolist(), ct.counts.tolist()  # the non-empty cells n_ij of each table
        ([0, 0, 1, 1], [4, 4, 4, 4])
    """
    n = partitions[0].shape[-1] * partitions[0].shape[-2]
    dev = partitions[0].device
    p_rel, p_regions = _relabel_stacks(partitions, n, dev, backend)
    a_rel, a_regions = _relabel_stacks(annotations, n, dev, backend)
    p_image = torch.repeat_interleave(
        torch.arange(len(partitions), device=dev), torch.tensor([p.shape[0] for p in partitions], device=dev)
    )
    a_image = torch.repeat_interleave(
        torch.arange(len(annotations), device=dev), torch.tensor([a.shape[0] for a in annotations], device=dev)
    )
    t_part, t_ann = pair_tables(p_image, a_image)
    return contingency_tables(p_rel, p_regions, a_rel, a_regions, t_part, t_ann, backend=backend)


def fb_precision_recall(cnt_r: Tensor, sum_r: Tensor, cnt_p: Tensor, sum_p: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """SEISM's (F, P, R) of boundary counts (``eval_segm.m``, ``gather_measure.m``): no annotator boundary pixel
    (``sumR = 0``) gives R = 1, P = 0; no machine boundary pixel (``sumP = 0``) gives R = 0, P = 1; F = 0 when
    P + R = 0.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import fb_precision_recall
        >>> # 3 of 4 annotator and 3 of 6 machine pixels matched; no annotator boundary; no machine boundary
        >>> f, p, r = fb_precision_recall(torch.tensor([3, 0, 0]), torch.tensor([4, 0, 5]), torch.tensor([3, 0, 0]),
        ...                               torch.tensor([6, 2, 0]))
        >>> f.tolist(), p.tolist(), r.tolist()
        ([0.6, 0.0, 0.0], [0.5, 0.0, 1.0], [0.75, 1.0, 0.0])
    """
    cnt_r, sum_r, cnt_p, sum_p = (v.double() for v in (cnt_r, sum_r, cnt_p, sum_p))
    r = torch.where(sum_r > 0, cnt_r / sum_r.clamp_min(1), 1.0)
    p = torch.where(sum_r > 0, cnt_p / sum_p.clamp_min(1), 0.0)
    r = torch.where((sum_r > 0) & (sum_p == 0), 0.0, r)
    p = torch.where((sum_r > 0) & (sum_p == 0), 1.0, p)
    s = p + r
    f = torch.where(s > 0, 2 * p * r / torch.where(s > 0, s, 1.0), 0.0)
    return f, p, r


def partition_fb(partitions: list[Tensor], annotations: list[Tensor], *, max_dist: float = 0.0075) -> dict[str, Tensor]:
    """Fb of each partition stack (L_b, H, W) against its annotations (K_b, H, W): (B, L) counts and (F, P, R)."""
    levels = partitions[0].shape[0]
    machine = [segmentation_boundaries(p) for p in partitions]
    human = [annotator_boundaries(a) for a in annotations]
    counts = boundary_pr_counts(
        machine, human, thresholds=levels, max_dist=max_dist, thin=True, input_format="stack", validate_args=False
    )
    f, p, r = fb_precision_recall(counts.cnt_r, counts.sum_r, counts.cnt_p, counts.sum_p)
    return {
        "fb": f,
        "fb_precision": p,
        "fb_recall": r,
        "fb_cnt_r": counts.cnt_r,
        "fb_sum_r": counts.sum_r,
        "fb_cnt_p": counts.cnt_p,
        "fb_sum_p": counts.sum_p,
    }


def _by_size(shapes: Sequence[tuple[int, ...]]) -> list[list[int]]:
    groups: dict[tuple[int, ...], list[int]] = {}
    for i, s in enumerate(shapes):
        groups.setdefault(s, []).append(i)
    return list(groups.values())


def _reassemble(pieces: dict[str, list[tuple[list[int], Tensor]]], n: int) -> dict[str, Tensor]:
    """Per key, the values of the size groups (image indices, (len(indices), ...) values) back in image order."""
    out = {}
    for key, parts in pieces.items():
        first = parts[0][1]
        full = torch.empty((n, *first.shape[1:]), dtype=first.dtype, device=first.device)
        for idx, v in parts:
            full[torch.tensor(idx, device=first.device)] = v.to(first.device)
        out[key] = full
    return out


def partition_measures(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    measures: str | Sequence[str] | None = None,
    gamma_obj: float = 0.9,
    gamma_part: float = 0.25,
    beta: float = 0.1,
    max_dist: float = 0.0075,
    validate_args: bool = True,
) -> dict[str, Tensor]:
    """SEISM's measures of each partition against its human partitions, all from one table per (image, annotator).

    Args:
        preds: (B, H, W) label maps or a list of (H, W) (sizes may differ between images).
        target: (B, K, H, W) human label maps or a list of (K_b, H, W), K_b >= 1 annotators per image.
        measures: keys to compute (default all): ``fb, fop, fr, pri, voi, nvoi, sc, ssc, dhd, sdhd, vd, bgm, bce,
            gce, lce`` (formulas in :mod:`segmetrics_torch.functional.partition.tables`).
        gamma_obj, gamma_part, beta: Fop constants (SEISM's code: 0.9, 0.25, 0.1; the CVPR'13 text: 0.95).
        max_dist: Fb tolerance as a fraction of the diagonal (SEISM/BSDS500 0.0075; Pascal 0.01) or pixels (>= 1).
        validate_args: check label values (fractions, NaN); synchronises a CUDA device.

    Returns:
        dict of (B,) float64 tensors on the input's device: every requested key; ``fop``, ``fr`` and ``fb`` also
        ``<key>_precision`` and ``<key>_recall``; ``fb`` also the int64 counts ``fb_cnt_r, fb_sum_r, fb_cnt_p,
        fb_sum_p``. Similarities are in [0, 1] (1 = identical partitions); ``voi`` is a distance in bits.

    Example:
        >>> import torch
        >>> seg = torch.tensor([[0, 0, 1, 1], [0, 0, 1, 1]])
        >>> out = partition_measures(seg[None], seg[None, None], measures=["voi", "pri", "ssc"])
        >>> [round(float(out[k][0]), 6) for k in ("voi", "pri", "ssc")]
        [0.0, 1.0, 1.0]
    """
    keys = check_measures(measures)
    check_fop_constants(gamma_obj, gamma_part, beta)
    check_positive_float(max_dist, "max_dist")
    check_bool(validate_args, "validate_args")
    p_list = as_label_list(preds, "preds", 2, validate_args)
    g_list = as_label_list(target, "target", 3, validate_args)
    _check_pairs(p_list, g_list, 2)
    table_keys = tuple(k for k in keys if k in TABLE_MEASURES)
    results: dict[str, list[tuple[list[int], Tensor]]] = {}
    for idx in _by_size([tuple(p.shape) for p in p_list]):
        parts = [p_list[i][None] for i in idx]
        anns = [g_list[i] for i in idx]
        values: dict[str, Tensor] = {}
        if table_keys:
            values.update(
                measures_from_tables(
                    partition_tables(parts, anns), table_keys, gamma_obj=gamma_obj, gamma_part=gamma_part, beta=beta
                )
            )
        if "fb" in keys:
            values.update({k: v[:, 0] for k, v in partition_fb(parts, anns, max_dist=max_dist).items()})
        for k, v in values.items():
            results.setdefault(k, []).append((idx, v))
    return _reassemble(results, len(p_list))
