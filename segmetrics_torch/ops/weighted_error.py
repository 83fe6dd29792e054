r"""Margolin's weighted error sums of a *soft* map and their gradient: the work of the weighted-F loss.

Margolin, Zelnik-Manor & Tal, "How to Evaluate Foreground Maps?", CVPR 2014, with the error ``E = |p - g|`` of a
probability map ``p`` against a binary ground truth ``g``:

* ground-truth terms (no gradient): ``index`` = each pixel's nearest GT pixel (the exact EDT with scipy's tie rule;
  a GT pixel is its own) and the importance ``B = 2 - exp(log(0.5) / 5 * d)`` off the GT, 0 on it;
* ``E_t = 1 - p[index]``, ``E_A`` = the 7x7 Gaussian (sigma 5, zero border, MATLAB's ``fspecial``) of ``E_t``;
* ``ew_fg = sum_GT min'(E_A, E)`` with ``E = 1 - p`` on the GT and ``min'`` taking ``E_A`` only where
  ``E_A < E`` (the reference's tie rule; ``won`` marks those pixels); ``fpw = sum B p``.

The gradient (a hand-written adjoint): ``d/dp = B * d_fpw`` off the GT, ``-d_ew`` on GT pixels where ``E`` won, and
the Gaussian of ``won * d_ew`` (symmetric with a zero border: its own adjoint) subtracted at the nearest GT pixels
(the adjoint of the gather, a scatter-add).

Two paths with the same arithmetic: compiled CPU kernels (``"numba"``: one sweep per image for each of the three
steps, images spread over threads; the default for CPU tensors, the backend setting ``"tensor"`` forces the tensor
path: :mod:`segmetrics_torch.ops.backend`) and tensor code (``"torch"``: any device, no host synchronisation; what
CUDA runs). They agree to rounding (the Gaussian's multiply-adds may be fused differently and the sums are
accumulated in float64 by the kernel).
"""

from __future__ import annotations

import functools
from typing import Any, Literal

import torch
from torch import Tensor

from .._constants import LOG_HALF_OVER_5
from .backend import compiled_kernels
from .distance import distance_transform_edt
from .filters import _host_gaussian_weights, gaussian_blur_zero

__all__ = ["ground_truth_terms", "resolve_path", "weighted_error_grad", "weighted_error_sums"]

#: Margolin's Gaussian: 7x7, sigma 5
_SIZE, _SIGMA = 7, 5.0

#: which implementation runs: "auto" (the kernels for CPU tensors, see ops.backend.compiled_kernels), "numba" or
#: "torch"
KernelPath = Literal["auto", "numba", "torch"]


def _numba(path: KernelPath, device: torch.device) -> bool:
    # "numba" on another device takes the tensor path: the kernels would copy every map to the host and back
    return device.type == "cpu" and (path == "numba" or (path == "auto" and compiled_kernels(device)))


def resolve_path(path: KernelPath, device: torch.device) -> Literal["numba", "torch"]:
    """The path ``path`` takes for tensors on ``device`` now: decide it once per loss call and pass it to the three
    steps, so that a backward pass run later (the backend setting changed meanwhile) reads the index and ``won`` of
    its own forward pass."""
    return "numba" if _numba(path, device) else "torch"


def ground_truth_terms(g: Tensor, dtype: torch.dtype, *, path: KernelPath = "auto") -> tuple[Tensor, Tensor, Tensor]:
    """``(importance, index, size)`` of a (B, H, W) bool ground truth: ``B`` in ``dtype`` (0 on the GT), the
    (B, H*W) flat index of each pixel's nearest GT pixel (0 for an empty GT, whose loss is masked out) and the (B,)
    number of GT pixels in ``dtype``. The index is int64 on the tensor path (what ``gather`` takes) and int32 from
    the kernels where ``H*W`` fits (half the memory traffic: 1.5 ms of 9 for 16 x 352 x 352 on 2 cores); pass it
    on to :func:`weighted_error_sums` and :func:`weighted_error_grad` on the same ``path``."""
    b = g.shape[0]
    if _numba(path, g.device) and g.numel() > 0:
        import numba

        kernels = _kernels()
        mask = g.detach().to("cpu").contiguous().numpy()
        importance = torch.empty(g.shape, dtype=dtype)
        index = torch.empty(g.shape, dtype=torch.int32 if g[0].numel() < 2**31 else torch.int64)
        size = torch.empty(b, dtype=torch.int64)
        n_tasks = max(1, min(numba.get_num_threads(), b))
        kernels.ground_truth_terms(mask, importance.numpy(), index.numpy(), size.numpy(), LOG_HALF_OVER_5, n_tasks)
        return importance.to(g.device), index.view(b, -1).to(g.device), size.to(device=g.device, dtype=dtype)
    dist, nearest = distance_transform_edt(g, backend="torch" if path == "torch" else "auto")
    importance = torch.exp_(dist.to(dtype).mul_(LOG_HALF_OVER_5)).neg_().add_(2).masked_fill_(g, 0.0)
    # count_nonzero: a bool `sum` would first copy the masks to int64
    return importance, nearest.reshape(b, -1).clamp_(min=0), torch.count_nonzero(g, dim=(1, 2)).to(dtype)


