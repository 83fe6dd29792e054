"""MATLAB-compatible Gaussian kernel and zero-padded 'same' filtering.

Convention: ``matlab_gaussian_kernel(7, 5)`` equals MATLAB ``fspecial('gaussian', 7, 5)``: ``h = exp(-(x^2+y^2) /
(2 sigma^2))`` on the integer grid centred at 0, entries below ``eps * max(h)`` set to zero, normalised to sum 1.
:func:`filter2d_zero` equals MATLAB ``imfilter(X, K)`` (zero padding, output the size of ``X``, correlation) and
``scipy.ndimage.convolve(X, K, mode="constant", cval=0)`` for symmetric kernels. kornia's ``gaussian_blur2d`` uses a
*reflect* border by default, which changes the weighted F-measure by up to 0.4 at image borders; this module is the
zero-border filter the weighted F-measure needs.

The Gaussian is separable, so the 2-D filter runs as a row pass and a column pass of shifted multiply-adds: in float64
this equals the 2-D correlation with the outer-product kernel to ~1e-16, and on CPU it is several times faster than
``conv2d`` in float64.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["filter2d_zero", "gaussian_blur_zero", "matlab_gaussian_kernel", "matlab_gaussian_kernel1d"]


def matlab_gaussian_kernel(size: int = 7, sigma: float = 5.0, *, dtype=torch.float64, device=None) -> Tensor:
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


def matlab_gaussian_kernel1d(size: int = 7, sigma: float = 5.0, *, dtype=torch.float64, device=None) -> Tensor:
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
    height, width = x.shape[-2:]
    kr, kc = row_kernel.numel(), col_kernel.numel()
    if kr % 2 == 0 or kc % 2 == 0:
        raise ValueError(f"Expected odd kernel lengths, but got {kr} and {kc}.")
    padded = F.pad(x, (kr // 2, kr // 2))
    rows = padded[..., 0:width] * row_kernel[0]
    for j in range(1, kr):
        rows = rows + padded[..., j : j + width] * row_kernel[j]
    padded = F.pad(rows, (0, 0, kc // 2, kc // 2))
    out = padded[..., 0:height, :] * col_kernel[0]
    for i in range(1, kc):
        out = out + padded[..., i : i + height, :] * col_kernel[i]
    return out


def gaussian_blur_zero(x: Tensor, size: int = 7, sigma: float = 5.0) -> Tensor:
    """MATLAB ``imfilter(x, fspecial('gaussian', size, sigma))`` on a (B, H, W) stack (zero border)."""
    g = matlab_gaussian_kernel1d(size, sigma, dtype=x.dtype, device=x.device)
    return filter2d_zero(x, g)
