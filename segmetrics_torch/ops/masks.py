"""Per-mask pixel counts of stacks of binary masks, with compiled CPU kernels.

* :func:`mask_moments`: pixel count, exact integer coordinate sums (first and second order) and bounding box of
  every mask (the context measure's kernel shape and window).

* :func:`signature_counts`: pixels of every mask per *signature*, a label of pixel groups (e.g. which objects contain
  each pixel), from one pass over the bool masks.
* :func:`boundary_match_counts`: the ``seg2bmap`` boundary of every mask, its pixels per signature, and how many
  reference boundary pixels fall within a disk around it (the counts of a morphological boundary F).

Both read the masks as they are, on the CPU; out-of-range signatures, objects or pixel indices are skipped, never
used to index.

* :func:`overlap_counts`: the tensor alternative, common pixels of every pair of masks as a matrix product, exact
  under autocast (which would return the product in bfloat16 / float16, rounding counts above 256 / 2048).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from segmetrics_torch._checks import BACKENDS, Backend, check_choice, check_tensor

from .backend import resolve

__all__ = ["boundary_match_counts", "mask_moments", "overlap_counts", "signature_counts"]


def _check_masks(masks: Tensor) -> tuple[int, int, int]:
    check_tensor(masks, "masks")
    if masks.dtype != torch.bool or masks.ndim != 3:
        raise ValueError(f"Expected `masks` to be a bool (C, H, W) tensor, but got {masks.dtype} {tuple(masks.shape)}.")
    return masks.shape[0], masks.shape[1], masks.shape[2]


def _check_map(x: Tensor, name: str, shape: tuple[int, int], dtype: torch.dtype | None = None) -> None:
    check_tensor(x, name)
    if tuple(x.shape) != shape or (dtype is not None and x.dtype != dtype):
        want = f"{dtype} " if dtype is not None else ""
        raise ValueError(f"Expected `{name}` to be a {want}{shape} tensor, but got {x.dtype} {tuple(x.shape)}.")


def _uint8(x: Tensor) -> np.ndarray:
    """A bool tensor as a contiguous uint8 host array (a view: no copy for contiguous CPU input)."""
    return x.cpu().contiguous().numpy().view(np.uint8)


MOMENT_NAMES = ("n", "sum_i", "sum_j", "sum_ii", "sum_jj", "sum_ij", "row0", "row1", "col0", "col1")


def mask_moments(masks: Tensor, *, backend: Backend = "auto") -> Tensor:
    """Pixel count, coordinate sums and bounding box of every mask, exact.

    For mask ``k`` with foreground pixels ``(i, j)`` (row, column): ``out[k] = (n, sum i, sum j, sum i^2, sum j^2,
    sum i*j, first row, last row, first column, last column)`` (:data:`MOMENT_NAMES`; the box is inclusive). An
    empty mask gives ``n = 0`` and the box ``(H, -1, W, -1)``. The covariance of the pixel coordinates follows
    exactly from these integers: ``n (n - 1) cov_ij = n sum_ij - sum_i sum_j``.

    ``backend="auto"``: CPU masks are read by one compiled pass (``"numba"``, no coordinate list), other devices (and
    CPU masks under the backend setting ``"tensor"``: :mod:`segmetrics_torch.ops.backend`) by int64 tensor
    reductions (``"torch"``, any device).

    Args:
        masks: bool (B, H, W) masks.
        backend: ``"auto"``, ``"numba"`` or ``"torch"``.

    Returns:
        (B, 10) int64 tensor on the masks' device.

    Example:
        >>> import torch
        >>> m = torch.zeros(1, 4, 5, dtype=torch.bool); m[0, 1, 2] = m[0, 3, 4] = True
        >>> mask_moments(m).tolist()
        [[2, 4, 6, 10, 20, 14, 1, 3, 2, 4]]
    """
    b, h, w = _check_masks(masks)
    check_choice(backend, "backend", BACKENDS)
    if resolve(backend, masks.device) == "numba":
        from ._kernels.moments import mask_moments as kernel

        out = np.zeros((b, 10), np.int64)
        kernel(_uint8(masks), out)
        return torch.from_numpy(out).to(masks.device)
    m = masks.to(torch.int64)
    rows, cols = m.sum(dim=2), m.sum(dim=1)  # (B, H), (B, W)
    i = torch.arange(h, device=masks.device, dtype=torch.int64)
    j = torch.arange(w, device=masks.device, dtype=torch.int64)
    has_r, has_c = rows > 0, cols > 0
    return torch.stack(
        [
            rows.sum(dim=1),
            (rows * i).sum(dim=1),
            (cols * j).sum(dim=1),
            (rows * i * i).sum(dim=1),
            (cols * j * j).sum(dim=1),
            ((m * j).sum(dim=2) * i).sum(dim=1),
            torch.where(has_r, i, h).amin(dim=1),
            torch.where(has_r, i, -1).amax(dim=1),
            torch.where(has_c, j, w).amin(dim=1),
            torch.where(has_c, j, -1).amax(dim=1),
        ],
        dim=1,
    )


def signature_counts(masks: Tensor, signature: Tensor, num_signatures: int) -> Tensor:
    """``out[p, s]`` = number of pixels of mask ``p`` whose ``signature`` is ``s``.

    Args:
        masks: bool (C, H, W) masks.
        signature: (H, W) integer signature of every pixel, in ``[0, num_signatures)`` (others are not counted).
        num_signatures: number of signatures S.

    Returns:
        (C, S) int64 tensor on the CPU.
    """
    c, h, w = _check_masks(masks)
    _check_map(signature, "signature", (h, w))
    from ._kernels.tables import signature_counts as kernel

    out = np.zeros((c, int(num_signatures)), np.int64)
    kernel(_uint8(masks), signature.cpu().numpy(), int(num_signatures), out)
    return torch.from_numpy(out)


def boundary_match_counts(
    masks: Tensor,
    valid: Tensor,
    near: Tensor,
    signature: Tensor,
    num_signatures: int,
    ref_pixels: Tensor,
    ref_objects: Tensor,
    num_objects: int,
    offsets_y: Tensor,
    offsets_x: Tensor,
) -> tuple[Tensor, Tensor, Tensor]:
    """Boundary counts of every mask against the boundaries of ``num_objects`` reference objects.

    With ``b_p`` the ``seg2bmap`` boundary of mask ``p`` and the disk given by the offsets ``(offsets_y, offsets_x)``:

    Args:
        masks: bool (C, H, W) masks.
        valid: bool (H, W): pixels that count (the others, e.g. void, are left out of ``per_signature`` and
            ``count``).
        near: bool (H, W): pixels within the disk of some reference boundary; the disk is stamped around these
            boundary pixels only (no other pixel can reach a reference boundary pixel).
        signature: (H, W) integer signature of every pixel (e.g. which objects' dilated boundaries contain it).
        num_signatures: number of signatures S.
        ref_pixels, ref_objects: (N,) flat indices ``row * W + col`` of the counted reference boundary pixels and
            the object (in ``[0, num_objects)``) of each.
        num_objects: number of reference objects K.
        offsets_y, offsets_x: (D,) integer offsets of the disk.

    Returns:
        ``(per_signature (C, S), matched (C, K), count (C,))`` int64 on the CPU: the valid pixels of ``b_p`` per
        signature; per object, its reference boundary pixels within the disk around ``b_p``; ``|b_p & valid|``.
    """
    c, h, w = _check_masks(masks)
    _check_map(valid, "valid", (h, w), torch.bool)
    _check_map(near, "near", (h, w), torch.bool)
    _check_map(signature, "signature", (h, w))
    for name, x in (("ref_objects", ref_objects), ("offsets_x", offsets_x)):
        partner = ref_pixels if name == "ref_objects" else offsets_y
        check_tensor(x, name)
        if x.ndim != 1 or partner.shape != x.shape:
            raise ValueError(f"Expected `{name}` to be 1-D and as long as its partner, but got {tuple(x.shape)}.")
    from ._kernels.tables import mask_boundary_counts

    per_signature = np.zeros((c, int(num_signatures)), np.int64)
    matched = np.zeros((c, int(num_objects)), np.int64)
    count = np.zeros(c, np.int64)
    mask_boundary_counts(
        _uint8(masks),
        _uint8(valid),
        _uint8(near),
        signature.cpu().numpy(),
        int(num_signatures),
        ref_pixels.cpu().numpy(),
        ref_objects.cpu().numpy(),
        offsets_y.cpu().numpy(),
        offsets_x.cpu().numpy(),
        per_signature,
        matched,
        count,
    )
    return torch.from_numpy(per_signature), torch.from_numpy(matched), torch.from_numpy(count)


def overlap_counts(a: Tensor, b: Tensor) -> Tensor:
    """The common pixels of masks as exact int64 counts: ``a @ b`` of 0/1 matrices (``a``: (N, P), ``b``: (P, K) or
    (P,), bool or float 0/1, on any device).

    The product runs in float32 with autocast off: under autocast (Lightning's ``bf16-mixed`` / ``16-mixed``) a
    matrix product is computed and returned in bfloat16 / float16, which rounds counts above 256 / 2048. float32
    holds every count exactly while a row has at most 2**24 pixels (float64 beyond); TF32 products stay exact too
    (0 and 1 are exact in TF32 and the sums accumulate in float32).

    Example:
        >>> a = torch.tensor([[1, 1, 0], [0, 1, 1]], dtype=torch.bool)
        >>> with torch.autocast("cpu", dtype=torch.bfloat16):
        ...     overlap_counts(a, a.T)
        tensor([[2, 1],
                [1, 2]])
    """
    dtype = torch.float32 if a.shape[-1] <= 1 << 24 else torch.float64
    with torch.autocast(a.device.type, enabled=False):
        return torch.round(a.to(dtype) @ b.to(dtype)).long()
