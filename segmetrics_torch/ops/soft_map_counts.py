"""The BSDS counts of thresholded soft maps, in stages spread over threads.

The levels of one image share most of their thin pixels (a blurred boundary thins to about the same ridge at every
threshold), and a pixel's candidate list depends only on the pixel and the annotator. So, per *wave* of images
(whole images whose thinning buffers, all alive at once, stay under :data:`WAVE_PIXELS` entries):

1. every task's map is thresholded and thinned (per image, its levels from the lowest up, each filtered from the one
   below);
2. each image's thin pixels over all its levels are numbered once (its union list);
3. every (image, annotator) pair lists the candidates of that union once;
4. every task matches its map from those lists.

The graphs, their row order and every list are those of :func:`segmetrics_torch.ops.matching.correspondence_counts`'
per-level matching, so the counts are too. Each stage is a serial compiled kernel of
:mod:`segmetrics_torch.ops._kernels.soft_map_stages` over a list of items, and this module hands the items to
``numba.get_num_threads()`` threads (the kernels release the GIL): the same parallelism as one ``parallel=True``
kernel, for about half its compilation time on a new machine (a first run waits for it). The matching
tasks differ in cost by 10x and more, so they are handed out largest first, a few at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import numpy as np

from .backend import compile_aside_enabled

__all__ = ["WAVE_PIXELS", "compile_ahead", "soft_map_counts"]

#: the most on pixels (int32 positions, summed over the levels) that the thinning buffers of one wave hold; an image
#: above it forms a wave of its own
WAVE_PIXELS = 1 << 23


def _stages() -> Any:
    from ._kernels import _compile_aside, correspondence, soft_map_stages

    return _compile_aside, correspondence, soft_map_stages


def _matching_aside() -> Any:
    """The helper compiling the matching stage (:func:`.._kernels._compile_aside.compile_aside`), or none where
    :func:`segmetrics_torch.ops.backend.set_compile_aside` switched it off."""
    aside, corr, _ = _stages()
    if not compile_aside_enabled():
        return aside.Aside(None)
    return aside.compile_aside(corr.indexed_task_counts, corr.INDEXED_TASK_COUNTS_SIGNATURE)


def compile_ahead() -> None:
    """Start compiling the matching stage in a second process now, if it is not compiled or cached yet.

    For a caller that knows early that it will count soft maps (the ``evaluate boundary`` command, once its folders
    pair and before it reads any image): the largest kernel of a first run then compiles beside everything before
    its first use. :func:`soft_map_counts` waits for it (it starts it itself otherwise). Nothing where
    :func:`segmetrics_torch.ops.backend.set_compile_aside` switched compile-aside off. Imports numba, not torch.
    """
    _matching_aside()


@contextmanager
def _runner(n_threads: int) -> Iterator[Callable[..., None]]:
    """``run(kernel, items, *args)``: ``kernel(chunk, *args)`` over chunks of ``items`` on ``n_threads`` threads
    (in order, on this thread, when there is one)."""
    if n_threads <= 1:
        yield lambda kernel, items, *args: kernel(np.ascontiguousarray(items), *args) if len(items) else None
        return
    with ThreadPoolExecutor(n_threads) as pool:

        def run(kernel: Callable[..., None], items: np.ndarray, *args: Any) -> None:
            n_chunks = min(len(items), 4 * n_threads)
            if n_chunks == 0:
                return
            # interleaved, so that neighbours (alike in cost) spread over the chunks; contiguous, so that every
            # call has the argument types of the one compiled signature
            chunks = [np.ascontiguousarray(items[i::n_chunks]) for i in range(n_chunks)]
            for future in [pool.submit(kernel, c, *args) for c in chunks]:
                future.result()

        yield run


def soft_map_counts(
    levels: np.ndarray,
    hist: np.ndarray,
    rank: np.ndarray,
    tasks: np.ndarray,
    dims: np.ndarray,
    gts: np.ndarray,
    n_gt: np.ndarray,
    luts: tuple[np.ndarray, np.ndarray],
    do_thin: bool,
    offsets: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    pad: int,
    big: int,
    n_threads: int,
) -> np.ndarray:
    """Counts ``[cntR, cntP, sumP]`` (3, B, K) int64 of the (image, threshold) pairs ``tasks`` (T, 2); zeros elsewhere.

    Args:
        levels: (B, H, W) level numbers of the soft maps (uint8/uint16/int64): the machine map at threshold k is
            ``levels > rank[k]``.
        hist: (B, K + 1) int64 histogram of ``levels`` per image.
        rank: (K,) int64 position of every threshold among the sorted thresholds.
        tasks: (T, 2) int64 (image, threshold) pairs to count.
        dims: (B, 2) int64 true (H, W) per image.
        gts: (B, A, H, W) uint8 annotator boundary maps; image b uses the first ``n_gt[b]`` (int64 (B,)).
        luts: the thinning look-up tables (:func:`segmetrics_torch.ops.morphology.thinning_luts`).
        do_thin: thin every machine map.
        offsets: ``(off_dy, off_dx, off_cost, n_off)``, the tolerance disk's offsets per image ((B, N) int32, int32,
            int64 and (B,) int64).
        pad: the padding of the annotators' index grids (the largest offset).
        big: the cost of leaving a pixel unmatched.
        n_threads: threads to spread the stages over.
    """
    _, corr, k = _stages()
    # on a first run, the matching stage (the largest kernel) compiles in a second process meanwhile
    helper = _matching_aside()
    try:
        return _counts(
            corr, k, helper, levels, hist, rank, tasks, dims, gts, n_gt, luts, do_thin, offsets, pad, big, n_threads
        )
    finally:
        helper.stop()


def _counts(
    corr: Any,
    k: Any,
    helper: Any,
    levels: np.ndarray,
    hist: np.ndarray,
    rank: np.ndarray,
    tasks: np.ndarray,
    dims: np.ndarray,
    gts: np.ndarray,
    n_gt: np.ndarray,
    luts: tuple[np.ndarray, np.ndarray],
    do_thin: bool,
    offsets: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    pad: int,
    big: int,
    n_threads: int,
) -> np.ndarray:
    off_dy, off_dx, off_cost, n_off = offsets
    lut1, lut2 = luts
    nb, nk = levels.shape[0], rank.shape[0]
    out = np.zeros((3, nb, nk), np.int64)
    tasks = np.ascontiguousarray(tasks, np.int64)
    n_gt = np.ascontiguousarray(n_gt, np.int64)
    task_image, task_rank = tasks[:, 0], rank[tasks[:, 1]]
    # the image of every (image, annotator) pair, and each image's first pair
    pair_image = np.repeat(np.arange(nb, dtype=np.int64), n_gt)
    n_pairs = np.concatenate([[0], np.cumsum(n_gt)]).astype(np.int64)
    pair_annotator = np.arange(len(pair_image), dtype=np.int64) - n_pairs[pair_image]
    # per image, once: the pixels on at its lowest level among the tasks; every level's map is a filter of them
    low = np.full(nb, nk, np.int64)
    np.minimum.at(low, task_image, task_rank)
    above = np.concatenate([hist[:, ::-1].cumsum(axis=1)[:, ::-1], np.zeros((nb, 1), np.int64)], axis=1)
    first = np.concatenate([[0], np.cumsum(above[np.arange(nb), low + 1])]).astype(np.int64)
    on_pos = np.empty(first[nb], np.int32)
    on_level = np.empty(first[nb], levels.dtype)
    # the tasks grouped by image (stable), with each task's on-pixel count
    order = np.argsort(task_image, kind="stable").astype(np.int64)
    t_first = np.searchsorted(task_image[order], np.arange(nb + 1)).astype(np.int64)
    n_on = above[task_image, task_rank + 1]
    images = np.flatnonzero(t_first[1:] > t_first[:-1]).astype(np.int64)
    _, hh, ww = levels.shape
    grids = np.full((nb, gts.shape[1], hh + 2 * pad, ww + 2 * pad), -1, np.int32)
    n2s = np.zeros((nb, gts.shape[1]), np.int64)
    used_pairs = np.flatnonzero(np.isin(pair_image, images))
    gw, cells = grids.shape[3], (hh + 2) * (ww + 2)
    with _runner(n_threads) as run:
        run(
            corr.index_grids_of,
            np.stack([pair_image[used_pairs], pair_annotator[used_pairs]], axis=1),
            gts,
            dims,
            pad,
            off_dy,
            off_dx,
            n_off,
            grids,
            n2s,
        )
        run(k.on_pixels, images, levels, low, first, dims, on_pos, on_level)
        for b0, b1 in _waves(task_image, n_on, nb):
            q0, nq = int(t_first[b0]), int(t_first[b1] - t_first[b0])
            wave_images = images[(images >= b0) & (images < b1)]
            # 1. every task's map, thinned: positions at buf[slot[q]:slot[q] + n_thin[q]]
            slot = np.concatenate([[0], np.cumsum(n_on[order[q0 : q0 + nq]] + 1)]).astype(np.int64)
            buf = np.empty(slot[nq], np.int32)  # + 1 per task above: the filter stores before it decides
            n_thin = np.zeros(nq, np.int64)
            run(
                k.thin_levels,
                wave_images,
                np.int64(q0),
                t_first,
                order,
                tasks,
                rank,
                first,
                on_pos,
                on_level,
                slot,
                buf,
                n_thin,
                dims,
                lut1,
                lut2,
                do_thin,
            )
            # 2. per image, its union list
            per_image = np.zeros(b1 - b0, np.int64)
            np.add.at(per_image, task_image[order[q0 : q0 + nq]] - b0, n_thin)
            u_first = np.concatenate([[0], np.cumsum(per_image)]).astype(np.int64)
            u_base = np.empty(u_first[-1], np.int64)
            n_u = np.zeros(b1 - b0, np.int64)
            run(
                k.union_lists,
                wave_images,
                np.int64(b0),
                np.int64(q0),
                t_first,
                slot,
                n_thin,
                buf,
                dims,
                np.int64(cells),
                np.int64(gw),
                np.int64(pad),
                u_first,
                u_base,
                n_u,
            )
            # 3. every (image, annotator) pair's candidate lists of its image's union list
            p0, p1 = int(n_pairs[b0]), int(n_pairs[b1])
            w_image, w_annotator = pair_image[p0:p1], pair_annotator[p0:p1]
            pairs = np.flatnonzero(np.isin(w_image, wave_images)).astype(np.int64)
            near = np.zeros(p1 - p0, np.int64)
            run(k.near_counts, pairs, w_image, w_annotator, np.int64(b0), grids, u_first, u_base, n_u, near)
            s_off = np.concatenate([[0], np.cumsum(n_u[w_image - b0] + 1)]).astype(np.int64)
            e_off = np.concatenate([[0], np.cumsum(near * n_off[w_image] + 1)]).astype(np.int64)
            l_start = np.empty(s_off[-1], np.int64)
            l_adj = np.empty(e_off[-1], np.int32)
            l_cost = np.empty(e_off[-1], np.int64)
            run(
                k.pair_candidates,
                pairs,
                w_image,
                w_annotator,
                np.int64(b0),
                grids,
                u_first,
                u_base,
                n_u,
                off_dy,
                off_dx,
                off_cost,
                n_off,
                s_off,
                e_off,
                l_start,
                l_adj,
                l_cost,
            )
            # 4. every task's matching, the largest maps first
            helper.wait()
            by_cost = np.argsort(-n_thin, kind="stable").astype(np.int64)
            pair_first = n_pairs[:nb] - p0
            run(
                corr.indexed_task_counts,
                by_cost,
                np.int64(q0),
                order,
                tasks,
                buf,
                slot,
                n_thin,
                n_gt,
                pair_first,
                s_off,
                e_off,
                l_start,
                l_adj,
                l_cost,
                n2s,
                np.int64(big),
                out,
            )
    return out


def _waves(task_image: np.ndarray, n_on: np.ndarray, nb: int) -> list[tuple[int, int]]:
    """Consecutive image ranges ``(b0, b1)`` whose tasks' on pixels (+ 1 each) sum to at most :data:`WAVE_PIXELS`
    (an image above it alone)."""
    per_image = np.zeros(nb, np.int64)
    np.add.at(per_image, task_image, n_on + 1)
    waves, b0 = [], 0
    while b0 < nb:
        b1, size = b0 + 1, int(per_image[b0])
        while b1 < nb and size + int(per_image[b1]) <= WAVE_PIXELS:
            size += int(per_image[b1])
            b1 += 1
        waves.append((b0, b1))
        b0 = b1
    return waves
