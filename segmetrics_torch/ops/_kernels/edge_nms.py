"""Compiled edge non-maximum suppression (Dollar's structured-edge ``edgesNms`` rule, as pyEdgeEval applies it).

Behind :func:`segmetrics_torch.ops.edge_nms.edge_nms`, which documents the rule. Two entry points: the whole
computation of CPU maps (triangle smoothing, orientation slopes, suppression: :func:`nms_one` / :func:`nms_batch`),
and the suppression step alone (:func:`suppress_one` / :func:`suppress_batch`) for maps whose smoothing and slopes
were computed with tensor ops on another device. The smoothing adds its products in the order of
``scipy.signal.convolve2d`` (row pass: blocks of four products, then single ones; column pass: one at a time), the
same order as the op's tensor code, so both paths give identical bits.

Every array read is bounded whatever the values: interpolation positions are clamped to the image (a NaN position
reads as 0) and the integer corners are clamped again, so a 1-pixel-wide image or a non-finite slope cannot reach
outside the buffers; padding indices are reflected into the image for any image size.
"""

import math

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def bilinear(img, h, w, x, y):  # pragma: no cover - compiled
    # img[y, x] by bilinear interpolation, positions clamped to [0, w - 1.001] x [0, h - 1.001] as edgesNmsMex's
    # interp (the 0.001 keeps the right / bottom neighbour inside the image). NaN positions read as 0.
    if not x >= 0.0:
        x = 0.0
    elif x > w - 1.001:
        x = w - 1.001
    if not y >= 0.0:
        y = 0.0
    elif y > h - 1.001:
        y = h - 1.001
    x0 = min(max(int(x), 0), w - 1)
    y0 = min(max(int(y), 0), h - 1)
    x1 = min(x0 + 1, w - 1)
    y1 = min(y0 + 1, h - 1)
    dx0 = x - x0
    dy0 = y - y0
    dx1 = 1.0 - dx0
    dy1 = 1.0 - dy0
    return img[y0, x0] * dx1 * dy1 + img[y0, x1] * dx0 * dy1 + img[y1, x0] * dx1 * dy0 + img[y1, x1] * dx0 * dy0


