"""Compiled CPU kernels of :mod:`segmetrics_torch.ops.weighted_error` (Margolin's weighted error sums of a soft map).

One task per group of images (images t, t + n_tasks, ...), each with its own scratch: the ground-truth terms (exact
EDT fused with the importance ``B``), the two sums of the forward pass and the gradient of the backward pass, each
in one sweep over the image instead of the tensor path's dozen full-size passes. The 1-D Gaussian is applied along
the rows, then along the columns, with a zero border, each output accumulated tap by tap from the centre tap out in
the order of the tensor path (``_correlate_zero``), so the two paths agree to an ulp per tap.
"""

import numba
import numpy as np

from .edt import column_scan, envelope_scratch, fill_segments, lower_envelope

#: the largest table of importances by squared distance a task keeps (larger images evaluate exp per pixel)
_TABLE_MAX = 1 << 22


@numba.njit(parallel=True, cache=True, nogil=True)
def ground_truth_terms(mask, importance, index, size, log_half_over_5, n_tasks):  # pragma: no cover - compiled
    # Per image: index[y, x] = flat index of the nearest GT pixel (scipy's tie rule; 0 for an empty GT, whose loss
    # is masked out), importance[y, x] = 2 - exp(log(0.5) / 5 * d) off the GT, 0 on it (d: the exact EDT), and
    # size[b] = the number of GT pixels. Squared distances are integers below (H - 1)^2 + (W - 1)^2 + 1, so the
    # importance is looked up in a table filled on first use (NaN: not yet) instead of one exp per pixel.
    n_img, h, w = mask.shape
    n_table = (h - 1) * (h - 1) + (w - 1) * (w - 1) + 1
    use_table = n_table <= _TABLE_MAX
    dtype = importance.dtype
    scale = dtype.type(log_half_over_5)
    two = dtype.type(2.0)
    for task in numba.prange(n_tasks):
        rows, below, f, v, z = envelope_scratch(h, w)
        d2 = np.empty(w, np.int64)
        table = np.full(n_table if use_table else 1, np.nan, dtype)
        for b in range(task, n_img, n_tasks):
            column_scan(mask[b], rows, np.int64(0), w, below)
            count = 0
            for y in range(h):
                out_i = index[b, y]
                out_b = importance[b, y]
                m = mask[b, y]
                k = lower_envelope(rows[y], y, f, v, z)
                if k < 0:  # an empty GT: d = inf everywhere, B = 2 - exp(-inf) = 2
                    out_i[:] = 0
                    out_b[:] = two
                    continue
                fill_segments(rows[y], k, f, v, z, d2, out_i)
                for x in range(w):
                    if m[x]:
                        out_b[x] = 0.0
                        count += 1
                        continue
                    q = d2[x]
                    e = table[q] if use_table else np.nan
                    if e != e:
                        # the tensor path's rounding: sqrt in float64, then d and the product in the map's dtype
                        e = two - np.exp(dtype.type(np.sqrt(np.float64(q))) * scale)
                        if use_table:
                            table[q] = e
                    out_b[x] = e
            size[b] = count


@numba.njit(cache=True, nogil=True)
def _box(mask):  # pragma: no cover - compiled
    # the bounding box [y0, y1) x [x0, x1) of a (H, W) mask; y0 = y1 = 0 when it is empty
    h, w = mask.shape
    y0, y1, x0, x1 = h, 0, w, 0
    for y in range(h):
        row = mask[y]
        hit = 0
        for x in range(w):  # branch-free: vectorises
            hit |= row[x]
        if hit:
            y0 = min(y0, y)
            y1 = y + 1
            for x in range(min(x0, w)):  # leftmost pixel, if left of the box so far
                if row[x]:
                    x0 = x
                    break
            for x in range(w - 1, x1 - 1, -1):  # rightmost, if right of it
                if row[x]:
                    x1 = x + 1
                    break
    if y1 == 0:
        return 0, 0, 0, 0
    return y0, y1, x0, x1


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _dot(a, b):  # pragma: no cover - compiled
    # sum of a * b over two (H, W) maps, accumulated in float64 (reassociated: vectorised, as torch's own sums are)
    s = 0.0
    for y in range(a.shape[0]):
        ra = a[y]
        rb = b[y]
        for x in range(a.shape[1]):
            s += np.float64(ra[x] * rb[x])
    return s


# Loops below index row views from 0 (``for i in range(n)``): numba wraps negative indices around, and a check it
# cannot prove away (an index like ``x - 3`` or a loop from a runtime start) keeps LLVM from vectorising the loop
# (measured: a 7-tap row pass 15x slower).


