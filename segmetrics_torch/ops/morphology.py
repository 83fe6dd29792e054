"""Binary morphology of the boundary benchmarks: thinning, ``seg2bmap`` boundaries, disk dilation.

Thinning is the parallel two-subiteration algorithm of Guo & Hall (1989) as formulated by Lam, Lee & Suen (TPAMI
1992): the operation of ``skimage.morphology.thin`` and, on BSDS data, of MATLAB's ``bwmorph(bw, 'thin', Inf)``
(the BSDS ``Boundaries`` equal ``thin(seg2bmap(Segmentation))`` bit for bit on the sampled images). The lookup
tables are built here from the three conditions of the paper; the image border is zero-padded, as skimage's
``ndi.correlate(..., mode="constant")``.

Two backends give identical results: ``"numba"`` (compiled CPU kernel that visits only the remaining on pixels) and
``"torch"`` (the whole batch at once with shifted views and a table lookup: the CUDA path).
"""

from __future__ import annotations

import functools
import sys

import numpy as np
import torch
from torch import Tensor

from segmetrics_torch._checks import Backend, check_number_in, check_tensor
from segmetrics_torch.ops.backend import _numba_available, resolve
from segmetrics_torch.ops.distance import distance_transform_edt

__all__ = ["dilate_disk", "seg2bmap", "thin", "thinning_luts"]

# Neighbour k of the 8-bit neighbourhood code, counted counter-clockwise from East: (dy, dx).
NEIGHBOURS = ((0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1), (1, 0), (1, 1))


@functools.cache
def thinning_luts() -> tuple[np.ndarray, np.ndarray]:
    """Deletion tables of the two subiterations, indexed by the 8-neighbour code (bit k = neighbour k on).

    With x1..x8 the neighbours E, NE, N, NW, W, SW, S, SE (bits 0..7), a pixel is deleted in subiteration 1 iff
    G1, G2 and G3 hold, in subiteration 2 iff G1, G2 and G3' hold (Lam, Lee & Suen 1992, Sec. IV):

    * G1: the crossing number X_H = #{i in 1..4 : not x_{2i-1} and (x_{2i} or x_{2i+1})} equals 1;
    * G2: 2 <= min(n1, n2) <= 3, n1 = sum_i (x_{2i-1} or x_{2i}), n2 = sum_i (x_{2i} or x_{2i+1});
    * G3: (x2 or x3 or not x8) and x1 is false;  G3': (x6 or x7 or not x4) and x5 is false (indices mod 8).
    """
    lut1 = np.zeros(256, np.uint8)
    lut2 = np.zeros(256, np.uint8)
    for code in range(256):
        x = [bool(code >> i & 1) for i in range(8)]  # x[0] = x1 (East) ... x[7] = x8 (SE)

        def px(i: int, x: list[bool] = x) -> bool:  # 1-based, cyclic
            return x[(i - 1) % 8]

        crossing = sum(1 for i in (1, 3, 5, 7) if not px(i) and (px(i + 1) or px(i + 2)))
        n1 = sum(1 for i in (1, 3, 5, 7) if px(i) or px(i + 1))
        n2 = sum(1 for i in (2, 4, 6, 8) if px(i) or px(i + 1))
        g12 = crossing == 1 and 2 <= min(n1, n2) <= 3
        g3 = not ((px(2) or px(3) or not px(8)) and px(1))
        g3p = not ((px(6) or px(7) or not px(4)) and px(5))
        lut1[code] = g12 and g3
        lut2[code] = g12 and g3p
    lut1.setflags(write=False)
    lut2.setflags(write=False)
    return lut1, lut2


def resolve_backend(backend: Backend, device: torch.device) -> Backend:
    """Check ``backend``; ``"auto"`` -> what :func:`segmetrics_torch.ops.backend.resolve` says (``"numba"`` for CPU
    tensors when numba imports and the setting is not ``"tensor"``, ``"torch"`` otherwise)."""
    resolved = resolve(backend, device)
    if resolved == "numba" and not _numba_available():
        raise ImportError("backend='numba' needs numba; install it or use backend='torch'.")
    return resolved


def thin(mask: Tensor, *, backend: Backend = "auto") -> Tensor:
    """Thin binary maps to one-pixel-wide curves (``skimage.morphology.thin`` / ``bwmorph(bw, 'thin', Inf)``).

    Args:
        mask: bool tensor (..., H, W), any device; every (H, W) map is thinned independently.
        backend: ``"numba"`` (compiled CPU kernel; CUDA input is copied to the host and back), ``"torch"`` (tensor
            code on the input's device) or ``"auto"`` (numba on CPU, torch on CUDA). Results are identical.

    Returns:
        bool tensor of the same shape and device.

    Example:
        >>> square = torch.zeros(5, 5, dtype=torch.bool)
        >>> square[1:4, 1:4] = True
        >>> thin(square).nonzero().tolist()
        [[2, 2]]
    """
    check_tensor(mask, "mask")
    if mask.dtype != torch.bool:
        raise TypeError(f"Expected `mask` to be a bool tensor, but got dtype {mask.dtype}.")
    if mask.ndim < 2:
        raise ValueError(f"Expected `mask` of shape (..., H, W), but got shape {tuple(mask.shape)}.")
    backend = resolve_backend(backend, mask.device)
    if mask.numel() == 0:
        return mask.clone()
    flat = mask.reshape(-1, *mask.shape[-2:])
    out = _thin_numba(flat) if backend == "numba" else _thin_torch(flat)
    return out.reshape(mask.shape)


