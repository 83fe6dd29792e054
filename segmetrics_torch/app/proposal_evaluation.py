"""``segmetrics evaluate proposals``' evaluator: proposal pools (``.npz``, or label images) against object ground
truth, read pair by pair, through :class:`~segmetrics_torch.ProposalRecall` (MCG's ``eval_proposals.m``)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import torch

from .. import ProposalRecall
from ..errors import InputError
from ..functional.proposals import MCG_PROPOSAL_COUNTS
from ..io import read_objects, read_proposals
from . import distributed
from .batching import sync
from .family_job import Evaluated, FamilyInput


def _read_proposal_pairs(
    pairs: Iterable[tuple[str, Path, Path]],
    classes: Mapping[str, Path] | None,
    void_label: int | None,
    class_option: str,
) -> Iterator[tuple[str, Any, Any]]:
    """Yield ``(stem, pool, ObjectAnnotation)``: pool (P, H, W) bool or an (H, W) label map, checked for size."""

    for stem, pred_path, gt_path in pairs:
        try:
            pool = read_proposals(pred_path)
            class_path = None if classes is None else classes.get(stem)
            if classes is not None and class_path is None:
                raise ValueError(f"no class image named {stem} in the {class_option} folder")
            gt = read_objects(gt_path, void_label=void_label, class_path=class_path)
        except (ValueError, OSError) as error:
            raise InputError(str(error) if stem in str(error) else f"{stem}: {error}") from None
        h, w = gt.objects.shape[1:]
        if pool.shape[-2:] != (h, w):
            raise InputError(
                f"{stem}: the proposals {pred_path} are {pool.shape[-1]}x{pool.shape[-2]} (WxH) but the objects "
                f"{gt_path} are {w}x{h}"
            )
        yield stem, pool, gt


def evaluate_proposals(work: FamilyInput) -> Evaluated:
    """Object proposals of a dataset, the MCG protocol (:class:`~segmetrics_torch.ProposalRecall`).

    Pools are read in this process, one image at a time (a pool of thousands of masks is large; shipping it from a
    worker would cost more than reading it): ``work.images`` holds ``(stem, proposals_path, objects_path)``
    (:func:`segmetrics_torch.io.read_proposals`, :func:`segmetrics_torch.io.read_objects`). ``work.options``:
    ``counts`` (the numbers of proposals N; None: MCG's), ``void_label``, ``num_classes``, ``chunk_size``,
    ``boundary``, ``bound_th`` as the ``evaluate proposals`` options, ``classes`` (``{stem: class image}`` for the
    class-averaged J_c, Pascal ``SegmentationClass``, or None) and ``class_option`` (how error messages name the
    class folder).

    Returns:
        ``results``: ``compute()`` and ``per_image`` (``{stem: {num_proposals, num_objects, best_jaccard[,
        best_boundary_f]}}``: each object's best J / F within the largest N); ``settings``: the counts and the number
        of classes; ``state``: the metric.
    """

    o, device = work.options, work.device
    counts = sorted(set(o["counts"] or MCG_PROPOSAL_COUNTS))
    num_classes, boundary = o["num_classes"], o["boundary"]
    per_image: dict[str, dict[str, Any]] = {}
    images = _read_proposal_pairs(work.images, o["classes"], o["void_label"], o["class_option"])
    head = next(images)
    with_classes = head[2].classes is not None  # J_c when the annotations carry classes
    metric = ProposalRecall(
        counts,
        num_classes=num_classes if with_classes else None,
        chunk_size=o["chunk_size"],
        boundary=boundary,
        bound_th=o["bound_th"],
    ).to(device)
    for stem, pool, gt in itertools.chain([head], images):
        if (gt.classes is not None) != with_classes:
            raise InputError(f"{stem}: some annotations carry class ids and others do not")
        if with_classes and int(gt.classes.max()) >= num_classes:
            raise InputError(f"{stem}: class id {int(gt.classes.max())} >= --num-classes {num_classes}")
        arrays = [
            None if x is None else torch.from_numpy(x).to(device) for x in (pool, gt.objects, gt.void, gt.classes)
        ]
        try:
            metric.update(*arrays)
        except ValueError as error:
            raise InputError(f"{stem}: {error}") from None
        per_image[stem] = {
            "num_proposals": int(pool.max()) if pool.ndim == 2 else pool.shape[0],
            "num_objects": gt.objects.shape[0],
            # each object's best J (F) within the largest N
            "best_jaccard": metric.best[-1][:, -1].tolist(),
        }
        if boundary:
            per_image[stem]["best_boundary_f"] = metric.boundary_best[-1][:, -1].tolist()
    with distributed.peers():
        results = metric.compute()  # under torchrun the Metric sums every rank's states
    sync(device)
    per_image = {stem: values for part in distributed.gather(per_image) for stem, values in part.items()}
    settings = {"counts": counts, "num_classes": metric.num_classes}
    return Evaluated({**results, "per_image": per_image}, settings, metric)
