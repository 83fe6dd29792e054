"""Compiled DAVIS counts: region and morphological-boundary counts of every (prediction, object) pair of a frame.

Behind :func:`segmetrics_torch.ops.davis.davis_counts`. Two exact paths give the same int64 counts:

* the row-bitmap path (a disk of radius < 64, i.e. any DAVIS tolerance up to 8K frames): one streaming pass over a
  frame's rows makes each row's effective label maps (void and ids that are no object set to 0), finds the columns of
  its object pixels, counts the joint histogram by runs and marks each object's ``seg2bmap`` boundary pixels in a
  bitmap of 64-pixel words, reading the rows eight pixels at a time as ``uint64`` words so that only the pixels where
  a run or a ``seg2bmap`` block changes are visited. A boundary pixel of one object is matched when the other's bitmap
  has a bit in ``[x - hw, x + hw]`` on some row ``y + dy`` of the disk (``hw = floor(sqrt(r^2 - dy^2))``, nearest
  rows first): one or two word tests per row, the dilation of OpenCV / ``imdilate`` never materialised. Frames run
  in parallel blocks (``prange``), each with its own scratch bitmaps, left zero between frames.
* the box path (larger disks): each object's boundary inside its box as row prefix sums, the disk tested row by row
  on them (``_frame``).

Also the PNG scanline unfilter of :func:`~segmetrics_torch.ops.davis.decode_png_ids` (without the GIL).
"""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _grow(box, o, y, x):  # pragma: no cover - compiled
    # the box (y0, y1, x0, x1) of object o, grown to hold (y, x) (rows arrive in order)
    if y < box[o, 0]:
        box[o, 0] = y
    box[o, 1] = y
    if x < box[o, 2]:
        box[o, 2] = x
    if x > box[o, 3]:
        box[o, 3] = x


@numba.njit(cache=True, nogil=True)
def _grow_run(box, o, y, x0, x1):  # pragma: no cover - compiled
    # the box of object o, grown to hold the run (y, x0..x1) (rows arrive in order)
    if y < box[o, 0]:
        box[o, 0] = y
    box[o, 1] = y
    if x0 < box[o, 2]:
        box[o, 2] = x0
    if x1 > box[o, 3]:
        box[o, 3] = x1


@numba.njit(cache=True, nogil=True)
def _matched(ps, offset, stride, by0, bx0, bb, y, x, radius, half):  # pragma: no cover - compiled
    # whether the boundary with prefix sums ps[offset:] (rows from by0, columns from bx0, row stride `stride`) and
    # boundary box bb = (y0, y1, x0, x1) has a pixel within the disk of `radius` around (y, x)
    for i in range(2 * radius + 1):  # the nearest rows first: a matched pixel is found sooner
        dy = (i + 1) // 2 if i % 2 else -(i // 2)
        yy = y + dy
        if yy < bb[0] or yy > bb[1]:
            continue
        hw = half[abs(dy)]
        lo = max(x - hw, bb[2])
        hi = min(x + hw, bb[3])
        if lo > hi:
            continue
        base = offset + (yy - by0) * stride
        if ps[base + hi - bx0 + 1] - ps[base + lo - bx0] > 0:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def _count_near(ps, offs, strides, rbox, bbox, pts, pt_offs, a, b, radius, half):  # pragma: no cover - compiled
    # number of boundary pixels of object a (its points pts[pt_offs[a]:pt_offs[a + 1]]) within the disk of some
    # boundary pixel of object b
    if bbox[a, 1] < bbox[a, 0] or bbox[b, 1] < bbox[b, 0]:
        return 0
    y0, y1 = bbox[b, 0] - radius, bbox[b, 1] + radius
    x0, x1 = bbox[b, 2] - radius, bbox[b, 3] + radius
    if bbox[a, 1] < y0 or bbox[a, 0] > y1 or bbox[a, 3] < x0 or bbox[a, 2] > x1:
        return 0
    n = 0
    for i in range(pt_offs[a], pt_offs[a + 1]):
        y = pts[i, 0]
        x = pts[i, 1]
        if y < y0 or y > y1 or x < x0 or x > x1:
            continue
        if _matched(ps, offs[b], strides[b], rbox[b, 0], rbox[b, 2], bbox[b], y, x, radius, half):
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def _mark(ps, offs, strides, rbox, bbox, count, o, y, x):  # pragma: no cover - compiled
    # (y, x) is a boundary pixel of object o: a 1 in its region (turned into prefix sums later)
    ps[offs[o] + (y - rbox[o, 0]) * strides[o] + x - rbox[o, 2] + 1] = 1
    count[o] += 1
    _grow(bbox, o, y, x)


