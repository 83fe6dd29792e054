"""Boundary pixel correspondence of the BSDS benchmark: an exact, deterministic least-cost maximum matching.

Rule (the same for every backend, device and run):

1. Candidates. A machine pixel ``p`` and a ground-truth pixel ``q`` may be paired iff
   ``|p - q|^2 <= max_dist_px^2`` (Euclidean, as BSR's ``correspondPixels``); the cost of the pair is
   ``rint(100 |p - q|)``, hundredths of a pixel (BSR's integer edge weights), see :func:`offsets_within`.
2. Most matches, then least cost. Among all one-to-one matchings of the candidate graph of *maximum cardinality*,
   one of *least total cost* is taken, exactly: the Hungarian method with shortest augmenting paths (sparse
   Dijkstra with Johnson potentials) on the graph extended by one private "stay unmatched" column per pixel whose
   cost exceeds any total real cost, so that cardinality comes first. Each connected component of the candidate
   graph is solved from its side with fewer pixels (an optimum all the same, with cheaper searches).
3. Ties. Optimal matchings are not unique; the solver adds pixels in raster order (``row * W + col``) and, among
   equally short paths, prefers a free partner, then the smaller index, so the matching is deterministic.

The matching is therefore *maximum*: its size (the number of matched GT pixels, ``cntR``) is the maximum over all
one-to-one matchings within the tolerance. This is what the official CSA assignment approximates ("most matches, then
least total distance") on a random sparse outlier graph, whose result changes from run to run and is typically 0-6
pixels short of the maximum. Which machine pixels are matched (``cntP`` after the OR over annotators) follows the
least-cost choice and the tie rule. ``sumR`` and ``sumP`` never depend on the matching.

The compiled kernels are :mod:`segmetrics_torch.ops._kernels.correspondence` (graph, counts) and
:mod:`segmetrics_torch.ops._kernels.assignment` (the solver); the matching is sequential by nature, so it always runs
on the CPU (thresholding and thinning can run on the GPU, see
:func:`segmetrics_torch.functional.boundary.boundary_pr_counts`). For speed, each level lists the
candidates of its own machine pixels, skipping at once the pixels with no annotator pixel within the tolerance (the
annotators' index grids mark them), each component is solved in its own compact numbering, and the solver skips
work that cannot change its result (heap entries that are never popped, the heap itself when a new pixel's cheapest
candidate is free): the matchings, hence every count, are those of the plain algorithm above (tested against counts
frozen before the change, ``tests/boundary/test_level_counts.py``). The batched counts go further and run the
least-cost solver only where it can change a count: ``cntR`` is the size of *any* maximum matching, and a machine
pixel that every maximum matching keeps (none reached by an alternating path from an unmatched one) is matched
whatever the costs, so one maximum-cardinality matching per annotator settles both; a component is then solved, as
above, only while one of its other pixels is matched by no annotator yet (``cntP`` is an OR over annotators), and
only until those pixels are decided. The counts are unchanged (``tests/boundary/test_certain_rows.py`` checks each
step against scipy and against the full solve).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import torch
from torch import Tensor

from segmetrics_torch._checks import check_positive_float, check_tensor, check_tolerance
from segmetrics_torch.ops.morphology import thinning_luts
from segmetrics_torch.ops.soft_map_counts import soft_map_counts

__all__ = [
    "correspond_pixels",
    "correspondence_counts",
    "image_offsets",
    "max_dist_pixels",
    "offsets_within",
    "pair_correspondence_counts",
]


def max_dist_pixels(max_dist: float, height: int, width: int) -> float:
    """Tolerance in pixels: ``max_dist * sqrt(H^2 + W^2)`` when ``max_dist < 1`` (BSR), else ``max_dist`` pixels."""
    pixels = max_dist * math.hypot(height, width) if max_dist < 1 else float(max_dist)
    return check_tolerance(pixels, max_dist, "max_dist", height, width)


@functools.lru_cache(maxsize=64)
def offsets_within(max_dist_px: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Offsets (dy, dx) with ``dy^2 + dx^2 <= max_dist_px^2``, sorted by (squared distance, dy, dx), and their cost.

    Returns ``(dy, dx, cost)``: int32 offsets and the int64 cost ``rint(100 * sqrt(dy^2 + dx^2))`` of a pair at that
    offset (hundredths of a pixel, BSR's integer edge weights).
    """
    r = math.floor(max_dist_px)
    limit = max_dist_px * max_dist_px
    grid_y, grid_x = np.meshgrid(np.arange(-r, r + 1), np.arange(-r, r + 1), indexing="ij")
    dy, dx = grid_y.ravel(), grid_x.ravel()
    d2 = dy * dy + dx * dx
    keep = d2 <= limit
    dy, dx, d2 = dy[keep], dx[keep], d2[keep]
    order = np.lexsort((dx, dy, d2))
    dy, dx, d2 = dy[order], dx[order], d2[order]
    out = (dy.astype(np.int32), dx.astype(np.int32), np.rint(100 * np.sqrt(d2)).astype(np.int64))
    for a in out:
        a.setflags(write=False)
    return out


