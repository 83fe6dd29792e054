"""MATLAB-compatible Gaussian kernel and zero-padded 'same' filtering; OpenCV ``filter2D`` on a window by FFT.

Convention: ``matlab_gaussian_kernel(7, 5)`` equals MATLAB ``fspecial('gaussian', 7, 5)``: ``h = exp(-(x^2+y^2) /
(2 sigma^2))`` on the integer grid centred at 0, entries below ``eps * max(h)`` set to zero, normalised to sum 1.
:func:`filter2d_zero` equals MATLAB ``imfilter(X, K)`` (zero padding, output the size of ``X``, correlation) and
``scipy.ndimage.convolve(X, K, mode="constant", cval=0)`` for symmetric kernels. kornia's ``gaussian_blur2d`` uses a
*reflect* border by default, which changes the weighted F-measure by up to 0.4 at image borders; this module is the
zero-border filter the weighted F-measure needs.

The Gaussian is separable, so the 2-D filter runs as a row pass and a column pass of shifted multiply-adds: in float64
this equals the 2-D correlation with the outer-product kernel to ~1e-16, and on CPU it is several times faster than
``conv2d`` in float64.

:func:`filter2d_reflect_window` is OpenCV's ``filter2D(x, -1, kernel)`` (correlation, anchor at the kernel's centre,
``BORDER_REFLECT_101``) for any dense, non-separable kernel, evaluated on a rectangle of the image only (e.g. the box
of a ground truth): the rectangle and a border of half the kernel go through one real FFT and back, so the cost
follows the rectangle's area, not the image's or the kernel's. :func:`filter2d_reflect_gap` is what keeps that
filter from being self-adjoint, ``<x, A y> - <A x, y>``, computed from the image's border band only.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor

from .._checks import ImageBatch, check_choice, check_tensor
from .backend import get_backend

__all__ = [
    "filter2d_reflect_gap",
    "filter2d_reflect_window",
    "filter2d_zero",
    "gaussian_blur_zero",
    "matlab_gaussian_kernel",
    "matlab_gaussian_kernel1d",
    "reflect101_index",
]


def matlab_gaussian_kernel(
    size: int = 7, sigma: float = 5.0, *, dtype: torch.dtype = torch.float64, device: torch.device | str | None = None
) -> Tensor:
    """MATLAB ``fspecial('gaussian', size, sigma)`` as a (size, size) tensor.

    Example:
        >>> k = matlab_gaussian_kernel(7, 5.0)
        >>> round(float(k[3, 3]), 12), round(float(k.sum()), 12)
        (0.023835778808, 1.0)
    """
    half = (size - 1) / 2
    axis = torch.arange(size, dtype=torch.float64, device=device) - half
    h = torch.exp(-(axis[:, None] ** 2 + axis[None, :] ** 2) / (2 * sigma * sigma))
    h = torch.where(h < torch.finfo(torch.float64).eps * h.max(), torch.zeros_like(h), h)
    return (h / h.sum()).to(dtype)


def matlab_gaussian_kernel1d(
    size: int = 7, sigma: float = 5.0, *, dtype: torch.dtype = torch.float64, device: torch.device | str | None = None
) -> Tensor:
    """The 1-D factor ``g`` with ``outer(g, g) == fspecial('gaussian', size, sigma)`` (to rounding).

    Valid while no entry of the 2-D kernel falls under MATLAB's ``eps * max`` cut-off, i.e. for
    ``(size - 1)^2 / (4 sigma^2) <= 52 ln 2``, which covers every kernel the package uses.
    """
    half = (size - 1) / 2
    if 2 * half * half / (2 * sigma * sigma) > 52 * math.log(2):  # corner entry under eps * max
        raise ValueError(f"Expected a {size}x{size} Gaussian kernel without zeroed entries, but got sigma={sigma}.")
    axis = torch.arange(size, dtype=torch.float64, device=device) - half
    g = torch.exp(-(axis**2) / (2 * sigma * sigma))
    return (g / g.sum()).to(dtype)


def filter2d_zero(x: Tensor, row_kernel: Tensor, col_kernel: Tensor | None = None) -> Tensor:
    """Separable 'same' correlation with zero padding of a (B, H, W) stack.

    Args:
        x: (B, H, W) tensor.
        row_kernel: (k,) weights applied along W (odd length).
        col_kernel: (k,) weights applied along H; defaults to ``row_kernel``.

    Returns:
        (B, H, W) tensor, ``sum_{i,j} col[i] row[j] x[y + i - k//2, x + j - k//2]`` with zeros outside the image.
    """
    col_kernel = row_kernel if col_kernel is None else col_kernel
    kr, kc = row_kernel.numel(), col_kernel.numel()
    if kr % 2 == 0 or kc % 2 == 0:
        raise ValueError(f"Expected odd kernel lengths, but got {kr} and {kc}.")
    return _correlate_zero(_correlate_zero(x, row_kernel, -1), col_kernel, -2)


@functools.cache
def _host_gaussian_weights(size: int, sigma: float) -> tuple[float, ...]:
    """:func:`matlab_gaussian_kernel1d`'s float64 weights as Python floats, made once on the host."""
    return tuple(matlab_gaussian_kernel1d(size, sigma).tolist())


def _correlate_zero(x: Tensor, kernel: Tensor | tuple[float, ...], dim: int) -> Tensor:
    """'same' correlation of ``x`` with the odd 1-D ``kernel`` along ``dim``, zeros outside.

    Tap by tap, each product added in place to the part of the output it reaches (no padded copy): the same products
    and the same order of additions as summing zero-padded shifted copies (a product with the zero border adds an
    exact 0), so the result is bitwise that of the padded form, at a third of its memory traffic. Weights given as
    Python floats (the losses): each tap is one multiply-add pass (``add_(..., alpha=k)``, which may round once
    instead of twice: within an ulp of the tensor form, half its passes).
    """
    k = len(kernel) if isinstance(kernel, tuple) else kernel.numel()
    r = k // 2
    n = x.shape[dim]
    if isinstance(kernel, tuple):
        out = torch.mul(x, kernel[r])  # the centre tap covers every pixel: no zero fill
        for j in range(k):
            shift = j - r  # out[i] += kernel[j] * x[i + shift]
            lo, hi = max(0, -shift), min(n, n - shift)
            if shift and lo < hi:
                out.narrow(dim, lo, hi - lo).add_(x.narrow(dim, lo + shift, hi - lo), alpha=kernel[j])
        return out
    out = torch.empty_like(x)
    scratch = torch.empty_like(x)
    for j in range(k):
        shift = j - r
        lo, hi = max(0, -shift), min(n, n - shift)
        if j == 0:  # the first tap (shift -r) is written, not added (0 + a == a); the r pixels it misses are 0
            out.narrow(dim, 0, min(lo, n)).zero_()
        if lo >= hi:
            continue
        src = x.narrow(dim, lo + shift, hi - lo)
        if j == 0:
            torch.mul(src, kernel[j], out=out.narrow(dim, lo, hi - lo))
        else:
            part = scratch.narrow(dim, lo, hi - lo)
            torch.mul(src, kernel[j], out=part)
            out.narrow(dim, lo, hi - lo).add_(part)
    return out


def gaussian_blur_zero(x: Tensor, size: int = 7, sigma: float = 5.0, *, fused: bool = False) -> Tensor:
    """MATLAB ``imfilter(x, fspecial('gaussian', size, sigma))`` on a (B, H, W) stack (zero border).

    ``fused``: one multiply-add pass per tap (within an ulp of the default's two roundings per tap; the losses use
    it). The kernel's weights are computed on the host (``fused``) or on ``x``'s device: no synchronisation either way.
    """
    if fused:
        weights = _host_gaussian_weights(size, sigma)
        return _correlate_zero(_correlate_zero(x, weights, -1), weights, -2)
    g = matlab_gaussian_kernel1d(size, sigma, dtype=x.dtype, device=x.device)
    return filter2d_zero(x, g)


def reflect101_index(length: int, start: int, stop: int) -> np.ndarray:
    """Source index of positions ``start .. stop - 1`` of an axis of ``length`` pixels under OpenCV's
    ``BORDER_REFLECT_101`` (``gfedcb|abcdefgh|gfedcba``, reflected again as often as needed; length 1 gives 0).

    Example:
        >>> reflect101_index(4, -3, 7).tolist()
        [3, 2, 1, 0, 1, 2, 3, 2, 1, 0]
    """
    if length < 1:
        raise ValueError(f"Expected an axis of at least one pixel, but got length {length}.")
    z = np.arange(start, stop, dtype=np.int64)
    if length == 1:
        return np.zeros_like(z)
    while True:
        low, high = z < 0, z >= length
        if not (low.any() or high.any()):
            return z
        z = np.where(low, -z, np.where(high, 2 * length - 2 - z, z))


def _region(x: Any, rows: np.ndarray, cols: np.ndarray) -> Any:  # a numpy array or a tensor, as x
    """``x[refl(rows)][:, refl(cols)]`` of a numpy array or tensor (a view where the window stays inside)."""
    h, w = x.shape
    if rows[0] >= 0 and rows[-1] < h and cols[0] >= 0 and cols[-1] < w:
        return x[int(rows[0]) : int(rows[-1]) + 1, int(cols[0]) : int(cols[-1]) + 1]
    ri, ci = reflect101_index(h, int(rows[0]), int(rows[-1]) + 1), reflect101_index(w, int(cols[0]), int(cols[-1]) + 1)
    if isinstance(x, np.ndarray):
        return x[np.ix_(ri, ci)]
    return x.index_select(0, torch.from_numpy(ri).to(x.device)).index_select(1, torch.from_numpy(ci).to(x.device))


def filter2d_reflect_window(
    maps: ImageBatch,
    kernel: Tensor,
    rows: tuple[int, int],
    cols: tuple[int, int],
    *,
    backend: Literal["auto", "scipy", "torch"] = "auto",
) -> Tensor:
    """OpenCV ``filter2D(x, -1, kernel)`` of each map, evaluated on the window ``[rows[0], rows[1]) x [cols[0],
    cols[1])`` only.

    ``out[c, y, x] = sum_{a, b} kernel[a, b] * map_c[refl(r0 + y + a - kh // 2), refl(c0 + x + b - kw // 2)]`` with
    ``refl`` of :func:`reflect101_index` (correlation, the kernel's centre as anchor, ``BORDER_REFLECT_101``: OpenCV's
    defaults). Computed by one real FFT of the window grown by half the kernel on each side (reflected where it
    leaves the image) and one inverse, in the kernel's dtype: in float64 it equals the direct sum to ~1e-15 (OpenCV
    itself switches to a DFT for kernels of this size). ``backend="auto"``: CPU maps go through ``scipy.fft`` (one
    thread, no torch element-wise passes, which stall on a busy machine), other devices, and CPU maps under the
    backend setting ``"tensor"`` (:mod:`segmetrics_torch.ops.backend`), through ``torch.fft`` (``"torch"`` forces
    that path on the CPU too; ``"scipy"`` copies other devices' windows to the host).

    Args:
        maps: (C, H, W) tensor, or a list of (H, W) tensors of one size and device (read only around the window, so
            a list need not be stacked); any real dtype (bool counts 0 / 1).
        kernel: (kh, kw) floating tensor, odd sizes.
        rows, cols: the half-open window, ``0 <= start < stop <= H`` (resp. ``W``).
        backend: ``"auto"``, ``"scipy"`` or ``"torch"`` (above).

    Returns:
        (C, rows[1] - rows[0], cols[1] - cols[0]) tensor of ``kernel.dtype`` on the maps' device.

    Example:
        >>> import torch
        >>> x = torch.arange(12, dtype=torch.float64).reshape(1, 3, 4)
        >>> k = torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]], dtype=torch.float64)
        >>> filter2d_reflect_window(x, k, (0, 3), (2, 4)).round().tolist()  # x[y, x + 1], reflected at the right
        [[[3.0, 2.0], [7.0, 6.0], [11.0, 10.0]]]
    """
    from scipy import fft as sfft

    check_choice(backend, "backend", ("auto", "scipy", "torch"))
    if isinstance(maps, (list, tuple)):
        items = [check_tensor(m, f"maps[{i}]") for i, m in enumerate(maps)]
    else:
        stack = check_tensor(maps, "maps")
        if stack.ndim != 3:
            raise ValueError(f"Expected `maps` of shape (C, H, W), but got {tuple(stack.shape)}.")
        items = list(stack)
    if not items:
        raise ValueError("Expected at least one map in `maps`.")
    for i, m in enumerate(items):
        if m.ndim != 2 or m.shape != items[0].shape or m.device != items[0].device:
            raise ValueError(
                f"Expected `maps[{i}]` of shape {tuple(items[0].shape)} on {items[0].device}, but got "
                f"{tuple(m.shape)} on {m.device}."
            )
    kernel = check_tensor(kernel, "kernel")
    if kernel.ndim != 2 or kernel.shape[0] % 2 == 0 or kernel.shape[1] % 2 == 0 or not kernel.is_floating_point():
        raise ValueError(
            f"Expected a floating (kh, kw) `kernel` of odd sizes, but got {kernel.dtype} {tuple(kernel.shape)}."
        )
    h, w = items[0].shape
    (r0, r1), (c0, c1) = (int(v) for v in rows), (int(v) for v in cols)
    if not (0 <= r0 < r1 <= h and 0 <= c0 < c1 <= w):
        raise ValueError(f"Expected a non-empty window inside the {h}x{w} maps, but got rows {rows}, cols {cols}.")
    kh, kw = kernel.shape
    hr, hc = kh // 2, kw // 2
    # grid: the window and half a kernel around it; the window's outputs never wrap around it
    size_r, size_c = sfft.next_fast_len(r1 - r0 + 2 * hr, real=True), sfft.next_fast_len(c1 - c0 + 2 * hc, real=True)
    src_r, src_c = np.arange(r0 - hr, r1 + hr), np.arange(c0 - hc, c1 + hc)
    # the kernel at offsets (a - hr, b - hc) modulo the grid; its spectrum: the kh non-zero rows, then the columns;
    # the correlation is the product with the conjugate spectrum
    at_c, at_r = np.arange(-hc, hc + 1) % size_c, np.arange(-hr, hr + 1) % size_r
    device = items[0].device
    if backend == "scipy" or (backend == "auto" and device.type == "cpu" and get_backend() != "tensor"):
        k = kernel.detach().cpu().numpy()
        placed = np.zeros((kh, size_c), k.dtype)
        placed[:, at_c] = k
        row_spec = sfft.rfft(placed, axis=1)
        spec = np.zeros((size_r, row_spec.shape[1]), row_spec.dtype)
        spec[at_r] = row_spec
        spec = sfft.fft(spec, axis=0, overwrite_x=True)
        parts = [_region(m.detach().cpu().numpy(), src_r, src_c).astype(k.dtype, copy=False) for m in items]
        region = parts[0][None] if len(parts) == 1 else np.stack(parts)
        product = sfft.rfft2(region, s=(size_r, size_c))
        product *= np.conjugate(spec, out=spec)
        out = sfft.irfft2(product, s=(size_r, size_c), overwrite_x=True)
        return torch.from_numpy(out[:, hr : hr + r1 - r0, hc : hc + c1 - c0]).to(device)
    kernel = kernel.to(device)
    k_rows = torch.zeros(kh, size_c, dtype=kernel.dtype, device=device)
    k_rows[:, torch.from_numpy(at_c).to(device)] = kernel
    k_rows_spec = torch.fft.rfft(k_rows, dim=1)
    k_spec = torch.zeros(size_r, k_rows_spec.shape[1], dtype=k_rows_spec.dtype, device=device)
    k_spec[torch.from_numpy(at_r).to(device)] = k_rows_spec
    k_spec = torch.fft.fft(k_spec, dim=0).conj()
    grid = torch.stack([_region(m, src_r, src_c).to(kernel.dtype) for m in items])
    result = torch.fft.irfft2(torch.fft.rfft2(grid, s=(size_r, size_c)) * k_spec, s=(size_r, size_c))
    return result[:, hr : hr + r1 - r0, hc : hc + c1 - c0]


def filter2d_reflect_gap(x: Tensor, y: Tensor, kernel: Tensor) -> float:
    """``<x, A y> - <A x, y>`` for ``A`` = OpenCV ``filter2D(., -1, kernel)`` (``BORDER_REFLECT_101``) and a
    point-symmetric kernel (``kernel == kernel.flip(0, 1)``).

    With a symmetric kernel, every pair of pixels inside the image enters both inner products alike; only the kernel
    taps that leave the image (reflected back) differ, so the value is ``sum_i sum_{d: i + d outside} k(d) (x(i)
    y(refl(i + d)) - y(i) x(refl(i + d)))`` over the pixels within half a kernel of the border: one compiled pass over
    that band (its cost does not grow with the image's area). It turns ``sum(x * A y)`` into ``sum(y * A x) + gap``,
    so one filtered map serves both (the context measure's forward term). Computed on the CPU in float64 (other
    devices' maps are copied).

    Args:
        x, y: (H, W) real tensors (bool counts 0 / 1).
        kernel: (kh, kw) floating tensor of odd sizes, point-symmetric.

    Returns:
        the gap as a Python float.

    Example:
        >>> import torch
        >>> x = torch.tensor([[1.0, 0.0, 0.0]]); y = torch.tensor([[0.0, 1.0, 0.0]])
        >>> filter2d_reflect_gap(x, y, torch.tensor([[0.25, 0.5, 0.25]], dtype=torch.float64))
        0.25
    """
    x, y, kernel = check_tensor(x, "x"), check_tensor(y, "y"), check_tensor(kernel, "kernel")
    if x.ndim != 2 or y.shape != x.shape:
        raise ValueError(f"Expected `x` and `y` of one (H, W) shape, but got {tuple(x.shape)} and {tuple(y.shape)}.")
    if kernel.ndim != 2 or kernel.shape[0] % 2 == 0 or kernel.shape[1] % 2 == 0 or not kernel.is_floating_point():
        raise ValueError(
            f"Expected a floating (kh, kw) `kernel` of odd sizes, but got {kernel.dtype} {tuple(kernel.shape)}."
        )
    k = kernel.detach().cpu().to(torch.float64).numpy()
    if not np.array_equal(k, k[::-1, ::-1]):
        raise ValueError("Expected a point-symmetric `kernel` (kernel == kernel.flip(0, 1)).")
    from ._kernels.reflect_gap import reflect_gap

    h, w = x.shape
    hr, hc = k.shape[0] // 2, k.shape[1] // 2
    xn = np.ascontiguousarray(x.detach().cpu().numpy(), dtype=np.float64)
    yn = y.detach().cpu().numpy()
    yn = np.ascontiguousarray(yn.view(np.uint8) if yn.dtype == np.bool_ else yn.astype(np.float64, copy=False))
    rows, cols = np.flatnonzero(yn.any(axis=1)), np.flatnonzero(yn.any(axis=0))
    if rows.size == 0:
        return 0.0
    box = np.array([rows[0], rows[-1], cols[0], cols[-1]], np.int64)
    return float(
        reflect_gap(
            xn, yn, np.ascontiguousarray(k), reflect101_index(h, -hr, h + hr), reflect101_index(w, -hc, w + hc), box
        )
    )