def weighted_error_sums(
    p: Tensor, g: Tensor, index: Tensor, importance: Tensor, *, path: KernelPath = "auto"
) -> tuple[Tensor, Tensor, Tensor]:
    """``(ew_fg, fpw, won)`` of a (B, H, W) floating map ``p`` (no autograd here): the (B,) sums in ``p``'s dtype
    and the (B, H, W) 0 / 1 mask of the GT pixels where ``E_A`` won (uint8 from the kernels, ``p``'s dtype from the
    tensor path: pass it on to :func:`weighted_error_grad` as it is)."""
    b = p.shape[0]
    if _numba(path, p.device):
        import numba

        p_np = p.detach().contiguous().numpy()
        won = torch.empty(p.shape, dtype=torch.uint8)
        ew_fg = torch.empty(b, dtype=torch.float64)
        fpw = torch.empty(b, dtype=torch.float64)
        n_tasks = max(1, min(numba.get_num_threads(), b))
        _kernels().forward_sums(
            p_np,
            g.contiguous().numpy(),
            index.contiguous().numpy().reshape(p.shape),
            importance.contiguous().numpy(),
            _weights(),
            won.numpy(),
            ew_fg.numpy(),
            fpw.numpy(),
            n_tasks,
        )
        return ew_fg.to(p.dtype), fpw.to(p.dtype), won
    err_t = p.reshape(b, -1).gather(1, index).view_as(p).neg_().add_(1)
    err_a = gaussian_blur_zero(err_t, _SIZE, _SIGMA, fused=True)
    del err_t
    err = 1 - p  # E on the ground truth
    won = (err_a < err).logical_and_(g).to(p.dtype)  # 1 where E_A replaces E
    # lerp by 0 / 1: a selection; times the GT as floats (a float times a bool mask promotes per element: 5x slower)
    ew_fg = (torch.lerp(err, err_a, won, out=err_a) * g.to(p.dtype)).sum(dim=(1, 2))
    fpw = (p * importance).sum(dim=(1, 2))
    return ew_fg, fpw, won


def weighted_error_grad(
    won: Tensor, g: Tensor, index: Tensor, importance: Tensor, d_fg: Tensor, d_bg: Tensor, *, path: KernelPath = "auto"
) -> Tensor:
    """``d (d_fg . ew_fg + d_bg . fpw) / d p`` (B, H, W) in ``importance``'s dtype (the map's), from
    :func:`weighted_error_sums`' ``won`` and the (B,) upstream gradients of the two sums."""
    b = won.shape[0]
    if _numba(path, won.device):
        import numba

        grad = torch.empty(won.shape, dtype=importance.dtype)
        n_tasks = max(1, min(numba.get_num_threads(), b))
        _kernels().backward_grad(
            won.contiguous().numpy(),
            g.contiguous().numpy(),
            index.contiguous().numpy().reshape(won.shape),
            importance.contiguous().numpy(),
            _weights(),
            d_fg.to(grad.dtype).contiguous().numpy(),
            d_bg.to(grad.dtype).contiguous().numpy(),
            grad.numpy(),
            n_tasks,
        )
        return grad
    d_fg = d_fg.view(b, 1, 1)
    grad = importance * d_bg.view(b, 1, 1)  # background: d fpw / d p = B (0 on the ground truth)
    grad.addcmul_(g.to(grad.dtype) - won, d_fg, value=-1)  # ground truth where E won: d (1 - p) / d p = -1
    through = gaussian_blur_zero(won * d_fg, _SIZE, _SIGMA, fused=True)  # the E_A winners, back through the Gaussian
    grad.view(b, -1).scatter_add_(1, index, through.view(b, -1).neg_())  # d E_t / d p[nearest] = -1
    return grad


@functools.cache
def _weights() -> Any:
    import numpy as np

    return np.asarray(_host_gaussian_weights(_SIZE, _SIGMA), dtype=np.float64)


@functools.cache
def _kernels() -> Any:
    """The compiled kernels (numba imported, and the kernels compiled or loaded from its cache, only here)."""
    from ._kernels import weighted_error

    return weighted_error
