"""Compiled CPU kernels of the level-histogram foreground measures (threshold, size-invariant, multi-scale IoU; numba).

``binary_half_counts``: per image, the confusion counts of the binary map ``p > 0.5`` ("argmax", PySODMetrics'
``FmeasureV2`` binary mode) where ``p`` is the prepared map -- ``raw / scale`` then, with ``normalize`` and a
non-constant map, ``(p - lo) / (hi - lo)`` in float64, the operations of ``_prepare.prepare_maps`` in the same
order (so the comparison with 0.5 is decided exactly as the reference decides it). One fused pass per image,
images in parallel.
"""

import numba
import numpy as np

from . import FOREGROUND_JIT

_JIT = FOREGROUND_JIT


@numba.njit(parallel=True, **_JIT)
def binary_half_counts(raw, g, scale, normalize):  # pragma: no cover - compiled
    """(B, 2) int64: ``[tp, pp]`` of ``p > 0.5`` per image (``raw`` (B, H, W) uint8 or float64, ``g`` bool)."""
    batch, h, w = raw.shape
    out = np.zeros((batch, 2), np.int64)
    for b in numba.prange(batch):
        lo_raw = raw[b, 0, 0]
        hi_raw = raw[b, 0, 0]
        for y in range(h):
            for x in range(w):
                v = raw[b, y, x]
                if v < lo_raw:
                    lo_raw = v
                if v > hi_raw:
                    hi_raw = v
        lo = lo_raw / scale
        hi = hi_raw / scale
        stretch = normalize and hi != lo
        span = hi - lo
        tp = 0
        pp = 0
        for y in range(h):
            for x in range(w):
                v = raw[b, y, x] / scale
                if stretch:
                    v = (v - lo) / span
                if v > 0.5:
                    pp += 1
                    if g[b, y, x]:
                        tp += 1
        out[b, 0] = tp
        out[b, 1] = pp
    return out


@numba.njit(**_JIT)
def _on(v, y, x, h, w, t):  # pragma: no cover - compiled
    if y < 0 or y >= h or x < 0 or x >= w:
        return 0
    return 1 if v[y, x] >= t else 0


@numba.njit(**_JIT)
def _is_edge(v, y, x, h, w, t):  # pragma: no cover - compiled
    # scipy.ndimage.sobel responses of the map (v >= t), zero padding: edge if either response is non-zero
    sy = 0
    sx = 0
    for d in range(-1, 2):
        wgt = 2 if d == 0 else 1
        sy += wgt * (_on(v, y + 1, x + d, h, w, t) - _on(v, y - 1, x + d, h, w, t))
        sx += wgt * (_on(v, y + d, x + 1, h, w, t) - _on(v, y + d, x - 1, h, w, t))
    return sy != 0 or sx != 0


@numba.njit(**_JIT)
def _set_range(mask, a, b):  # pragma: no cover - compiled
    # set bits [a, b) of the uint64 word array ``mask``
    for t in range(a, b):
        mask[t >> 6] |= np.uint64(1) << np.uint64(t & 63)


