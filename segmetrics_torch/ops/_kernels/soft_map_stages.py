"""The stages of the BSDS counts of soft maps, each a serial kernel over a list of items (images, pairs, tasks).

Behind :func:`segmetrics_torch.ops.soft_map_counts.soft_map_counts`, which documents the method and spreads each
stage's items over threads (every kernel here releases the GIL). Serial kernels rather than one ``parallel=True``
kernel: the same work, but numba compiles them in about half the time (a parallel kernel's loops and the numpy calls
inside them are each outlined, typed and optimised again), which is most of a first run's wait on a new machine.
Every stage writes only its own items' slices of the shared arrays, so the items can run in any order and on any
thread. The last stage, the matching of every task, is :func:`.correspondence.indexed_task_counts`; the counts are
those of :func:`.correspondence.level_counts` (the same graphs, rows and lists).
"""

import numba
import numpy as np

from .correspondence import flat_offsets, indexed_candidates
from .thinning import thin_positions


@numba.njit(cache=True, nogil=True)
def on_pixels(images, levels, low, first, dims, on_pos, on_level):  # pragma: no cover - compiled
    # Per image b of `images`: the flat positions (in the image padded by one pixel, raster order) and level numbers
    # of its pixels above level low[b], at on_pos / on_level[first[b]:first[b + 1]].
    for i in range(images.shape[0]):
        b = images[i]
        w2 = dims[b, 1] + 2
        q = first[b]
        for y in range(dims[b, 0]):
            for x in range(dims[b, 1]):
                if levels[b, y, x] > low[b]:
                    on_pos[q] = (y + 1) * w2 + x + 1
                    on_level[q] = levels[b, y, x]
                    q += 1


@numba.njit(cache=True, nogil=True)
def thin_levels(
    images, q0, t_first, order, tasks, rank, first, on_pos, on_level, slot, buf, n_thin, dims, lut1, lut2, do_thin
):
    # pragma: no cover - compiled
    # Per image b of `images`: its tasks' maps from its lowest level up, each thinned into buf[slot[q]:] (q: the
    # task's position in the wave, which starts at q0 in `order`), its pixel count in n_thin[q]. The maps are
    # nested, so each level's pixels are filtered (in place in on_pos / on_level, raster order kept) from the level
    # below it rather than from the whole lowest list.
    for i in range(images.shape[0]):
        b = images[i]
        qs = np.arange(t_first[b] - q0, t_first[b + 1] - q0)
        ms = np.empty(qs.shape[0], np.int64)
        for j in range(qs.shape[0]):
            ms[j] = rank[tasks[order[q0 + qs[j]], 1]]
        by_level = _rank_order(ms, rank.shape[0])
        f = first[b]
        cnt = first[b + 1] - f
        for j in by_level:
            q = qs[j]
            m = ms[j]
            c = np.int64(0)
            for p in range(f, f + cnt):
                on_pos[f + c] = on_pos[p]
                on_level[f + c] = on_level[p]
                c += on_level[p] > m
            cnt = c
            pos = buf[slot[q] : slot[q + 1]]
            pos[:c] = on_pos[f : f + c]
            if do_thin:
                c = thin_positions(pos, c, dims[b, 0] + 2, dims[b, 1] + 2, lut1, lut2)
            n_thin[q] = c


@numba.njit(cache=True, nogil=True)
def _rank_order(ms, nk):  # pragma: no cover - compiled
    # The order of ms by value, for distinct values in [0, nk) (one image's task ranks: each threshold once), by
    # scattering them over [0, nk): linear, and no merge sort to compile (a second of the first run).
    where = np.full(nk, -1, np.int64)
    for j in range(ms.shape[0]):
        where[ms[j]] = j
    idx = np.empty(ms.shape[0], np.int64)
    n = 0
    for m in range(nk):
        if where[m] >= 0:
            idx[n] = where[m]
            n += 1
    return idx[:n]


@numba.njit(cache=True, nogil=True)
def union_lists(images, b0, q0, t_first, slot, n_thin, buf, dims, cells, gw, pad, u_first, u_base, n_u):
    # pragma: no cover - compiled
    # Per image b of `images` (of the wave starting at image b0): its union list, the thin pixels of all its tasks
    # numbered by first appearance. Each task's positions in buf are replaced by union indices; u_base[u_first[b -
    # b0]:] holds each union pixel's cell in the padded GT index grids (width gw, padding pad); n_u[b - b0] the count.
    for i in range(images.shape[0]):
        b = images[i]
        w2 = dims[b, 1] + 2
        idx = np.full(cells, -1, np.int32)
        n = 0
        ub = u_base[u_first[b - b0] :]
        for q in range(t_first[b] - q0, t_first[b + 1] - q0):
            for j in range(slot[q], slot[q] + n_thin[q]):
                p = buf[j]
                if idx[p] < 0:
                    idx[p] = n
                    y = p // w2
                    ub[n] = (y - 1 + pad) * gw + p - y * w2 - 1 + pad
                    n += 1
                buf[j] = idx[p]
        n_u[b - b0] = n


@numba.njit(cache=True, nogil=True)
def near_counts(pairs, pair_image, pair_annotator, b0, grids, u_first, u_base, n_u, near):
    # pragma: no cover - compiled
    # Per (image, annotator) pair pr of `pairs` (positions in the wave): how many of its image's union pixels have
    # some of the annotator's pixels within the tolerance (their candidate lists are not empty).
    for i in range(pairs.shape[0]):
        pr = pairs[i]
        b = pair_image[pr]
        gflat = grids[b, pair_annotator[pr]].reshape(-1)
        ub = u_base[u_first[b - b0] :]
        c = np.int64(0)
        for u in range(n_u[b - b0]):
            c += gflat[ub[u]] != -1
        near[pr] = c


@numba.njit(cache=True, nogil=True)
def pair_candidates(
    pairs,
    pair_image,
    pair_annotator,
    b0,
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
):
    # pragma: no cover - compiled
    # Per pair pr of `pairs`: the candidate lists of its image's union list against its annotator (CSR
    # l_start[s_off[pr]:], entries l_adj / l_cost[e_off[pr]:]; see indexed_candidates).
    gw = grids.shape[3]
    for i in range(pairs.shape[0]):
        pr = pairs[i]
        b = pair_image[pr]
        lin = flat_offsets(off_dy[b], off_dx[b], n_off[b], gw)
        s = s_off[pr]
        e = e_off[pr]
        indexed_candidates(
            u_base[u_first[b - b0] :],
            n_u[b - b0],
            grids[b, pair_annotator[pr]].reshape(-1),
            lin,
            off_cost[b],
            n_off[b],
            l_start[s:],
            l_adj[e:],
            l_cost[e:],
        )
