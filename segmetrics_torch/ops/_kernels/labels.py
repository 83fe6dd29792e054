"""Compiled CPU kernels of the partition family: relabelling, hierarchy sweeps, maximum-weight region matching.

Each kernel is sequential by nature (a scan in raster order, union-find, shortest augmenting paths); batches run in
parallel over maps / images / tables with ``prange``.
"""

from __future__ import annotations

import numba
import numpy as np

from .correspondence import _find, min_cost_maximum_matching

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
            a = _find(parent, c)
            b = _find(parent, d)
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
                key = _find(parent, c) if is_open[c] else n_cells + i * w + jj
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
            key = _find(parent, c) if is_open[c] else n_cells  # closed pixels share the background region
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
        n_atoms[b] = _sweep(ucms[b, :h2, :w2], thresholds[b], eight, corners_closed,
                            atoms[b, : dims[b, 0], : dims[b, 1]], empty, empty_counts)


@numba.njit(cache=True, nogil=True, parallel=True)
def hierarchy_levels(ucms, dims, thresholds, eight, corners_closed, atoms, n_atoms, levels,
                     level_counts):  # pragma: no cover - compiled
    for b in numba.prange(ucms.shape[0]):
        h2 = 2 * dims[b, 0] + 1
        w2 = 2 * dims[b, 1] + 1
        _sweep(ucms[b, :h2, :w2], thresholds[b], eight, corners_closed, atoms[b, : dims[b, 0], : dims[b, 1]],
               levels[b, :, : n_atoms[b]], level_counts[b])


@numba.njit(cache=True, nogil=True, parallel=True)
def max_weight_matchings(entry_start, rows, cols, weights, n_rows, n_cols, out):  # pragma: no cover - compiled
    # Per table (entries entry_start[t]:entry_start[t+1], local row/col indices, positive integer weights): the
    # maximum total weight of a matching (no cardinality constraint). Solved as a min-cost assignment of the smaller
    # side, cost (W - w) per edge and W for a private "stay unmatched" column, W = max weight: every row pays W once,
    # so minimising the cost maximises the matched weight.
    for t in numba.prange(entry_start.shape[0] - 1):
        lo = entry_start[t]
        hi = entry_start[t + 1]
        if hi == lo:
            out[t] = 0
            continue
        swap = n_rows[t] > n_cols[t]
        nr = n_cols[t] if swap else n_rows[t]
        nc = n_rows[t] if swap else n_cols[t]
        big = np.int64(0)
        for e in range(lo, hi):
            if weights[e] > big:
                big = weights[e]
        start = np.zeros(nr + 1, np.int64)
        for e in range(lo, hi):
            r = cols[e] if swap else rows[e]
            start[r + 1] += 1
        for r in range(nr):
            start[r + 1] += start[r]
        fill = start[:nr].copy()
        adj = np.empty(hi - lo, np.int64)
        cost = np.empty(hi - lo, np.int64)
        wgt = np.empty(hi - lo, np.int64)
        for e in range(lo, hi):
            r = cols[e] if swap else rows[e]
            c = rows[e] if swap else cols[e]
            adj[fill[r]] = c
            cost[fill[r]] = big - weights[e]
            wgt[fill[r]] = weights[e]
            fill[r] += 1
        use = np.ones(nr, np.bool_)
        col4row, _ = min_cost_maximum_matching(start, adj, cost, nc, big, use)
        total = np.int64(0)
        for r in range(nr):
            c = col4row[r]
            if c < 0:
                continue
            for p in range(start[r], start[r + 1]):
                if adj[p] == c:
                    total += wgt[p]
                    break
        out[t] = total


@numba.njit(cache=True, nogil=True, parallel=True)
def dense_table_counts(parts, anns, table_partition, table_annotation, k_g, cell_offset, out):  # pragma: no cover
    # out[cell_offset[t] + part * K_G + ann] += 1 for every pixel of every table (dense blocks never overlap)
    n = parts.shape[1]
    for t in numba.prange(table_partition.shape[0]):
        p = parts[table_partition[t]]
        a = anns[table_annotation[t]]
        off = cell_offset[t]
        kg = k_g[t]
        end = out.shape[0]
        for i in range(n):
            # indices are relabelled region numbers; the test keeps memory safe should a caller pass anything else
            j = off + p[i] * kg + a[i]
            if a[i] >= 0 and a[i] < kg and j >= off and j < end:
                out[j] += 1


