"""Compiled suppression step of edge non-maximum suppression (Dollar's structured-edge ``edgesNms`` rule).

Behind :func:`segmetrics_torch.ops.edge_nms.edge_nms`, which smooths the maps, computes the orientation slopes and
documents the rule. Every array read is bounded whatever the values: interpolation positions are clamped to the image
(a NaN position reads as 0) and the integer corners are clamped again, so a 1-pixel-wide image or a non-finite slope
cannot reach outside the buffers.
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


@numba.njit(cache=True, nogil=True, parallel=True)
def suppress_batch(edge, slope, radius, border, multiplier):  # pragma: no cover - compiled
    # Every map of (N, H, W) float64 stacks; returns the suppressed (N, H, W) float64 stack.
    out = np.empty_like(edge)
    for i in numba.prange(edge.shape[0]):
        suppress_one(edge[i], slope[i], out[i], radius, border, multiplier)
    return out
