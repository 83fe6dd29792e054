"""Non-maximum suppression of soft edge maps: Dollar's structured-edge ``edgesNms``, as pyEdgeEval applies it.

Detector outputs (HED, RCF, BDCN, PiDiNet, ...) are blurred ridges several pixels wide; the BSDS evaluation protocol
of these papers thins them first with the NMS of the Structured Edge toolbox (Dollar & Zitnick, "Fast Edge Detection
Using Structured Forests", TPAMI 2015; ``edgesNmsMex``, called from the detectors' ``nms_process.m`` and from
pyEdgeEval's ``fast_nms`` / ``apply_nms=True``). Per (H, W) map ``E`` (float64)::

    E  = convTri(E, 1)                                  # triangle filter [1 2 1] / 4, rows then columns
    S  = convTri(E, 4)                                  # [1 2 3 4 5 4 3 2 1] / 25
    Ox, Oy = gradient(S);  Oxx = d/dx Ox;  Oxy, Oyy = d/dx Oy, d/dy Oy   # numpy.gradient, 1-sided at the border
    Oxx[Oxx == 0] = 1e-5
    O  = atan(Oyy * sign(-Oxy) / Oxx) mod pi            # the normal orientation of the edge
    out(y, x) = 0  if  m * E(y, x) < E(y + d sin O, x + d cos O) for some d in +-1..r  (bilinear, clamped)
                E(y, x) otherwise
    out *= min(x, w - 1 - x, s) / s;  out *= min(y, h - 1 - y, s) / s   # border ramps, s <= W // 2, H // 2

with ``r = 1``, ``s = 5``, ``m = 1.01`` (``edgesNmsMex(E, O, 1, 5, 1.01)``). ``convTri`` pads symmetrically (the
edge pixel repeated); its sums run in the order of scipy 1.17's ``signal.convolve2d`` (row pass in blocks of four
products from the right, column pass one product at a time), so the smoothed maps equal pyEdgeEval's bit for bit.

Two paths, identical to the bit: on CPU one compiled kernel does everything (``backend="numba"``); on another device
the smoothing and orientation run as tensor ops there (``backend="torch"``: the same sums in the same order) and the
suppression loop, a data-dependent bilinear look-up per pixel, runs in the compiled kernel on the host.
``m`` is rounded to float32 first, as both ``edgesNmsMex`` and pyEdgeEval's Cython wrapper (``float m``) do: the
multiplier actually applied is 1.00999999046...

Reference behaviour: pyEdgeEval 0.2.8 ``fast_nms(img, r=1, s=5, m=1.01)`` on a float64 (or uint8 / 255) map, which
differs from the MATLAB toolbox in two documented ways this op follows: pyEdgeEval computes in float64 (MATLAB:
single) and replaces ``Oxx == 0`` by 1e-5 instead of adding 1e-5 everywhere. A float32 map is read as float64
here (the package's rule for soft maps), whereas pyEdgeEval smooths a float32 map in float32: compare with its
output on ``x.astype(np.float64)``. The only freedom left is the
transcendental functions: ``atan`` / ``cos`` / ``sin`` come from the C math library (numba), while numpy's ``arctan``
may use a vectorised implementation that differs in the last bit for ~0.1% of arguments (AVX-512 builds); a decision
``m * E < E_interp`` flips only when both sides agree to ~1e-15, so outputs are identical except at such exact ties.

Edge cases: maps of one row or one column (where ``numpy.gradient`` and hence pyEdgeEval fail) use a zero derivative
along that axis and interpolate within the image; images smaller than the filter radius are padded symmetrically as
often as needed (numpy's ``symmetric`` mode); a constant map gives ``m * E > E`` everywhere, so only the border ramp
changes it; zero pixels stay zero. Values stay in [0, 1].
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .._checks import (
    BACKENDS,
    Backend,
    check_choice,
    check_image_stack,
    check_probability_map,
    check_tensor,
)
from .backend import _numba_available, resolve
from .unit_maps import as_unit_map

__all__ = ["edge_nms", "edge_slopes", "triangle_filter"]


def _check_int(value: object, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"Expected argument `{name}` to be an int >= {low}, but got {value!r}.")
    return int(value)


def _symmetric_index(n: int, pad: int, device: torch.device) -> Tensor:
    """Indices of numpy's ``pad(..., mode="symmetric")`` of a length-``n`` axis by ``pad`` on both sides."""
    j = torch.arange(-pad, n + pad, device=device)
    k = torch.where(j >= 0, j, -j - 1) % (2 * n)
    return torch.where(k >= n, 2 * n - 1 - k, k)


