"""Compiled CPU kernel of the foreground measures (numba; imported only for CPU tensors).

Behind :func:`segmetrics_torch.ops.foreground.foreground_statistics`.

Why: on a CPU, the tensor path runs ~100 float64 elementwise operations per image, each a full pass over memory;
this kernel reads every image in three fused passes (plus the weighted F's blur), ~10x less memory traffic, and
runs images in parallel. It computes exactly the quantities of the tensor path, with the same operations in the same
order where the order matters for the reference (input preparation, bins, the adaptive threshold test, the shifted
quadrant moments, the blur's summation order); sums are accumulated sequentially instead of pairwise, which changes
results by ~1e-16. The tensor path (the CUDA path) is tested against the same oracle on CPU tensors.

Per image it returns the 2x256 histogram of ``trunc(255 p)`` split by the ground truth, the adaptive-threshold counts,
MAE and, on request, the S-measure and the weighted F (given the distance transform of the ground truth).
"""

import math

import numba
import numpy as np

from ..._constants import EPS, LOG_HALF_OVER_5
from . import FOREGROUND_JIT
from .edt import column_scan, row_envelope

#: squared distances covered by the importance table (distances below ~362 px)
IMPORTANCE_TABLE = 1 << 17


def importance_table():
    """``2 - exp(log(0.5) / 5 * sqrt(k))`` for k < IMPORTANCE_TABLE, in float64 (the weighted F's B)."""
    return 2 - np.exp(LOG_HALF_OVER_5 * np.sqrt(np.arange(IMPORTANCE_TABLE, dtype=np.float64)))

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
def _value(raw, y, x, scale, lo, span, stretch):  # pragma: no cover - compiled
    # the tensor path's prepare_maps: raw / scale, then (p - lo) / (hi - lo) in float64
    v = raw[y, x] / scale
    if stretch:
        v = (v - lo) / span
    return v


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
def _image(raw, g, dist, index, scale, normalize, alpha, skip_empty, wf_beta2, kern, importance, do_sm, do_wfm, et, pad_r, pad_c, hist, out):  # pragma: no cover - compiled  # noqa: E501
    h, w = raw.shape
    n = h * w
    lo_raw = raw[0, 0]
    hi_raw = raw[0, 0]
    if normalize:
        for y in range(h):
            for x in range(w):
                r = raw[y, x]
                if r < lo_raw:
                    lo_raw = r
                if r > hi_raw:
                    hi_raw = r
    lo = lo_raw / scale
    hi = hi_raw / scale
    stretch = normalize and hi != lo
    span = hi - lo

    # pass 1: histogram, sums for MAE, the adaptive threshold, the object means, the centroid
    flat = et.reshape(-1)  # scratch: the prepared map, for numpy's summation order of its mean
    sum_abs = 0.0
    sum_fg = 0.0
    sum_bg = 0.0
    pos = 0
    row_sum = 0
    col_sum = 0
    for y in range(h):
        for x in range(w):
            v = _value(raw, y, x, scale, lo, span, stretch)
            b = _bin(v)
            flat[y * w + x] = v
            if g[y, x]:
                hist[1, b] += 1
                pos += 1
                sum_fg += v
                sum_abs += abs(1 - v)  # == 1 - v in [0, 1]; |p - g| as the tensor path beyond it (unvalidated)
                row_sum += y
                col_sum += x
            else:
                hist[0, b] += 1
                sum_bg += 1 - v
                sum_abs += abs(v)
    mean_p = pairwise_sum(flat, 0, n) / n
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
        x0[0] = _value(raw, 0, 0, scale, lo, span, stretch)
        x0[1] = _value(raw, 0, min(cx, w - 1), scale, lo, span, stretch)
        x0[2] = _value(raw, min(cy, h - 1), 0, scale, lo, span, stretch)
        x0[3] = _value(raw, min(cy, h - 1), min(cx, w - 1), scale, lo, span, stretch)

    # pass 2: adaptive counts, object spreads, quadrant first moments
    tp_a = 0
    pp_a = 0
    var1 = 0.0
    var0 = 0.0
    qd = np.zeros(4)
    qg = np.zeros(4)
    for y in range(h):
        for x in range(w):
            v = _value(raw, y, x, scale, lo, span, stretch)
            gv = g[y, x]
            if v >= thr:
                pp_a += 1
                if gv:
                    tp_a += 1
            if do_sm:
                if gv:
                    var1 += (v - m1) ** 2
                else:
                    var0 += ((1 - v) - m0) ** 2
                q = (2 if y >= cy else 0) + (1 if x >= cx else 0)
                qd[q] += v - x0[q]
                if gv:
                    qg[q] += 1
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
            # pass 3: centred quadrant moments
            sxx = np.zeros(4)
            syy = np.zeros(4)
            sxy = np.zeros(4)
            for y in range(h):
                for x in range(w):
                    q = (2 if y >= cy else 0) + (1 if x >= cx else 0)
                    dc = (_value(raw, y, x, scale, lo, span, stretch) - x0[q]) - mean_d[q]
                    yc = (1.0 if g[y, x] else 0.0) - mean_g[q]
                    sxx[q] += dc * dc
                    syy[q] += yc * yc
                    sxy[q] += dc * yc
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
        half = kern.shape[0] // 2
        taps = kern.shape[0]
        # err of every pixel (flat), then Et = err of the nearest ground-truth pixel, written into a zero-padded
        # buffer so that the blur's row pass needs no bounds tests (adding the padding's 0.0 changes no sum)
        for y in range(h):
            for x in range(w):
                flat[y * w + x] = abs(_value(raw, y, x, scale, lo, span, stretch) - (1.0 if g[y, x] else 0.0))
        for y in range(h):
            for x in range(w):
                pad_r[y, x + half] = flat[index[y, x]]
        for y in range(h):
            for x in range(w):
                acc = 0.0
                for j in range(taps):
                    acc += pad_r[y, x + j] * kern[j]
                pad_c[y + half, x] = acc
        ew_fg = 0.0
        ew_bg = 0.0
        for y in range(h):
            for x in range(w):
                gv = g[y, x]
                err = flat[y * w + x]
                if gv:
                    ea = 0.0
                    for i in range(taps):
                        ea += pad_c[y + i, x] * kern[i]
                    ew_fg += ea if ea < err else err
                else:
                    d = dist[y, x]
                    k = int(d * d + 0.5)  # the squared distance, an integer
                    ew_bg += err * (importance[k] if k < importance.shape[0] else 2 - math.exp(LOG_HALF_OVER_5 * d))
        tpw = pos - ew_fg
        recall = 1 - ew_fg / pos
        precision = tpw / (tpw + ew_bg + EPS)
        out[WFM] = (1 + wf_beta2) * recall * precision / (recall + wf_beta2 * precision + EPS)


