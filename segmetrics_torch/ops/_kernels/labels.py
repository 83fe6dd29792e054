"""Compiled labelling kernels: relabelling of label maps and the union-find sweeps of UCM hierarchies.

Behind :func:`segmetrics_torch.ops.contingency.relabel` and :func:`segmetrics_torch.ops.hierarchy.ucm_hierarchy`.
Each kernel is sequential by nature (a scan in raster order, union-find); batches run in parallel over maps / images
with ``prange``.
"""

import numba
import numpy as np

from .unionfind import find

# A map whose label range is at most this many times its pixel count is relabelled through a lookup array; wider
# ranges (huge or sparse label values) go through a sort.
_DENSE_RANGE_FACTOR = 4


@numba.njit(cache=True, nogil=True)
def _relabel_one(x, out):  # pragma: no cover - compiled
    # Labels 0..K-1 in order of first appearance along x (a raster scan of the image); returns K.
    n = x.shape[0]
    lo = x[0]
    hi = x[0]
    for p in range(n):
        v = x[p]
        if v < lo:
            lo = v
        if v > hi:
            hi = v
    span = np.uint64(hi) - np.uint64(lo)  # exact even when hi - lo overflows int64
    k = 0
    if span < np.uint64(_DENSE_RANGE_FACTOR * n + 1024):
        lut = np.full(np.int64(span) + 1, -1, np.int64)
        for p in range(n):
            j = np.int64(np.uint64(x[p]) - np.uint64(lo))
            if lut[j] < 0:
                lut[j] = k
                k += 1
            out[p] = lut[j]
        return k
    order = np.argsort(x, kind="mergesort")  # stable: the first member of a run of equal values appears first
    first = np.empty(n, np.int64)  # first position of each run
    run = np.empty(n, np.int64)
    r = -1
    for s in range(n):
        p = order[s]
        if s == 0 or x[p] != x[order[s - 1]]:
            r += 1
            first[r] = p
        run[p] = r
    k = r + 1
    rank_of_run = np.empty(k, np.int64)
    by_first = np.argsort(first[:k])
    for i in range(k):
        rank_of_run[by_first[i]] = i
    for p in range(n):
        out[p] = rank_of_run[run[p]]
    return k


@numba.njit(cache=True, nogil=True, parallel=True)
def relabel_maps(maps, out, counts):  # pragma: no cover - compiled
    for m in numba.prange(maps.shape[0]):
        counts[m] = _relabel_one(maps[m], out[m])


@numba.njit(cache=True, nogil=True)
def _open_cell(ucm, c, w2, is_open, parent, eight):  # pragma: no cover - compiled
    # Mark cell c open and join it to its open neighbours (4- or 8-connected). The smaller root wins, so a component's
    # root is its first cell in raster order.
    is_open[c] = True
    h2 = ucm.shape[0]
    y = c // w2
    x = c - y * w2
    for dy in range(-1, 2):
        for dx in range(-1, 2):
            if dy == 0 and dx == 0:
                continue
            if not eight and dy != 0 and dx != 0:
                continue
            yy = y + dy
            xx = x + dx
            if yy < 0 or yy >= h2 or xx < 0 or xx >= w2:
                continue
            d = yy * w2 + xx
            if not is_open[d]:
                continue
            a = find(parent, c)
            b = find(parent, d)
            if a != b:
                if a < b:
                    parent[b] = a
                else:
                    parent[a] = b