def triangle_filter(x: Tensor, radius: int) -> Tensor:
    """Dollar's ``convTri(x, radius)`` of a (B, H, W) float64 stack (symmetric padding), summed as scipy's
    ``convolve2d`` sums, so that the result equals pyEdgeEval's ``conv_tri`` bit for bit.

    ``radius <= 1`` is the 3-tap filter ``[1, p, 1] / (2 + p)`` with ``p = 12 / r / (r + 2) - 2`` (r = 1: [1 2 1]/4);
    a larger integer radius is the tent ``[1 .. r+1 .. 1] / (r + 1)^2``; ``radius = 0`` returns ``x``.

    Example:
        >>> x = torch.zeros(1, 3, 3, dtype=torch.float64); x[0, 1, 1] = 1.0
        >>> triangle_filter(x, 1)[0].tolist()
        [[0.0625, 0.125, 0.0625], [0.125, 0.25, 0.125], [0.0625, 0.125, 0.0625]]
    """
    if radius == 0:
        return x
    if radius <= 1:
        p = 12 / radius / (radius + 2) - 2
        kernel = [1 / (2 + p), p / (2 + p), 1 / (2 + p)]
        pad = 1
    else:
        pad = int(radius)
        kernel = [v / (pad + 1) ** 2 for v in [*range(1, pad + 1), pad + 1, *range(pad, 0, -1)]]
    n = len(kernel)
    height, width = x.shape[-2:]
    padded = x.index_select(-1, _symmetric_index(width, pad, x.device))
    padded = padded.index_select(-2, _symmetric_index(height, pad, x.device))
    # Row pass (convolution: kernel tap j meets column i + n - 1 - j), products added four at a time, as
    # ``dsum += p0 + p1 + p2 + p3`` of scipy's multiply-add loop, then the remaining ones singly.
    prods = [padded[..., n - 1 - j : n - 1 - j + width] * kernel[j] for j in range(n)]
    rows = prods[0] + prods[1] + prods[2] + prods[3] if n >= 4 else prods[0]
    j = 4 if n >= 4 else 1
    while j + 4 <= n:
        rows = rows + (prods[j] + prods[j + 1] + prods[j + 2] + prods[j + 3])
        j += 4
    for tap in prods[j:]:
        rows = rows + tap
    # Column pass: one tap per kernel row, added singly (rows n - 1 - j for tap j).
    out = rows[..., n - 1 : n - 1 + height, :] * kernel[0]
    for j in range(1, n):
        out = out + rows[..., n - 1 - j : n - 1 - j + height, :] * kernel[j]
    return out


def _gradient(x: Tensor, dim: int) -> Tensor:
    """``numpy.gradient`` along ``dim`` (central differences / 2 inside, one-sided at the ends; 0 for length 1)."""
    n = x.shape[dim]
    if n == 1:
        return torch.zeros_like(x)
    out = torch.empty_like(x)
    if n > 2:
        out.narrow(dim, 1, n - 2).copy_((x.narrow(dim, 2, n - 2) - x.narrow(dim, 0, n - 2)) / 2.0)
    out.narrow(dim, 0, 1).copy_(x.narrow(dim, 1, 1) - x.narrow(dim, 0, 1))
    out.narrow(dim, n - 1, 1).copy_(x.narrow(dim, n - 1, 1) - x.narrow(dim, n - 2, 1))
    return out


def edge_slopes(edge: Tensor) -> Tensor:
    """``Oyy * sign(-Oxy) / Oxx`` of ``convTri(edge, 4)`` (``Oxx == 0`` read as 1e-5): the tangent of the edge
    normal's orientation before ``atan(.) mod pi``; (B, H, W) float64 in, same out, on the input's device."""
    smooth = triangle_filter(edge, 4)
    ox, oy = _gradient(smooth, -1), _gradient(smooth, -2)
    oxx = _gradient(ox, -1)
    oxy, oyy = _gradient(oy, -1), _gradient(oy, -2)
    oxx = torch.where(oxx == 0, torch.full_like(oxx, 1e-5), oxx)
    return oyy * torch.sign(-oxy) / oxx