@numba.njit(parallel=True, **_JIT)
def foreground_kernel(raw, g, dist, index, scale, normalize, alpha, skip_empty, wf_beta2, kern, importance, do_sm, do_wfm, n_tasks):  # pragma: no cover - compiled  # noqa: E501
    """Per-image histograms (B, 2, 256) and values (B, 6): MAE, SM, WFM, TP_A, PP_A, POS (see the module doc).

    With ``do_wfm``, the distance transform of the ground truth is ``dist``/``index`` when they are (B, H, W), and
    is otherwise computed here, image by image, with the kernels of :mod:`.edt` into per-task scratch that stays
    in cache (a batch-sized result would cost 16 bytes of fresh memory per pixel). ``importance[k]`` is the
    weight ``2 - 0.5^(sqrt(k) / 5)`` of a background pixel at squared distance ``k`` (a table: ``exp`` per pixel
    would be the kernel's largest cost), computed with ``exp`` beyond the table.
    """
    batch, h, w = raw.shape
    hist = np.zeros((batch, 2, 256), np.int64)
    out = np.full((batch, N_OUT), np.nan)
    given = dist.shape[1] == h and dist.shape[2] == w
    for task in numba.prange(n_tasks):
        # task t takes images t, t + n_tasks, ...: scratch allocated once per task and reused
        half = kern.shape[0] // 2
        et = np.empty((h, w))
        pad_r = np.zeros((h, w + 2 * half))  # only the interior is ever written: the border stays 0
        pad_c = np.zeros((h + 2 * half, w))
        if do_wfm and not given:
            col_rows = np.empty((h, w), np.int32)
            below = np.empty(w, np.int32)
            f = np.empty(w, np.int64)
            v = np.empty(w, np.int64)
            z = np.empty(w, np.int64)
            d_img = np.empty((h, w))
            i_img = np.empty((h, w), np.int64)
        for b in range(task, batch, n_tasks):
            if do_wfm and not given:
                column_scan(g[b], col_rows, 0, w, below)
                for y in range(h):
                    row_envelope(col_rows[y], y, f, v, z, d_img[y], i_img[y])
                _image(raw[b], g[b], d_img, i_img, scale, normalize, alpha, skip_empty, wf_beta2, kern, importance,
                       do_sm, do_wfm, et, pad_r, pad_c, hist[b], out[b])  # fmt: skip
            else:
                _image(raw[b], g[b], dist[b], index[b], scale, normalize, alpha, skip_empty, wf_beta2, kern,
                       importance, do_sm, do_wfm, et, pad_r, pad_c, hist[b], out[b])  # fmt: skip
    return hist, out
