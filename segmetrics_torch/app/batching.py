"""Running a family's measures over decoded image pairs, for every evaluator of the app: batches of up to N
pairs (as lists where sizes differ), progress counting, the image named when a measure rejects a batch, the
device's synchronisation and the NaN-image warning."""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import torch

from ..errors import InputError


def chunked(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def batches(
    images: Iterable[tuple[str, Any, Any]], batch_size: int, device: str | torch.device
) -> Iterator[tuple[list[str], Any, Any]]:
    """Group same-size images into (B, H, W) batches; holds at most ~4 batches of images of mixed sizes.

    Yields ``(names, preds, target)``: stacked tensors for a full group of one size, or lists of (H, W) tensors when
    the pending images of several sizes are flushed together (the metric groups them by size itself).
    """

    pending: dict[tuple[int, int], list[tuple[str, Any, Any]]] = {}
    held = 0
    for stem, pred, gt in images:
        group = pending.setdefault(pred.shape, [])
        group.append((stem, pred, gt))
        held += 1
        if len(group) == batch_size:
            del pending[pred.shape]
            held -= batch_size
            preds = torch.from_numpy(np.stack([p for _, p, _ in group])).to(device)
            target = torch.from_numpy(np.stack([g for _, _, g in group])).to(device)
            yield [s for s, _, _ in group], preds, target
        elif held >= 4 * batch_size:
            yield as_lists(pending, device)
            pending.clear()
            held = 0
    if pending:
        yield as_lists(pending, device)


def as_lists(
    pending: dict[tuple[int, int], list[tuple[str, Any, Any]]], device: str | torch.device
) -> tuple[list[str], Any, Any]:

    items = [item for group in pending.values() for item in group]
    return (
        [s for s, _, _ in items],
        [torch.from_numpy(p).to(device) for _, p, _ in items],
        [torch.from_numpy(g).to(device) for _, _, g in items],
    )


def run_named(run: Callable[[Any, Any], Any], batch: list[tuple[str, Any, Any]], device: str | torch.device) -> Any:
    """``run(preds, target)`` on a batch of ``(stem, pred, gt)`` arrays as lists of tensors on ``device``; a
    ValueError becomes an :class:`InputError` naming the image at fault (found by running the images one by one)."""

    preds = [torch.from_numpy(pred).to(device) for _, pred, _ in batch]
    target = [torch.from_numpy(gt).to(device) for _, _, gt in batch]
    try:
        return run(preds, target)
    except ValueError as error:
        raise image_at_fault(
            lambda i: run(preds[i : i + 1], target[i : i + 1]), [s for s, _, _ in batch], error
        ) from None


def image_at_fault(probe: Callable[[int], Any], names: Sequence[str], error: ValueError) -> InputError:
    """The :class:`InputError` of a batch's ValueError, naming the image at fault: the first ``i`` whose
    ``probe(i)`` (the step run on image ``i`` alone) raises too (a batch's message names an index, not a file)."""
    if len(names) > 1:
        for i, stem in enumerate(names):
            try:
                probe(i)
            except ValueError as single:
                return InputError(f"{stem}: {single}")
    return InputError(f"{', '.join(names)}: {error}")


def update_naming_the_image(metric: Any, preds: Any, target: Any, names: list[str]) -> None:
    """``metric.update(preds, target)``; a ValueError (an input the measure has no value for, e.g. the context
    measure's GT on one slanted line) becomes an :class:`InputError` naming the image, found by updating a copy of
    the metric with each image alone (:func:`image_at_fault`; a failed update adds nothing)."""

    try:
        metric.update(preds, target)
    except ValueError as error:
        raise image_at_fault(
            lambda i: copy.deepcopy(metric).update(preds[i : i + 1], target[i : i + 1]), names, error
        ) from None


def sync(device: str | torch.device) -> None:
    """Wait for a CUDA device, so that timings and results are complete."""
    if getattr(device, "type", str(device)) == "cuda":
        torch.cuda.synchronize(device)


def warn_nan_images(measure: str, stems: Sequence[str], total: int, reason: str) -> None:
    """One ``warning:`` line on stderr naming the measure, the images and the reason of a documented NaN."""
    shown = ", ".join(stems[:8]) + (f" ... and {len(stems) - 8} more" if len(stems) > 8 else "")
    print(
        f"warning: {measure} is NaN for {len(stems)} of {total} image(s) ({shown}): {reason}; the dataset's {measure} "
        "is NaN",
        file=sys.stderr,
    )