@numba.njit(cache=True, nogil=True)
def suppress_one(edge, slope, out, radius, border, multiplier):  # pragma: no cover - compiled
    # One (H, W) map: out[y, x] = edge[y, x] unless the edge, times `multiplier`, is weaker than the map interpolated
    # at distance d = +-1..radius along the normal orientation atan(slope) mod pi; then the border ramp.
    h, w = edge.shape
    for y in range(h):  # (edgesNmsMex runs down the columns; every decision reads only `edge`, so order is free)
        for x in range(w):
            e = edge[y, x]
            out[y, x] = e
            if e == 0.0:
                continue
            e = e * multiplier
            o = math.atan(slope[y, x])
            if o < 0.0:
                o = o + math.pi  # numpy's mod(o, pi) for o in (-pi/2, 0)
            cos_o = math.cos(o)
            sin_o = math.sin(o)
            for d in range(-radius, radius + 1):
                if d != 0:
                    if e < bilinear(edge, h, w, x + d * cos_o, y + d * sin_o):
                        out[y, x] = 0.0
                        break
    # Suppress the less reliable estimates near the image border: a linear ramp over `border` pixels.
    s = min(border, w // 2, h // 2)
    for x in range(s):
        f = x / s
        for y in range(h):
            out[y, x] *= f
            out[y, w - 1 - x] *= f
    for y in range(s):
        f = y / s
        for x in range(w):
            out[y, x] *= f
            out[h - 1 - y, x] *= f


@numba.njit(cache=True, nogil=True)
def symmetric_index(j, n):  # pragma: no cover - compiled
    # index of position j of a length-n axis extended by mirror images (numpy's pad mode "symmetric"), any j
    k = (j if j >= 0 else -j - 1) % (2 * n)
    return 2 * n - 1 - k if k >= n else k


@numba.njit(cache=True, nogil=True)
def triangle_kernel(radius):  # pragma: no cover - compiled
    # convTri's 1-D filter: [1 2 1] / 4 for radius 1, the tent [1 .. r+1 .. 1] / (r + 1)^2 for an integer r > 1
    if radius <= 1:
        return np.array([0.25, 0.5, 0.25])
    n = 2 * radius + 1
    k = np.empty(n)
    for j in range(n):
        k[j] = (radius + 1 - abs(j - radius)) / (radius + 1) ** 2
    return k


@numba.njit(cache=True, nogil=True)
def triangle_filter(img, radius):  # pragma: no cover - compiled
    # convTri(img, radius) of one (H, W) float64 map with symmetric padding
    h, w = img.shape
    k = triangle_kernel(radius)
    n = k.shape[0]
    pad = n // 2
    cols = np.empty(w + 2 * pad, np.int64)
    for i in range(w + 2 * pad):
        cols[i] = symmetric_index(i - pad, w)
    rows = np.empty((h + 2 * pad, w))
    for yy in range(h + 2 * pad):
        src = img[symmetric_index(yy - pad, h)]
        for i in range(w):
            # tap j meets padded column i + n - 1 - j; products added four at a time, then singly
            total = 0.0
            j = 0
            while j + 4 <= n:
                block = k[j] * src[cols[i + n - 1 - j]] + k[j + 1] * src[cols[i + n - 2 - j]]
                block = block + k[j + 2] * src[cols[i + n - 3 - j]]
                block = block + k[j + 3] * src[cols[i + n - 4 - j]]
                total = total + block
                j += 4
            while j < n:
                total = total + k[j] * src[cols[i + n - 1 - j]]
                j += 1
            rows[yy, i] = total
    out = np.empty((h, w))
    for y in range(h):
        for x in range(w):
            total = 0.0
            for j in range(n):
                total = total + k[j] * rows[y + n - 1 - j, x]
            out[y, x] = total
    return out


@numba.njit(cache=True, nogil=True)
def gradient_x(a):  # pragma: no cover - compiled
    # numpy.gradient along the columns: central differences / 2 inside, one-sided at the ends, 0 for one column
    h, w = a.shape
    out = np.zeros((h, w))
    if w > 1:
        for y in range(h):
            out[y, 0] = a[y, 1] - a[y, 0]
            for x in range(1, w - 1):
                out[y, x] = (a[y, x + 1] - a[y, x - 1]) / 2.0
            out[y, w - 1] = a[y, w - 1] - a[y, w - 2]
    return out


@numba.njit(cache=True, nogil=True)
def gradient_y(a):  # pragma: no cover - compiled
    return gradient_x(a.T.copy()).T.copy()


@numba.njit(cache=True, nogil=True)
def orientation_slopes(edge):  # pragma: no cover - compiled
    # Oyy * sign(-Oxy) / Oxx of convTri(edge, 4), Oxx == 0 read as 1e-5
    smooth = triangle_filter(edge, np.int64(4))
    ox = gradient_x(smooth)
    oy = gradient_y(smooth)
    oxx = gradient_x(ox)
    oxy = gradient_x(oy)
    oyy = gradient_y(oy)
    h, w = edge.shape
    slope = np.empty((h, w))
    for y in range(h):
        for x in range(w):
            dxx = oxx[y, x]
            if dxx == 0.0:
                dxx = 1e-5
            v = -oxy[y, x]
            sign = 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)
            slope[y, x] = oyy[y, x] * sign / dxx
    return slope


@numba.njit(cache=True, nogil=True)
def nms_one(img, out, radius, border, multiplier):  # pragma: no cover - compiled
    # The whole NMS of one (H, W) float64 map into `out`
    edge = triangle_filter(img, np.int64(1))
    suppress_one(edge, orientation_slopes(edge), out, radius, border, multiplier)


@numba.njit(cache=True, nogil=True, parallel=True)
def nms_batch(maps, radius, border, multiplier):  # pragma: no cover - compiled
    # The whole NMS of every map of a (N, H, W) float64 stack, maps in parallel
    out = np.empty_like(maps)
    for i in numba.prange(maps.shape[0]):
        nms_one(maps[i], out[i], radius, border, multiplier)
    return out


@numba.njit(cache=True, nogil=True, parallel=True)
def suppress_batch(edge, slope, radius, border, multiplier):  # pragma: no cover - compiled
    # Every map of (N, H, W) float64 stacks; returns the suppressed (N, H, W) float64 stack.
    out = np.empty_like(edge)
    for i in numba.prange(edge.shape[0]):
        suppress_one(edge[i], slope[i], out[i], radius, border, multiplier)
    return out