@numba.njit(cache=True, nogil=True)
def _boundaries(lab, first, n_ids, y0, y1, x0, x1, ps, offs, strides, rbox, bbox, count):  # pragma: no cover
    # seg2bmap of every object of the effective label map `lab` (ids 1..n_ids are objects first..first+n_ids-1) in
    # one pass over rows y0..y1, columns x0..x1: pixel (y, x) is a boundary pixel of object o iff o's membership is not
    # the same over its block {(y, x), (y, x+1), (y+1, x), (y+1, x+1)} (last row: the East pair; last column: the South
    # pair; the bottom-right pixel never), i.e. iff the block is not uniform and o is one of its labels
    h, w = lab.shape
    change = np.zeros(w, np.uint8)
    for y in range(y0, y1 + 1):
        # a branch-free pass flags the non-uniform blocks of the row (vectorised by LLVM), a second visits the flags
        if y + 1 < h:
            for x in range(x0, min(x1 + 1, w - 1)):
                a = lab[y, x]
                change[x] = (a != lab[y, x + 1]) | (a != lab[y + 1, x]) | (a != lab[y + 1, x + 1])
            if x1 == w - 1:  # the last column: the South pair only
                change[w - 1] = lab[y, w - 1] != lab[y + 1, w - 1]
        else:  # the last row: the East pair only; the bottom-right pixel never
            for x in range(x0, min(x1 + 1, w - 1)):
                change[x] = lab[y, x] != lab[y, x + 1]
            if x1 == w - 1:
                change[w - 1] = 0
        for x in range(x0, x1 + 1):
            if change[x] == 0:
                continue
            a = lab[y, x]
            b = lab[y, x + 1] if x + 1 < w else a
            c = lab[y + 1, x] if y + 1 < h else a
            d = lab[y + 1, x + 1] if x + 1 < w and y + 1 < h else a
            if a > 0:
                _mark(ps, offs, strides, rbox, bbox, count, first + a - 1, y, x)
            if b > 0 and b != a:
                _mark(ps, offs, strides, rbox, bbox, count, first + b - 1, y, x)
            if c > 0 and c != a and c != b:
                _mark(ps, offs, strides, rbox, bbox, count, first + c - 1, y, x)
            if d > 0 and d != a and d != b and d != c:
                _mark(ps, offs, strides, rbox, bbox, count, first + d - 1, y, x)


