"""``segmetrics evaluate partition``'s evaluator: label maps through :class:`~segmetrics_torch.PartitionMeasures`, or
hierarchies (ucm2 / segs) through :class:`~segmetrics_torch.HierarchyMeasures`, with the soft-map and depth checks
of the pairs, and each image's row.

Its own module (not :mod:`.evaluation`'s): these Metric classes import torchmetrics (about a second), which a
foreground or boundary run never loads.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import torch

from .. import HierarchyMeasures, PartitionMeasures
from ..datasets.label_maps import check_depth, check_soft_labels
from ..datasets.prescan import warn_on_stderr
from ..errors import InputError
from ..functional.partition import partition_measures
from . import distributed
from .batching import chunked, run_named, sync
from .family_job import Evaluated, FamilyInput

if TYPE_CHECKING:  # annotations only
    from ..functional.partition import HierarchyFormat
    from ..ops.hierarchy import Rule

__all__ = ["evaluate_partition"]


def _check_depth_across_ranks(head: tuple[str, Any, Any], pairs: Sequence[tuple[str, Path, Path]]) -> None:
    """Under torchrun, every rank's first ``segs`` stack must have the depth (number of levels) of rank 0's."""
    (stem0, depth0), *others = distributed.gather((head[0], head[1].shape[0]))
    paths = {stem: Path(pred) for stem, pred, _ in pairs}
    for stem, depth in others:
        if depth != depth0:
            raise InputError(
                f"{stem}: `segs` of {paths[stem]} holds {depth} levels but that of {paths[stem0]} "
                f"holds {depth0}; every hierarchy needs the same number of levels"
            )


def evaluate_partition(work: FamilyInput) -> Evaluated:
    """SEISM's measures of a dataset of partitions (label maps) or hierarchies (ucm2, segs).

    ``work.input_format``: "labels", "ucm2" or "stack" (:func:`partition_formats`); ``work.gt_format``: "mat" (BSDS
    groundTruth ``Segmentation``) or "labels" (label images); ``work.options``: ``measures``, ``gamma_obj``,
    ``max_dist`` as :class:`~segmetrics_torch.PartitionMeasures`, and for ucm2 hierarchies ``thresholds``,
    ``num_regions``, ``rule`` as :class:`~segmetrics_torch.HierarchyMeasures` (``thresholds`` None: 99). Label maps
    that look like soft maps are warned about on stderr (:func:`~.soft_maps.check_soft_labels`).

    Returns:
        ``results``: ``compute()`` of :class:`~segmetrics_torch.HierarchyMeasures`, or for label maps that of
        :class:`~segmetrics_torch.PartitionMeasures` plus ``per_image`` (``{stem: {measure: value}}``); ``settings``:
        the measures (and a hierarchy's levels and occurrence rule); ``state``: the Metric.
    """

    input_format, pairs, o = work.input_format, work.pairs, work.options
    hierarchy = input_format != "labels"
    per_image: list[dict[str, Any]] = []
    images: Iterator[tuple[str, Any, Any]] = work.images
    if input_format == "stack":
        images = check_depth(images, {stem: Path(pred) for stem, pred, _ in pairs})
    if input_format == "labels":
        images = check_soft_labels(
            images,
            {stem: Path(pred) for stem, pred, _ in pairs},
            warn_on_stderr if distributed.is_main() else None,  # under torchrun rank 0 speaks
        )
    head = next(images)  # a `segs` stack: its depth is the number of levels
    if input_format == "stack" and distributed.active():
        _check_depth_across_ranks(head, pairs)
    options: dict[str, Any] = {"measures": o["measures"], "gamma_obj": o["gamma_obj"], "max_dist": o["max_dist"]}
    metric: Any
    if hierarchy:
        levels = head[1].shape[0] if input_format == "stack" else (o["thresholds"] or 99)
        metric = HierarchyMeasures(
            levels,
            num_regions=o["num_regions"],
            rule=cast("Rule", o["rule"]),
            input_format=cast("HierarchyFormat", input_format),
            **options,
        )
    else:
        metric = _keeping_each_image(per_image, **options)
    metric = metric.to(work.device)
    for batch in chunked(itertools.chain([head], images), work.batch_size):
        run_named(metric.update, batch, work.device)
    with distributed.peers():
        results = metric.compute()  # under torchrun the Metric sums every rank's states
    sync(work.device)
    settings: dict[str, Any] = {"measures": list(metric.measures)}
    if hierarchy:
        settings.update(parameters=metric.levels, unique_occurrence=metric.unique_occurrence)
    else:
        results = {**results, "per_image": _per_image_rows(per_image, pairs)}
    return Evaluated(results, settings, metric)


def _keeping_each_image(per_image: list[dict[str, Any]], **options: Any) -> Any:
    """A :class:`~segmetrics_torch.PartitionMeasures` that appends every batch's per-image values to ``per_image``
    too (for the report), computed once."""

    class PerImage(PartitionMeasures):
        def update(self, preds: Any, target: Any) -> None:
            values = partition_measures(preds, target, measures=self.measures, **self.options)
            self.update_values(values)
            per_image.append(values)

    return PerImage(**options)


def _per_image_rows(per_image: list[dict[str, Any]], pairs: Sequence[tuple[str, Path, Path]]) -> dict[str, Any]:
    """``{stem: {measure: value}}`` from the batches' value dicts (every rank's, in the pairs' order)."""

    per_image = [values for part in distributed.gather(per_image) for values in part]  # torchrun: image order
    per = {k: torch.cat([values[k] for values in per_image]).tolist() for k in per_image[0]}
    return {stem: {k: v[i] for k, v in per.items()} for i, (stem, _, _) in enumerate(pairs)}