def image_offsets(max_dist: float, height: int, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """The tolerance disk's offsets that can join two pixels of an ``height x width`` image: ``(dy, dx, cost, pad,
    max_cost)``.

    :func:`offsets_within` of the image's tolerance, less the offsets no pair of its pixels has (``|dy| >= H`` or
    ``|dx| >= W``): the same candidate pairs in the same order, so the same matching, but a table that does not
    grow with the part of the disk outside the image (a 1 x 60000 line at BSR's 0.0075 x diagonal has a 450 px
    tolerance: 901 possible offsets instead of 636,000, which sized its candidate buffers at ~10^10 entries).
    ``pad`` is the largest remaining ``|dy|`` or ``|dx|``; ``max_cost`` is the whole disk's (the unmatched cost
    keeps its value).
    """
    dy, dx, cost = offsets_within(max_dist_pixels(max_dist, height, width))
    max_cost = int(cost.max())
    keep = (np.abs(dy) < height) & (np.abs(dx) < width)
    if not keep.all():
        dy, dx, cost = dy[keep], dx[keep], cost[keep]
    pad = int(max(np.abs(dy).max(), np.abs(dx).max()))
    return dy, dx, cost, pad, max_cost


def _big(max_cost: int, n_pixels: int) -> int:
    """Cost of leaving a pixel unmatched: above any total real cost, so cardinality comes first."""
    return (max_cost + 1) * (n_pixels + 1)


def _kernels() -> Any:
    from ._kernels import correspondence

    return correspondence


def correspond_pixels(machine: Tensor, target: Tensor, max_dist: float = 0.0075) -> tuple[Tensor, Tensor]:
    """Match the on pixels of two (H, W) boundary maps one-to-one within a distance tolerance.

    Args:
        machine: bool (H, W) boundary map (used as it is: no thinning).
        target: bool (H, W) ground-truth boundary map of the same size.
        max_dist: tolerance as a fraction of the image diagonal (``< 1``, BSR's ``maxDist``) or in pixels (``>= 1``).

    Returns:
        ``(match1, match2)``: int64 (H, W) maps on the input device; ``match1[p]`` is the flat index
        (``row * W + col``) of the target pixel matched to machine pixel ``p``, -1 where unmatched or off;
        ``match2`` likewise for target pixels. Unlike BSR's 1-based, column-major ``match1``/``match2``.
    """
    check_tensor(machine, "machine")
    check_tensor(target, "target")
    for name, x in (("machine", machine), ("target", target)):
        if x.dtype != torch.bool or x.ndim != 2 or x.numel() == 0:
            raise ValueError(
                f"Expected `{name}` to be a bool (H, W) tensor with H, W >= 1, but got {x.dtype} {tuple(x.shape)}."
            )
    if machine.shape != target.shape:
        raise ValueError(
            f"Expected `machine` and `target` of the same shape, but got {tuple(machine.shape)} and "
            f"{tuple(target.shape)}."
        )
    check_positive_float(max_dist, "max_dist")
    h, w = machine.shape
    dy, dx, cost, pad, max_cost = image_offsets(max_dist, h, w)
    k = _kernels()
    m = machine.cpu().numpy()
    g = target.cpu().numpy().astype(np.uint8)
    my, mx = (a.astype(np.int32) for a in np.nonzero(m))
    grids, n2 = k.gt_index_grids(
        g[None, None],
        np.ones(1, np.int64),
        np.array([[h, w]], np.int64),
        pad,
        dy[None],
        dx[None],
        np.array([len(dy)], np.int64),
    )
    big = _big(max_cost, h * w)
    match1, match2 = k.correspond(my, mx, grids[0, 0], n2[0, 0], dy, dx, cost, len(dy), pad, big)
    gy, gx = np.nonzero(g)
    out1 = np.full(h * w, -1, np.int64)
    out2 = np.full(h * w, -1, np.int64)
    m_flat = my.astype(np.int64) * w + mx
    g_flat = gy.astype(np.int64) * w + gx
    ok1 = match1 >= 0
    out1[m_flat[ok1]] = g_flat[match1[ok1]]
    ok2 = match2 >= 0
    out2[g_flat[ok2]] = m_flat[match2[ok2]]
    return (
        torch.from_numpy(out1.reshape(h, w)).to(machine.device),
        torch.from_numpy(out2.reshape(h, w)).to(machine.device),
    )


def _threshold_levels(
    pb: np.ndarray, thresholds: np.ndarray, dims: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Soft maps as level numbers: ``(levels, hist, rank, rep)`` for ``soft_map_counts``.

    ``levels`` (B, H, W) counts the thresholds each pixel reaches (``pb >= t``; uint8 up to 255 thresholds), over
    the thresholds in increasing order; ``rank[k]`` is threshold k's position in that order, so the machine map of
    threshold k is ``levels > rank[k]``: one byte per pixel per level instead of a float64 comparison, and each level's
    pixel count is known from ``hist`` (B, K + 1), the histogram of ``levels`` per image. ``rep`` (B, K) is the index
    of the first threshold giving the same machine map as threshold k (k itself if it is new): with increasing
    thresholds, ``pb >= t[k]`` equals ``pb >= t[k-1]`` unless some pixel reaches exactly k of them; ucm2 maps have few
    distinct values, so most of the 99 maps repeat (typically 25-50 are distinct) and their counts are copied
    instead of recomputed. Unsorted thresholds are all computed.
    """
    nb, nk = dims.shape[0], len(thresholds)
    order = np.argsort(thresholds, kind="stable")
    rank = np.empty(nk, np.int64)
    rank[order] = np.arange(nk)
    dtype = np.uint8 if nk < 2**8 else np.uint16 if nk < 2**16 else np.int64
    levels = np.zeros(pb.shape, dtype)
    hist = _kernels().level_index(pb, np.ascontiguousarray(thresholds[order]), dims, levels)
    rep = np.tile(np.arange(nk), (nb, 1))
    if nk >= 2 and np.all(np.diff(thresholds) > 0):
        # level k (>= 1) is new iff some pixel reaches exactly k thresholds; otherwise it repeats the one before
        new = np.concatenate([np.ones((nb, 1), bool), hist[:, 1:nk] > 0], axis=1)
        rep = np.maximum.accumulate(np.where(new, rep, 0), axis=1)
    return levels, hist, rank, rep


def _distinct_stack_levels(maps: np.ndarray, dims: np.ndarray) -> np.ndarray:
    """(B, K) index of the level whose counts level k copies: k-1's (transitively) when map k equals map k-1.

    The levels of a hierarchy repeat: the 99 thresholds of a ucm2 give 23-47 distinct partitions per BSDS500 image,
    consecutive (a partition at a threshold holds until the next boundary value). Equal maps give equal counts, so
    only the first of each run is matched.
    """
    nb, nk = maps.shape[:2]
    rep = np.tile(np.arange(nk), (nb, 1))
    for b, (h, w) in enumerate(dims):
        for kk in range(1, nk):
            if np.array_equal(maps[b, kk, :h, :w], maps[b, kk - 1, :h, :w]):
                rep[b, kk] = rep[b, kk - 1]
    return rep


def correspondence_counts(
    machine: np.ndarray,
    gts: np.ndarray,
    n_gt: np.ndarray,
    dims: np.ndarray,
    max_dist: float,
    *,
    thresholds: np.ndarray | None = None,
    thin: bool = True,
) -> np.ndarray:
    """Per (image, level) counts ``[cntR, cntP, sumP]`` of a batch, with the compiled kernel (host arrays).

    Args:
        machine: soft maps (B, H, W) float64 when ``thresholds`` is given (machine map ``machine >= t``), else
            binary machine maps (B, K, H, W) uint8; padded to a common (H, W), true sizes in ``dims``.
        gts: (B, A, H, W) uint8 annotator boundary maps (padded; image b uses the first ``n_gt[b]``).
        n_gt: (B,) int64 number of annotators per image.
        dims: (B, 2) int64 true (H, W) per image.
        max_dist: tolerance, see :func:`max_dist_pixels`.
        thresholds: (K,) float64 thresholds for soft maps.
        thin: thin every machine map after binarisation (BSR ``thinpb``).

    Returns:
        (3, B, K) int64: cntR (matched GT pixels summed over annotators), cntP (machine pixels matched to at least
        one annotator), sumP (machine pixels).
    """
    nb = dims.shape[0]
    lut1, lut2 = thinning_luts()
    tables = [image_offsets(max_dist, int(h), int(w)) for h, w in dims]
    n_off = np.array([len(t[0]) for t in tables], np.int64)
    width = int(n_off.max())
    off = np.zeros((2, nb, width), np.int32)
    off_cost = np.zeros((nb, width), np.int64)
    for b, t in enumerate(tables):
        off[0, b, : n_off[b]] = t[0]
        off[1, b, : n_off[b]] = t[1]
        off_cost[b, : n_off[b]] = t[2]
    pad = max(t[3] for t in tables)
    big = _big(max(t[4] for t in tables), int(dims.prod(1).max()))
    k = _kernels()
    if thresholds is not None:
        import numba

        levels, hist, rank, rep = _threshold_levels(machine, thresholds, dims)
        tasks = np.ascontiguousarray(np.argwhere(rep == np.arange(len(thresholds))))
        out = np.zeros((3, nb, len(thresholds)), np.int64)
        for part in _task_chunks(tasks, hist, rank):
            out += soft_map_counts(
                levels,
                hist,
                rank,
                part,
                dims,
                gts,
                n_gt,
                (lut1, lut2),
                thin,
                (off[0], off[1], off_cost, n_off),
                pad,
                big,
                numba.get_num_threads(),
            )
            # each call fills only its own tasks' counts (zeros elsewhere)
        return np.take_along_axis(out, rep[None].repeat(3, 0), axis=2)
    rep = _distinct_stack_levels(machine, dims)
    # C order always: np.argwhere's layout varies with the batch, and numba compiles the kernel once per layout
    tasks = np.ascontiguousarray(np.argwhere(rep == np.arange(machine.shape[1])))
    with _dynamic_schedule():
        out = k.stack_counts(
            machine, tasks, dims, gts, n_gt, lut1, lut2, thin, off[0], off[1], off_cost, n_off, pad, big
        )
    return np.take_along_axis(out, rep[None].repeat(3, 0), axis=2)


#: the most thresholded pixels (summed over the levels) that one call of the soft-map kernel holds at once: its
#: buffers keep every level of an image alive, so without a bound memory grows with the number of thresholds
_CHUNK_PIXELS = 1 << 26


def _task_chunks(tasks: np.ndarray, hist: np.ndarray, rank: np.ndarray) -> list[np.ndarray]:
    """The (image, threshold) tasks in consecutive groups whose on-pixel counts sum to at most :data:`_CHUNK_PIXELS`
    (a task larger than that alone): memory bounded whatever the number of thresholds (100,000 thresholds of one
    200x300 map needed ~11 GB in one call), the usual 99 of a few images in one call as before."""
    # pixels on at level rank[k] of image b: those whose level number exceeds it
    above = hist[:, ::-1].cumsum(axis=1)[:, ::-1]  # above[b, v] = pixels with level >= v
    n_on = above[tasks[:, 0], rank[tasks[:, 1]] + 1] + 1
    if n_on.sum() <= _CHUNK_PIXELS:
        return [tasks]
    chunks, start, total = [], 0, 0
    for i, size in enumerate(n_on.tolist()):
        if total and total + size > _CHUNK_PIXELS:
            chunks.append(tasks[start:i])
            start, total = i, 0
        total += size
    chunks.append(tasks[start:])
    return chunks


def _dynamic_schedule() -> Any:
    """Hand the parallel matching tasks to the threads one at a time: their costs differ by 10x and more (a fine
    level matched against its own image's annotators vs a coarse one or another image's), so that the default
    static split into one block per thread leaves threads idle."""
    import numba

    return numba.parallel_chunksize(1)


def pair_correspondence_counts(
    machine: np.ndarray,
    annotators: np.ndarray,
    pair_machine: np.ndarray,
    pair_start: np.ndarray,
    pair_annotators: np.ndarray,
    max_dist: float,
) -> np.ndarray:
    """Counts ``[cntR, cntP, sumP]`` of many (machine map, annotators) pairs drawn from shared maps (host arrays).

    The counts of :func:`correspondence_counts` (``thin=False``) of every pair, but each map enters once: a machine
    map's pixel list and an annotator's index grid are built once for all the pairs that use it (the meta-measures
    match a few hundred maps in thousands of pairs). One parallel task per pair.

    Args:
        machine: (M, H, W) binary machine maps (thin already: used as they are), all of one size.
        annotators: (G, H, W) binary annotator boundary maps of the same size.
        pair_machine: (T,) int64 machine map of every pair.
        pair_start, pair_annotators: the annotators of pair ``t`` are
            ``pair_annotators[pair_start[t]:pair_start[t + 1]]`` (int64 CSR, (T + 1,) and (E,)).
        max_dist: tolerance, see :func:`max_dist_pixels`.

    Returns:
        (3, T) int64: cntR (matched annotator pixels summed over the pair's annotators), cntP (machine pixels matched
        to at least one of them), sumP (machine pixels).
    """
    if machine.ndim != 3 or annotators.ndim != 3 or machine.shape[1:] != annotators.shape[1:]:
        raise ValueError(
            f"Expected (M, H, W) machine and (G, H, W) annotator maps of one size, but got {machine.shape} and "
            f"{annotators.shape}."
        )
    pair_machine, pair_start, pair_annotators = (
        np.ascontiguousarray(a, np.int64) for a in (pair_machine, pair_start, pair_annotators)
    )
    t = pair_machine.shape[0]
    if (
        pair_start.shape != (t + 1,)
        or (t and (pair_start[0] != 0 or pair_start[-1] != pair_annotators.shape[0] or (np.diff(pair_start) < 0).any()))
        or ((pair_machine < 0) | (pair_machine >= machine.shape[0])).any()
        or ((pair_annotators < 0) | (pair_annotators >= annotators.shape[0])).any()
    ):
        raise ValueError("Expected pairs that index the machine and annotator maps (CSR offsets from 0 to E).")
    h, w = (int(v) for v in machine.shape[1:])
    dy, dx, cost, pad, max_cost = image_offsets(max_dist, h, w)
    k = _kernels()
    m_idx, m_ys, m_xs = (a.astype(np.int64) for a in np.nonzero(machine))  # raster order within each map
    m_start = np.searchsorted(m_idx, np.arange(machine.shape[0] + 1)).astype(np.int64)
    gts = np.ascontiguousarray(annotators != 0, dtype=np.uint8)[None]
    grids, n2 = k.gt_index_grids(
        gts,
        np.array([gts.shape[1]], np.int64),
        np.array([[h, w]], np.int64),
        pad,
        dy[None],
        dx[None],
        np.array([len(dy)], np.int64),
    )
    big = _big(max_cost, h * w)
    with _dynamic_schedule():
        return k.pair_counts(
            m_start,
            m_ys,
            m_xs,
            grids[0],
            n2[0],
            pair_machine,
            pair_start,
            pair_annotators,
            dy,
            dx,
            cost,
            len(dy),
            pad,
            big,
        )
