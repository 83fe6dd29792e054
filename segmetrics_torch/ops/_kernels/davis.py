"""Compiled DAVIS counts: region and morphological-boundary counts of every (prediction, object) pair of a frame.

Behind :func:`segmetrics_torch.ops.davis.davis_counts`. One pass over a frame's two label maps gives the joint
histogram (the J counts of every pair) and each object's bounding box; each object's ``seg2bmap`` boundary is then
built inside its box only, as row prefix sums, so that "is there a boundary pixel of ``b`` within the disk of radius
``r`` around ``(y, x)``" is ``2r + 1`` lookups (one per row of the disk, whose half-width at row offset ``dy`` is
``floor(sqrt(r^2 - dy^2))``): the disk dilation of OpenCV / ``imdilate`` is never materialised, and work outside the
objects' boxes is one read of each pixel. Frames run in parallel (``prange``); all counts are exact int64.
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
    for t in numba.prange(pred.shape[0]):
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