@numba.njit(parallel=True, **_JIT)
def msiou_counts(v, g, sizes, num_t):  # pragma: no cover - compiled
    """Multi-scale edge-cell counts of the maps ``v >= t`` for ``t = 0..num_t-1`` against the GT ``g``.

    ``v`` (B, H, W) int16 levels, ``g`` (B, H, W) bool, ``sizes`` (L,) cell sizes. Returns ``inter`` (B, L, num_t)
    int64 = number of cells "on" in both edge maps, and ``gcells`` (B, L) int64 = number of GT cells "on".
    Per pixel, the set of thresholds at which it is an edge is built once (its 8 neighbours' levels split the
    thresholds into at most 9 segments, each evaluated once) as a bitmask; a cell's set is the OR of its pixels'.
    """
    batch, h, w = v.shape
    n_levels = sizes.shape[0]
    words = (num_t + 63) // 64
    inter = np.zeros((batch, n_levels, num_t), np.int64)
    gcells = np.zeros((batch, n_levels), np.int64)
    for b in numba.prange(batch):
        vb = v[b]
        gb = np.empty((h, w), np.int16)
        for y in range(h):
            for x in range(w):
                gb[y, x] = 1 if g[b, y, x] else 0
        pmask = np.zeros((h, w, words), np.uint64)
        gedge = np.zeros((h, w), np.bool_)
        cuts = np.empty(10, np.int64)
        for y in range(h):
            for x in range(w):
                gedge[y, x] = _is_edge(gb, y, x, h, w, np.int64(1))
                # thresholds where a neighbour switches: t = level + 1
                n = 0
                cuts[n] = 0
                n += 1
                for dy in range(-1, 2):
                    for dx in range(-1, 2):
                        yy, xx = y + dy, x + dx
                        if (dy != 0 or dx != 0) and 0 <= yy < h and 0 <= xx < w:
                            c = vb[yy, xx] + 1
                            if 0 < c < num_t:
                                dup = False
                                for k in range(n):
                                    if cuts[k] == c:
                                        dup = True
                                if not dup:
                                    cuts[n] = c
                                    n += 1
                cuts[:n].sort()
                for k in range(n):
                    start = cuts[k]
                    end = cuts[k + 1] if k + 1 < n else num_t
                    if _is_edge(vb, y, x, h, w, start):
                        _set_range(pmask[y, x], start, end)
        for li in range(n_levels):
            s = sizes[li]
            pad_h = (s - h % s) % s
            pad_w = (s - w % s) % s
            ch = (h + pad_h) // s
            cw = (w + pad_w) // s
            cmask = np.zeros((ch, cw, words), np.uint64)
            con = np.zeros((ch, cw), np.bool_)
            for y in range(h):
                cy = (y + pad_h) // s
                for x in range(w):
                    cx = (x + pad_w) // s
                    if gedge[y, x]:
                        con[cy, cx] = True
                    for k in range(words):
                        cmask[cy, cx, k] |= pmask[y, x, k]
            for cy in range(ch):
                for cx in range(cw):
                    if con[cy, cx]:
                        gcells[b, li] += 1
                        for t in range(num_t):
                            if (cmask[cy, cx, t >> 6] >> np.uint64(t & 63)) & np.uint64(1):
                                inter[b, li, t] += 1
    return inter, gcells