@numba.njit(cache=True, nogil=True)
def _frame(
    pred, target, n_pred, n_target, use_void, diagonal, radius, half, joint, fg_match, gt_match, n_fg, n_gt, pred_max
):  # pragma: no cover - compiled
    h, w = pred.shape
    n_obj = n_pred + n_target
    box = np.empty((n_obj, 4), np.int64)  # the objects' pixel boxes: y0, y1, x0, x1 (empty: y1 < y0)
    for o in range(n_obj):
        box[o, 0], box[o, 1], box[o, 2], box[o, 3] = h, -1, w, -1
    # the effective label maps: what each object's mask is (void and ids that are no object: 0)
    pe = np.zeros((h, w), np.uint8)
    te = np.zeros((h, w), np.uint8)
    background = 0  # pixels that are background in both maps (most of a frame): counted without a branch
    for y in range(h):
        row_any = np.uint8(0)
        for x in range(w):
            row_any |= pred[y, x] | target[y, x]
        if row_any == 0:
            background += w
            continue
        x = np.int64(0)  # np.int64, not 0: a literal would compile _grow_run once more for it (tests/ops)
        while x < w:  # runs of one (prediction, target) pair: one joint update and one box update per run
            p = pred[y, x]
            t = target[y, x]
            end = x + 1
            while end < w and pred[y, end] == p and target[y, end] == t:
                end += 1
            run = end - x
            if (p | t) == 0:
                background += run
                x = end
                continue
            if p > pred_max[0]:
                pred_max[0] = p
            if t == 255:
                if use_void:
                    x = end
                    continue  # a void pixel counts for nothing and belongs to no mask
                t = np.uint8(0)
            elif t > n_target:
                t = np.uint8(0)  # an id above the sequence's objects is no object (the reference's one-hot of 1..K)
            if p > n_pred:
                p = np.uint8(0)  # an id above n_pred: reported in pred_max (the op raises), never used to index
            joint[p, t] += run
            if p > 0:
                pe[y, x:end] = p
                _grow_run(box, p - 1, y, x, end - 1)
            if t > 0:
                te[y, x:end] = t
                _grow_run(box, n_pred + t - 1, y, x, end - 1)
            x = end
    joint[0, 0] += background
    # each object's boundary region: its box grown by one pixel towards the origin (seg2bmap marks the pixel before
    # a change); one flat buffer of all regions' rows, each with a leading 0 for the prefix sums
    rbox = np.zeros((n_obj, 4), np.int64)
    offs = np.zeros(n_obj + 1, np.int64)
    strides = np.zeros(n_obj, np.int64)
    for o in range(n_obj):
        if box[o, 1] < box[o, 0]:
            rbox[o, 0], rbox[o, 1], rbox[o, 2], rbox[o, 3] = 0, -1, 0, -1
        else:
            rbox[o, 0] = max(box[o, 0] - 1, 0)
            rbox[o, 1] = box[o, 1]
            rbox[o, 2] = max(box[o, 2] - 1, 0)
            rbox[o, 3] = box[o, 3]
        strides[o] = rbox[o, 3] - rbox[o, 2] + 2
        offs[o + 1] = offs[o] + (rbox[o, 1] - rbox[o, 0] + 1) * strides[o]
    ps = np.zeros(offs[n_obj], np.int32)
    bbox = np.empty((n_obj, 4), np.int64)  # the boundaries' own boxes
    for o in range(n_obj):
        bbox[o, 0], bbox[o, 1], bbox[o, 2], bbox[o, 3] = h, -1, w, -1
    count = np.zeros(n_obj, np.int64)
    for first, n_ids, lab in ((0, n_pred, pe), (n_pred, n_target, te)):
        # the union of the map's regions: nothing outside it is a boundary pixel of any of its objects
        y0, y1, x0, x1 = h, np.int64(-1), w, np.int64(-1)  # no literal -1: see x above
        for o in range(first, first + n_ids):
            if rbox[o, 1] >= rbox[o, 0]:
                y0, y1 = min(y0, rbox[o, 0]), max(y1, rbox[o, 1])
                x0, x1 = min(x0, rbox[o, 2]), max(x1, rbox[o, 3])
        if y1 >= y0:
            _boundaries(lab, first, n_ids, y0, y1, x0, x1, ps, offs, strides, rbox, bbox, count)
    pt_offs = np.zeros(n_obj + 1, np.int64)
    for o in range(n_obj):
        pt_offs[o + 1] = pt_offs[o] + count[o]
    pts = np.empty((pt_offs[n_obj], 2), np.int64)  # every object's boundary pixels, row by row
    for o in range(n_obj):  # the marks -> their points, and prefix sums row by row
        i = pt_offs[o]
        for r in range(rbox[o, 1] - rbox[o, 0] + 1):
            base = offs[o] + r * strides[o]
            for c in range(1, strides[o]):
                if ps[base + c]:
                    pts[i, 0] = rbox[o, 0] + r
                    pts[i, 1] = rbox[o, 2] + c - 1
                    i += 1
                ps[base + c] += ps[base + c - 1]
    for p in range(n_pred):
        n_fg[p] = count[p]
    for k in range(n_target):
        n_gt[k] = count[n_pred + k]
    for p in range(n_pred):
        for k in range(n_target):
            if diagonal and p != k:
                continue
            fg_match[p, k] = _count_near(ps, offs, strides, rbox, bbox, pts, pt_offs, p, n_pred + k, radius, half)
            gt_match[p, k] = _count_near(ps, offs, strides, rbox, bbox, pts, pt_offs, n_pred + k, p, radius, half)


