"""Two element-wise building blocks whose CUDA results equal the CPU's and that never make the host wait.

* :func:`count_by_key` is ``torch.bincount(key, weights, minlength=length)`` for keys known to lie in
  ``[0, length)``. ``torch.bincount`` on CUDA reads ``key.max()`` on the host to size its output, a device-to-host
  synchronisation in every call (``torch.cuda.set_sync_debug_mode("error")`` reports it); an ``index_add_`` into
  ``length`` zeros does the same counting without it. Integer counts are exact on every device; weighted sums are
  float sums in an unspecified order, as ``bincount``'s own CUDA kernel (atomics) makes them.
* :func:`divide_exactly` is ``x / d`` for a Python number ``d``, correctly rounded on every device. PyTorch's CUDA
  kernel for a tensor divided by a CPU scalar multiplies by the reciprocal ``1 / d`` (one rounding more), so on CUDA
  ``torch.arange(256.0, dtype=torch.float64).cuda() / 255`` differs from the CPU's quotient in the last bit for some
  levels, and ``trunc(255 * p)`` then moves a pixel to the neighbouring one of the 256 threshold bins: the
  F/E/IoU curves of uint8 maps differed from the CPU and PySODMetrics by up to 1.3e-2 on an H200. Dividing by a
  0-dim tensor on the same device takes the true-division kernel (IEEE division, correctly rounded, as numpy's).

Example:
    >>> import torch
    >>> count_by_key(torch.tensor([0, 2, 2, 5]), 6)
    tensor([1, 0, 2, 0, 0, 1])
    >>> count_by_key(torch.tensor([1, 1]), 3, weights=torch.tensor([0.25, 0.5], dtype=torch.float64))
    tensor([0.0000, 0.7500, 0.0000], dtype=torch.float64)
    >>> levels = torch.arange(256.0, dtype=torch.float64)
    >>> bool(((divide_exactly(levels, 255) * 255).trunc() == levels).all())  # every level in its own bin
    True
    >>> int(((levels * (1 / 255) * 255).trunc() != levels).sum())  # what the reciprocal does to 24 of them
    24
    >>> divide_exactly(torch.tensor([51.0], dtype=torch.float64), 255).item() == 51 / 255
    True
"""

from __future__ import annotations

import torch
from torch import Tensor


def count_by_key(key: Tensor, length: int, weights: Tensor | None = None) -> Tensor:
    """``torch.bincount(key, weights, minlength=length)`` without a host sync; ``key`` must lie in ``[0, length)``.

    Args:
        key: 1-D int64 keys in ``[0, length)`` (not checked: callers build them in range).
        length: size of the output.
        weights: optional 1-D weights of ``key``'s length; the output has their dtype (int64 counts otherwise).

    Returns:
        (length,) counts or weight sums per key.
    """
    if weights is None:
        return torch.zeros(length, dtype=torch.int64, device=key.device).index_add_(
            0, key, torch.ones((), dtype=torch.int64, device=key.device).expand(key.shape)
        )
    return torch.zeros(length, dtype=weights.dtype, device=key.device).index_add_(0, key, weights)


def divide_exactly(x: Tensor, divisor: float) -> Tensor:
    """``x / divisor`` correctly rounded on CPU and CUDA alike (floating ``x``); see the module docstring."""
    return x / torch.full((), divisor, dtype=x.dtype, device=x.device)
