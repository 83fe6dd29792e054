"""Exact, batched Euclidean distance transform with nearest-feature indices.

The weighted F-measure (Margolin et al., CVPR 2014) gives every background pixel the error of its *nearest*
ground-truth pixel, so the nearest-feature indices must agree with the reference
(``scipy.ndimage.distance_transform_edt(~mask, return_indices=True)``) bit for bit, ties included. Both kernels below
use the same separable two-pass algorithm and the same tie rule, and compare squared distances as exact integers, so
their results are identical to each other and to scipy on every input:

* ``"torch"``: doubling max / min scans in int16 (int32 above 10,922 rows) for the column pass (torch's cummax /
  cummin took 20x as long on CPU tensors); for the row pass, a divide and conquer over the
  monotone minimising column (the matrix ``(x - c)^2 + g[c]`` is Monge), ``ceil(log2(W + 1))`` levels of
  ``O(W)`` work per row, all rows and images of the batch at once (``_row_pass_monotone``): ``O(H W log W)`` work
  with fixed shapes, pure tensor code without host synchronisation, so it runs on CUDA as on the CPU. (It replaced
  a brute-force ``O(H W^2)`` minimum over all columns: the row pass 3x-11x faster at 1 to 96 columns, the whole
  transform 12x-16x at 320x320, on a 2-core CPU.)
* ``"numba"``: a compiled, parallel CPU kernel; the row pass is the O(W) lower envelope of parabolas (Felzenszwalb &
  Huttenlocher 2012, Meijster et al. 2000) evaluated with integer arithmetic only.

On CUDA, where Triton is installed, the ``"torch"`` backend runs two Triton kernels instead of the tensor operations
(``ops/_kernels/edt_triton.py``: the column pass, then the row pass as the O(W) lower envelope of the row's
parabolas, 32 rows per program, up to about 32,000 x 32,000, or, where that kernel fails to build, a register-tiled
minimum over the row's columns in int32 keys for images whose keys fit in 31 bits, up to 836 x 836; same results).
The backend setting ``"tensor"``
(:func:`segmetrics_torch.ops.use_backend`) keeps the tensor route; :mod:`segmetrics_torch.ops.backend` decides which
kernel runs, here as in every op.

The boundary-distance family's transform, 2-D or 3-D with a spacing and float distances, is
:func:`distance_to_features` on the host (compiled lower envelopes) and :func:`distance_to_features_device` on the
tensors' device (:mod:`segmetrics_torch.ops.device_edt`: the same passes, ``O(N log n)`` tensor work).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor

from segmetrics_torch._checks import BACKENDS, Backend, check_choice, check_tensor

from .backend import _numba_available, resolve, triton_kernels
from .device_edt import exact_sqrt, running_extreme, squared_feature_transform

__all__ = [
    "distance_to_features",
    "distance_to_features_device",
    "distance_transform_edt",
    "spacing_scale",
    "takes_device_transform",
]

# Bound on the scratch of the row pass of the torch kernel (rows are processed in chunks that fit).
_TORCH_TEMP_BYTES = 256 * 2**20
# Scratch of the torch row pass per image row: about five (W,) int64 buffers.
_ROW_PASS_BYTES_PER_COLUMN = 8 * 5
# Blocks of columns (column pass) / rows (row pass) per parallel task of the numba kernel: large enough to amortise
# the per-task scratch allocation, small enough that a single big image still splits across threads.
_NUMBA_COL_BLOCK = 64
_NUMBA_ROW_BLOCK = 16


def distance_transform_edt(
    mask: Tensor, *, backend: Backend = "auto", chunk_size: int | None = None
) -> tuple[Tensor, Tensor]:
    """Exact Euclidean distance from every pixel to the nearest ``True`` pixel of its image, with its index.

    For each image of the batch and each pixel ``p``, finds the ``True`` pixel ("feature") ``q`` of the same image
    that minimises the Euclidean distance ``|p - q|`` and returns that distance and ``q``'s flat index
    ``row * W + col``. ``True`` pixels have distance 0 and map to themselves.

    Convention:
        This is ``scipy.ndimage.distance_transform_edt(~mask, return_indices=True)`` (scipy measures the distance to
        the nearest *zero* pixel, hence the negation), with scipy's ``(2, H, W)`` indices flattened to
        ``r * W + c``. MATLAB's ``[D, IDX] = bwdist(mask)`` measures the distance to the nearest *nonzero* pixel,
        i.e. it takes ``mask`` as it is here (its ``IDX`` is column-major and 1-based, and it may break ties
        differently). When several features are equally near, the one with the **smallest column** is taken, and
        among those the one with the **smallest row** (scipy's choice, verified against it on tie-heavy inputs).
        An image without any ``True`` pixel has no nearest feature: its distances are ``+inf`` and its indices
        ``-1`` everywhere (scipy returns distances to a point outside the image there); the other images of the
        batch are unaffected.

    All comparisons use exact integer squared distances, so ties are resolved exactly and the result does not depend
    on the backend, the device, ``chunk_size`` or the batch composition.

    Args:
        mask: bool tensor of shape (B, H, W), or (H, W) for a single image; any device. ``True`` marks the features
            (e.g. the ground-truth foreground).
        backend: ``"torch"`` (vectorised tensor code, any device, meant for CUDA), ``"numba"`` (compiled parallel
            CPU kernel; a CUDA input is copied to the CPU and the result copied back) or ``"auto"`` (numba for CPU
            tensors when numba is installed, torch otherwise; torch everywhere under the backend setting
            ``"tensor"``: :func:`segmetrics_torch.ops.backend.resolve`).
        chunk_size: torch backend only: number of image rows (counted across the whole batch) whose row pass is
            computed at once; each needs about ``40 * W`` bytes of scratch. ``None`` picks the largest chunk that
            keeps this scratch under about 256 MiB. The Triton kernels on CUDA need no such scratch and ignore it.

    Returns:
        ``(dist, index)`` on ``mask``'s device, each of ``mask``'s shape: ``dist`` float64 distances, ``index`` int64
        flat indices ``row * W + col`` into the same image. An empty batch (B = 0) gives empty outputs.

    Raises:
        TypeError: ``mask`` is not a tensor or not of dtype bool.
        ValueError: ``mask`` is not 2-D or 3-D, ``backend`` is unknown, or ``chunk_size`` is not a positive int.
        ImportError: ``backend="numba"`` but numba is not installed.

    Example:
        >>> mask = torch.tensor([[False, False, False], [False, False, True]])
        >>> dist, index = distance_transform_edt(mask)
        >>> dist
        tensor([[2.2361, 1.4142, 1.0000],
                [2.0000, 1.0000, 0.0000]], dtype=torch.float64)
        >>> index
        tensor([[5, 5, 5],
                [5, 5, 5]])
    """
    check_tensor(mask, "mask")
    if mask.dtype != torch.bool:
        raise TypeError(f"Expected `mask` to be a bool tensor of shape (B, H, W), but got dtype {mask.dtype}.")
    if mask.ndim not in (2, 3):
        raise ValueError(
            f"Expected `mask` to be a bool tensor of shape (B, H, W) or (H, W), but got shape {tuple(mask.shape)}."
        )
    check_choice(backend, "backend", BACKENDS)
    if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"Expected `chunk_size` to be a positive int or None, but got {chunk_size!r}.")

    single = mask.ndim == 2
    batch = mask.unsqueeze(0) if single else mask
    if batch.numel() == 0:
        dist = torch.empty(batch.shape, dtype=torch.float64, device=mask.device)
        index = torch.empty(batch.shape, dtype=torch.int64, device=mask.device)
    else:
        if resolve(backend, batch.device) == "numba":
            dist, index = _edt_numba(batch)
        else:
            dist, index = _edt_torch(batch, chunk_size)
    if single:
        return dist[0], index[0]
    return dist, index


# --------------------------------------------------------------------------------------------------------- torch


def _edt_torch(mask: Tensor, chunk_size: int | None = None) -> tuple[Tensor, Tensor]:
    """Separable EDT of a non-empty (B, H, W) bool batch with tensor operations only (any device, no host sync)."""
    b, h, w = mask.shape
    device = mask.device
    # the packed keys of the row pass (explained there): `big`, the squared distance of a column without a feature,
    # and `bits`, the bits of a column index
    big = h * h + w * w
    bits = max(1, (w - 1).bit_length())
    if _triton_enabled(device):
        fused = _edt_triton(mask, big, bits)
        if fused is not None:
            return fused

    gy, g = _column_pass(mask, big)

    # Row pass: for pixel (y, x) minimise (x - c)^2 + gd[y, c]^2 over columns c. The squared distance and the column
    # are packed into one int64 key `(d2 << bits) | c` (c < 2**bits), so that a plain minimum returns the smallest
    # distance and, among equal distances, the smallest column: the other half of the tie rule. Columns without a
    # feature get a squared distance `big` larger than any real one, (H-1)^2 + (W-1)^2.
    n_rows = b * h
    if chunk_size is None:
        chunk_size = max(1, _TORCH_TEMP_BYTES // (_ROW_PASS_BYTES_PER_COLUMN * w))
    key = torch.empty(n_rows, w, dtype=torch.int64, device=device)
    for start in range(0, n_rows, chunk_size):
        stop = min(start + chunk_size, n_rows)
        _row_pass_monotone(g[start:stop], bits, key[start:stop])
    del g

    col = key & ((1 << bits) - 1)
    d2 = key.bitwise_right_shift_(bits)
    index = gy.gather(1, col).mul_(w).add_(col)
    # d2 >= big only when every column lacks a feature, i.e. the image is empty (all its rows are).
    empty = d2 >= big
    dist = _exact_sqrt(d2.to(torch.float64))  # exact: squared distances are far below 2**53
    dist.masked_fill_(empty, float("inf"))
    index.masked_fill_(empty, -1)
    return dist.view(b, h, w), index.view(b, h, w)


def _column_pass(mask: Tensor, big: int) -> tuple[Tensor, Tensor]:
    """``(gy, g)`` of a (B, H, W) bool batch, both (B * H, W) int64: the row of the nearest feature in the same
    column (the smaller row on a tie) and its squared vertical distance (``big`` where the column has none)."""
    b, h, w = mask.shape
    device = mask.device
    # Column pass: nearest feature row in the same column, from a running max of "last feature row at or above" and
    # a reversed running min of "first feature row at or below", as doubling scans in the narrowest integer type
    # that holds 3 H (int16 up to H = 10,922: torch's cummax / cummin, which also write indices, took 20x as long on
    # CPU tensors). Sentinels `-far` above and `3 H` below, so that a side without a feature is at least `far` away,
    # more than any real vertical distance (at most H - 1); no torch.where (slow on CPU tensors): arithmetic on 0 / 1.
    far = 2 * h + 1
    small = torch.int16 if 3 * h <= torch.iinfo(torch.int16).max else torch.int32
    rows = torch.arange(h, device=device, dtype=small).view(1, h, 1)
    feature = mask.to(small, memory_format=torch.contiguous_format)  # C order whatever the input's strides
    above = running_extreme(feature * (rows + far) - far, 1, torch.maximum, reverse=False)
    below = running_extreme(3 * h - feature * (3 * h - rows), 1, torch.minimum, reverse=True)
    d_above = rows - above
    d_below = below - rows
    # A strict comparison keeps the feature above (smaller row) on a tie, half of the tie rule.
    take_below = (d_below < d_above).to(small)
    gy = (below - above).mul_(take_below).add_(above).view(b * h, w).to(torch.int64)
    gd = torch.minimum(d_above, d_below)
    del above, below, d_above, d_below, take_below, feature

    # The row pass's squared distance of each column: `big` (more than any real one) where a column has no feature.
    gd64 = gd.to(torch.int64)
    g = (gd64 * gd64).masked_fill_(gd >= h, big).view(b * h, w)
    return gy, g


def _row_pass_monotone(g: Tensor, bits: int, out: Tensor) -> None:
    """``out[r, x] = min_c ((x - c)^2 + g[r, c]) << bits | c`` exactly, in O(W log W) tensor work per row.

    The matrix ``(x - c)^2 + g[c]`` is Monge, so the smallest minimising column ``A(x)`` never decreases with
    ``x``. The pixels are visited as the nodes of a perfect binary search tree over ``x`` (``2**L - 1 >= W`` nodes;
    the ones past the image are virtual pixels: computed, never written): a node's minimum is searched only
    between the minimising columns of its nearest ancestors on each side, ``[A(left), A(right)]`` (``[0, W-1]`` at
    the root). The ``2**l`` ranges of level ``l`` tile the columns, consecutive ranges sharing one end, so a level
    costs O(W + 2**l) per row, for all rows and all nodes of the level at once:

    * ``seg[c]``, the last node whose range starts at or before column ``c``, owns ``c``: one ``scatter_reduce``
      ("amin") of every column's key (computed with its owner's ``x``) gives each node the minimum over its range
      except its right end, which is added from a gather of ``(N, 2**l)`` values;
    * the next level's owners follow without a search: ``seg' = 2 seg + [A(seg) <= c]``.

    ``L = ceil(log2(W + 1))`` levels, all of fixed shape: no host synchronisation.
    """
    n, w = g.shape
    device = g.device
    levels = max(1, w.bit_length())  # 2**levels - 1 >= w
    scale = 1 << bits
    c = torch.arange(w, device=device, dtype=torch.int64)
    packed = (g << bits).add_(c)  # g << bits | c: a column's own part of every key
    seg = torch.zeros(n, w, dtype=torch.int64, device=device)
    right = torch.full((n, 1), w - 1, dtype=torch.int64, device=device)  # the right end of each node's range
    key = torch.empty(n, w, dtype=torch.int64, device=device)
    for level in range(levels):
        nodes = 1 << level
        half = 1 << (levels - 1 - level)  # node j of this level is the pixel x_j = (2 j + 1) * half - 1
        # every column's key for the node that owns it: ((x - c)^2 << bits) + (g << bits | c)
        torch.add((half - 1) - c, seg, alpha=2 * half, out=key)  # x_seg - c, x_j = 2 half j + half - 1
        torch.addcmul(packed, key, key, value=scale, out=key)
        # each node's right end (not owned by it), then the minimum over the columns it owns
        dx = torch.arange(half - 1, (2 * nodes + 1) * half - 1, 2 * half, device=device, dtype=torch.int64) - right
        best = torch.addcmul(packed.gather(1, right), dx, dx, value=scale)
        best.scatter_reduce_(1, seg, key, "amin", include_self=True)
        real = (w + half) // (2 * half)  # nodes with x_j < W
        if real:
            out[:, half - 1 :: 2 * half] = best[:, :real]
        if level == levels - 1:
            break
        argmin = best.bitwise_and_(scale - 1)
        # seg' = 2 seg + [A(seg) <= c]: the comparison in place (0 / 1 int64) and one add
        torch.gather(argmin, 1, seg, out=key)
        torch.add(key.le_(c), seg, alpha=2, out=seg)
        right = torch.stack([argmin, right], dim=2).view(n, 2 * nodes)


def _triton_enabled(device: torch.device) -> bool:
    """Whether the transform takes the Triton kernels: where the backend allows them
    (:func:`segmetrics_torch.ops.backend.triton_kernels`: a CUDA device, Triton importable, a setting other than
    ``"tensor"``) and they have not failed to build in this process."""
    return not _TRITON_FAILED and triton_kernels(device)


# Triton kernels: columns per program of the column pass (one warp walks them down and up); pixels and columns per
# program of the row pass (a 32 x 64 tile of keys, 16 per thread of 4 warps)
_TRITON_COLUMNS, _TRITON_BLOCK_X, _TRITON_BLOCK_C = 32, 32, 64
# image rows per program of the envelope row pass: one per lane of its single warp
_TRITON_ENVELOPE_ROWS = 32


def _edt_triton(
    mask: Tensor, big: int, bits: int, row_pass: Literal["auto", "tiled", "envelope"] = "auto"
) -> tuple[Tensor, Tensor] | None:
    """The transform of a (B, H, W) bool batch by the Triton kernels (``ops/_kernels/edt_triton.py``), with the
    tensor route's ``big`` and ``bits``: the same ``(dist, index)``, or ``None`` where the tensor route is to run
    instead. The row pass (``row_pass="auto"``):

    * the lower envelope of the row's parabolas (``_rows_envelope``: 32 image rows per program, one per lane, O(W)
      per row, int64 arithmetic, two int32 scratch rows per image row: 8 more bytes per pixel), for every image whose
      ``big`` (``H^2 + W^2``) fits in int32 (about 32,000 x 32,000; beyond, the tensor route). On an H200
      (2026-11-29, ``benchmarks/bench_edt_row_pass.py``) it took 0.25x (768x768) to 0.71x (352x352) the time of the
      tiled pass below, and its work per pixel does not grow with the width;
    * the tiled minimum over the row's columns (``_rows``: int32 packed keys, O(W^2) register arithmetic per row)
      where the envelope kernel failed to build or launch and the largest packed key fits in 31 bits (square images
      up to 836 x 836); ``row_pass="tiled"`` asks for it (the benchmark's comparison);
    * where Triton cannot build or launch the kernels (an install without a working compiler): ``None``, after one
      warning that says why; later calls go to the tensor route directly.
    """
    b, h, w = mask.shape
    wide = ((big + (w - 1) ** 2) << bits) | ((1 << bits) - 1) >= _INT32_TOP
    row_pass_asked = row_pass
    if row_pass == "auto":
        row_pass = "tiled" if _ENVELOPE_FAILED and not wide else "envelope"
    envelope = row_pass == "envelope"
    if (wide and not envelope) or big >= _INT32_TOP or (envelope and _ENVELOPE_FAILED):
        return None
    try:
        from ._kernels.edt_triton import kernels

        columns, rows, rows_envelope = kernels()
    except Exception as exc:  # Triton present but its kernels cannot be made: the tensor route from now on
        _triton_failed(exc)
        return None
    device = mask.device
    gy = torch.empty((b, h, w), dtype=torch.int32, device=device)
    packed = torch.empty_like(gy)  # the packed key parts (tiled), or the squared vertical distances (envelope)
    dist = torch.empty((b, h, w), dtype=torch.float64, device=device)
    index = torch.empty((b, h, w), dtype=torch.int64, device=device)
    scale = 1 << bits
    try:
        columns[(b, -(-w // _TRITON_COLUMNS))](
            mask.contiguous().view(torch.uint8),
            gy,
            packed,
            h,
            w,
            scale,
            big,
            BLOCK=_TRITON_COLUMNS,
            PACK=not envelope,
            num_warps=1,
        )
        if envelope:
            parabolas = torch.empty((b * h, w), dtype=torch.int32, device=device)
            starts = torch.empty((b * h, w + 1), dtype=torch.int32, device=device)
            grid = (-(-(b * h) // _TRITON_ENVELOPE_ROWS),)
            arguments = (packed, gy, parabolas, starts, dist, index, b * h, w, big, -_INT32_TOP)
            rows_envelope[grid](*arguments, BLOCK_R=_TRITON_ENVELOPE_ROWS, num_warps=1)
        else:
            rows[(b * h, -(-w // _TRITON_BLOCK_X))](
                packed, gy, dist, index, w, scale, big, _INT32_TOP, BLOCK_X=_TRITON_BLOCK_X, BLOCK_C=_TRITON_BLOCK_C
            )
    except Exception as exc:  # any compiler or driver error: the exact tensor route stays
        _triton_failed(exc, envelope)
        if envelope and row_pass_asked == "auto" and not wide and not _TRITON_FAILED:
            return _edt_triton(mask, big, bits, "tiled")  # this image fits the tiled row pass
        return None
    return _exact_sqrt(dist), index


_INT32_TOP = 2**31 - 1
_TRITON_FAILED = False
# the envelope row pass failed once: images up to 836 x 836 take the tiled row pass, larger ones the tensor route
_ENVELOPE_FAILED = False


def _triton_failed(exc: BaseException, envelope: bool = False) -> None:
    """Remember a failure and say it once: a failure of a launch with the envelope row pass turns off that pass only
    (the column kernel ran before it for smaller images too), any other failure every Triton kernel."""
    global _TRITON_FAILED, _ENVELOPE_FAILED
    if envelope:
        _ENVELOPE_FAILED = True
    else:
        _TRITON_FAILED = True
    which = "the envelope row pass (images from 837 x 837 take the tensor route)" if envelope else "the Triton kernel"
    warnings.warn(
        f"segmetrics_torch: {which} of the distance transform failed ({type(exc).__name__}: {exc}); the "
        "tensor-operation route computes the same values, more slowly (segmetrics_torch.ops.set_backend('tensor') "
        "skips the attempt).",
        RuntimeWarning,
        stacklevel=4,
    )


#: correctly rounded float64 square root (numpy's on the CPU); a module attribute that tests can replace
_exact_sqrt = exact_sqrt


# --------------------------------------------------------------------------------------------------------- numba


def _edt_numba(mask: Tensor, strategy: str | None = None) -> tuple[Tensor, Tensor]:
    """Separable EDT of a (B, H, W) bool batch with the compiled CPU kernels; outputs on mask's device.

    ``strategy`` (tests only): ``"images"`` runs both passes of one image per task, with the column pass in a
    thread-local int32 scratch that stays in cache (about twice as fast: it never round-trips the intermediate
    through memory); ``"blocks"`` runs each pass over blocks of columns / rows of all images, so that a batch with
    fewer images than threads still uses every thread. ``None`` takes "images" when every thread gets an image.
    """
    if not _numba_available():
        raise ImportError("distance_transform_edt(backend='numba') needs numba: `pip install numba`.")
    import numba

    per_image, column_blocks, row_blocks = _numba_kernels()
    m = mask.detach().to("cpu").contiguous().numpy()
    index = torch.empty(mask.shape, dtype=torch.int64)
    dist = torch.empty(mask.shape, dtype=torch.float64)
    idx_np, dist_np = index.numpy(), dist.numpy()
    n_threads = numba.get_num_threads()
    if strategy is None:
        strategy = "images" if m.shape[0] >= n_threads else "blocks"
    if strategy == "images":
        per_image(m, dist_np, idx_np, max(1, min(n_threads, m.shape[0])))
    else:
        # The column pass leaves the nearest feature *row* in `index`; the row pass overwrites it row by row with
        # the flat index (each row is copied to scratch first, and rows are independent).
        column_blocks(m, idx_np, _NUMBA_COL_BLOCK)
        row_blocks(dist_np, idx_np, _NUMBA_ROW_BLOCK)
    return dist.to(mask.device), index.to(mask.device)


@functools.cache
def _numba_kernels() -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]:
    """Compile (or load from numba's on-disk cache) the kernels; numba is imported only here."""
    from ._kernels import edt as k

    return k.per_image, k.column_blocks, k.row_blocks


# ------------------------------------------------------------------------------------------- anisotropic spacing


#: `distance_to_features(at=)` evaluates its last pass at `at` alone below this fill (dense: the whole pass, then read)
_ONLY_AT_FILL = 0.25

#: elements (lines x positions) of one chunk of a later pass of the device transform; None: its default per device
#: (ops.device_edt.CHUNK_ELEMENTS, CPU_CHUNK_ELEMENTS); the results never depend on it
_DEVICE_CHUNK: int | None = None
#: elements of the images the device transform takes in one call (whole images, at least one): its first pass holds
#: about 60 bytes per element (1 GiB)
_DEVICE_BATCH_ELEMENTS = 1 << 24

#: the largest ratio of two spacings the transforms take, as a power of two (see :func:`spacing_scale`)
_MAX_SPACING_RATIO_LOG2 = 900


def spacing_scale(spacing: Sequence[float], shape: Sequence[int] | None = None) -> tuple[float, tuple[float, ...]]:
    """``(c, spacing / c)``: the power of two ``c`` nearest the geometric mean of the largest and the smallest spacing,
    and the spacing divided by it, on which the transforms run before multiplying their distances by ``c``.

    Why: the transforms sum squared distances, ``s^2 d^2``, which leave float64's range for spacings far from 1
    (``1e155^2`` overflows to inf and gave NaN, ``1e-170^2`` underflows to 0 and gave 0.0). Divided by ``c`` the
    spacings lie within ``2^±451`` of 1 and their squares stay normal floats. Dividing by a power of two and
    multiplying the result back is exact (the mantissas are untouched; the square root of ``c^2 x`` is ``c`` times
    that of ``x`` in correctly rounded arithmetic), so on ordinary spacings the distances are the unscaled
    computation's bit for bit; ``c`` is 1 for spacings in [1, 2).

    Raises:
        ValueError (naming ``spacing``): the largest spacing exceeds the smallest by more than ``2^900`` (their
        squared ratio is no float64), or, given the array's ``shape``, the sum of its axes' extents in spacing units
        (a bound on its longest distance) exceeds float64's range.

    Example:
        >>> spacing_scale((1e155, 1.0, 1.0))[1][0] == 1e155 / 2.0**257
        True
    """
    values = tuple(float(v) for v in spacing)
    exponents = [math.frexp(v)[1] for v in values]
    if max(exponents) - min(exponents) > _MAX_SPACING_RATIO_LOG2:
        raise ValueError(
            f"Expected the entries of `spacing` within a factor 2**{_MAX_SPACING_RATIO_LOG2} (about 8.5e270) of each "
            f"other, but got {values!r}: their squared ratio is no float64."
        )
    # frexp's exponent is one above the power of two: 1.0 = 0.5 * 2**1, so spacings in [1, 2) give c = 1
    c = math.ldexp(1.0, (max(exponents) + min(exponents)) // 2 - 1)
    scaled = tuple(v / c for v in values)
    if shape is not None:
        # the longest distance of the array under any of the metrics (the taxicab one, the sum of the axes' extents,
        # bounds the Euclidean and the chessboard ones), on the scaled spacing, where it cannot overflow
        extent = math.fsum(s * max(n - 1, 0) for s, n in zip(scaled, shape, strict=True))
        if not math.isfinite(extent * c):
            raise ValueError(
                f"Expected `spacing` {values!r} to keep distances of a {tuple(shape)} array within float64's range, "
                f"but its extent is {extent:g} * 2**{math.frexp(c)[1] - 1}."
            )
    return c, scaled


def takes_device_transform(device: torch.device) -> bool:
    """Whether distances between masks on ``device`` take the device transform
    (:func:`distance_to_features_device`, the tensor code) rather than the host's exact routes: the backend's
    answer (:func:`~segmetrics_torch.ops.backend.resolve`): CUDA tensors, and tensors on any device under the
    ``"tensor"`` setting, which the tests use to run the CUDA path on a CPU (and CPU tensors where numba does not
    import: the compiled kernels are absent there). The distances are the same either way.

    Example:
        >>> import torch
        >>> from segmetrics_torch.ops import use_backend
        >>> takes_device_transform(torch.device("cpu"))
        False
        >>> with use_backend("tensor"):
        ...     takes_device_transform(torch.device("cpu"))
        True
    """
    return resolve("auto", device) == "torch"


def distance_to_features_device(features: Tensor, spacing: Sequence[float], at: Tensor) -> Tensor:
    """:func:`distance_to_features` ``(features, spacing, at=at)`` on the tensors' device (the CUDA path of the
    boundary-distance family), for one mask or a batch of them: the distances, float64, at the True elements of
    ``at`` (same shape), in C order (image by image for a batch: the distances of image 0's points, then image 1's).

    ``features`` is 2-D or 3-D (``len(spacing)`` axes) or a batch ``(B, *spatial)`` of such masks sharing the
    spacing, each image measured to its own features. The batch is transformed in one call (in slices of whole
    images of at most ``2^24`` elements together, at least one image), so a batch of small images costs one
    transform, not one per image. The transform: on a 2-D grid of one spacing ``(s, s)`` with ``s`` a power of two
    (a unit grid after :func:`spacing_scale`), :func:`distance_transform_edt`'s integer-keyed one (its Triton
    kernels on CUDA), as the host takes its integer-keyed kernels there; otherwise the separable transform of
    :func:`segmetrics_torch.ops.device_edt.squared_feature_transform` (the CPU kernel's passes and float operations;
    each later pass a divide and conquer over the monotone minimising column, all lines of a chunk at once:
    ``O(N log n)`` work, fixed shapes, no host synchronisation), without the feature indices. Its later passes run
    on chunks of whole lines of at most ``2^22`` elements (``2^16`` for CPU tensors; at most 100 bytes of scratch
    each; one line where a line is longer), whatever the shape. Square roots correctly rounded; the spacing is
    divided by a power of two first and the distances multiplied back (:func:`spacing_scale`: exact, and no overflow
    or underflow of its squares). The values are the CPU kernel's and scipy's float operations (each offset times
    its spacing, squared, added in axis order; among equally near features the lowest rounded value). An image without
    a feature gives ``inf`` at its points.

    Example:
        >>> import torch
        >>> f = torch.zeros(3, 4, dtype=torch.bool); f[0, 0] = True
        >>> distance_to_features_device(f, (2.0, 1.0), f.logical_not())[-4:].tolist()
        [4.0, 4.123105625617661, 4.47213595499958, 5.0]
        >>> pair = torch.stack([f, f.flip(0)])  # two images: each measured to its own feature
        >>> distance_to_features_device(pair, (1.0, 1.0), pair.logical_not()).reshape(2, -1)[:, -1].tolist()
        [3.605551275463989, 3.0]
    """
    for name, mask in (("features", features), ("at", at)):
        # both routes below read the masks as bool (the integer-keyed one would take a uint8 mask for empty)
        if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
            got = f"dtype {mask.dtype}" if isinstance(mask, Tensor) else type(mask).__name__
            raise TypeError(f"Expected `{name}` to be a bool tensor, but got {got}.")
    rank = len(spacing)
    if rank not in (2, 3) or features.ndim not in (rank, rank + 1) or at.shape != features.shape:
        raise ValueError(
            f"Expected a 2-D or 3-D mask or a batch of them (one spacing per spatial axis) and `at` of its shape, but "
            f"got shapes {tuple(features.shape)} and {tuple(at.shape)}, spacing {spacing!r}."
        )
    batch, where = (features, at) if features.ndim == rank + 1 else (features[None], at[None])
    spatial = tuple(batch.shape[1:])
    scale, scaled = spacing_scale(spacing, spatial)
    unit_grid = rank == 2 and scaled == (1.0, 1.0)
    per_call = max(1, _DEVICE_BATCH_ELEMENTS // max(1, math.prod(spatial)))
    parts = []
    for start in range(0, batch.shape[0], per_call):
        f, a = batch[start : start + per_call], where[start : start + per_call]
        if f.numel() == 0:
            continue
        if unit_grid:
            # the integer keys (Triton on CUDA): exact integer squared distances, the same correctly rounded roots
            parts.append(_edt_torch(f)[0][a])
        else:
            squared, _ = squared_feature_transform(f, scaled, return_indices=False, chunk_elements=_DEVICE_CHUNK)
            parts.append(_exact_sqrt(squared[a].contiguous()))
    if not parts:
        return torch.empty(0, dtype=torch.float64, device=features.device)
    dist = parts[0] if len(parts) == 1 else torch.cat(parts)
    return dist if scale == 1.0 else dist.mul_(scale)


def distance_to_features(features: np.ndarray, spacing: Sequence[float], at: np.ndarray | None = None) -> np.ndarray:
    """The Euclidean distance, in spacing units, from every element of a 2-D or 3-D bool array to its nearest True
    element (0 on them; ``inf`` everywhere when there is none), as float64 numpy.

    What ``scipy.ndimage.distance_transform_edt(~features, sampling=spacing)`` computes, in its float
    operations (each offset times its spacing, squared, the squares added in axis order: bit for bit wherever one
    feature is the nearest; among features equally near in real arithmetic, an ulp apart, the lowest rounded value:
    :mod:`segmetrics_torch.ops._kernels.edt_spacing`), by a compiled separable
    lower-envelope transform that uses every core (scipy's runs on one); without numba, scipy's. The boundary-distance
    measures read it at the other mask's boundary points: with ``at`` (a bool array of the same shape) only the
    distances at its True elements are returned, in C order (``distance_to_features(f, s)[at]`` without the square roots
    and the float64 array of the whole volume's distances). Any spacing float64 can hold works: the transform runs on
    the spacing divided by a power of two and multiplies the distances back, exactly (:func:`spacing_scale`, which names
    the two refusals).

    Example:
        >>> import numpy as np
        >>> f = np.zeros((3, 4), bool); f[0, 0] = True
        >>> distance_to_features(f, (2.0, 1.0))[2].tolist()
        [4.0, 4.123105625617661, 4.47213595499958, 5.0]
    """
    features = np.asarray(features, dtype=bool)
    if features.ndim not in (2, 3) or len(spacing) != features.ndim:
        raise ValueError(
            f"Expected a 2-D or 3-D mask and one spacing per axis, but got shape {features.shape} and {spacing!r}."
        )
    if at is not None and at.shape != features.shape:
        raise ValueError(f"Expected `at` of the features' shape {features.shape}, but got {at.shape}.")
    if not features.any():
        return np.full(features.shape if at is None else int(np.count_nonzero(at)), np.inf)
    # on the spacing divided by a power of two, and the distances multiplied back: exact, and no square overflows
    scale, scaled = spacing_scale(spacing, features.shape)
    dist = _host_distances(features, scaled, at)
    return dist if scale == 1.0 else np.multiply(dist, scale, out=dist)


def _host_distances(features: np.ndarray, spacing: tuple[float, ...], at: np.ndarray | None) -> np.ndarray:
    """:func:`distance_to_features` of a non-empty mask on a spacing whose squares are normal floats."""
    if not _numba_available():
        from scipy import ndimage

        dist = np.asarray(ndimage.distance_transform_edt(~features, sampling=spacing), dtype=np.float64)
        return dist if at is None else dist[at]
    if features.ndim == 2 and all(float(s) == 1.0 for s in spacing):
        # a unit-spaced image: the integer-keyed 2-D kernels (1.9 ms for 512 x 512 against 3.6 ms), the same bits
        unit, _ = distance_transform_edt(torch.from_numpy(np.ascontiguousarray(features))[None], backend="numba")
        return unit[0].numpy() if at is None else unit[0].numpy()[at]
    import numba

    from ._kernels.edt_spacing import squared_edt

    volume = features if features.ndim == 3 else features[None]
    sampling = np.asarray(tuple(spacing) if features.ndim == 3 else (1.0, *spacing), dtype=np.float64)
    wanted = np.ascontiguousarray(at if features.ndim == 3 else at[None]) if at is not None else volume
    # the last pass restricted to `at` pays where `at` is sparse (a sphere's surface), not on dense boundaries
    only_at = at is not None and np.count_nonzero(at) < _ONLY_AT_FILL * at.size
    unit_grid = bool(np.all(sampling == 1.0))
    squared = squared_edt(
        np.ascontiguousarray(volume), sampling, max(1, numba.get_num_threads()), wanted, only_at, unit_grid
    )
    if at is not None:
        picked = squared.reshape(features.shape)[at]
        return np.sqrt(picked, out=picked)
    return np.sqrt(squared, out=squared).reshape(features.shape)