# the row-bitmap path (radius < 64: a disk row spans at most three 64-bit words). Each object's seg2bmap boundary is
# a bitmap of H rows of 64-pixel words, built in one streaming pass over the frame's rows with the joint histogram:
# per row, branch-free loops (vectorised by LLVM) make the effective label rows and flag the pixels where a run or a
# seg2bmap block changes, and only the flagged pixels are visited (eight at a time skipped as one zero word). A
# boundary pixel is matched by testing, row by row of the disk (nearest rows first), whether the other boundary's
# bitmap has a bit in [x - half-width, x + half-width]: one or two word tests, never a dilation.
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_ONE = np.uint64(1)
_DEBRUIJN = np.uint64(0x022FDD63CC95386D)  # a de Bruijn sequence B(2, 6): the index of a word's lowest set bit
_SHIFT = np.uint64(58)
_EIGHT = np.uint64(8)
_FIFTY_SIX = np.uint64(56)
_BYTE = np.uint64(255)


@numba.njit(cache=True, nogil=True)
def _debruijn_table():  # pragma: no cover - compiled
    # the position of the lowest set bit by the index of (lowest bit * _DEBRUIJN) >> 58 (a global array would stop
    # numba from caching the kernel: the table is built per call, 64 entries)
    table = np.empty(64, np.int64)
    for k in range(64):
        table[np.int64(((_ONE << np.uint64(k)) * _DEBRUIJN) >> _SHIFT)] = k
    return table


@numba.njit(cache=True, nogil=True)
def _effective_row(prow, trow, n_pred, n_target, use_void, pe, te):  # pragma: no cover - compiled
    # the effective ids of one row (an id above the objects and the void: 0; with use_void a prediction on void: 0),
    # whether each map has an object pixel, the row's void pixels (use_void) and its largest prediction id
    w = prow.shape[0]
    anyp = np.uint8(0)
    anyt = np.uint8(0)
    largest = np.uint8(0)
    void = 0
    if use_void:
        for x in range(w):
            p = prow[x]
            t = trow[x]
            largest = max(largest, p)
            v = t == 255
            pp = np.uint8(0) if (p > n_pred) or v else p
            tt = np.uint8(0) if t > n_target else t
            pe[x] = pp
            te[x] = tt
            anyp |= pp
            anyt |= tt
            void += v
    else:
        for x in range(w):
            p = prow[x]
            t = trow[x]
            largest = max(largest, p)
            pp = np.uint8(0) if p > n_pred else p
            tt = np.uint8(0) if t > n_target else t
            pe[x] = pp
            te[x] = tt
            anyp |= pp
            anyt |= tt
    return anyp != 0, anyt != 0, void, largest


@numba.njit(cache=True, nogil=True)
def _extent(row, w):  # pragma: no cover - compiled
    # the first and last columns of the row's object pixels ((w, -1): none); row is zero from w to its padded end
    words = row.view(np.uint64)
    j0 = 0
    while j0 < words.shape[0] and words[j0] == 0:
        j0 += 1
    if j0 == words.shape[0]:
        return w, -1
    j1 = words.shape[0] - 1
    while words[j1] == 0:
        j1 -= 1
    lo = 8 * j0
    while row[lo] == 0:
        lo += 1
    hi = 8 * j1 + 7
    while row[hi] == 0:
        hi -= 1
    return lo, hi


@numba.njit(cache=True, nogil=True)
def _next_pixel(words, j):  # pragma: no cover - compiled
    # the word of the eight pixels one column right of words[j]'s (bytes are pixels, little-endian)
    return (words[j] >> _EIGHT) | (words[j + 1] << _FIFTY_SIX)


@numba.njit(cache=True, nogil=True)
def _row_runs(pe, te, joint, lo, hi):  # pragma: no cover - compiled
    # the joint histogram of one row's columns lo..hi (outside them both rows are 0): eight pixels at a time, a
    # nonzero byte of `change` where a run of one (prediction, target) pair ends
    pw = pe.view(np.uint64)
    tw = te.view(np.uint64)
    start = lo
    for j in range(lo >> 3, (hi >> 3) + 1):
        change = (pw[j] ^ _next_pixel(pw, j)) | (tw[j] ^ _next_pixel(tw, j))
        if change == 0:
            continue
        for b in range(8):
            x = 8 * j + b
            if lo <= x < hi and (change >> np.uint64(8 * b)) & _BYTE:
                joint[pe[start], te[start]] += x + 1 - start
                start = x + 1
    joint[pe[start], te[start]] += hi + 1 - start


