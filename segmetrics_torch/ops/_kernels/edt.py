"""Compiled CPU kernels of :func:`segmetrics_torch.ops.distance.distance_transform_edt` (imported lazily).

They live at module level in their own module so that numba's on-disk cache (``cache=True``) is keyed by a stable
module name: kernels defined inside a function break the cache when the defining file is imported under another name.
"""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def column_scan(mask, out, c0, c1, below):  # pragma: no cover - compiled
    # out[y, c], c in [c0, c1): row of the feature nearest to (y, c) in column c of the (H, W) `mask`, -1 if
    # the column has none. Both scans walk the block row by row (contiguous) rather than down strided columns.
    # Row views indexed from 0: numba's wraparound of an index from a runtime start keeps LLVM from vectorising.
    h = mask.shape[0]
    n = c1 - c0
    m, o = mask[0][c0:c1], out[0][c0:c1]
    for i in range(n):
        o[i] = 0 if m[i] else -1
    for y in range(1, h):
        m, o, prev = mask[y][c0:c1], out[y][c0:c1], out[y - 1][c0:c1]
        for i in range(n):
            o[i] = y if m[i] else prev[i]
    bl = below[:n]
    bl[:] = -1
    for y in range(h - 1, -1, -1):
        m, o = mask[y][c0:c1], out[y][c0:c1]
        for i in range(n):
            nb = bl[i]
            ab = o[i]
            if m[i]:
                bl[i] = y
            # Strict: on a tie the feature above (smaller row) stays, as the tie rule requires.
            elif nb >= 0 and (ab < 0 or nb - y < y - ab):
                o[i] = nb


@numba.njit(cache=True, nogil=True)
def lower_envelope(gy, y, cst, v, z):  # pragma: no cover - compiled
    # Row y: the lower envelope of the parabolas (x - c)^2 + f(c), f(c) = (y - gy[c])^2, over the columns c with
    # gy[c] >= 0; on a tie the smallest c wins. Fills the stack v[0..k] (columns), z[0..k + 1] (v[j] wins on the
    # integers [z[j], z[j + 1]) of [0, W): z[0] = 0, z[k + 1] = W) and cst[j] = f(v[j]) + v[j]^2; returns k (-1:
    # no feature column). cst and v are W-long, z (W + 1)-long int64 scratch.
    #
    # Exact integer breakpoints. Parabola q (a larger column) is *strictly* better than parabola p < q at integer
    # x iff (x-q)^2 + f(q) < (x-p)^2 + f(p) iff num < x * den, with num = f(q) + q^2 - f(p) - p^2 and
    # den = 2 (q - p) > 0; i.e. iff x >= floor(num / den) + 1 =: s(p, q). Everything is an int64 integer far from
    # overflow (|num| < 2 (H^2 + W^2)) and `//` floors, also for a negative num, so these tests are exact: no
    # floating-point intersection, and at an exact crossing point x = num / den the smaller column p keeps the
    # pixel, as the tie rule requires.
    w = gy.shape[0]
    k = -1
    for q in range(w):
        r = gy[q]
        if r < 0:
            continue
        cq = np.int64(y - r) * np.int64(y - r) + q * q
        # s(v[k], q) <= z[k], i.e. floor(num / den) < z[k], iff num < z[k] * den (z[k] is an integer): q beats
        # v[k] wherever v[k] was winning, so v[k] leaves the envelope. No division needed here.
        while k >= 0 and cq - cst[k] < z[k] * 2 * (q - v[k]):
            k -= 1
        if k < 0:
            k = 0
            v[0] = q
            z[0] = 0
            cst[0] = cq
        else:
            num = cq - cst[k]
            den = 2 * (q - v[k])
            # s < W iff num < (W - 1) * den; otherwise q only wins right of the image, off the envelope.
            if num < (w - 1) * den:
                k += 1
                v[k] = q
                z[k] = num // den + 1
                cst[k] = cq
    z[k + 1] = w
    return k


