"""Compiled counting kernels of tables: dense contingency counts, maximum-weight region matchings, and the
per-mask signature / boundary counts of object proposals.

Behind :mod:`segmetrics_torch.ops.contingency` and :mod:`segmetrics_torch.ops.masks`. Batches run in parallel over
tables / masks with ``prange``; every index read from an input is tested before it is used (memory safety whatever
values arrive).
"""

import numba
import numpy as np

from .assignment import min_cost_maximum_matching


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
        if not (0 <= table_partition[t] < parts.shape[0] and 0 <= table_annotation[t] < anns.shape[0]):
            continue
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
