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

from ..._checks import ImageBatch
from ._intermediates import _blocks, run_grouped, use_cpu_kernel

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
    fn: Callable[[Tensor, Tensor], object],
    preds: Tensor,
    target: Tensor,
    block: range,
    indices: list[int] | None,
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
    if not isinstance(normalize, bool):
        raise TypeError(f"Expected argument `normalize` to be a bool, but got {normalize!r}.")
    return run_grouped(
        lambda p, t, indices, n: _run_stack(fn, p, t, indices, n),
        preds,
        target,
        validate_args=validate_args,
        names=names,
    )