@numba.njit(cache=True, nogil=True)
def _edge_columns(x0, x1, lo, hi):  # pragma: no cover - compiled
    # the columns of [x0, x1) outside [lo, hi): at most 3 on each side
    left = np.arange(x0, max(x0, min(x1, lo)))
    right = np.arange(max(x0, hi, lo), x1)
    return np.concatenate((left, right))


@numba.njit(cache=True, nogil=True)
def _blur_rows(src, tmp, weights, y0, y1, x0, x1):  # pragma: no cover - compiled
    # tmp[y, x] for y in [y0, y1), x in [x0, x1): the row correlation of src with the 7 `weights` (zero outside the
    # image), the centre tap first, then the others in index order (the tensor path's order). Reads src at x +- 3.
    w = src.shape[1]
    c = src.dtype.type
    k0, k1, k2, k3, k4, k5, k6 = (
        c(weights[0]),
        c(weights[1]),
        c(weights[2]),
        c(weights[3]),
        c(weights[4]),
        c(weights[5]),
        c(weights[6]),
    )
    lo, hi = max(x0, 3), min(x1, w - 3)  # the columns whose taps all lie in the image
    n = max(0, hi - lo)
    edges = _edge_columns(x0, x1, lo, hi)
    for y in range(y0, y1):
        s = src[y]
        t = tmp[y][lo : lo + n]
        s0, s1, s2, s3 = s[lo - 3 : lo - 3 + n], s[lo - 2 : lo - 2 + n], s[lo - 1 : lo - 1 + n], s[lo : lo + n]
        s4, s5, s6 = s[lo + 1 : lo + 1 + n], s[lo + 2 : lo + 2 + n], s[lo + 3 : lo + 3 + n]
        for i in range(n):  # one accumulator per pixel, in registers: vectorises across x
            a = s3[i] * k3
            a += s0[i] * k0
            a += s1[i] * k1
            a += s2[i] * k2
            a += s4[i] * k4
            a += s5[i] * k5
            a += s6[i] * k6
            t[i] = a
        for x in edges:  # the columns within 3 of the image's edge
            a = s[x] * k3
            for j in range(7):
                if j != 3 and 0 <= x + j - 3 < w:
                    a += s[x + j - 3] * c(weights[j])
            tmp[y, x] = a


@numba.njit(cache=True, nogil=True)
def _blur_columns(tmp, out, weights, y0, y1, x0, x1, t0, t1):  # pragma: no cover - compiled
    # out[y, x] for y in [y0, y1), x in [x0, x1): the column correlation of tmp with the 7 `weights` (zero outside
    # the image, and outside the rows [t0, t1) where tmp is known to be zero: a product with 0 adds nothing), in the
    # tensor path's order.
    c = tmp.dtype.type
    n = x1 - x0
    k0, k1, k2, k3, k4, k5, k6 = (
        c(weights[0]),
        c(weights[1]),
        c(weights[2]),
        c(weights[3]),
        c(weights[4]),
        c(weights[5]),
        c(weights[6]),
    )
    for y in range(y0, y1):
        o = out[y][x0:x1]
        if t0 <= y - 3 and y + 3 < t1:  # all seven taps inside
            a0, a1, a2, a3 = tmp[y - 3][x0:x1], tmp[y - 2][x0:x1], tmp[y - 1][x0:x1], tmp[y][x0:x1]
            a4, a5, a6 = tmp[y + 1][x0:x1], tmp[y + 2][x0:x1], tmp[y + 3][x0:x1]
            for i in range(n):
                a = a3[i] * k3
                a += a0[i] * k0
                a += a1[i] * k1
                a += a2[i] * k2
                a += a4[i] * k4
                a += a5[i] * k5
                a += a6[i] * k6
                o[i] = a
            continue
        if t0 <= y < t1:
            t = tmp[y][x0:x1]
            for i in range(n):
                o[i] = t[i] * k3
        else:
            o[:] = 0.0
        for j in range(7):
            rj = y + j - 3
            if j != 3 and t0 <= rj < t1:
                wj = c(weights[j])
                t = tmp[rj][x0:x1]
                for i in range(n):
                    o[i] += t[i] * wj


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _ground_truth_errors(p, g, err_a, won, y0, y1, x0, x1):  # pragma: no cover - compiled
    # sum over the GT pixels of the box of min'(E_A, E), E = 1 - p, marking won = 1 where E_A < E. Branch-free
    # selects (a branch on a < e mispredicts half the time) and a reassociated float64 sum (vectorised).
    one = p.dtype.type(1.0)
    s = 0.0
    for y in range(y0, y1):
        pr, gr, ar, wr = p[y][x0:x1], g[y][x0:x1], err_a[y][x0:x1], won[y][x0:x1]
        for i in range(x1 - x0):
            e = one - pr[i]
            a = ar[i]
            on = gr[i] != 0
            wins = on and a < e
            wr[i] = wins
            s += np.float64(a if wins else (e if on else 0.0))
    return s