def _thin_numba(flat: Tensor) -> Tensor:
    from ._kernels import thinning as kernels

    lut1, lut2 = thinning_luts()
    stack = np.ascontiguousarray(flat.cpu().numpy().astype(np.uint8))
    kernels.thin_batch(stack, lut1, lut2)
    return torch.from_numpy(stack.view(np.bool_)).to(flat.device)


def _thin_torch(flat: Tensor) -> Tensor:
    """Thinning of a (N, H, W) bool stack with tensor ops; converged maps simply stop changing."""
    lut1, lut2 = (torch.from_numpy(lut.astype(np.bool_)).to(flat.device) for lut in thinning_luts())
    h, w = flat.shape[-2:]
    img = torch.nn.functional.pad(flat.to(torch.uint8), (1, 1, 1, 1))
    inner = img[:, 1 : h + 1, 1 : w + 1]
    count = int(inner.sum())
    while True:
        for lut in (lut1, lut2):
            code = torch.zeros(inner.shape, dtype=torch.int64, device=flat.device)
            for bit, (dy, dx) in enumerate(NEIGHBOURS):
                code |= img[:, 1 + dy : h + 1 + dy, 1 + dx : w + 1 + dx].to(torch.int64) << bit
            delete = lut[code] & inner.bool()
            inner.masked_fill_(delete, 0)
        new_count = int(inner.sum())  # one host sync per iteration: the stopping rule of the algorithm
        if new_count == count:
            return inner.bool().clone()
        count = new_count


def seg2bmap(labels: Tensor) -> Tensor:
    """One-pixel-wide boundaries of label maps, as ``seg2bmap.m`` (Martin, BSDS; also in DAVIS and SEISM).

    A pixel is a boundary pixel iff its label differs from that of its East, South or South-East neighbour; in the
    last row only the East neighbour counts, in the last column only the South one, and the bottom-right pixel is
    never a boundary. Boundaries are thus offset by half a pixel towards the origin. The same map is what BSR's
    ``seg2bdry(seg, 'imageSize')`` returns (a pixel is on iff its 2x2 block to the lower right is not constant).

    Args:
        labels: integer or bool tensor (..., H, W); any labels (only equality matters).

    Returns:
        bool tensor of the same shape and device.
    """
    check_tensor(labels, "labels")
    if labels.dtype.is_floating_point or labels.dtype.is_complex:
        raise TypeError(f"Expected `labels` to be an integer or bool tensor, but got dtype {labels.dtype}.")
    if labels.ndim < 2 or labels.shape[-1] == 0 or labels.shape[-2] == 0:
        raise ValueError(f"Expected `labels` of shape (..., H, W) with H, W >= 1, but got shape {tuple(labels.shape)}.")
    out = torch.zeros(labels.shape, dtype=torch.bool, device=labels.device)
    c = labels[..., :-1, :-1]
    out[..., :-1, :-1] = (c != labels[..., :-1, 1:]) | (c != labels[..., 1:, :-1]) | (c != labels[..., 1:, 1:])
    out[..., -1, :-1] = labels[..., -1, :-1] != labels[..., -1, 1:]
    out[..., :-1, -1] = labels[..., :-1, -1] != labels[..., 1:, -1]
    return out


def dilate_disk(mask: Tensor, radius: float, *, backend: Backend = "auto") -> Tensor:
    """Binary dilation of (B, H, W) maps by the disk ``{(u, v): u^2 + v^2 <= radius^2}`` (zero outside the image).

    Computed exactly from the Euclidean distance transform (a pixel is on iff its nearest on pixel lies within
    ``radius``), so the cost does not grow with the radius; equal to ``imdilate(mask, strel(disk))`` with DAVIS'
    ``disk = X.^2 + Y.^2 <= r^2``. Maps without any on pixel stay empty.
    """
    # a negative or NaN radius gave an all-False mask (no disk has such a radius); an infinite one would turn on
    # the maps without any on pixel (their distance is inf)
    check_number_in(radius, "radius", 0, sys.float_info.max, "a finite number >= 0")
    dist, _ = distance_transform_edt(mask, backend=backend)
    return dist <= radius
