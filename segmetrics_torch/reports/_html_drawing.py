"""The pictures of the HTML error browser (:mod:`.html_report`): every (image, method) of the worst-k sets read
through the command's readers (:mod:`segmetrics_torch.datasets.decoding`, :func:`segmetrics_torch.io.read_label_volume`)
and drawn as ground truth, prediction and the family's error overlay (:mod:`.overlays`).

:mod:`.html_report` imports this module when a report draws: it loads torch and the library's ops, which a command
that imports :mod:`.html_report` at its start does not pay for until then.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..datasets.decoding import decode_pairs, decode_tasks
from ..errors import InputError
from ..functional.boundary.bsds import annotator_boundaries, default_thresholds
from ..io import read_label_volume
from ..ops.edge_nms import edge_nms
from ..ops.hierarchy import ucm_hierarchy
from . import overlays
from ._html_common import CHUNK, HtmlImage, Job

__all__ = ["drawings"]


def _label_colours(labels: np.ndarray) -> np.ndarray:
    """Distinct, stable colours of integer labels (a multiplicative hash of the label), 0 black."""
    mixed = (labels.astype(np.uint64) * np.uint64(2654435761)) & np.uint64(0xFFFFFF)
    rgb = np.stack([(mixed >> np.uint64(s)) & np.uint64(255) for s in (16, 8, 0)], axis=-1).astype(np.uint8)
    rgb[labels == 0] = 0
    return rgb


@dataclass
class _Drawn:
    """The pictures of one (image, method): display arrays of the ground truth and prediction, the overlay."""

    gt: np.ndarray | None
    pred: np.ndarray | None
    overlay: np.ndarray | None
    caption: str = ""


def _format(image: HtmlImage, family: str, options: Mapping[str, Any]) -> dict[str, Any]:
    gt_format = options.get("gt_format") or ("mat" if Path(image.gt).suffix.lower() == ".mat" else "image")
    if family == "partition" and gt_format == "image":
        gt_format = "labels"
    default_input = "labels" if family == "partition" else "soft"
    return {
        "input_format": options.get("input_format", default_input),
        "gt_format": gt_format,
        "resize": bool(options.get("resize", False)),
    }


def _decode_foreground(image: HtmlImage, method: str, options: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:

    task = decode_tasks(
        [(image.image, Path(image.predictions[method]), Path(image.gt))],
        "foreground",
        resize=bool(options.get("resize", False)),
    )
    _, pred, gt = next(iter(decode_pairs(task)))
    return pred, gt


_ERRORS = (OSError, ValueError, InputError, ImportError)


def drawings(family: str, jobs: Sequence[Job], options: Mapping[str, Any]) -> Iterator[tuple[Job, _Drawn | str]]:
    """``(job, _Drawn or the reason it was not drawn)`` for every job, in chunks (foreground: batched overlays)."""

    for start in range(0, len(jobs), CHUNK):
        chunk = jobs[start : start + CHUNK]
        if family != "foreground":
            for job in chunk:
                try:
                    yield job, _draw(family, job.image, job.method, options, job.threshold)
                except _ERRORS as error:
                    yield job, f"not drawn: {error}"
            continue
        by_shape: dict[tuple[int, ...], list[tuple[Job, np.ndarray, np.ndarray]]] = {}
        for job in chunk:
            try:
                pred, gt = _decode_foreground(job.image, job.method, options)
            except _ERRORS as error:
                yield job, f"not drawn: {error}"
                continue
            by_shape.setdefault(pred.shape, []).append((job, pred, gt))
        for items in by_shape.values():
            preds, gts = np.stack([p for _, p, _ in items]), np.stack([g for _, _, g in items])
            pictures = overlays.foreground_overlays(preds, gts)
            for (job, pred, gt), picture in zip(items, pictures, strict=True):
                yield job, _Drawn(np.where(gt > 128, 255, 0).astype(np.uint8), pred, picture)


def _levels(value: Any) -> int | list[float]:
    """The ``thresholds`` option: a count, or the values (a tensor, an array or a list)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return [float(v) for v in (value.tolist() if hasattr(value, "tolist") else value)]