@numba.njit(parallel=True, cache=True, nogil=True)
def forward_sums(p, g, index, importance, weights, won, ew_fg, fpw, n_tasks):  # pragma: no cover - compiled
    # ew_fg[b] = sum over the GT of min'(E_A, E) with E = 1 - p there, E_A = blur(1 - p[index]) (E_A only where
    # strictly smaller: won = 1 there); fpw[b] = sum of importance * p (importance is 0 on the GT). E_A is needed on
    # the GT only: it is computed on the GT's bounding box, from E_t on the box grown by the Gaussian's radius.
    n_img, h, w = p.shape
    r = weights.shape[0] // 2
    one = p.dtype.type(1.0)
    for task in numba.prange(n_tasks):
        err_t = np.empty((h, w), p.dtype)
        tmp = np.empty((h, w), p.dtype)
        err_a = np.empty((h, w), p.dtype)
        for b in range(task, n_img, n_tasks):
            pb = p[b].ravel()
            ib = index[b]
            won[b] = 0
            fpw[b] = _dot(importance[b], p[b])
            y0, y1, x0, x1 = _box(g[b])
            ew_fg[b] = 0.0
            if y1 == 0:
                continue
            ey0, ey1, ex0, ex1 = max(0, y0 - r), min(h, y1 + r), max(0, x0 - r), min(w, x1 + r)
            for y in range(ey0, ey1):
                for x in range(ex0, ex1):
                    err_t[y, x] = one - pb[ib[y, x]]
            _blur_rows(err_t, tmp, weights, ey0, ey1, x0, x1)
            _blur_columns(tmp, err_a, weights, y0, y1, x0, x1, ey0, ey1)
            ew_fg[b] = _ground_truth_errors(p[b], g[b], err_a, won[b], y0, y1, x0, x1)


@numba.njit(parallel=True, cache=True, nogil=True)
def backward_grad(won, g, index, importance, weights, d_fg, d_bg, grad, n_tasks):  # pragma: no cover - compiled
    # grad = importance * d_bg off the GT, -d_fg on GT pixels where E won, and minus the blurred d_fg of the E_A
    # winners scattered to their nearest GT pixels (the adjoint of the gather; the Gaussian is its own adjoint).
    # The winners lie in the GT's bounding box, so the blur is nonzero on the box grown by the radius only.
    n_img, h, w = grad.shape
    r = weights.shape[0] // 2
    zero = grad.dtype.type(0.0)
    for task in numba.prange(n_tasks):
        seed = np.empty((h, w), grad.dtype)
        tmp = np.empty((h, w), grad.dtype)
        through = np.empty((h, w), grad.dtype)
        for b in range(task, n_img, n_tasks):
            df = grad.dtype.type(d_fg[b])
            db = grad.dtype.type(d_bg[b])
            for y in range(h):
                for x in range(w):
                    if g[b, y, x]:
                        grad[b, y, x] = zero if won[b, y, x] else -df
                    else:
                        grad[b, y, x] = importance[b, y, x] * db
            y0, y1, x0, x1 = _box(won[b])
            if y1 == 0:
                continue
            ey0, ey1, ex0, ex1 = max(0, y0 - r), min(h, y1 + r), max(0, x0 - r), min(w, x1 + r)
            # the seed won * d_fg on the box's rows, zero up to 2r columns out (what the row pass reads)
            for y in range(y0, y1):
                seed[y, max(0, ex0 - r) : min(w, ex1 + r)] = zero
                for x in range(x0, x1):
                    if won[b, y, x]:
                        seed[y, x] = df
            _blur_rows(seed, tmp, weights, y0, y1, ex0, ex1)
            _blur_columns(tmp, through, weights, ey0, ey1, ex0, ex1, y0, y1)
            gb = grad[b].ravel()
            for y in range(ey0, ey1):
                for x in range(ex0, ex1):
                    v = through[y, x]
                    if v != zero:
                        gb[index[b, y, x]] -= v