@numba.njit(cache=True, nogil=True)
def _mark_bit(bm, span, count, o, y, x):  # pragma: no cover - compiled
    j = x >> 6
    bm[o, y, j + 1] |= _ONE << np.uint64(x & 63)
    count[o] += 1
    if span[o, 1] < 0:
        span[o, 0] = y
    span[o, 1] = y
    if j < span[o, 2]:
        span[o, 2] = j
    if j > span[o, 3]:
        span[o, 3] = j


@numba.njit(cache=True, nogil=True)
def _row_boundaries(r0, r1, last, y, first, bm, span, count, w, lo, hi):  # pragma: no cover - compiled
    # seg2bmap of one row of an effective label map (r0 the row, r1 the next; ids 1.. are objects first..; lo..hi the
    # columns of both rows' object pixels): as _boundaries, pixel (y, x) is a boundary pixel of each distinct object
    # id of its non-uniform block; no block left of lo - 1 or right of hi holds an object pixel. Eight blocks at a
    # time: a nonzero byte of `change` marks a candidate (at the last column the zero padding makes it a superset),
    # each candidate tested exactly
    rw = r0.view(np.uint64)
    nw = r1.view(np.uint64)
    x0 = max(lo - 1, 0)
    for j in range(x0 >> 3, (hi >> 3) + 1):
        here = rw[j]
        change = here ^ _next_pixel(rw, j)
        if not last:
            change |= (here ^ nw[j]) | (here ^ _next_pixel(nw, j))
        if change == 0:
            continue
        for k in range(8):
            x = 8 * j + k
            if x < x0 or x > hi or ((change >> np.uint64(8 * k)) & _BYTE) == 0:
                continue
            a = r0[x]
            b = r0[x + 1] if x + 1 < w else a  # the last row: the East pair only; the last column: the South pair
            c = a if last else r1[x]
            d = a if last or x + 1 >= w else r1[x + 1]
            if a == b and a == c and a == d:
                continue
            if a > 0:
                _mark_bit(bm, span, count, first + a - 1, y, x)
            if b > 0 and b != a:
                _mark_bit(bm, span, count, first + b - 1, y, x)
            if c > 0 and c != a and c != b:
                _mark_bit(bm, span, count, first + c - 1, y, x)
            if d > 0 and d != a and d != b and d != c:
                _mark_bit(bm, span, count, first + d - 1, y, x)


@numba.njit(cache=True, nogil=True)
def _hit(bm, b, y0, y1, y, x, w, radius, half):  # pragma: no cover - compiled
    # whether boundary b (rows y0..y1) has a pixel within the disk of `radius` around (y, x)
    for i in range(2 * radius + 1):  # the nearest rows first: a matched pixel is found sooner
        dy = (i + 1) // 2 if i % 2 else -(i // 2)
        yy = y + dy
        if yy < y0 or yy > y1:
            continue
        hw = half[abs(dy)]
        lo = max(x - hw, 0)
        hi = min(x + hw, w - 1)
        jl = lo >> 6
        jh = hi >> 6
        for j in range(jl, jh + 1):
            word = bm[b, yy, j + 1]
            if word == 0:
                continue
            if j == jl:
                word &= _ALL << np.uint64(lo & 63)
            if j == jh:
                word &= _ALL >> np.uint64(63 - (hi & 63))
            if word != 0:
                return True
    return False


