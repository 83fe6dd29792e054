"""Compiled CPU kernels of the issue-15 foreground measures (numba; imported only for CPU tensors).

``binary_half_counts``: per image, the confusion counts of the binary map ``p > 0.5`` ("argmax", PySODMetrics'
``FmeasureV2`` binary mode) where ``p`` is the prepared map -- ``raw / scale`` then, with ``normalize`` and a
non-constant map, ``(p - lo) / (hi - lo)`` in float64, the operations of ``_prepare.prepare_maps`` in the same
order (so the comparison with 0.5 is decided exactly as the reference decides it). One fused pass per image,
images in parallel.
"""

import numba
import numpy as np

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}


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