@numba.njit(cache=True, nogil=True, parallel=True)
def signature_counts(masks, signature, n_signatures, out):  # pragma: no cover - compiled
    # out[p, s] = number of pixels of the (H, W) uint8 mask p whose signature (e.g. which objects contain them) is s:
    # one pass over the bool masks, no float copy; rows without any pixel are skipped after a vectorised test
    c, h, w = masks.shape
    for p in numba.prange(c):
        m = masks[p]
        acc = np.zeros(n_signatures, np.int64)
        for i in range(h):
            row_any = np.uint8(0)
            for j in range(w):
                row_any |= m[i, j]
            if row_any:
                for j in range(w):
                    s = signature[i, j]
                    if s >= 0 and s < n_signatures:  # memory safety whatever arrives
                        acc[s] += m[i, j]
        out[p] = acc


@numba.njit(cache=True, nogil=True, parallel=True)
def mask_boundary_counts(
    masks, valid, near, dil_signature, n_signatures, gt_pixels, gt_objects, off_y, off_x, fg_per_sig, gt_match, fg_count
):  # pragma: no cover - compiled
    # For each (H, W) uint8 mask p: its seg2bmap boundary b_p; fg_count[p] = |b_p & valid|; fg_per_sig[p, s] = number
    # of those pixels whose signature (which objects' dilated boundaries contain them) is s; gt_match[p, k] = number
    # of valid boundary pixels of object k (gt_pixels, flat, with their object gt_objects) inside b_p dilated by the
    # disk (off_y, off_x). The dilation is stamped around those pixels of b_p that are near (within the disk of) some
    # object boundary: no other pixel of b_p can reach an object boundary pixel, and most of a proposal's boundary is
    # far from every object.
    c, h, w = masks.shape
    n_obj = gt_match.shape[1]
    for p in numba.prange(c):
        m = masks[p]
        dil = np.zeros(h * w, np.uint8)
        acc = np.zeros(n_signatures, np.int64)
        count = 0
        # only the 2x2 blocks meeting the mask's bounding box can hold a boundary pixel; finding the box is a fast,
        # vectorised pass, the boundary scan the slow one
        r0, r1, c0, c1 = h, -1, w, -1
        cols = np.zeros(w, np.uint8)
        for i in range(h):
            row_any = np.uint8(0)
            for j in range(w):
                row_any |= m[i, j]
            if row_any:
                if r0 == h:
                    r0 = i
                r1 = i
                for j in range(w):
                    cols[j] |= m[i, j]
        for j in range(w):
            if cols[j]:
                if c0 == w:
                    c0 = j
                c1 = j
        for i in range(max(r0 - 1, 0), r1 + 1):
            for j in range(max(c0 - 1, 0), c1 + 1):
                v = m[i, j]
                if i + 1 < h:
                    if j + 1 < w:
                        on = v != m[i, j + 1] or v != m[i + 1, j] or v != m[i + 1, j + 1]
                    else:
                        on = v != m[i + 1, j]
                else:
                    on = j + 1 < w and v != m[i, j + 1]
                if not on:
                    continue
                if valid[i, j]:
                    count += 1
                    s = dil_signature[i, j]
                    if s >= 0 and s < n_signatures:  # memory safety whatever arrives
                        acc[s] += 1
                if not near[i, j]:
                    continue
                for t in range(off_y.shape[0]):
                    y = i + off_y[t]
                    x = j + off_x[t]
                    if y >= 0 and y < h and x >= 0 and x < w:
                        dil[y * w + x] = 1
        hits = np.zeros(n_obj, np.int64)
        for q in range(gt_pixels.shape[0]):
            o = gt_objects[q]
            px = gt_pixels[q]
            if o >= 0 and o < n_obj and px >= 0 and px < h * w:  # memory safety whatever arrives
                hits[o] += dil[px]
        fg_per_sig[p] = acc
        gt_match[p] = hits
        fg_count[p] = count
