"""Compiled CPU kernel of the foreground measures (numba; imported only for CPU tensors).

Behind :func:`segmetrics_torch.ops.foreground.foreground_statistics`.

Why: on a CPU, the tensor path runs ~100 float64 elementwise operations per image, each a full pass over memory;
this kernel reads every image in three fused passes (a uint8 map through a 256-level table of its prepared values),
~10x less memory traffic, and runs images in parallel. The weighted F streams row by row (distance transform's row
pass, blur, sums) with row-sized scratch; the weighted F alone skips the counts' passes. It computes exactly the
quantities of the tensor path, with the same operations in the same order where the order matters for the reference
(input preparation, bins, the adaptive threshold test, the shifted quadrant moments, the blur's summation order);
sums are accumulated sequentially instead of pairwise, which changes results by ~1e-16. The tensor path (the CUDA
path) is tested against the same oracle on CPU tensors.

Per image it returns the 2x256 histogram of ``trunc(255 p)`` split by the ground truth, the adaptive-threshold counts,
MAE and, on request, the S-measure and the weighted F (given the distance transform of the ground truth).
"""

import math

import numba
import numpy as np

from ..._constants import EPS, LOG_HALF_OVER_5
from . import FOREGROUND_JIT
from .edt import column_scan, lower_envelope

#: squared distances examined by :func:`importance_table` (distances below ~362 px)
IMPORTANCE_TABLE = 1 << 17


def importance_table():
    """``2 - exp(log(0.5) / 5 * sqrt(k))`` in float64 (the weighted F's B) for k = 0 .. K, K the first squared
    distance whose weight rounds to exactly 2.0 (K = 70226, d ~ 265: ``0.5^(d / 5) <= 2^-53``, half an ulp of the
    numbers just below 2). The kernel reads entry K for every larger k. Checked here: every weight from K to
    IMPORTANCE_TABLE is 2.0, and beyond it (d > 362) ``0.5^(d / 5) < 2^-72`` is far below that half ulp, so
    ``2 - 0.5^(d / 5)`` is 2.0 there too. A 0.56 MB table instead of one up to 2 (H^2 + W^2): it stays in cache.
    """
    table = 2 - np.exp(LOG_HALF_OVER_5 * np.sqrt(np.arange(IMPORTANCE_TABLE, dtype=np.float64)))
    cut = int(np.flatnonzero(table != 2.0)[-1]) + 1
    if not (table[cut:] == 2.0).all() or 2 - math.exp(LOG_HALF_OVER_5 * math.sqrt(IMPORTANCE_TABLE)) != 2.0:
        raise AssertionError("the importance weight must round to 2.0 from the table's end on")
    return table[: cut + 1].copy()


# out[b, :] columns
MAE, SM, WFM, TP_A, PP_A, POS = range(6)
N_OUT = 6

_JIT = FOREGROUND_JIT


@numba.njit(**_JIT)
def _round_half_even(x):  # pragma: no cover - compiled
    r = math.floor(x)
    d = x - r
    if d > 0.5 or (d == 0.5 and r % 2 == 1):
        return int(r) + 1
    return int(r)