@numba.njit(cache=True, nogil=True)
def _sweep(ucm, thresholds, eight, corners_closed, atoms, levels, level_counts):  # pragma: no cover - compiled
    # Regions of the double-size grid map `ucm` at every threshold (ascending): the connected components of the cells
    # with value <= t (SEISM gridbmap2seg(ucm > t): grid corners closed, 4-connected; BSR bwlabel(ucm <= t):
    # 8-connected), sampled at the pixel cells (odd, odd). A pixel whose own cell is closed gets the background
    # region shared by all such pixels (label 0 of bwlabel). Opening cells in value order makes every level a merge
    # of the atoms: the regions at the lowest threshold, each closed pixel on its own.
    # Pass 1 (levels is None-sized): fills atoms (H, W) and returns the atom count.
    # Pass 2: fills levels[l, atom] with the level's labels in first-appearance order and level_counts[l].
    h2, w2 = ucm.shape
    h = (h2 - 1) // 2
    w = (w2 - 1) // 2
    n_cells = h2 * w2
    parent = np.arange(n_cells)
    is_open = np.zeros(n_cells, np.bool_)
    flat = ucm.ravel()
    t0 = thresholds[0]
    t_last = thresholds[thresholds.shape[0] - 1]
    n_later = 0
    for c in range(n_cells):
        v = flat[c]
        if corners_closed and (c // w2) % 2 == 0 and (c % w2) % 2 == 0:
            continue
        if v <= t0:
            _open_cell(ucm, c, w2, is_open, parent, eight)
        elif v <= t_last:
            n_later += 1
    later = np.empty(n_later, np.int64)
    j = 0
    for c in range(n_cells):
        if corners_closed and (c // w2) % 2 == 0 and (c % w2) % 2 == 0:
            continue
        v = flat[c]
        if t0 < v <= t_last:
            later[j] = c
            j += 1
    later = later[np.argsort(flat[later], kind="mergesort")]

    if levels.shape[0] == 0:
        # pass 1: atoms in first-appearance order
        stamp = np.full(n_cells + h * w, -1, np.int64)
        k = 0
        for i in range(h):
            for jj in range(w):
                c = (2 * i + 1) * w2 + 2 * jj + 1
                key = find(parent, c) if is_open[c] else n_cells + i * w + jj
                if stamp[key] < 0:
                    stamp[key] = k
                    k += 1
                atoms[i, jj] = stamp[key]
        return k

    n_atoms = levels.shape[1]
    rep = np.full(n_atoms, -1, np.int64)  # the first pixel cell of each atom
    for i in range(h):
        for jj in range(w):
            a = atoms[i, jj]
            if rep[a] < 0:
                rep[a] = (2 * i + 1) * w2 + 2 * jj + 1
    stamp = np.full(n_cells + 1, -1, np.int64)
    label = np.empty(n_cells + 1, np.int64)
    pos = 0
    for lv in range(thresholds.shape[0]):
        t = thresholds[lv]
        while pos < later.shape[0] and flat[later[pos]] <= t:
            _open_cell(ucm, later[pos], w2, is_open, parent, eight)
            pos += 1
        k = 0
        for a in range(n_atoms):
            c = rep[a]
            key = find(parent, c) if is_open[c] else n_cells  # closed pixels share the background region
            if stamp[key] != lv:
                stamp[key] = lv
                label[key] = k
                k += 1
            levels[lv, a] = label[key]
        level_counts[lv] = k
    return n_atoms


@numba.njit(cache=True, nogil=True, parallel=True)
def hierarchy_atoms(ucms, dims, thresholds, eight, corners_closed, atoms, n_atoms):  # pragma: no cover - compiled
    empty = np.empty((0, 0), np.int64)
    empty_counts = np.empty(0, np.int64)
    for b in numba.prange(ucms.shape[0]):
        h2 = 2 * dims[b, 0] + 1
        w2 = 2 * dims[b, 1] + 1
        n_atoms[b] = _sweep(
            ucms[b, :h2, :w2],
            thresholds[b],
            eight,
            corners_closed,
            atoms[b, : dims[b, 0], : dims[b, 1]],
            empty,
            empty_counts,
        )


@numba.njit(cache=True, nogil=True, parallel=True)
def hierarchy_levels(
    ucms, dims, thresholds, eight, corners_closed, atoms, n_atoms, levels, level_counts
):  # pragma: no cover - compiled
    for b in numba.prange(ucms.shape[0]):
        h2 = 2 * dims[b, 0] + 1
        w2 = 2 * dims[b, 1] + 1
        _sweep(
            ucms[b, :h2, :w2],
            thresholds[b],
            eight,
            corners_closed,
            atoms[b, : dims[b, 0], : dims[b, 1]],
            levels[b, :, : n_atoms[b]],
            level_counts[b],
        )
