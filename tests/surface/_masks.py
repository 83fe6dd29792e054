"""Hypothesis strategies for mask pairs: random noise, blobs, thin lines, single voxels, border-touching objects."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from scipy import ndimage

KINDS = ("noise", "blob", "line", "voxel", "border")


def make_mask(rng: np.random.Generator, shape: tuple[int, ...], kind: str) -> np.ndarray:
    m = np.zeros(shape, bool)
    if kind == "noise":
        m = rng.random(shape) < rng.uniform(0.1, 0.6)
    elif kind == "blob":
        m = ndimage.gaussian_filter(rng.standard_normal(shape), 1.5) > 0.05
    elif kind == "line":  # one voxel thick along a random axis
        axis = int(rng.integers(len(shape)))
        idx = [int(rng.integers(s)) for s in shape]
        idx[axis] = slice(None)  # type: ignore[call-overload]
        m[tuple(idx)] = True
    elif kind == "voxel":
        m[tuple(int(rng.integers(s)) for s in shape)] = True
    elif kind == "border":  # a box touching the image border
        lo = [0] * len(shape)
        hi = [int(rng.integers(1, s + 1)) for s in shape]
        m[tuple(slice(a, b) for a, b in zip(lo, hi, strict=True))] = True
    if not m.any():
        m[tuple(s // 2 for s in shape)] = True
    return m


@st.composite
def mask_pairs(draw: st.DrawFn, ndim: int, max_side: int) -> tuple[np.ndarray, np.ndarray, tuple[float, ...]]:
    """(pred, gt, spacing): non-empty masks of one shape, isotropic or anisotropic spacing."""
    shape = tuple(draw(st.integers(2, max_side)) for _ in range(ndim))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    p = make_mask(rng, shape, draw(st.sampled_from(KINDS)))
    g = make_mask(rng, shape, draw(st.sampled_from(KINDS)))
    if draw(st.booleans()):
        spacing = (1.0,) * ndim
    else:
        spacing = tuple(draw(st.sampled_from([0.5, 0.7, 1.0, 1.3, 2.0, 3.0])) for _ in range(ndim))
    return p, g, spacing