@numba.njit(cache=True, nogil=True)
def _near(bm, span, count, a, b, w, radius, half, lowest):  # pragma: no cover - compiled
    # number of boundary pixels of object a within the disk of some boundary pixel of object b
    if count[a] == 0 or count[b] == 0:
        return 0
    y0 = max(span[a, 0], span[b, 0] - radius)
    y1 = min(span[a, 1], span[b, 1] + radius)
    j0 = max(span[a, 2], span[b, 2] - 1)  # radius < 64: a disk reaches one word aside
    j1 = min(span[a, 3], span[b, 3] + 1)
    n = 0
    for y in range(y0, y1 + 1):
        for j in range(j0, j1 + 1):
            word = bm[a, y, j + 1]
            while word != 0:
                low = word & (~word + _ONE)
                word ^= low
                x = 64 * j + lowest[np.int64((low * _DEBRUIJN) >> _SHIFT)]
                if _hit(bm, b, span[b, 0], span[b, 1], y, x, w, radius, half):
                    n += 1
    return n


@numba.njit(cache=True, nogil=True)
def _frame_bits(
    pred,
    target,
    n_pred,
    n_target,
    use_void,
    diagonal,
    radius,
    half,
    joint,
    fg_match,
    gt_match,
    n_fg,
    n_gt,
    pred_max,
    bm,
    span,
    count,
    rows,
    lowest,
):  # pragma: no cover - compiled
    # the counts of one frame by the row-bitmap path; bm (objects, H, words + 2) must be zero and is left zero
    h, w = pred.shape
    n_obj = n_pred + n_target
    for o in range(n_obj):
        span[o, 0], span[o, 1], span[o, 2], span[o, 3] = h, -1, w, -1
        count[o] = 0
    background = 0  # (0, 0) pixels of the rows without an object, less the void pixels (use_void) of every row
    largest = np.uint8(0)
    ap, at, void0, m = _effective_row(pred[0], target[0], n_pred, n_target, use_void, rows[0], rows[1])
    largest = max(largest, m)
    # the columns of each effective row's object pixels (lo > hi: none)
    plo0, phi0 = _extent(rows[0], w) if ap else (w, -1)
    tlo0, thi0 = _extent(rows[1], w) if at else (w, -1)
    cur = 0
    for y in range(h):
        pe0, te0 = rows[2 * cur], rows[2 * cur + 1]
        pe1, te1 = rows[2 - 2 * cur], rows[3 - 2 * cur]
        last = y + 1 == h
        plo1, phi1, tlo1, thi1, void1 = w, -1, w, -1, 0
        if not last:
            ap, at, void1, m = _effective_row(pred[y + 1], target[y + 1], n_pred, n_target, use_void, pe1, te1)
            largest = max(largest, m)
            if ap:
                plo1, phi1 = _extent(pe1, w)
            if at:
                tlo1, thi1 = _extent(te1, w)
        lo, hi = min(plo0, tlo0), max(phi0, thi0)
        if lo <= hi:
            _row_runs(pe0, te0, joint, lo, hi)
            background += lo + w - 1 - hi  # the (0, 0) pixels either side
        else:
            background += w
        background -= void0  # a void pixel (use_void) is (0, 0) in the effective rows but counts for nothing
        lo, hi = min(plo0, plo1), max(phi0, phi1)
        if lo <= hi:
            _row_boundaries(pe0, pe1, last, y, np.int64(0), bm, span, count, w, lo, hi)  # no literal: tests/ops
        lo, hi = min(tlo0, tlo1), max(thi0, thi1)
        if lo <= hi:
            _row_boundaries(te0, te1, last, y, n_pred, bm, span, count, w, lo, hi)
        plo0, phi0, tlo0, thi0, void0 = plo1, phi1, tlo1, thi1, void1
        cur = 1 - cur
    joint[0, 0] += background
    pred_max[0] = largest
    for p in range(n_pred):
        n_fg[p] = count[p]
    for k in range(n_target):
        n_gt[k] = count[n_pred + k]
    for p in range(n_pred):
        for k in range(n_target):
            if diagonal and p != k:
                continue
            fg_match[p, k] = _near(bm, span, count, p, n_pred + k, w, radius, half, lowest)
            gt_match[p, k] = _near(bm, span, count, n_pred + k, p, w, radius, half, lowest)
    for o in range(n_obj):  # leave the bitmaps zero for the next frame: only the rows and words written
        if count[o]:
            for y in range(span[o, 0], span[o, 1] + 1):  # loops, not a slice assignment: several times faster
                for j in range(span[o, 2] + 1, span[o, 3] + 2):
                    bm[o, y, j] = 0