@numba.njit(cache=True, nogil=True)
def fill_segments(gy, k, cst, v, z, out, index):  # pragma: no cover - compiled
    # Segments 0..k of a row's lower envelope: out[x] = (x - c)^2 + f(c) (an exact integer, in out's dtype) and
    # index[x] = gy[c] * W + c for the segment's column c; segment by segment, branch-free inner loops.
    w = gy.shape[0]
    for j in range(k + 1):
        c = v[j]
        fc = cst[j] - c * c
        ic = gy[c] * w + c
        for x in range(z[j], z[j + 1]):
            out[x] = (x - c) * (x - c) + fc
            index[x] = ic


@numba.njit(cache=True, nogil=True)
def row_envelope(gy, y, cst, v, z, dist, index):  # pragma: no cover - compiled
    # Row y: for each x minimise (x - c)^2 + f(c), f(c) = (y - gy[c])^2, over the columns c with gy[c] >= 0;
    # on a tie the smallest c wins (see lower_envelope). Writes dist[x] and index[x] = gy[c*] * W + c*.
    k = lower_envelope(gy, y, cst, v, z)
    if k < 0:  # no feature column: the image is empty
        dist[:] = np.inf
        index[:] = -1
        return
    fill_segments(gy, k, cst, v, z, dist, index)
    # A separate, branch-free loop so that the square roots vectorise. The squared distance is an exact integer
    # in float64 and sqrt is correctly rounded, so the result is bitwise scipy's.
    for x in range(dist.shape[0]):
        dist[x] = np.sqrt(dist[x])


@numba.njit(cache=True, nogil=True)
def envelope_scratch(h, w):  # pragma: no cover - compiled
    # A task's scratch for the 2-D transform of (h, w) images: the column scan's rows and below, and the lower
    # envelope's cst, v and z (see lower_envelope)
    return (
        np.empty((h, w), np.int32),
        np.empty(w, np.int32),
        np.empty(w, np.int64),
        np.empty(w, np.int64),
        np.empty(w + 1, np.int64),
    )


@numba.njit(parallel=True, cache=True, nogil=True)
def per_image(mask, dist, index, n_tasks):  # pragma: no cover - compiled
    # Task t takes images t, t + n_tasks, ...: its scratch is allocated once and reused (fresh large buffers
    # would cost a page fault per 4 KiB).
    n_img, h, w = mask.shape
    for task in numba.prange(n_tasks):
        rows, below, f, v, z = envelope_scratch(h, w)
        for b in range(task, n_img, n_tasks):
            column_scan(mask[b], rows, np.int64(0), w, below)
            for y in range(h):
                row_envelope(rows[y], y, f, v, z, dist[b, y], index[b, y])


@numba.njit(parallel=True, cache=True, nogil=True)
def column_blocks(mask, out, block):  # pragma: no cover - compiled
    n_img, w = mask.shape[0], mask.shape[2]
    n_blk = (w + block - 1) // block
    for task in numba.prange(n_img * n_blk):
        b = task // n_blk
        c0 = (task % n_blk) * block
        below = np.empty(block, np.int64)
        column_scan(mask[b], out[b], c0, min(c0 + block, w), below)


@numba.njit(parallel=True, cache=True, nogil=True)
def row_blocks(dist, index, block):  # pragma: no cover - compiled
    # `index` holds the column pass's nearest rows on entry; each row is copied out before being overwritten.
    n_img, h, w = index.shape
    n_blk = (h + block - 1) // block
    for task in numba.prange(n_img * n_blk):
        b = task // n_blk
        y0 = (task % n_blk) * block
        gy = np.empty(w, np.int64)
        f = np.empty(w, np.int64)
        v = np.empty(w, np.int64)
        z = np.empty(w + 1, np.int64)
        for y in range(y0, min(y0 + block, h)):
            gy[:] = index[b, y]
            row_envelope(gy, y, f, v, z, dist[b, y], index[b, y])