@numba.njit(**_JIT)
def level_histograms(raw, t, tthr, starts, boxes):  # pragma: no cover - compiled
    """Histograms of the raw uint8 levels split by the GT (``t > tthr``), per image, per box and outside all boxes.

    ``raw``/``t`` (B, H, W) uint8; ``starts`` (B + 1,) int64: image b's boxes are ``boxes[starts[b]:starts[b + 1]]``
    (K, 4) = y0, y1, x0, x1 inclusive. Returns ``image`` (B, 2, 256), ``box`` (K, 2, 256) and ``outside``
    (B, 2, 256) int64 (index 1 = GT foreground). One pass per image plus one per box.
    """
    batch, h, w = raw.shape
    n_boxes = boxes.shape[0]
    image = np.zeros((batch, 2, 256), np.int64)
    box = np.zeros((n_boxes, 2, 256), np.int64)
    outside = np.zeros((batch, 2, 256), np.int64)
    for b in range(batch):
        # four interleaved sub-histograms: neighbouring pixels (often of one level) do not wait on each other
        local = np.zeros((4, 512), np.int64)
        rb = raw[b].reshape(-1)
        tb = t[b].reshape(-1)
        n = h * w
        main = n - n % 4
        for i in range(0, main, 4):
            local[0, np.int64(rb[i]) + (256 if tb[i] > tthr else 0)] += 1
            local[1, np.int64(rb[i + 1]) + (256 if tb[i + 1] > tthr else 0)] += 1
            local[2, np.int64(rb[i + 2]) + (256 if tb[i + 2] > tthr else 0)] += 1
            local[3, np.int64(rb[i + 3]) + (256 if tb[i + 3] > tthr else 0)] += 1
        for i in range(main, n):
            local[0, np.int64(rb[i]) + (256 if tb[i] > tthr else 0)] += 1
        for j in range(512):
            image[b, j // 256, j % 256] = local[0, j] + local[1, j] + local[2, j] + local[3, j]
        if starts[b + 1] > starts[b]:
            covered = np.zeros((h, w), np.bool_)
            for k in range(starts[b], starts[b + 1]):
                for y in range(boxes[k, 0], boxes[k, 1] + 1):
                    for x in range(boxes[k, 2], boxes[k, 3] + 1):
                        box[k, 1 if t[b, y, x] > tthr else 0, raw[b, y, x]] += 1
                        covered[y, x] = True
            for y in range(h):
                for x in range(w):
                    if not covered[y, x]:
                        outside[b, 1 if t[b, y, x] > tthr else 0, raw[b, y, x]] += 1
    return image, box, outside


@numba.njit(**_JIT)
def component_boxes(labels, num):  # pragma: no cover - compiled
    """Per label 1..num of a (B, H, W) label stack: (num, 6) int64 = area, image, y0, y1, x0, x1 (one pass)."""
    batch, h, w = labels.shape
    area = np.zeros(num + 1, np.int64)
    image = np.zeros(num + 1, np.int64)
    y0 = np.full(num + 1, h, np.int64)
    y1 = np.zeros(num + 1, np.int64)
    x0 = np.full(num + 1, w, np.int64)
    x1 = np.zeros(num + 1, np.int64)
    for b in range(batch):
        for y in range(h):
            row = labels[b, y]
            for x in range(w):
                lab = row[x]
                if lab > 0:
                    # labels are raster-ordered over the stack: the first pixel of a label sets y0 and image
                    if area[lab] == 0:
                        image[lab] = b
                        y0[lab] = y
                    area[lab] += 1
                    y1[lab] = y
                    if x < x0[lab]:
                        x0[lab] = x
                    if x > x1[lab]:
                        x1[lab] = x
    out = np.empty((num, 6), np.int64)
    for i in range(num):
        out[i, 0] = area[i + 1]
        out[i, 1] = image[i + 1]
        out[i, 2] = y0[i + 1]
        out[i, 3] = y1[i + 1]
        out[i, 4] = x0[i + 1]
        out[i, 5] = x1[i + 1]
    return out


@numba.njit(**_JIT)
def _div(num, den):  # pragma: no cover - compiled
    # PySODMetrics' divide: float64 num / den, 0 where den == 0
    if den == 0:
        return 0.0
    return np.float64(num) / np.float64(den)


@numba.njit(**_JIT)
def measure_table(tp, fp, tn, fn, codes, beta2):  # pragma: no cover - compiled
    """(M, B, W) float64: measure ``codes[m]`` of the int64 (B, W) counts, in one pass.

    Codes index ``threshold_measures.THRESHOLD_MEASURES`` (0 fmeasure, 1 precision, 2 recall, 3 specificity,
    4 fpr, 5 ber, 6 iou, 7 dice, 8 accuracy, 9 kappa); every formula uses the float64 operations of
    ``threshold_measures.measure_from_counts`` in its order, so the values are bit-identical to it.
    """
    batch, width = tp.shape
    out = np.empty((codes.shape[0], batch, width), np.float64)
    for b in range(batch):
        for i in range(width):
            a = tp[b, i]
            f = fp[b, i]
            n = tn[b, i]
            m = fn[b, i]
            for k in range(codes.shape[0]):
                c = codes[k]
                if c == 0:
                    p = _div(a, a + f)
                    r = _div(a, a + m)
                    v = _div((beta2 + 1) * p * r, beta2 * p + r)
                elif c == 1:
                    v = _div(a, a + f)
                elif c == 2:
                    v = _div(a, a + m)
                elif c == 3:
                    v = _div(n, n + f)
                elif c == 4:
                    v = _div(f, n + f)
                elif c == 5:
                    v = 1 - 0.5 * (_div(a, a + m) + _div(n, n + f))
                elif c == 6:
                    v = _div(a, a + f + m)
                elif c == 7:
                    v = _div(2 * a, a + m + a + f)
                elif c == 8:
                    v = _div(a + n, a + f + n + m)
                else:
                    total = a + f + n + m
                    oa = _div(a + n, total)
                    pe = _div((a + f) * (a + m) + (n + m) * (n + a), total**2)
                    v = _div(oa - pe, 1 - pe)
                out[k, b, i] = v
    return out


@numba.njit(**_JIT)
def row_max(table, lo, hi):  # pragma: no cover - compiled
    """(M, K) float64: ``max(table[m, k, lo:hi])`` of a (M, K, W) float64 table (NaN-free)."""
    rows, cols, _ = table.shape
    out = np.empty((rows, cols), np.float64)
    for m in range(rows):
        for k in range(cols):
            best = table[m, k, lo]
            for i in range(lo + 1, hi):
                if table[m, k, i] > best:
                    best = table[m, k, i]
            out[m, k] = best
    return out