@numba.njit(cache=True, nogil=True, parallel=True)
def davis_counts(
    pred, target, n_pred, n_target, use_void, diagonal, radius, joint, fg_match, gt_match, n_fg, n_gt, pred_max
):  # pragma: no cover - compiled
    # pred, target: (T, H, W) uint8 label maps; joint (T, n_pred + 1, n_target + 1); fg_match, gt_match
    # (T, n_pred, n_target); n_fg (T, n_pred); n_gt (T, n_target); pred_max (T,): the largest id of each frame of
    # pred (void pixels included): int64, zero-filled by the caller
    half = np.empty(radius + 1, np.int64)
    for d in range(radius + 1):
        v = int(np.sqrt(radius * radius - d * d))
        while (v + 1) * (v + 1) <= radius * radius - d * d:
            v += 1
        while v * v > radius * radius - d * d:
            v -= 1
        half[d] = v
    frames, h, w = pred.shape
    if radius >= 64 or h == 0 or w == 0:  # a disk row wider than the bitmap path's three words: the box path
        for t in numba.prange(frames):
            _frame(
                pred[t],
                target[t],
                n_pred,
                n_target,
                use_void,
                diagonal,
                radius,
                half,
                joint[t],
                fg_match[t],
                gt_match[t],
                n_fg[t],
                n_gt[t],
                pred_max[t : t + 1],
            )
        return
    n_obj = n_pred + n_target
    lowest = _debruijn_table()
    # blocks of consecutive frames, each with its own scratch (numba.get_num_threads() here would stop the caching)
    blocks = min(frames, 8)
    for b in numba.prange(blocks):
        bm = np.zeros((n_obj, h, (w + 63) // 64 + 2), np.uint64)
        span = np.empty((n_obj, 4), np.int64)
        count = np.zeros(n_obj, np.int64)
        # the effective rows, zero from w on (one spare word: a row is read eight pixels at a time, one ahead)
        rows = np.zeros((4, ((w + 7) // 8 + 1) * 8), np.uint8)
        for t in range(b * frames // blocks, (b + 1) * frames // blocks):
            _frame_bits(
                pred[t],
                target[t],
                n_pred,
                n_target,
                use_void,
                diagonal,
                radius,
                half,
                joint[t],
                fg_match[t],
                gt_match[t],
                n_fg[t],
                n_gt[t],
                pred_max[t : t + 1],
                bm,
                span,
                count,
                rows,
                lowest,
            )


@numba.njit(cache=True, nogil=True)
def png_unfilter(raw, out):  # pragma: no cover - compiled
    # the PNG scanline filters (RFC 2083, 6.) of an 8-bit, one-sample-per-pixel, non-interlaced image: raw holds
    # H rows of (filter byte, W bytes) as inflated; out (H, W) uint8 gets the pixels. False on a filter byte above 4
    # (the caller leaves such a file to Pillow, which reports it)
    h, w = out.shape
    stride = w + 1
    for y in range(h):
        base = y * stride
        f = raw[base]
        if f > 4:
            return False
        row = out[y]
        if f == 0 or (f == 2 and y == 0):  # None, or Up on the first row: the bytes themselves
            for x in range(w):  # a plain loop: LLVM makes it a vector copy (a slice assignment is ~20x slower)
                row[x] = raw[base + 1 + x]
        elif f == 2:
            above = out[y - 1]
            for x in range(w):
                row[x] = (np.int32(raw[base + 1 + x]) + np.int32(above[x])) & 255
        else:
            left = np.int32(0)
            upleft = np.int32(0)
            for x in range(w):
                up = np.int32(out[y - 1, x]) if y > 0 else np.int32(0)
                v = np.int32(raw[base + 1 + x])
                if f == 1:
                    v += left
                elif f == 3:
                    v += (left + up) >> 1
                else:  # Paeth: the neighbour nearest to left + up - upleft, ties to left, then up
                    p = left + up - upleft
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - upleft)
                    if pa <= pb and pa <= pc:
                        v += left
                    elif pb <= pc:
                        v += up
                    else:
                        v += upleft
                left = v & 255
                upleft = up
                out[y, x] = left
    return True