def edge_nms(
    edges: Tensor,
    *,
    radius: int = 1,
    border: int = 5,
    multiplier: float = 1.01,
    backend: Backend = "auto",
    validate_args: bool = True,
) -> Tensor:
    """Non-maximum suppression of a batch of soft edge maps (``edgesNms`` / pyEdgeEval ``fast_nms``).

    Args:
        edges: (B, H, W) or (B, 1, H, W) soft edge maps: floating in [0, 1] or uint8 read as ``value / 255``
            (float64, as ``img / 255.0``); any device.
        radius: suppression radius ``r`` (pixels compared along the normal: d = +-1..r); default 1.
        border: width ``s`` of the border ramp (capped at W // 2 and H // 2; 0 switches it off); default 5.
        multiplier: ``m``, a pixel survives unless ``m * E`` is weaker than a neighbour along the normal; rounded to
            float32 first as the reference implementations do; default 1.01.
        backend: ``"numba"``: the whole computation in one compiled CPU kernel (maps of a batch in parallel; CUDA
            input is copied to the host and back); ``"torch"``: smoothing and orientation with tensor ops on the
            input's device, then the compiled suppression step on the host; ``"auto"``: numba for CPU input, torch
            otherwise (:func:`segmetrics_torch.ops.backend.resolve`). Both sum in the same order: results are
            identical.
        validate_args: check the values (finite, in [0, 1]); synchronises a CUDA device.

    Returns:
        (B, H, W) float64 maps in [0, 1] on the input's device: the ``convTri(E, 1)``-smoothed map where it is a
        local maximum across the edge, 0 elsewhere, ramped down over ``border`` pixels at the image border.

    Example:
        >>> ridge = torch.zeros(1, 12, 12, dtype=torch.float64)
        >>> ridge[0, :, 5], ridge[0, :, 6], ridge[0, :, 7] = 0.5, 1.0, 0.5
        >>> out = edge_nms(ridge)
        >>> (out[0, 6] > 0).nonzero().flatten().tolist()  # one pixel wide: the ridge's crest survives
        [6]
        >>> round(float(out[0, 6, 6]), 4)  # convTri(E, 1) at the crest: (0.5 + 2 * 1 + 0.5) / 4
        0.75
    """
    edges = check_image_stack(check_tensor(edges, "edges"), "edges")
    radius = _check_int(radius, "radius", 0)
    border = _check_int(border, "border", 0)
    if isinstance(multiplier, bool) or not isinstance(multiplier, (int, float)) or not 0 < multiplier < np.inf:
        raise ValueError(f"Expected argument `multiplier` to be a finite positive number, but got {multiplier!r}.")
    if not isinstance(validate_args, bool):
        raise TypeError(f"Expected argument `validate_args` to be a bool, but got {validate_args!r}.")
    check_choice(backend, "backend", BACKENDS)
    if not _numba_available():
        raise ImportError("edge_nms needs numba for its suppression kernel; install numba.")
    backend = resolve(backend, edges.device)
    m = float(np.float32(multiplier))
    from ._kernels import edge_nms as kernels

    if backend == "numba":
        if edges.dtype == torch.uint8:  # as_unit_map's value / 255 (IEEE division, as numpy's), on the host copy
            maps_np = edges.cpu().numpy() / 255.0
        else:
            maps_np = np.ascontiguousarray(as_unit_map(edges, "edges", validate_args=False).cpu().numpy())
        if validate_args and edges.dtype != torch.uint8:
            # the value check of as_unit_map, on the host copy: numpy's single-threaded reductions (torch's
            # parallel ones wait on waking worker threads, 30x their cost on a busy machine); same messages
            lo, hi = float(maps_np.min()), float(maps_np.max())
            if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo and hi <= 1):
                check_probability_map(torch.tensor([lo, hi], dtype=torch.float64), "edges")
        if maps_np.shape[0] == 1:  # no thread pool for one map (its idle spinning would slow the caller's next ops)
            out = np.empty_like(maps_np)
            kernels.nms_one(maps_np[0], out[0], radius, border, m)
        else:
            out = kernels.nms_batch(maps_np, radius, border, m)
        return torch.from_numpy(out).to(edges.device)
    edge = triangle_filter(as_unit_map(edges, "edges", validate_args), 1)
    slope = edge_slopes(edge)
    edge_np = np.ascontiguousarray(edge.cpu().numpy())
    slope_np = np.ascontiguousarray(slope.cpu().numpy())
    if edge_np.shape[0] == 1:
        out = np.empty_like(edge_np)
        kernels.suppress_one(edge_np[0], slope_np[0], out[0], radius, border, m)
    else:
        out = kernels.suppress_batch(edge_np, slope_np, radius, border, m)
    return torch.from_numpy(out).to(edges.device)