def _draw(family: str, image: HtmlImage, method: str, options: Mapping[str, Any], given: float | None) -> _Drawn:
    """Read one pair through the command's readers and draw it (see :mod:`.overlays`); not foreground (batched in
    :func:`_drawings`)."""

    pred_path, gt_path = Path(image.predictions[method]), Path(image.gt)
    if family == "surface":
        pred, _ = read_label_volume(pred_path)
        gt, header = read_label_volume(gt_path)
        if pred.shape != gt.shape:
            raise ValueError(f"the prediction has shape {pred.shape} and the ground truth {gt.shape}")
        spacing = options.get("spacing") or header
        drawn = overlays.surface_overlay(pred, gt, spacing)
        if drawn.slice_index is not None:
            pred, gt = pred[..., drawn.slice_index], gt[..., drawn.slice_index]
        where = f"slice {drawn.slice_index}, " if drawn.slice_index is not None else ""
        return _Drawn(_label_colours(gt), _label_colours(pred), drawn.rgb, f"{where}largest {drawn.max_distance:.3g}")

    formats = _format(image, family, options)
    task = decode_tasks([(image.image, pred_path, gt_path)], family, **formats)
    _, pred, gt = next(iter(decode_pairs(task)))
    if family == "boundary":
        if formats["gt_format"] == "labels":
            gt = annotator_boundaries(torch.from_numpy(gt)).numpy()
        pb = pred[2::2, 2::2] if formats["input_format"] == "ucm2" else pred.astype(np.float64) / 255.0
        if options.get("nms"):  # the run's order (pyEdgeEval apply_nms): NMS, then threshold, then thin
            pb = edge_nms(torch.from_numpy(pb)[None])[0].numpy()
        threshold = given
        matched = overlays.boundary_overlay(
            pb,
            gt,
            threshold=threshold,
            max_dist=float(options.get("max_dist", 0.0075)),
            thin=bool(options.get("thin", True)),
            thresholds=_levels(options.get("thresholds", 99)),
        )
        shown = (255 * gt.mean(axis=0)).round().astype(np.uint8)
        cnt_r, sum_r, cnt_p, sum_p = matched.counts
        recall, precision = cnt_r / sum_r if sum_r else 0.0, cnt_p / sum_p if sum_p else 0.0  # BSR: 0 when empty
        caption = f"threshold {matched.threshold:.3g}, R {recall:.3f}, P {precision:.3f}"
        return _Drawn(shown, (255 * pb).round().astype(np.uint8), matched.rgb, caption)
    if family == "partition":
        first = gt[0]
        if formats["input_format"] == "labels":
            return _Drawn(_label_colours(first), _label_colours(pred), overlays.partition_overlay(pred, first))
        if formats["input_format"] == "stack":
            best = overlays.hierarchy_overlay(pred, first)
            caption = f"level {best.level + 1} of {pred.shape[0]}, covering {best.covering:.3f}"
            return _Drawn(_label_colours(first), _label_colours(pred[best.level]), best.rgb, caption)

        levels = (
            torch.tensor([given], dtype=torch.float64)
            if given is not None
            else default_thresholds(_levels(options.get("thresholds", 99)))
        )
        hierarchy = ucm_hierarchy([torch.from_numpy(pred)], levels, rule=options.get("rule", "seism"))
        maps = hierarchy.partitions(0).numpy()
        best = overlays.hierarchy_overlay(maps, first)
        caption = f"threshold {float(levels[best.level]):.3g}, covering {best.covering:.3f}"
        return _Drawn(_label_colours(first), _label_colours(maps[best.level]), best.rgb, caption)
    raise AssertionError(family)  # proposals never reach here