@numba.njit(**_JIT)
def _pairwise_leaf(a, start, n):  # pragma: no cover - compiled
    if n < 8:
        res = 0.0
        for i in range(start, start + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[start], a[start + 1], a[start + 2], a[start + 3]
    r4, r5, r6, r7 = a[start + 4], a[start + 5], a[start + 6], a[start + 7]
    i = 8
    while i < n - (n % 8):
        j = start + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[start + i]
        i += 1
    return res


@numba.njit(**_JIT)
def pairwise_sum(a, start, n):  # pragma: no cover - compiled
    # numpy's pairwise summation of a[start:start + n] (float64 add.reduce of a contiguous array), reproduced
    # operation by operation: np.mean's rounding decides ties of the adaptive threshold ``p >= 2 mean(p)``.
    # numpy recurses (halves cut at multiples of 8 down to blocks of <= 128 summed by 8 accumulators); this walks
    # the same tree with an explicit stack (numba's on-disk cache is unreliable for recursive functions).
    if n <= 128:
        return _pairwise_leaf(a, start, n)
    starts = np.empty(64, np.int64)
    sizes = np.empty(64, np.int64)
    waiting_right = np.zeros(64, np.bool_)
    left = np.empty(64)
    top = 0
    starts[0] = start
    sizes[0] = n
    while True:
        m = sizes[top]
        if m > 128:
            half = m // 2
            half -= half % 8
            starts[top + 1] = starts[top]
            sizes[top + 1] = half
            waiting_right[top] = False
            top += 1
            continue
        val = _pairwise_leaf(a, starts[top], m)
        while True:  # deliver val to the parents
            top -= 1
            if top < 0:
                return val
            if not waiting_right[top]:
                left[top] = val
                waiting_right[top] = True
                half = sizes[top] // 2
                half -= half % 8
                starts[top + 1] = starts[top] + half
                sizes[top + 1] = sizes[top] - half
                top += 1
                break
            val = left[top] + val


@numba.njit(**_JIT)
def _bin(v):  # pragma: no cover - compiled
    # trunc(255 v), as numpy's astype(np.uint8) on [0, 1]; clamped to the 256 bins so that values outside [0, 1]
    # (possible with validate_args=False and normalize=False) or NaN can never index outside the histogram
    s = v * 255.0
    if not s >= 0.0:  # negative or NaN
        return 0
    if s >= 255.0:
        return 255
    return int(s)


@numba.njit(**_JIT)
def _value(raw8, raw64, y, x, lut, use_lut, scale, lo, span, stretch):  # pragma: no cover - compiled
    # the tensor path's prepare_maps: raw / scale, then (p - lo) / (hi - lo) in float64. A uint8 map (raw8) reads
    # the same quotients from its 256-level table (computed by these operations on the level: bit-identical); other
    # maps come as float64 (raw64). Both arrays are arguments of every call (the unused one (1, 1)), so that one
    # compiled kernel serves uint8 and floating maps alike.
    if use_lut:
        return lut[int(raw8[y, x])]
    v = raw64[y, x] / scale
    if stretch:
        v = (v - lo) / span
    return v


@numba.njit(**_JIT)
def _extent(raw, normalize):  # pragma: no cover - compiled
    # (min, max) of a map as float64 (its first value twice without `normalize`)
    lo = raw[0, 0]
    hi = raw[0, 0]
    if normalize:
        for y in range(raw.shape[0]):
            for x in range(raw.shape[1]):
                r = raw[y, x]
                if r < lo:
                    lo = r
                if r > hi:
                    hi = r
    return float(lo), float(hi)


@numba.njit(**_JIT)
def _ssim(n, mean_x, mean_y, sx, sy, sxy):  # pragma: no cover - compiled
    den = n - 1 + EPS
    sx, sy, sxy = sx / den, sy / den, sxy / den
    alpha = 4 * mean_x * mean_y * sxy
    beta = (mean_x * mean_x + mean_y * mean_y) * (sx + sy)
    if alpha != 0:
        return alpha / (beta + EPS)
    if beta == 0:
        return 1.0
    return 0.0


@numba.njit(**_JIT)
def _value_at(raw8f, raw64f, i, lut, use_lut, scale, lo, span, stretch):  # pragma: no cover - compiled
    # _value of the flat map's pixel i
    if use_lut:
        return lut[int(raw8f[i])]
    v = raw64f[i] / scale
    if stretch:
        v = (v - lo) / span
    return v


@numba.njit(**_JIT)
def _weighted_f(
    raw8,
    raw64,
    g,
    col_rows,
    dist,
    index,
    lut,
    use_lut,
    scale,
    lo,
    span,
    stretch,
    pos,
    wf_beta2,
    kern,
    importance,
    row_fg,
    cst,
    v,
    z,
    pad,
    ring,
    ea,
):  # pragma: no cover - compiled
    # The weighted F of a non-empty ground truth, row by row (no full-plane scratch): the distance transform's row
    # pass (the lower envelope of the column pass's nearest rows `col_rows`; or rows of the given `dist`/`index`
    # when `col_rows` is empty), Et = err of the nearest ground-truth pixel = |p - 1| there (one value per
    # envelope segment), the background's err * importance, the blur's row pass into a ring of the last `taps`
    # rows and, `half` rows behind, the blur's column pass on the ground truth. Every sum takes the terms of the
    # plane-by-plane pipeline in the same order (zero padding, row pass then column pass): the padding's rows are
    # skipped, and a tap sum starts from its first product instead of 0.0 + it; both leave a sum of non-negative
    # terms unchanged. Rows of the blur that no ground-truth pixel reads (all farther than `half` rows) are skipped.
    h, w = g.shape
    half = kern.shape[0] // 2
    taps = kern.shape[0]
    fused = col_rows.shape[0] == h
    raw8f = raw8.reshape(-1)
    raw64f = raw64.reshape(-1)
    last = importance.shape[0] - 1  # beyond the table the weight is 2.0 (see importance_table)
    ew_fg = 0.0
    ew_bg = 0.0
    near = 0  # ground-truth pixels in rows y - half .. y + half (the rows whose EA reads row y's row pass)
    for r in range(min(half, h)):
        near += row_fg[r]
    for y in range(h + half):
        if y < h:
            if y + half < h:
                near += row_fg[y + half]
            need_et = near > 0
            need_bg = row_fg[y] < w
            if fused:
                gy = col_rows[y]
                k = lower_envelope(gy, y, cst, v, z)
                for j in range(k + 1):  # segment j: the pixels z[j] .. z[j + 1] - 1, nearest column c
                    c = v[j]
                    fc = cst[j] - c * c
                    xa = z[j]
                    xb = z[j + 1]
                    if need_et:
                        e = abs(_value_at(raw8f, raw64f, gy[c] * w + c, lut, use_lut, scale, lo, span, stretch) - 1.0)
                        for x in range(xa + half, xb + half):
                            pad[x] = e
                    if need_bg:
                        for x in range(xa, xb):
                            if not g[y, x]:
                                err = abs(_value(raw8, raw64, y, x, lut, use_lut, scale, lo, span, stretch))
                                ew_bg += err * importance[min((x - c) * (x - c) + fc, last)]
            else:
                idx = index[y]
                if need_et:
                    for x in range(w):
                        prepared = _value_at(raw8f, raw64f, idx[x], lut, use_lut, scale, lo, span, stretch)
                        pad[x + half] = abs(prepared - 1.0)
                if need_bg:
                    for x in range(w):
                        if not g[y, x]:
                            err = abs(_value(raw8, raw64, y, x, lut, use_lut, scale, lo, span, stretch))
                            d = dist[y, x]
                            ew_bg += err * importance[min(int(d * d + 0.5), last)]  # d * d: the integer squared
            if need_et:  # the blur's row pass of row y
                rr = ring[y % taps]
                if taps == 7:
                    k0, k1, k2, k3, k4, k5, k6 = kern[0], kern[1], kern[2], kern[3], kern[4], kern[5], kern[6]
                    for x in range(w):
                        rr[x] = (
                            pad[x] * k0
                            + pad[x + 1] * k1
                            + pad[x + 2] * k2
                            + pad[x + 3] * k3
                            + pad[x + 4] * k4
                            + pad[x + 5] * k5
                            + pad[x + 6] * k6
                        )
                else:
                    for x in range(w):
                        acc = 0.0
                        for j in range(taps):
                            acc += pad[x + j] * kern[j]
                        rr[x] = acc
            if y - half >= 0:
                near -= row_fg[y - half]
        yo = y - half
        if yo >= 0 and row_fg[yo] > 0:  # EA = the column pass, on this row's ground truth
            if taps == 7 and yo >= half and yo + half < h:
                r0, r1, r2, r3 = ring[(yo - 3) % 7], ring[(yo - 2) % 7], ring[(yo - 1) % 7], ring[yo % 7]
                r4, r5, r6 = ring[(yo + 1) % 7], ring[(yo + 2) % 7], ring[(yo + 3) % 7]
                k0, k1, k2, k3, k4, k5, k6 = kern[0], kern[1], kern[2], kern[3], kern[4], kern[5], kern[6]
                for x in range(w):
                    ea[x] = r0[x] * k0 + r1[x] * k1 + r2[x] * k2 + r3[x] * k3 + r4[x] * k4 + r5[x] * k5 + r6[x] * k6
            else:
                ea[:] = 0.0
                for i in range(taps):
                    r = yo + i - half
                    if 0 <= r < h:
                        ki = kern[i]
                        rr = ring[r % taps]
                        for x in range(w):
                            ea[x] += rr[x] * ki
            for x in range(w):
                if g[yo, x]:
                    err = abs(_value(raw8, raw64, yo, x, lut, use_lut, scale, lo, span, stretch) - 1.0)
                    e = ea[x]
                    ew_fg += e if e < err else err
    tpw = pos - ew_fg
    recall = 1 - ew_fg / pos
    precision = tpw / (tpw + ew_bg + EPS)
    return (1 + wf_beta2) * recall * precision / (recall + wf_beta2 * precision + EPS)


@numba.njit(**_JIT)
def _image(
    raw8,
    raw64,
    g,
    col_rows,
    dist,
    index,
    scale,
    use_lut,
    normalize,
    alpha,
    skip_empty,
    wf_beta2,
    kern,
    importance,
    counts,
    do_sm,
    do_wfm,
    et,
    lut,
    row_fg,
    f,
    v,
    z,
    pad,
    ring,
    ea,
    hist,
    out,
):  # pragma: no cover - compiled
    h, w = g.shape
    n = h * w
    if use_lut:
        lo_raw, hi_raw = _extent(raw8, normalize)
    else:
        lo_raw, hi_raw = _extent(raw64, normalize)
    lo = lo_raw / scale
    hi = hi_raw / scale
    stretch = normalize and hi != lo
    span = hi - lo
    if use_lut:
        for lv in range(256):
            level = lv / scale
            if stretch:
                level = (level - lo) / span
            lut[lv] = level

    if not (counts or do_sm):  # the weighted F alone: it needs the ground truth's rows only
        pos = np.int64(0)
        for y in range(h):
            pos_row = 0
            for x in range(w):
                if g[y, x]:
                    pos_row += 1
            row_fg[y] = pos_row
            pos += pos_row
        out[POS] = pos
        if do_wfm:
            out[WFM] = (
                0.0
                if pos == 0
                else _weighted_f(
                    raw8,
                    raw64,
                    g,
                    col_rows,
                    dist,
                    index,
                    lut,
                    use_lut,
                    scale,
                    lo,
                    span,
                    stretch,
                    pos,
                    wf_beta2,
                    kern,
                    importance,
                    row_fg,
                    f,
                    v,
                    z,
                    pad,
                    ring,
                    ea,
                )
            )
        return

    # pass 1: histogram, sums for MAE, the adaptive threshold, the object means, the centroid
    flat = et.reshape(-1)  # scratch: the prepared map, for numpy's summation order of its mean
    sum_abs = 0.0
    sum_fg = 0.0
    sum_bg = 0.0
    pos = np.int64(0)
    row_sum = 0
    col_sum = 0
    for y in range(h):
        pos_row = 0
        for x in range(w):
            v_ = _value(raw8, raw64, y, x, lut, use_lut, scale, lo, span, stretch)
            b = _bin(v_)
            flat[y * w + x] = v_
            if g[y, x]:
                hist[1, b] += 1
                pos_row += 1
                sum_fg += v_
                sum_abs += abs(1 - v_)  # == 1 - v in [0, 1]; |p - g| as the tensor path beyond it (unvalidated)
                row_sum += y
                col_sum += x
            else:
                hist[0, b] += 1
                sum_bg += 1 - v_
                sum_abs += abs(v_)
        row_fg[y] = pos_row
        pos += pos_row
    mean_p = pairwise_sum(flat, np.int64(0), n) / n
    thr = min(2 * mean_p, 1.0)
    out[MAE] = sum_abs / n
    out[POS] = pos

    cy = 1
    cx = 1
    m1 = sum_fg / pos
    m0 = sum_bg / (n - pos)
    x0 = np.zeros(4)
    if do_sm and 0 < pos < n:
        cy = _round_half_even(row_sum / pos) + 1
        cx = _round_half_even(col_sum / pos) + 1
        # each quadrant's first pixel (clamped: an empty quadrant's value is never used)
        zero = np.int64(0)
        x0[0] = _value(raw8, raw64, zero, zero, lut, use_lut, scale, lo, span, stretch)
        x0[1] = _value(raw8, raw64, zero, min(cx, w - 1), lut, use_lut, scale, lo, span, stretch)
        x0[2] = _value(raw8, raw64, min(cy, h - 1), zero, lut, use_lut, scale, lo, span, stretch)
        x0[3] = _value(raw8, raw64, min(cy, h - 1), min(cx, w - 1), lut, use_lut, scale, lo, span, stretch)

    # pass 2: adaptive counts, object spreads, quadrant first moments (each row in its two quadrant segments, so
    # that the quadrant's sums are register accumulators; every sum is still taken in row-major order)
    tp_a = 0
    pp_a = 0
    var1 = 0.0
    var0 = 0.0
    qd = np.zeros(4)
    qg = np.zeros(4)
    cxc = min(cx, w)
    for y in range(h):
        if do_sm:
            qrow = 2 if y >= cy else 0
            for seg in range(2):
                q = qrow + seg
                xa = 0 if seg == 0 else cxc
                xb = cxc if seg == 0 else w
                x0q = x0[q]
                a_qd = qd[q]
                a_qg = qg[q]
                for x in range(xa, xb):
                    v_ = _value(raw8, raw64, y, x, lut, use_lut, scale, lo, span, stretch)
                    gv = g[y, x]
                    if v_ >= thr:
                        pp_a += 1
                        if gv:
                            tp_a += 1
                    if gv:
                        var1 += (v_ - m1) ** 2
                        a_qg += 1
                    else:
                        var0 += ((1 - v_) - m0) ** 2
                    a_qd += v_ - x0q
                qd[q] = a_qd
                qg[q] = a_qg
        else:
            for x in range(w):
                if _value(raw8, raw64, y, x, lut, use_lut, scale, lo, span, stretch) >= thr:
                    pp_a += 1
                    if g[y, x]:
                        tp_a += 1
    out[TP_A] = tp_a
    out[PP_A] = pp_a

    if do_sm:
        y_mean = pos / n
        if pos == 0:
            out[SM] = 1 - mean_p
        elif pos == n:
            out[SM] = mean_p
        else:
            sizes = np.empty(4)
            sizes[0] = cy * cx
            sizes[1] = cy * (w - cx)
            sizes[2] = (h - cy) * cx
            sizes[3] = (h - cy) * (w - cx)
            mean_d = np.empty(4)
            mean_g = np.empty(4)
            for q in range(4):
                mean_d[q] = qd[q] / sizes[q]
                mean_g[q] = qg[q] / sizes[q]
            # pass 3: centred quadrant moments, quadrant by quadrant (row-major within each: the same sums)
            sxx = np.zeros(4)
            syy = np.zeros(4)
            sxy = np.zeros(4)
            cyc = min(cy, h)
            for q in range(4):
                ya = 0 if q < 2 else cyc
                yb = cyc if q < 2 else h
                xa = 0 if q % 2 == 0 else cxc
                xb = cxc if q % 2 == 0 else w
                x0q = x0[q]
                md = mean_d[q]
                mg = mean_g[q]
                a_xx = 0.0
                a_yy = 0.0
                a_xy = 0.0
                for y in range(ya, yb):
                    for x in range(xa, xb):
                        dc = (_value(raw8, raw64, y, x, lut, use_lut, scale, lo, span, stretch) - x0q) - md
                        yc = (1.0 if g[y, x] else 0.0) - mg
                        a_xx += dc * dc
                        a_yy += yc * yc
                        a_xy += dc * yc
                sxx[q] = a_xx
                syy[q] = a_yy
                sxy[q] = a_xy
            std1 = math.sqrt(var1 / (pos - 1)) if pos > 1 else 0.0
            std0 = math.sqrt(var0 / (n - pos - 1)) if n - pos > 1 else 0.0
            s_fg = 2 * m1 / (m1 * m1 + 1 + std1 + EPS)
            s_bg = 2 * m0 / (m0 * m0 + 1 + std0 + EPS)
            obj = y_mean * s_fg + (1 - y_mean) * s_bg
            w_lt = (cx * cy) / n
            w_rt = (cy * (w - cx)) / n
            w_lb = ((h - cy) * cx) / n
            weights = np.array([w_lt, w_rt, w_lb, 1 - w_lt - w_rt - w_lb])
            region = 0.0
            for q in range(4):
                if skip_empty and sizes[q] == 0:
                    continue
                mx = x0[q] + mean_d[q]
                region += weights[q] * _ssim(sizes[q], mx, mean_g[q], sxx[q], syy[q], sxy[q])
            s = obj * alpha + region * (1 - alpha)
            out[SM] = s if (s != s or s > 0) else 0.0  # max(0, s), keeping NaN as numpy's maximum does

    if do_wfm:
        if pos == 0:
            out[WFM] = 0.0
            return
        out[WFM] = _weighted_f(
            raw8,
            raw64,
            g,
            col_rows,
            dist,
            index,
            lut,
            use_lut,
            scale,
            lo,
            span,
            stretch,
            pos,
            wf_beta2,
            kern,
            importance,
            row_fg,
            f,
            v,
            z,
            pad,
            ring,
            ea,
        )


@numba.njit(parallel=True, **_JIT)
def foreground_kernel(
    raw8,
    raw64,
    g,
    dist,
    index,
    scale,
    use_lut,
    normalize,
    alpha,
    skip_empty,
    wf_beta2,
    kern,
    importance,
    counts,
    do_sm,
    do_wfm,
    n_tasks,
):  # pragma: no cover - compiled
    """Per-image histograms (B, 2, 256) and values (B, 6): MAE, SM, WFM, TP_A, PP_A, POS (see the module doc).

    ``counts=False`` with ``do_sm=False`` skips the histogram, MAE and the adaptive counts (left 0 / NaN): the
    weighted F alone reads the ground truth's row counts only. ``use_lut``: the map is ``raw8``, uint8 (its prepared
    values are read from a 256-level table); otherwise ``raw64``, float64; the other array is a (B, 1, 1)
    placeholder. One signature for both: a float map after a uint8 one compiles nothing new. With ``do_wfm``, the
    distance transform of the ground truth is ``dist``/``index`` when they are (B, H, W), and is otherwise computed
    here, image by image: the column pass of
    :mod:`.edt` into per-task scratch (int32 rows), its row pass row by row as the weighted F consumes it (full
    float64 / int64 planes of the distance and index cost 16 bytes of memory traffic per pixel). ``importance[k]``
    is the weight ``2 - 0.5^(sqrt(k) / 5)`` of a background pixel at squared distance ``k`` (a table: ``exp`` per
    pixel would be the kernel's largest cost); beyond the table it is exactly 2.0, the table's last entry.
    """
    batch, h, w = g.shape
    hist = np.zeros((batch, 2, 256), np.int64)
    out = np.full((batch, N_OUT), np.nan)
    given = dist.shape[1] == h and dist.shape[2] == w
    for task in numba.prange(n_tasks):
        # task t takes images t, t + n_tasks, ...: scratch allocated once per task and reused
        half = kern.shape[0] // 2
        taps = kern.shape[0]
        et = np.empty((h if counts or do_sm else 0, w))
        lut = np.empty(256)
        row_fg = np.empty(h, np.int64)
        pad = np.zeros(w + 2 * half)  # only the interior is ever written: the border stays 0
        ring = np.empty((taps, w))
        ea = np.empty(w)
        f = np.empty(w, np.int64)
        v = np.empty(w, np.int64)
        z = np.empty(w + 1, np.int64)
        fused = do_wfm and not given
        col_rows = np.empty((h if fused else 0, w), np.int32)
        below = np.empty(w, np.int32)
        for b in range(task, batch, n_tasks):
            if fused:
                column_scan(g[b], col_rows, np.int64(0), w, below)
            _image(
                raw8[b],
                raw64[b],
                g[b],
                col_rows,
                dist[b],
                index[b],
                scale,
                use_lut,
                normalize,
                alpha,
                skip_empty,
                wf_beta2,
                kern,
                importance,
                counts,
                do_sm,
                do_wfm,
                et,
                lut,
                row_fg,
                f,
                v,
                z,
                pad,
                ring,
                ea,
                hist[b],
                out[b],
            )
    return hist, out
