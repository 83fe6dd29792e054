"""Exact Euclidean distance transform with nearest-feature indices and anisotropic spacing, in tensor operations.

The boundary-distance family's transform on the tensors' device (what its CUDA inputs take; the tests run it on CPU
tensors): for a batch of 2-D or 3-D feature masks, the distance from every element to its nearest
feature in spacing units and that feature's flat index, in ``O(N log n)`` work (``N`` elements, ``n`` the longest
axis) with fixed shapes and no host synchronisation.

Separable (Felzenszwalb & Huttenlocher 2012; Meijster et al. 2000): one pass per axis of length above 1, axis 0
first (scipy's order of adding the squares), as the compiled CPU kernel (:mod:`segmetrics_torch.ops._kernels.
edt_spacing`):

* the first pass reads the mask: ``(s d)^2`` (``s`` the spacing of the axis, ``d`` the distance along the line to
  its nearest feature; inf on a line without one) from two running scans, ``O(n)``;
* every later pass is ``out[x] = min_c (s (x - c))^2 + f[c]`` along each line, the minimum over the parabolas
  whose lower envelope the CPU kernel builds one line at a time. Here every line of a chunk at once: the matrix
  ``(s (x - c))^2 + f[c]`` is Monge, so its smallest minimising column ``A(x)`` never decreases with ``x``, and a
  divide and conquer over the positions (:func:`_parabola_pass`, the float form of the foreground family's
  ``ops.distance._row_pass_monotone``) searches each position's minimum only between the minimising columns of its
  nearest ancestors: ``ceil(log2(n + 1))`` levels of ``O(n)`` work per line.

Exactness: every candidate is the CPU kernel's own float expression, ``(s * d) * (s * d) + f[c]`` (scipy's), and the
minimum over floats is exact, so the values are scipy's bit for bit wherever one feature is the nearest. Features
equally near in real arithmetic (1 pixel at 0.3, 3 pixels at 0.1) can round an ulp apart: the minimum takes the lowest,
as the kernel does where the tie falls in one pass, and scipy names one by its feature transform (an ulp from ours on
about 1 element in 10^5 of random smooth shapes, ``benchmarks/bench_device_edt.py``). The feature index follows the
minimising column through the passes: the feature it names is a feature at the returned distance (among equally near
features any may be named).

Memory: besides the inputs and outputs (and one transposed copy of the squared distances and of the indices per
later pass), a later pass runs on chunks of whole lines holding at most :data:`CHUNK_ELEMENTS` elements together
(2^22; :data:`CPU_CHUNK_ELEMENTS`, 2^16, for CPU tensors), at least one line, each element needing at most 100 bytes
of scratch: 400 MiB for a chunk, 100 bytes per element of one line where a line is longer than the chunk (a
500,000 x 2 image: 50 MB). A first pass takes about 60 bytes per element of the volume (its scans and indices).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import Tensor

__all__ = [
    "CHUNK_ELEMENTS",
    "CPU_CHUNK_ELEMENTS",
    "exact_sqrt",
    "feature_transform",
    "running_extreme",
    "squared_feature_transform",
]

#: elements (lines x positions) of one chunk of a later pass; each needs at most 100 bytes of scratch (400 MiB)
CHUNK_ELEMENTS = 1 << 22
#: the chunk of CPU tensors: 2^16 elements keep a level's dozen passes over the chunk in the caches (on a 2-core
#: EPYC, 128^3: 2^16 to 2^18 took 0.6x the time of 2^22; 2^12 lost to the per-call overhead)
CPU_CHUNK_ELEMENTS = 1 << 16


def feature_transform(
    features: Tensor,
    spacing: Sequence[float],
    *,
    return_indices: bool = True,
    chunk_elements: int | None = None,
) -> tuple[Tensor, Tensor | None]:
    """The distance from every element of a batch of 2-D or 3-D masks to the nearest ``True`` element of its image, in
    spacing units, and that element's flat index, computed on the masks' device.

    ``dist[b, p] = min_q sqrt(sum_k (s_k (p_k - q_k))^2)`` over the ``True`` elements ``q`` of image ``b``,
    ``s`` the spacing: ``scipy.ndimage.distance_transform_edt(~features[b], sampling=spacing, return_indices=True)``
    with the indices flattened in C order (scipy returns them per axis).

    Convention:
        ``True`` elements are at distance 0 and name themselves. An image without a ``True`` element has distance
        ``inf`` and index ``-1`` everywhere (scipy measures to a point outside the image); the other images of the
        batch are unaffected. Distances equal the compiled CPU transform's and scipy's within an ulp or two of the
        squared distance (the squared sum is accumulated axis by axis, the contiguous axis first; bitwise on a unit
        spacing). Where several features are equally near, any of them may be named (scipy's choice may differ).

    Args:
        features: bool tensor of shape ``(B, *spatial)`` with ``len(spatial) == len(spacing)``, or ``(*spatial)``
            for one image; any device.
        spacing: the element size along each spatial axis, positive finite floats (2 or 3 of them).
        return_indices: whether to compute the indices (``False`` saves one gather per pass and returns ``None``).
        chunk_elements: elements per chunk of a later pass (at most 100 bytes of scratch each); ``None`` takes
            :data:`CHUNK_ELEMENTS` (2^22), :data:`CPU_CHUNK_ELEMENTS` (2^16) for CPU tensors. Whole lines are
            chunked, at least one: the results never depend on it.

    Returns:
        ``(dist, index)``: float64 distances and int64 flat indices ``(r * W + c)`` or ``((z * H + r) * W + c)``
        into the same image, of ``features``' shape, on its device (``index`` ``None`` without ``return_indices``).

    Raises:
        TypeError: ``features`` is not a bool tensor.
        ValueError: ``spacing`` has not 2 or 3 positive finite entries, ``features`` has not ``len(spacing)`` or
            ``len(spacing) + 1`` dimensions, or ``chunk_elements`` is not a positive int.

    Example:
        >>> import torch
        >>> f = torch.zeros(1, 3, 4, dtype=torch.bool); f[0, 0, 0] = True
        >>> dist, index = feature_transform(f, (2.0, 1.0))
        >>> dist[0, 2].tolist()
        [4.0, 4.123105625617661, 4.47213595499958, 5.0]
        >>> index[0, 2].tolist()
        [0, 0, 0, 0]
    """
    squared, index = squared_feature_transform(
        features, spacing, return_indices=return_indices, chunk_elements=chunk_elements
    )
    return exact_sqrt(squared), index


def squared_feature_transform(
    features: Tensor,
    spacing: Sequence[float],
    *,
    return_indices: bool = True,
    chunk_elements: int | None = None,
) -> tuple[Tensor, Tensor | None]:
    """:func:`feature_transform` before its square root: the squared distances (float64, inf on an empty image) and
    the indices. Arguments, shapes and errors as :func:`feature_transform`'s.

    Example:
        >>> import torch
        >>> f = torch.tensor([[False, False, True]])
        >>> squared_feature_transform(f, (1.0, 0.5))[0].tolist()
        [[1.0, 0.25, 0.0]]
        >>> squared_feature_transform(f, (1.0, 2.0))[0].tolist()
        [[16.0, 4.0, 0.0]]
    """
    if not isinstance(features, Tensor) or features.dtype != torch.bool:
        got = f"dtype {features.dtype}" if isinstance(features, Tensor) else type(features).__name__
        raise TypeError(f"Expected `features` to be a bool tensor, but got {got}.")
    values = tuple(float(s) for s in spacing)
    if len(values) not in (2, 3) or not all(math.isfinite(s) and s > 0 for s in values):
        raise ValueError(f"Expected `spacing` to hold 2 or 3 positive finite floats, but got {tuple(spacing)!r}.")
    if features.ndim not in (len(values), len(values) + 1):
        raise ValueError(
            f"Expected `features` of shape (B, *spatial) or (*spatial) with {len(values)} spatial axes (one per "
            f"spacing), but got shape {tuple(features.shape)}."
        )
    if chunk_elements is None:
        chunk_elements = CPU_CHUNK_ELEMENTS if features.device.type == "cpu" else CHUNK_ELEMENTS
    elif isinstance(chunk_elements, bool) or not isinstance(chunk_elements, int) or chunk_elements < 1:
        raise ValueError(f"Expected `chunk_elements` to be a positive int or None, but got {chunk_elements!r}.")
    single = features.ndim == len(values)
    batch = features[None] if single else features
    squared, index = _squared_transform(batch, values, return_indices, chunk_elements)
    if single:
        return squared[0], None if index is None else index[0]
    return squared, index


def exact_sqrt(d2: Tensor) -> Tensor:
    """Correctly rounded float64 square root, in place where the device allows."""
    if d2.device.type == "cpu":
        # torch's vectorised CPU sqrt is not correctly rounded (1 ulp off on ~1 % of integers); numpy's is, like
        # CUDA's double sqrt and scipy, so the distances are bitwise identical to the reference.
        return torch.from_numpy(np.sqrt(d2.numpy()))
    return d2.sqrt_()


def _squared_transform(
    batch: Tensor, spacing: tuple[float, ...], want_index: bool, chunk_elements: int
) -> tuple[Tensor, Tensor | None]:
    """The squared transform of a (B, *spatial) bool batch (see the module's docstring)."""
    device = batch.device
    spatial = tuple(batch.shape[1:])
    if batch.numel() == 0:
        empty_index = torch.empty(batch.shape, dtype=torch.int64, device=device) if want_index else None
        return torch.empty(batch.shape, dtype=torch.float64, device=device), empty_index
    strides = [math.prod(spatial[k + 1 :]) for k in range(len(spatial))]
    f: Tensor | None = None
    index: Tensor | None = None
    for axis in range(len(spatial)):  # axis 0 first: the squares add up in scipy's order, as the compiled kernel's
        n = spatial[axis]
        if n == 1:
            continue  # (s 0)^2 + f: the identity
        s = spacing[axis]
        dim = axis + 1  # the batch axis first
        if f is None:
            f, index = _first_pass(batch, dim, s, strides[axis], want_index)
            continue
        f, index = _later_pass(f, index, dim, s, chunk_elements)
    if f is None:  # every axis of length 1: one element per image
        f = torch.where(batch, 0.0, math.inf).to(torch.float64)
        if want_index:
            index = torch.zeros(batch.shape, dtype=torch.int64, device=device)
    if index is not None:
        # an image without a feature: no nearest one (the gathered indices there name no feature)
        index.masked_fill_(torch.isinf(f), -1)
    return f, index


def _first_pass(mask: Tensor, dim: int, s: float, stride: int, want_index: bool) -> tuple[Tensor, Tensor | None]:
    """``(s d)^2`` along ``dim`` (``d`` the distance to the line's nearest True, inf on a line without one), the same
    float operations as the compiled kernel's ``_indicator_line``, and the flat index of that True element."""
    n = mask.shape[dim]
    small = torch.int16 if 2 * n + 1 <= torch.iinfo(torch.int16).max else torch.int32
    shape = [1] * mask.ndim
    shape[dim] = n
    pos = torch.arange(n, device=mask.device, dtype=small).view(shape)
    feature = mask.to(small, memory_format=torch.contiguous_format)
    # the nearest True at or before / at or after each element, from running max / min scans of the positions of
    # the True elements; sentinels n + 1 beyond either end, so that a side without one is n or more away (a real one
    # is less than n); 0 / 1 arithmetic instead of torch.where (slow on CPU tensors)
    before = running_extreme(feature * (pos + n + 1) - (n + 1), dim, torch.maximum, reverse=False)
    after = running_extreme(2 * n - feature * (2 * n - pos), dim, torch.minimum, reverse=True)
    to_before = pos - before
    to_after = after - pos
    gap = torch.minimum(to_before, to_after)
    t = gap.to(torch.float64).mul_(s)
    f = t.mul_(t).masked_fill_(gap >= n, math.inf)
    if not want_index:
        return f, None
    # the nearer of the two (the one before on a tie): before + [to_after < to_before] (after - before)
    nearest = (after - before).mul_((to_after < to_before).to(small)).add_(before).to(torch.int64)
    spatial = mask.shape[1:]
    flat = torch.arange(math.prod(spatial), device=mask.device, dtype=torch.int64).view(1, *spatial)
    return f, nearest.sub_(pos).mul_(stride).add_(flat)


def running_extreme(x: Tensor, dim: int, op: Callable[..., Tensor], *, reverse: bool) -> Tensor:
    """The running ``op`` (``torch.maximum`` or ``torch.minimum``) of ``x`` along ``dim``, from the start (or,
    ``reverse``, from the end): ``ceil(log2(n))`` passes of a shifted element-wise ``op`` (Hillis & Steele), fixed
    shapes, ``x``'s dtype, exact (a max / min). ``x`` is used as scratch (overwritten). In int16 it took a twentieth
    of torch's cummax / cummin (which also write int64 indices) on CPU tensors.

    Example:
        >>> running_extreme(torch.tensor([[3, -1, 5, 0]]), 1, torch.maximum, reverse=False).tolist()
        [[3, 3, 5, 5]]
        >>> running_extreme(torch.tensor([[3, -1, 5, 0]]), 1, torch.minimum, reverse=True).tolist()
        [[-1, -1, 0, 0]]
    """
    n = x.shape[dim]
    a, b = x, torch.empty_like(x)
    step = 1
    while step < n:
        if reverse:
            b.narrow(dim, n - step, step).copy_(a.narrow(dim, n - step, step))
            op(a.narrow(dim, 0, n - step), a.narrow(dim, step, n - step), out=b.narrow(dim, 0, n - step))
        else:
            b.narrow(dim, 0, step).copy_(a.narrow(dim, 0, step))
            op(a.narrow(dim, step, n - step), a.narrow(dim, 0, n - step), out=b.narrow(dim, step, n - step))
        a, b = b, a
        step *= 2
    return a


def _later_pass(
    f: Tensor, index: Tensor | None, dim: int, s: float, chunk_elements: int
) -> tuple[Tensor, Tensor | None]:
    """One later pass along ``dim`` of the squared distances ``f`` (and the feature indices), by chunks of lines."""
    n = f.shape[dim]
    lines = f.movedim(dim, -1)
    shape = lines.shape
    flat = lines.reshape(-1, n)  # a copy unless dim is the last axis
    src = None if index is None else index.movedim(dim, -1).reshape(-1, n)
    out = torch.empty_like(flat)
    out_index = None if src is None else torch.empty_like(src)
    step = max(1, chunk_elements // n)
    for start in range(0, flat.shape[0], step):
        stop = min(start + step, flat.shape[0])
        arg = _parabola_pass(flat[start:stop], s, out[start:stop], src is not None)
        if src is not None and out_index is not None and arg is not None:
            torch.gather(src[start:stop], 1, arg, out=out_index[start:stop])
    f = out.view(shape).movedim(-1, dim)
    if out_index is None:
        return f, None
    return f, out_index.view(shape).movedim(-1, dim)


def _parabola_pass(f: Tensor, s: float, out: Tensor, want_arg: bool) -> Tensor | None:
    """``out[r, x] = min_c (s (x - c))^2 + f[r, c]`` (float64, the compiled kernel's float operations) for every
    row of the (lines, n) ``f`` at once; returns the minimising column (the smallest among equal values), or
    ``None`` without ``want_arg``.

    The divide and conquer of ``ops.distance._row_pass_monotone``, on floats: the positions are visited as the
    nodes of a perfect binary search tree (``2**L - 1 >= n`` nodes; those past the line are computed, never written),
    a node's minimum searched only between the minimising columns of its nearest ancestors on each side (the whole
    line at the root). The ``2**l`` ranges of level ``l`` tile the columns, consecutive ranges sharing one end; each
    column belongs to the last node whose range starts at or before it (``seg``), and each node's right end, which
    belongs to the next node, is added by a gather. Per level: one ``scatter_reduce`` ("amin") of the candidates'
    values, then one of the columns whose value is the node's minimum (the smallest such column, else the right
    end, which is larger than every column the node owns). The next level's owners follow without a search:
    ``seg' = 2 seg + [A(seg) <= c]``. ``L = ceil(log2(n + 1))`` levels of ``O(n)`` work per row (twelve
    element-wise passes over the chunk), fixed shapes, no host synchronisation.
    """
    rows, n = f.shape
    device = f.device
    levels = max(1, n.bit_length())
    c = torch.arange(n, device=device, dtype=torch.int64)
    minus_c = -c.to(torch.float64)
    arg_out = torch.empty(rows, n, dtype=torch.int64, device=device) if want_arg else None
    seg = torch.zeros(rows, n, dtype=torch.int64, device=device)
    right = torch.full((rows, 1), n - 1, dtype=torch.int64, device=device)
    d = torch.empty(rows, n, dtype=torch.float64, device=device)
    value = torch.empty(rows, n, dtype=torch.float64, device=device)
    bits = value.view(torch.int64)
    out_bits = out.view(torch.int64)
    hit = torch.empty(rows, n, dtype=torch.int64, device=device)
    for level in range(levels):
        nodes = 1 << level
        half = 1 << (levels - 1 - level)  # node j of this level is the position x_j = (2 j + 1) * half - 1
        last = level == levels - 1
        # every column's candidate for the node that owns it: (s d)^2 + f with d = x_seg - c (exact small integers,
        # one promoting add), the same three roundings as the CPU kernel's t = s * d; t * t + f (no fused
        # multiply-add)
        torch.add(minus_c + (half - 1), seg, alpha=2 * half, out=d)
        d.mul_(s)
        torch.mul(d, d, out=value).add_(f)
        # each node's right end (owned by the next node), then the minimum over the columns it owns: on the values'
        # bits, as int64 (a non-negative float64's bits order as its value, +inf the largest; the integer scatter is
        # four times faster than the float one, which also tests for NaN)
        x_nodes = torch.arange(half - 1, (2 * nodes + 1) * half - 1, 2 * half, device=device, dtype=torch.float64)
        dr = (x_nodes - right.to(torch.float64)).mul_(s)
        best = (dr * dr).add_(f.gather(1, right)).view(torch.int64)
        best.scatter_reduce_(1, seg, bits, "amin", include_self=True)
        real = (n + half) // (2 * half)  # nodes with x_j < n
        if real:
            out_bits[:, half - 1 :: 2 * half] = best[:, :real]
        if last and arg_out is None:
            break
        # the smallest owned column whose value is the minimum, else the right end: c + n [value != best] (an add
        # of the bool; torch.where took five times as long on CPU tensors)
        torch.add(c, bits != best.gather(1, seg), alpha=n, out=hit)
        argmin = right.clone()
        argmin.scatter_reduce_(1, seg, hit, "amin", include_self=True)
        if real and arg_out is not None:
            arg_out[:, half - 1 :: 2 * half] = argmin[:, :real]
        if last:
            break
        # seg' = 2 seg + [A(seg) <= c]
        torch.gather(argmin, 1, seg, out=hit)
        torch.add(hit.le_(c), seg, alpha=2, out=seg)
        right = torch.stack([argmin, right], dim=2).view(rows, 2 * nodes)
    return arg_out
