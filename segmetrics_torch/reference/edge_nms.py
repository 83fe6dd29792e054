"""Plain numpy oracle of edge non-maximum suppression (Dollar's ``edgesNms`` as pyEdgeEval's ``fast_nms``).

Written for readability, one (H, W) float64 map at a time, with per-pixel loops for the suppression (slow: use it on
small maps). The steps and constants are those documented in :mod:`segmetrics_torch.ops.edge_nms`:

1. ``E = convTri(E, 1)``; 2. ``S = convTri(E, 4)``; 3. second derivatives of ``S`` with ``numpy.gradient``;
4. orientation ``atan(Oyy * sign(-Oxy) / Oxx) mod pi`` (``Oxx == 0`` read as 1e-5); 5. a pixel is zeroed when
``m * E`` is weaker than ``E`` bilinearly interpolated at ``d = +-1..r`` along the orientation; 6. a linear ramp over
``s`` pixels at the image border.

``convTri`` is written as the two 1-D passes of ``scipy.signal.convolve2d`` (symmetric padding, then the row pass
with products grouped four at a time, then the column pass one product at a time), so that floating-point sums run
in the same order and the result is bit-identical, not merely close.

Depends on numpy only.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["conv_tri", "edge_nms", "edge_orientation"]


def _tri_kernel(r: int) -> list[float]:
    if r <= 1:
        p = 12 / r / (r + 2) - 2
        return [1 / (2 + p), p / (2 + p), 1 / (2 + p)]
    return [v / (r + 1) ** 2 for v in [*range(1, r + 1), r + 1, *range(r, 0, -1)]]


def _convolve_valid_1d(line: np.ndarray, kernel: list[float], group: int) -> np.ndarray:
    # Full-overlap convolution of a 1-D array; the products of one output are added in groups of `group`
    # (sum of the group first, then into the running total), as scipy's multiply-add loop does.
    n = len(kernel)
    out = np.zeros(len(line) - n + 1)
    for i in range(len(out)):
        products = [kernel[j] * line[i + n - 1 - j] for j in range(n)]
        total = 0.0
        j = 0
        while j + group <= n:
            chunk = products[j]
            for extra in products[j + 1 : j + group]:
                chunk = chunk + extra
            total = total + chunk
            j += group
        for extra in products[j:]:
            total = total + extra
        out[i] = total
    return out


def conv_tri(image: np.ndarray, r: int) -> np.ndarray:
    """Dollar's ``convTri(image, r)`` (triangle filter, symmetric padding) of a 2-D float64 array."""
    if r == 0:
        return image.copy()
    kernel = _tri_kernel(r)
    pad = max(1, int(r))
    padded = np.pad(image, pad, mode="symmetric")
    rows = np.stack([_convolve_valid_1d(row, kernel, 4) for row in padded])  # along W
    cols = np.stack([_convolve_valid_1d(col, kernel, 1) for col in rows.T], axis=1)  # along H, one at a time
    return cols


def _gradient(a: np.ndarray, axis: int) -> np.ndarray:
    # numpy.gradient, which needs two samples; one sample has no slope (0)
    return np.gradient(a, axis=axis) if a.shape[axis] > 1 else np.zeros_like(a)


def edge_orientation(edge: np.ndarray) -> np.ndarray:
    """Normal orientation in [0, pi) of every pixel, from the second derivatives of ``convTri(edge, 4)``."""
    smooth = conv_tri(edge, 4)
    ox, oy = _gradient(smooth, 1), _gradient(smooth, 0)
    oxx = _gradient(ox, 1)
    oxy, oyy = _gradient(oy, 1), _gradient(oy, 0)
    h, w = edge.shape
    ori = np.zeros((h, w))
    for y in range(h):
        for x in range(w):
            dxx = oxx[y, x] if oxx[y, x] != 0 else 1e-5
            slope = oyy[y, x] * np.sign(-oxy[y, x]) / dxx
            ori[y, x] = math.atan(slope) % math.pi
    return ori


def _interp(img: np.ndarray, x: float, y: float) -> float:
    # bilinear interpolation with the position clamped to [0, w - 1.001] x [0, h - 1.001] (edgesNmsMex's interp);
    # the right / bottom neighbour is clamped into the image for 1-pixel-wide maps
    h, w = img.shape
    x = 0.0 if x < 0 else min(x, w - 1.001)
    y = 0.0 if y < 0 else min(y, h - 1.001)
    x0, y0 = max(int(x), 0), max(int(y), 0)
    x1, y1 = min(x0 + 1, w - 1), min(y0 + 1, h - 1)
    dx0, dy0 = x - x0, y - y0
    dx1, dy1 = 1 - dx0, 1 - dy0
    return img[y0, x0] * dx1 * dy1 + img[y0, x1] * dx0 * dy1 + img[y1, x0] * dx1 * dy0 + img[y1, x1] * dx0 * dy0


def edge_nms(image: np.ndarray, r: int = 1, s: int = 5, m: float = 1.01) -> np.ndarray:
    """Non-maximum suppression of one (H, W) soft edge map in [0, 1] (float64; uint8 is read / 255)."""
    image = image / 255.0 if image.dtype == np.uint8 else image.astype(np.float64)
    m = float(np.float32(m))  # edgesNmsMex and pyEdgeEval take the multiplier as a C float
    edge = conv_tri(image, 1)
    ori = edge_orientation(edge)
    h, w = edge.shape
    out = edge.copy()
    for y in range(h):
        for x in range(w):
            e = edge[y, x]
            if e == 0:
                continue
            cos_o, sin_o = math.cos(ori[y, x]), math.sin(ori[y, x])
            for d in range(-r, r + 1):
                if d != 0 and e * m < _interp(edge, x + d * cos_o, y + d * sin_o):
                    out[y, x] = 0.0
                    break
    s = min(s, w // 2, h // 2)
    for x in range(s):
        out[:, x] *= x / s
        out[:, w - 1 - x] *= x / s
    for y in range(s):
        out[y, :] *= y / s
        out[h - 1 - y, :] *= y / s
    return out
