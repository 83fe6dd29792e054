"""Validation, grouping by size and blocking for the threshold-set, size-invariant and MSIoU measures.

:func:`run_raw` is :func:`._prepare.run_per_image` for measures that need the *raw* block of maps (not only the
shared intermediates): it validates ``preds``/``target`` with the family's checks (same messages), stacks lists of
equally sized maps, cuts CPU batches into cache-sized blocks and calls ``fn(preds_block, target_block)``, which
returns a dict of tensors whose first dimension is the block's batch size. Results come back in input order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

import torch
from torch import Tensor

from ..._checks import ImageBatch, as_image_list, check_image_stack, check_tensor
from ._intermediates import _blocks, use_cpu_kernel
from ._prepare import check_dtypes, check_values

__all__ = ["run_raw"]


def _run_stack(
    fn: Callable[[Tensor, Tensor], dict[str, Tensor]],
    preds: Tensor,
    target: Tensor,
    indices: list[int] | None = None,
    batch: int = 1,
) -> dict[str, Tensor]:
    # indices[j]: the position of stacked image j in the caller's batch of `batch` images (for the error message)
    kernel = use_cpu_kernel(preds.device)
    parts = []
    for b in _blocks(preds.shape[0], preds.shape[1], preds.shape[2], preds.device, kernel):
        try:
            parts.append(fn(preds[b], target[b]))
        except ValueError as err:
            if batch == 1:
                raise
            _raise_for_image(fn, preds, target, range(preds.shape[0])[b], indices, err)
    if len(parts) == 1:
        return parts[0]
    return {key: torch.cat([part[key] for part in parts]) for key in parts[0]}


def _raise_for_image(
    fn: Callable[[Tensor, Tensor], object], preds: Tensor, target: Tensor, block: range, indices: list[int] | None,
    err: ValueError,
) -> NoReturn:
    """Re-raise a block's ValueError (e.g. a singular GT of the context measure) naming the image of the batch that
    causes it: the block's images are tried one by one (only after the failure, so the batch path stays as fast)."""
    for j in block:
        try:
            fn(preds[j : j + 1], target[j : j + 1])
        except ValueError as one:
            k = j if indices is None else indices[j]
            raise ValueError(f"Image {k} of the batch: {one}") from None
    raise err  # no single image fails alone (not expected): the block's own error


def run_raw(
    fn: Callable[[Tensor, Tensor], dict[str, Tensor]],
    preds: ImageBatch,
    target: ImageBatch,
    *,
    normalize: bool = True,
    validate_args: bool = True,
    names: tuple[str, str] = ("preds", "target"),
) -> dict[str, Tensor]:
    """Validate, group and block the inputs, return ``fn(preds_block, target_block)`` concatenated in input order.

    ``preds``/``target``: (B, H, W) or (B, 1, H, W) tensors, or lists of (H, W) / (1, H, W) tensors of any sizes.
    """
    pname, tname = names
    if not isinstance(normalize, bool):
        raise TypeError(f"Expected argument `normalize` to be a bool, but got {normalize!r}.")
    if not isinstance(validate_args, bool):
        raise TypeError(f"Expected argument `validate_args` to be a bool, but got {validate_args!r}.")
    plist, tlist = as_image_list(preds, pname), as_image_list(target, tname)
    if (plist is None) != (tlist is None):
        raise TypeError(f"Expected `{pname}` and `{tname}` to be both tensors or both lists of tensors.")
    if plist is None or tlist is None:  # both None (checked above)
        preds = check_image_stack(check_tensor(preds, pname), pname)
        target = check_image_stack(check_tensor(target, tname), tname)
        if preds.shape != target.shape:
            raise ValueError(
                f"Expected `{pname}` and `{tname}` to have the same shape, but got {tuple(preds.shape)} and "
                f"{tuple(target.shape)}."
            )
        if preds.device != target.device:
            raise ValueError(f"Expected `{pname}` and `{tname}` on one device, got {preds.device} and {target.device}.")
        check_dtypes(preds, target, pname, tname)
        if validate_args:
            check_values(preds, target, pname, tname)
        return _run_stack(fn, preds, target, batch=preds.shape[0])

    if len(plist) != len(tlist):
        raise ValueError(f"Expected as many `{tname}` as `{pname}` images, but got {len(tlist)} and {len(plist)}.")
    groups: dict[tuple, list[int]] = {}
    for i, (p, t) in enumerate(zip(plist, tlist, strict=True)):
        if p.shape != t.shape:
            raise ValueError(
                f"Expected `{pname}[{i}]` and `{tname}[{i}]` to have the same shape, but got {tuple(p.shape)} and "
                f"{tuple(t.shape)}."
            )
        if p.shape[0] == 0 or p.shape[1] == 0:
            raise ValueError(f"Expected `{pname}[{i}]` to be a non-empty image, but got shape {tuple(p.shape)}.")
        check_dtypes(p, t, f"{pname}[{i}]", f"{tname}[{i}]")
        groups.setdefault((tuple(p.shape), p.dtype, t.dtype, p.device), []).append(i)
    results: dict[str, Tensor] | None = None
    for indices in groups.values():
        p = torch.stack([plist[i] for i in indices])
        t = torch.stack([tlist[i] for i in indices])
        if validate_args:
            check_values(p, t, f"{pname}[{indices[0]}..]", f"{tname}[{indices[0]}..]")
        out = _run_stack(fn, p, t, indices, len(plist))
        if results is None:
            results = {k: v.new_empty((len(plist), *v.shape[1:])) for k, v in out.items()}
        index = torch.tensor(indices, device=p.device)
        for k, v in out.items():
            results[k][index] = v
    assert results is not None
    return results
