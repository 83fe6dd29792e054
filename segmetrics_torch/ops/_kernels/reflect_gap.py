"""Compiled border term of a reflected correlation: ``<x, A y> - <A x, y>`` from the image's border band only.

Behind :func:`segmetrics_torch.ops.filters.filter2d_reflect_gap`. ``A`` is OpenCV's ``filter2D`` with
``BORDER_REFLECT_101`` and a point-symmetric kernel ``k``. The pairs ``(i, i + d)`` that stay inside the image give the
same terms in both inner products (``k(d) = k(-d)``), so the difference is

    sum_i sum_{d: i + d outside} k(d) (x(i) y(refl(i + d)) - y(i) x(refl(i + d)))

over the pixels ``i`` within half a kernel of the border, and only the kernel taps that leave the image.
"""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, fastmath=True)
def _pixel(x, y, k, rref, cref, r, c, h, w):  # pragma: no cover - compiled
    # the outside taps of pixel (r, c): sum k(d) (x(i) y(refl(i + d)) - y(i) x(refl(i + d)))
    kh, kw = k.shape
    hr, hc = kh // 2, kw // 2
    xv = x[r, c]
    yv = y[r, c]
    if xv == 0 and yv == 0:
        return 0.0
    top, bottom = hr - r, h - r + hr  # rows a < top leave at the top, a >= bottom at the bottom
    left, right = hc - c, w - c + hc  # columns b < left leave at the left, b >= right at the right
    lb, rb = min(max(left, 0), kw), min(max(right, 0), kw)  # columns b < lb leave left, b >= rb right
    single = hc < w  # one reflection per column: indices in closed form (contiguous runs, vectorisable)
    sy = 0.0
    sx = 0.0
    for a in range(kh):
        rr = rref[r + a]
        whole = a < top or a >= bottom  # the whole kernel row leaves the image
        if single:
            for b in range(lb):
                cc = hc - c - b  # reflects -(c + b - hc)
                sy += k[a, b] * y[rr, cc]
                sx += k[a, b] * x[rr, cc]
            if whole:
                for b in range(lb, rb):
                    cc = c + b - hc
                    sy += k[a, b] * y[rr, cc]
                    sx += k[a, b] * x[rr, cc]
            for b in range(rb, kw):
                cc = 2 * w - 2 - (c + b - hc)
                sy += k[a, b] * y[rr, cc]
                sx += k[a, b] * x[rr, cc]
        else:
            for b in range(kw):
                if whole or b < lb or b >= rb:
                    cc = cref[c + b]
                    sy += k[a, b] * y[rr, cc]
                    sx += k[a, b] * x[rr, cc]
    return xv * sy - yv * sx


@numba.njit(cache=True, nogil=True)
def reflect_gap(x, y, k, rref, cref, box):  # pragma: no cover - compiled
    # x, y: (H, W) real arrays; k: (kh, kw) float64, point-symmetric; rref / cref: source row / column of the
    # positions -kh//2 .. H-1+kh//2 (resp. columns) under BORDER_REFLECT_101; box: first / last row, first / last
    # column of y's non-zero pixels. Both terms need y within half a kernel of i (a reflection brings a pixel no
    # farther), so only the band pixels within half a kernel of that box are visited.
    h, w = x.shape
    hr, hc = k.shape[0] // 2, k.shape[1] // 2
    ra, rb = max(box[0] - hr, 0), min(box[1] + hr + 1, h)
    ca, cb = max(box[2] - hc, 0), min(box[3] + hc + 1, w)
    acc = 0.0
    for r in range(ra, rb):
        if r < hr or r >= h - hr:  # a band row
            # pixels whose columns never leave: each kernel row that leaves the image pairs two contiguous runs
            lo, hi = max(ca, hc), min(cb, w - hc)
            if lo < hi:
                acc += _row_run(x, y, k, rref, r, lo, hi, h)
            else:
                lo, hi = cb, cb
            for c in range(ca, min(lo, cb)):
                acc += _pixel(x, y, k, rref, cref, r, c, h, w)
            for c in range(max(hi, ca), cb):
                acc += _pixel(x, y, k, rref, cref, r, c, h, w)
    # the left and right bands below / above the band rows: whole kernel columns leave, rows stay inside; a
    # transposed copy of each band's strip (its pixels and their reflections) makes the runs contiguous
    lo, hi = max(ra, hr), min(rb, h - hr)
    if lo < hi:
        if ca < hc:
            s0, s1 = np.int64(0), min(w, 2 * hc + 1)
            xt, yt = np.ascontiguousarray(x[:, s0:s1].T), np.ascontiguousarray(y[:, s0:s1].T)
            for c in range(ca, min(hc, cb)):
                acc += _col_run(xt, yt, k, cref, c, s0, lo, hi, w)
        if cb > max(w - hc, hc):
            s0, s1 = max(0, w - 2 * hc - 1), w
            xt, yt = np.ascontiguousarray(x[:, s0:s1].T), np.ascontiguousarray(y[:, s0:s1].T)
            for c in range(max(w - hc, hc, ca), cb):
                acc += _col_run(xt, yt, k, cref, c, s0, lo, hi, w)
    return acc


@numba.njit(cache=True, nogil=True, fastmath=True)
def _col_run(xt, yt, k, cref, c, s0, lo, hi, w):  # pragma: no cover - compiled
    # pixels (lo..hi-1, c) of a band column whose kernel rows all stay inside: only whole kernel columns leave;
    # xt, yt: the transposed strip of columns s0.. (holding c and every column it reflects to)
    kh, kw = k.shape
    hr, hc = kh // 2, kw // 2
    left, right = hc - c, w - c + hc
    xi, yi = xt[c - s0, lo:hi], yt[c - s0, lo:hi]
    acc = 0.0
    for b in range(kw):
        if not (b < left or b >= right):
            continue
        cc = cref[c + b] - s0
        for a in range(kh):
            off = a - hr
            xj, yj = xt[cc, lo + off : hi + off], yt[cc, lo + off : hi + off]
            s = 0.0
            for i in range(hi - lo):
                s += xi[i] * yj[i] - yi[i] * xj[i]
            acc += k[a, b] * s
    return acc


@numba.njit(cache=True, nogil=True, fastmath=True)
def _row_run(x, y, k, rref, r, lo, hi, h):  # pragma: no cover - compiled
    # pixels (r, lo..hi-1) of a band row whose kernel columns all stay inside: only whole kernel rows leave
    kh, kw = k.shape
    hr, hc = kh // 2, kw // 2
    top, bottom = hr - r, h - r + hr
    acc = 0.0
    for a in range(kh):
        if not (a < top or a >= bottom):
            continue
        rr = rref[r + a]
        xi, yi = x[r, lo:hi], y[r, lo:hi]
        for b in range(kw):
            off = b - hc
            xj, yj = x[rr, lo + off : hi + off], y[rr, lo + off : hi + off]  # contiguous runs: vectorised
            s = 0.0
            for i in range(hi - lo):
                s += xi[i] * yj[i] - yi[i] * xj[i]
            acc += k[a, b] * s
    return acc
