"""Partition measures of many (partition, ground truth) pairs drawn from a few shared maps, each map prepared once.

The meta-measures score thousands of pairs built from a few hundred label maps: SIHD scores every human partition
against every other one, SISD every image's result against every other image's ground truth, SABD the same results
at the levels that several measures share. :func:`.segmentation.partition_measures` on each pair would relabel both
maps, draw and thin their boundaries and index the annotators' boundary pixels again for every pair. Here a map is
registered once (:meth:`PartitionPairs.add_partition`, :meth:`PartitionPairs.add_target`), relabelled the first time
it is evaluated (all new maps of one size in one call) and its thinned boundary map drawn the first time Fb needs it.
:meth:`PartitionPairs.evaluate` then counts the contingency tables of the pairs straight from the shared relabelled
maps (:func:`.contingency_tables` with ``partition_index`` / ``annotation_index``) and matches their boundaries with
every map's pixel list and index grid built once (:func:`.pair_correspondence_counts`), each distinct matching
problem once (see :meth:`PartitionPairs._fb`).

The values are those of ``partition_measures(partition[None], target[None])`` for every pair, bit for bit: the
tables and the boundary counts are the same, and the measures are computed from them by the same code (tested).
Counting and matching are compiled CPU kernels; maps on another device are copied to the host when registered and
results are float64 / int64 CPU tensors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from ..._checks import check_bool, check_positive_float, check_tensor
from ...ops.contingency import contingency_tables, pair_tables, relabel
from ...ops.matching import pair_correspondence_counts
from ..boundary.bsds import annotator_boundaries
from .segmentation import _as_labels, _by_size, _reassemble, fb_precision_recall
from .tables import TABLE_MEASURES, check_fop_constants, check_measures, measures_from_tables

__all__: list[str] = []

#: dense table cells counted per batch of pairs (8 bytes each): bounds the memory of one contingency-table batch
_BATCH_CELLS = 2**23


class _LabelMap:
    """One registered label map: its size and, once prepared (:meth:`PartitionPairs._relabel`), its labels
    relabelled ``0..K-1`` (int32, flattened) and K; until then the labels as given."""

    __slots__ = ("labels", "raw", "regions", "size")

    def __init__(self, labels: Tensor) -> None:
        self.size = (int(labels.shape[-2]), int(labels.shape[-1]))
        self.raw: Tensor | None = labels.reshape(-1).cpu()
        self.labels = torch.zeros(0, dtype=torch.int32)
        self.regions = 0


class PartitionPairs:
    """Register label maps once, then evaluate SEISM's partition measures on any (partition, target) pairs of them.

    Args:
        gamma_obj, gamma_part, beta, max_dist: as :func:`.segmentation.partition_measures`.
        validate_args: check label values (fractions, NaN) when maps are registered.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional.partition.pairs import PartitionPairs
        >>> left_right = torch.tensor([[0, 0, 1, 1]] * 4)
        >>> top_bottom = torch.tensor([[0] * 4] * 2 + [[1] * 4] * 2)
        >>> pairs = PartitionPairs()
        >>> p = [pairs.add_partition(x) for x in (left_right, top_bottom)]
        >>> g = pairs.add_target(left_right[None])
        >>> out = pairs.evaluate([(p[0], g), (p[1], g)], measures=["voi", "pri"])
        >>> [round(v, 4) for v in out["voi"].tolist()], [round(v, 4) for v in out["pri"].tolist()]
        ([0.0, 2.0], [1.0, 0.4667])
    """

    def __init__(
        self,
        *,
        gamma_obj: float = 0.9,
        gamma_part: float = 0.25,
        beta: float = 0.1,
        max_dist: float = 0.0075,
        validate_args: bool = True,
    ) -> None:
        check_fop_constants(gamma_obj, gamma_part, beta)
        check_positive_float(max_dist, "max_dist")
        self._fop = {"gamma_obj": gamma_obj, "gamma_part": gamma_part, "beta": beta}
        self._max_dist = max_dist
        self._validate = check_bool(validate_args, "validate_args")
        self._partitions: list[_LabelMap] = []
        self._annotations: list[_LabelMap] = []
        self._targets: list[list[int]] = []
        # thinned boundary maps, drawn the first time Fb needs them and kept once per content: per side (partitions,
        # annotations) the content id of every map; per content id the uint8 (H, W) map and its pixel count
        self._boundary_ids: tuple[dict[int, int], dict[int, int]] = ({}, {})
        self._content: dict[tuple[int, int, bytes], int] = {}
        self._bmaps: list[np.ndarray] = []
        self._bpixels: list[int] = []

    def _labels(self, x: object, name: str, ndim: int) -> Tensor:
        x = check_tensor(x, name)
        if x.ndim != ndim or x.shape[-1] == 0 or x.shape[-2] == 0 or x.shape[0] == 0:
            shape = "(H, W)" if ndim == 2 else "(K, H, W) with K >= 1"
            raise ValueError(f"Expected `{name}` of shape {shape}, non-empty, but got shape {tuple(x.shape)}.")
        return _as_labels(x, name, self._validate)

    def add_partition(self, labels: Tensor) -> int:
        """Register an (H, W) partition (integer labels, any values); returns its index for :meth:`evaluate`."""
        self._partitions.append(_LabelMap(self._labels(labels, "labels", 2)))
        return len(self._partitions) - 1

    def add_target(self, annotations: Tensor) -> int:
        """Register a (K, H, W) ground truth of K >= 1 human partitions; returns its index for :meth:`evaluate`."""
        maps = self._labels(annotations, "annotations", 3)
        start = len(self._annotations)
        self._annotations.extend(_LabelMap(a) for a in maps)
        self._targets.append(list(range(start, len(self._annotations))))
        return len(self._targets) - 1

    def evaluate(self, pairs: Sequence[tuple[int, int]] | Tensor, measures: object = None) -> dict[str, Tensor]:
        """The measures of every (partition index, target index) pair.

        Args:
            pairs: (T, 2) indices returned by :meth:`add_partition` and :meth:`add_target`; partition and target of a
                pair must have the same image size.
            measures: keys as :func:`.segmentation.partition_measures` (default all).

        Returns:
            dict of (T,) tensors with the keys and values of :func:`.segmentation.partition_measures` on each pair.
        """
        keys = check_measures(measures)
        index = torch.as_tensor(pairs, dtype=torch.int64).reshape(-1, 2)
        if index.shape[0] == 0:
            raise ValueError("Expected at least one pair to evaluate.")
        p_ids, t_ids = index[:, 0].tolist(), index[:, 1].tolist()
        if min(p_ids) < 0 or max(p_ids) >= len(self._partitions) or min(t_ids) < 0 or max(t_ids) >= len(self._targets):
            raise ValueError(
                f"Expected pairs of partition indices in [0, {len(self._partitions)}) and target indices in "
                f"[0, {len(self._targets)}), but got {index.tolist()[:5]}..."
            )
        for p, t in zip(p_ids, t_ids, strict=True):
            if self._partitions[p].size != self._annotations[self._targets[t][0]].size:
                raise ValueError(
                    f"Expected partition {p} and target {t} of the same image size, but got "
                    f"{self._partitions[p].size} and {self._annotations[self._targets[t][0]].size}."
                )
        self._relabel(self._partitions, p_ids)
        self._relabel(self._annotations, [a for t in dict.fromkeys(t_ids) for a in self._targets[t]])
        table_keys = tuple(k for k in keys if k in TABLE_MEASURES)
        pieces: dict[str, list[tuple[list[int], Tensor]]] = {}
        for idx in _by_size([self._partitions[p].size for p in p_ids]):
            group = [(p_ids[i], t_ids[i]) for i in idx]
            values: dict[str, Tensor] = {}
            if table_keys:
                values.update(self._table_measures(group, table_keys))
            if "fb" in keys:
                values.update(self._fb(group))
            for k, v in values.items():
                pieces.setdefault(k, []).append((idx, v))
        return _reassemble(pieces, len(p_ids))

    @staticmethod
    def _relabel(maps: list[_LabelMap], ids: list[int]) -> None:
        """Relabel the maps ``ids`` not prepared yet, those of one size in one call of the compiled kernel."""
        by_size: dict[tuple[int, int], list[int]] = {}
        for i in dict.fromkeys(ids):
            if maps[i].raw is not None:
                by_size.setdefault(maps[i].size, []).append(i)
        for new in by_size.values():
            raw = torch.from_numpy(np.stack([maps[i].raw.numpy() for i in new]))  # type: ignore[union-attr]
            labels, regions = relabel(raw)
            for i, lab, k in zip(new, labels.to(torch.int32), regions.tolist(), strict=True):
                maps[i].labels, maps[i].regions, maps[i].raw = lab, int(k), None

    # ------------------------------------------------------------------------------------------ table measures

    def _table_measures(self, pairs: list[tuple[int, int]], keys: tuple[str, ...]) -> dict[str, Tensor]:
        """Table measures of pairs of one image size, in batches of at most ``_BATCH_CELLS`` dense table cells."""
        p_unique, p_pos = _positions([p for p, _ in pairs])
        a_unique, a_pos = _positions([a for _, t in pairs for a in self._targets[t]])
        p_maps, p_regions = self._stack(self._partitions, p_unique)
        a_maps, a_regions = self._stack(self._annotations, a_unique)
        per_pair = torch.tensor([len(self._targets[t]) for _, t in pairs], dtype=torch.int64)
        ann_start = torch.cumsum(per_pair, 0) - per_pair
        a_pos_t = torch.tensor(a_pos, dtype=torch.int64)
        p_pos_t = torch.tensor(p_pos, dtype=torch.int64)
        # dense cells of every pair: K_S x (sum of its annotations' K_G)
        k_g_sum = torch.zeros(len(pairs), dtype=torch.int64).index_add_(
            0, torch.repeat_interleave(torch.arange(len(pairs)), per_pair), a_regions[a_pos_t]
        )
        cells = p_regions[p_pos_t] * k_g_sum
        out: dict[str, list[Tensor]] = {}
        for lo, hi in _batches(cells, _BATCH_CELLS):
            n_ann = per_pair[lo:hi]
            entries = a_pos_t[int(ann_start[lo]) : int(ann_start[hi - 1] + n_ann[-1])]
            owner = torch.repeat_interleave(torch.arange(hi - lo), n_ann)
            t_part, t_ann = pair_tables(torch.arange(hi - lo), owner)
            ct = contingency_tables(
                p_maps,
                p_regions,
                a_maps,
                a_regions,
                t_part,
                t_ann,
                partition_index=p_pos_t[lo:hi],
                annotation_index=entries,
            )
            for k, v in measures_from_tables(ct, keys, **self._fop).items():
                out.setdefault(k, []).append(v)
        return {k: torch.cat(v) for k, v in out.items()}

    @staticmethod
    def _stack(maps: list[_LabelMap], ids: list[int]) -> tuple[Tensor, Tensor]:
        """(M, N) int32 relabelled maps and (M,) int64 region counts of the registered maps ``ids``."""
        labels = torch.from_numpy(np.stack([maps[i].labels.numpy() for i in ids]))
        return labels, torch.tensor([maps[i].regions for i in ids], dtype=torch.int64)

    # ------------------------------------------------------------------------------------------------------ Fb

    def _boundary(self, side: int, i: int) -> int:
        """The content id of the thinned boundary map ``thin(seg2bmap(map))`` of registered map ``i`` (side 0: a
        partition, 1: an annotation); Fb thins the machine maps like the annotators' (BSR ``thinpb``). Drawn once
        per map, maps with the same boundaries share one id."""
        cache = self._boundary_ids[side]
        if i not in cache:
            self._draw_boundaries(side, [i])
        return cache[i]

    def _draw_boundaries(self, side: int, ids: list[int]) -> None:
        """Draw the boundary maps of the registered maps ``ids`` of one side not drawn yet, all in one batch."""
        cache, maps = self._boundary_ids[side], (self._partitions, self._annotations)[side]
        by_size: dict[tuple[int, int], list[int]] = {}
        for i in dict.fromkeys(ids):
            if i not in cache:
                by_size.setdefault(maps[i].size, []).append(i)
        for (h, w), new in by_size.items():
            labels = torch.from_numpy(np.stack([maps[i].labels.numpy().reshape(h, w) for i in new]))
            for i, b in zip(new, annotator_boundaries(labels).numpy(), strict=True):
                key = (h, w, np.packbits(b).tobytes())
                if key not in self._content:
                    self._content[key] = len(self._bmaps)
                    self._bmaps.append(b.astype(np.uint8))
                    self._bpixels.append(int(b.sum()))
                cache[i] = self._content[key]

    def _fb(self, pairs: list[tuple[int, int]]) -> dict[str, Tensor]:
        """Fb of pairs of one image size, as :func:`.segmentation.partition_fb` on each pair.

        Every distinct matching problem is solved once: pairs whose boundary maps are the same (whatever their label
        maps) have the same counts, and a pair with one annotator has ``cntR = cntP`` = the size of a *maximum*
        matching of the two pixel sets (see :mod:`segmetrics_torch.ops.matching`), which does not depend on which set
        is the machine's: SIHD scores every pair of human partitions in both directions.
        """
        self._draw_boundaries(0, [p for p, _ in pairs])
        self._draw_boundaries(1, [a for _, t in pairs for a in self._targets[t]])
        machine = [self._boundary(0, p) for p, _ in pairs]
        human = [tuple(self._boundary(1, a) for a in self._targets[t]) for _, t in pairs]
        problems: dict[tuple[int, tuple[int, ...]], int] = {}  # (machine, annotators) -> task
        task_of_pair = []
        for m, h in zip(machine, human, strict=True):
            key = (m, h)
            if len(h) == 1 and (h[0], (m,)) in problems:  # the same single matching, sides swapped
                key = (h[0], (m,))
            task_of_pair.append(problems.setdefault(key, len(problems)))
        tasks = list(problems)
        m_unique, m_pos = _positions([m for m, _ in tasks])
        a_unique, a_pos = _positions([a for _, h in tasks for a in h])
        start = np.concatenate([[0], np.cumsum([len(h) for _, h in tasks])]).astype(np.int64)
        counts = pair_correspondence_counts(
            np.stack([self._bmaps[i] for i in m_unique]),
            np.stack([self._bmaps[i] for i in a_unique]),
            np.array(m_pos),
            start,
            np.array(a_pos),
            self._max_dist,
        )
        per_pair = counts[:, np.array(task_of_pair)]
        cnt_r, cnt_p = torch.from_numpy(per_pair[0]), torch.from_numpy(per_pair[1])
        sum_p = torch.tensor([self._bpixels[m] for m in machine], dtype=torch.int64)
        sum_r = torch.tensor([sum(self._bpixels[a] for a in h) for h in human], dtype=torch.int64)
        f, p, r = fb_precision_recall(cnt_r, sum_r, cnt_p, sum_p)
        return {
            "fb": f,
            "fb_precision": p,
            "fb_recall": r,
            "fb_cnt_r": cnt_r,
            "fb_sum_r": sum_r,
            "fb_cnt_p": cnt_p,
            "fb_sum_p": sum_p,
        }


def _positions(ids: list[int]) -> tuple[list[int], list[int]]:
    """The distinct ``ids`` in order of first appearance, and the position of every id among them."""
    first: dict[int, int] = {}
    pos = [first.setdefault(i, len(first)) for i in ids]
    return list(first), pos


def _batches(cells: Tensor, budget: int) -> list[tuple[int, int]]:
    """Consecutive ranges of items whose ``cells`` sum to at most ``budget`` (an item above it on its own)."""
    out, lo, total = [], 0, 0
    for i, c in enumerate(cells.tolist()):
        if i > lo and total + c > budget:
            out.append((lo, i))
            lo, total = i, 0
        total += c
    out.append((lo, len(cells)))
    return out
