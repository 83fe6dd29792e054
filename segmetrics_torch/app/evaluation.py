"""Evaluating folders of predictions: the family cores shared by every ``segmetrics evaluate`` command.

Each family has one core that takes matched file pairs and returns what the commands report, computed by the
library's own measures (nothing here re-implements a measure):

* :func:`evaluate_foreground`: :class:`~segmetrics_torch.ForegroundMeasures`' sums and ``compute()`` over grayscale maps
  (as the torchmetrics-free ``ForegroundSums``);
* :func:`evaluate_boundary`: :func:`~segmetrics_torch.functional.boundary.boundary_pr_counts` per batch, then
  :func:`~segmetrics_torch.functional.boundary.summarize_counts` (BSR ``collect_eval_bdry.m``);
* :func:`evaluate_partition`: :class:`~segmetrics_torch.PartitionMeasures` (label maps) or
  :class:`~segmetrics_torch.HierarchyMeasures` (ucm2 / segs hierarchies).

Images are decoded by :func:`decode_pairs`, in worker processes when ``workers > 0`` (decoding a PNG costs about as
much as evaluating it on CPU, so a second core decoding while the first evaluates nearly halves the wall time), in
the order of the pairs whatever the number of workers. The runner of many methods x datasets, its cache and its
configuration file live in :mod:`segmetrics_torch.app.report_run`.

Reading conventions (documented for users in the README, "Evaluation reports"):

* grayscale maps: :func:`segmetrics_torch.io.read_gray` (``== cv2.imread(path, cv2.IMREAD_GRAYSCALE)``: colour
  images become OpenCV's luma, see :mod:`segmetrics_torch.io`), plus 16-bit grayscale PNG/TIFF as OpenCV reads
  them without ``IMREAD_ANYDEPTH``: the high byte ``v >> 8``. A 16-bit image whose values all lie below 256 (a mask
  saved as 0/1 or 0/255 in 16 bits) would become all zero that way and is an error instead.
* ``resize``: a grayscale prediction whose size differs from its ground truth is an error unless resizing is
  allowed; it is then resized to the ground truth's size exactly as PySODEvalToolkit does,
  ``cv2.resize(pred, (W, H), interpolation=cv2.INTER_LINEAR)`` (:func:`resize_linear`, bit-exact).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from . import distributed
from .errors import InputError

if TYPE_CHECKING:  # annotations only: the app imports torch lazily

    import torch

    from ..functional.boundary.bsds import InputFormat
    from ..functional.partition.hierarchy import HierarchyFormat
    from ..metrics import ProposalRecall
    from ..ops.hierarchy import Rule
    from .foreground_sums import ForegroundSums

from .decoding import DecodeStream, DecodeTask, decode_pairs, decode_tasks, worker_pool_context
from .pairing import (
    BOUNDARY_EXTENSIONS,
    GT_FORMATS,
    PREDICTION_FORMATS,
    boundary_formats,
    check_pairing,
    hierarchy_format,
    match_folders,
    pairing_error,
    partition_formats,
    warn_on_stderr,
)

__all__ = [
    "BOUNDARY_EXTENSIONS",
    "GT_FORMATS",
    "PREDICTION_FORMATS",
    "DecodeStream",
    "DecodeTask",
    "InputError",
    "boundary_formats",
    "boundary_report",
    "check_boundary_nms",
    "check_pairing",
    "decode_pairs",
    "decode_tasks",
    "default_workers",
    "evaluate_boundary",
    "evaluate_foreground",
    "evaluate_partition",
    "evaluate_proposals",
    "evaluate_surface",
    "hierarchy_format",
    "load_measures",
    "match_folders",
    "pairing_error",
    "partition_formats",
    "worker_pool_context",
]

# --------------------------------------------------------------------------------------------------- running


def _counted(images: Iterable[tuple[str, Any, Any]], progress: Any) -> Iterator[tuple[str, Any, Any]]:
    for item in images:
        if progress is not None:
            progress.update(1)
        yield item


def _chunked(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _batches(
    images: Iterable[tuple[str, Any, Any]], batch_size: int, device: str | torch.device
) -> Iterator[tuple[list[str], Any, Any]]:
    """Group same-size images into (B, H, W) batches; holds at most ~4 batches of images of mixed sizes.

    Yields ``(names, preds, target)``: stacked tensors for a full group of one size, or lists of (H, W) tensors when
    the pending images of several sizes are flushed together (the metric groups them by size itself).
    """
    import torch

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
            yield _as_lists(pending, device)
            pending.clear()
            held = 0
    if pending:
        yield _as_lists(pending, device)


def _as_lists(
    pending: dict[tuple[int, int], list[tuple[str, Any, Any]]], device: str | torch.device
) -> tuple[list[str], Any, Any]:
    import torch

    items = [item for group in pending.values() for item in group]
    return (
        [s for s, _, _ in items],
        [torch.from_numpy(p).to(device) for _, p, _ in items],
        [torch.from_numpy(g).to(device) for _, _, g in items],
    )


def run_named(run: Callable[[Any, Any], Any], batch: list[tuple[str, Any, Any]], device: str | torch.device) -> Any:
    """``run(preds, target)`` on a batch of ``(stem, pred, gt)`` arrays as lists of tensors on ``device``; a
    ValueError becomes an :class:`InputError` naming the image at fault (found by running the images one by one)."""
    import torch

    preds = [torch.from_numpy(pred).to(device) for _, pred, _ in batch]
    target = [torch.from_numpy(gt).to(device) for _, _, gt in batch]
    try:
        return run(preds, target)
    except ValueError as error:
        raise _image_at_fault(lambda i: run(preds[i : i + 1], target[i : i + 1]), [s for s, _, _ in batch],
                              error) from None  # fmt: skip


def _image_at_fault(probe: Callable[[int], Any], names: Sequence[str], error: ValueError) -> InputError:
    """The :class:`InputError` of a batch's ValueError, naming the image at fault: the first ``i`` whose
    ``probe(i)`` (the step run on image ``i`` alone) raises too (a batch's message names an index, not a file)."""
    if len(names) > 1:
        for i, stem in enumerate(names):
            try:
                probe(i)
            except ValueError as single:
                return InputError(f"{stem}: {single}")
    return InputError(f"{', '.join(names)}: {error}")


def _update_naming_the_image(metric: Any, preds: Any, target: Any, names: list[str]) -> None:
    """``metric.update(preds, target)``; a ValueError (an input the measure has no value for, e.g. the context
    measure's GT on one slanted line) becomes an :class:`InputError` naming the image, found by updating a copy of
    the metric with each image alone (:func:`_image_at_fault`; a failed update adds nothing)."""
    import copy

    try:
        metric.update(preds, target)
    except ValueError as error:
        raise _image_at_fault(lambda i: copy.deepcopy(metric).update(preds[i : i + 1], target[i : i + 1]), names,
                              error) from None  # fmt: skip


def sync(device: str | torch.device) -> None:
    """Wait for a CUDA device, so that timings and results are complete."""
    if getattr(device, "type", str(device)) == "cuda":
        import torch

        torch.cuda.synchronize(device)


def evaluate_foreground(
    pairs: Sequence[tuple[str, Path, Path]],
    *,
    device: str | torch.device = "cpu",
    batch_size: int = 16,
    workers: int = 0,
    resize: bool | None = None,
    progress: Any = None,
    images: Iterable[tuple[str, Any, Any]] | None = None,
    per_image: bool = False,
    include: Sequence[str] = (),
) -> tuple[dict[str, Any], ForegroundSums]:
    """Every foreground measure of a dataset, PySODMetrics-exact: the sums and ``compute()`` of
    :class:`~segmetrics_torch.ForegroundMeasures` in ``app.foreground_sums.ForegroundSums``.

    Args:
        pairs: ``(stem, pred_path, gt_path)``; maps read by :func:`read_gray_map`, ground truth binarised ``> 128``.
        device: where the measures run.
        batch_size: images per update (same-size images are stacked).
        workers: decoding processes (0: decode in this process).
        resize: resize predictions of another size to their ground truth (:func:`resize_linear`); None: error
            without a ``--resize`` hint.
        progress: an object with ``update(n)`` (a tqdm bar), or None.
        images: the decoded pairs, already streaming (:class:`DecodeStream` of :func:`decode_tasks`), instead of
            decoding ``pairs`` here.
        per_image: keep every image's scalars in ``metric.per_image`` (``{stem: {measure: value}}``).
        include: the measures of ``ForegroundMeasures(include=...)`` to compute too (their Metric classes, which
            import torchmetrics: only when asked); their results join ``results`` under their names.

    Returns:
        ``(results, metric)``: ``metric.compute()`` (nested dict of tensors, curves included) and the accumulator
        (its ``count``, ``settings``, ``normalize``, ``per_image``).
    """
    # the Metric's sums without torchmetrics, whose import alone costs about a second of a command's run
    from .foreground_sums import ForegroundSums

    metric = ForegroundSums(device=device, per_image=per_image)
    extra = {}
    if include:
        from ..metrics.foreground import _included_metrics

        extra = {name: m.to(device) for name, m in _included_metrics(list(include), normalize=True,
                                                                       validate_args=True).items()}  # fmt: skip
    if images is None:
        images = decode_pairs(decode_tasks(distributed.shard(pairs), "foreground", resize=resize), workers)
    distributed.shard_progress(progress, len(pairs))
    images = _counted(images, progress)
    nan_stems: dict[str, list[str]] = {}
    for names, preds, target in _batches(images, batch_size, device):
        metric.update(preds, target, names)
        for key, m in extra.items():
            _update_naming_the_image(m, preds, target, names)
            values = getattr(m, "last_image_values", None)
            if values is None:
                continue
            listed = values.tolist()
            nan_stems.setdefault(key, []).extend(s for s, v in zip(names, listed, strict=True) if v != v)
            if metric.per_image is not None:  # measures with one value per image
                for stem, value in zip(names, listed, strict=True):
                    metric.per_image[stem][key] = value
    distributed.merge_foreground(metric, len(pairs))  # under torchrun: every rank's sums (the Metrics sync in compute)
    results = metric.compute()
    if extra:
        with distributed.peers(), warnings.catch_warnings():  # under torchrun the Metrics sum every rank's states
            warnings.simplefilter("ignore", RuntimeWarning)  # NaNs are announced below, naming the images
            results = {**results, **{name: m.compute() for name, m in extra.items()}}
    sync(device)
    if nan_stems.get("size_invariant_mae"):
        from ..functional.foreground.size_invariance import SI_MAE_NAN_REASON

        warn_nan_images("size-invariant MAE", nan_stems["size_invariant_mae"], len(pairs), SI_MAE_NAN_REASON)
    if metric.nan_s_images:
        from ..functional.foreground.smeasure import S_MEASURE_NAN_REASON

        warn_nan_images(
            "S-measure",
            [pairs[i][0] for i in metric.nan_s_images],
            len(pairs),
            f"images with {S_MEASURE_NAN_REASON}",
        )
    return results, metric


def warn_nan_images(measure: str, stems: Sequence[str], total: int, reason: str) -> None:
    """One ``warning:`` line on stderr naming the measure, the images and the reason of a documented NaN."""
    shown = ", ".join(stems[:8]) + (f" ... and {len(stems) - 8} more" if len(stems) > 8 else "")
    print(
        f"warning: {measure} is NaN for {len(stems)} of {total} image(s) ({shown}): {reason}; the dataset's {measure} "
        "is NaN",
        file=sys.stderr,
    )


def evaluate_boundary(
    pairs: Sequence[tuple[str, Path, Path]],
    *,
    input_format: str,
    gt_format: str,
    thresholds: int = 99,
    max_dist: float = 0.0075,
    thin: bool = True,
    nms: bool = False,
    device: str | torch.device = "cpu",
    batch_size: int = 8,
    workers: int = 0,
    resize: bool | None = None,
    progress: Any = None,
    images: Iterable[tuple[str, Any, Any]] | None = None,
) -> dict[str, Any]:
    """The BSDS boundary benchmark of a dataset: counts per image and threshold, summarised as BSR.

    Args:
        pairs: ``(stem, pred_path, gt_path)``.
        input_format: "soft" (8-bit maps, read / 255) or "ucm2" (.mat).
        gt_format: "mat" (BSDS groundTruth), "boundaries" (boundary images) or "labels" (label images).
        thresholds, max_dist, thin, nms: as :func:`~segmetrics_torch.functional.boundary.boundary_pr_counts`.
        device, batch_size, workers, resize, progress, images: as :func:`evaluate_foreground` (``resize``: soft maps
            only).

    Returns:
        :func:`~segmetrics_torch.functional.boundary.summarize_counts` with every tensor on the CPU.
    """
    import torch

    from ..functional.boundary import BoundaryCounts, annotator_boundaries, boundary_pr_counts, summarize_counts

    if images is None:
        tasks = decode_tasks(distributed.shard(pairs), "boundary", input_format=input_format, gt_format=gt_format,
                             resize=resize)
        images = decode_pairs(tasks, workers)
    distributed.shard_progress(progress, len(pairs))
    if gt_format == "labels":
        images = ((stem, pred, annotator_boundaries(torch.from_numpy(gt)).numpy()) for stem, pred, gt in images)
    fmt = cast("InputFormat", input_format)  # checked by boundary_pr_counts
    parts = []
    for batch in _chunked(images, batch_size):
        parts.append(run_named(
            lambda p, g: boundary_pr_counts(p, g, thresholds=thresholds, max_dist=max_dist, thin=thin, nms=nms,
                                            input_format=fmt, backend="auto"),
            batch, device,
        ))  # fmt: skip
        if progress is not None:
            progress.update(len(batch))
    parts = [part for rank_parts in distributed.gather(parts) for part in rank_parts]  # torchrun: in image order
    counts = BoundaryCounts(
        cnt_r=torch.cat([c.cnt_r for c in parts]),
        sum_r=torch.cat([c.sum_r for c in parts]),
        cnt_p=torch.cat([c.cnt_p for c in parts]),
        sum_p=torch.cat([c.sum_p for c in parts]),
        thresholds=parts[0].thresholds,
    )
    summary = {
        key: {k: v.cpu() for k, v in value.items()} if isinstance(value, dict) else value.cpu()
        for key, value in summarize_counts(counts).items()
    }
    sync(device)
    return summary


def check_boundary_nms(nms: bool, input_format: str, option: str) -> None:
    """Edge NMS thins soft detector maps; a ucm2 hierarchy is one-pixel contours already (BSDS: no NMS)."""
    if nms and input_format != "soft":
        raise InputError(f"{option} applies to soft boundary maps (images), not to {input_format} predictions")


def boundary_report(summary: dict[str, Any], stems: Sequence[str]) -> dict[str, Any]:
    """The boundary ``results`` of a JSON report: the summary with the per-image bests keyed by stem."""
    per = {key: value.tolist() for key, value in summary["per_image"].items()}
    results = {key: value for key, value in summary.items() if key != "per_image"}
    results["per_image"] = {stem: {key: per[key][i] for key in per} for i, stem in enumerate(stems)}
    return results


def evaluate_partition(
    pairs: Sequence[tuple[str, Path, Path]],
    *,
    input_format: str,
    gt_format: str,
    measures: Sequence[str] | None = None,
    thresholds: int | Sequence[float] | None = None,
    num_regions: Sequence[int] | None = None,
    rule: str = "seism",
    gamma_obj: float = 0.9,
    max_dist: float = 0.0075,
    device: str | torch.device = "cpu",
    batch_size: int = 8,
    workers: int = 0,
    progress: Any = None,
    images: Iterable[tuple[str, Any, Any]] | None = None,
    warn: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], Any]:
    """SEISM's measures of a dataset of partitions (label maps) or hierarchies (ucm2, segs).

    Args:
        pairs: ``(stem, pred_path, gt_path)``.
        input_format: "labels", "ucm2" or "stack" (:func:`partition_formats`).
        gt_format: "mat" (BSDS groundTruth ``Segmentation``) or "labels" (label images).
        measures, gamma_obj, max_dist: as :class:`~segmetrics_torch.PartitionMeasures`.
        thresholds, num_regions, rule: ucm2 hierarchies only, as :class:`~segmetrics_torch.HierarchyMeasures`
            (``thresholds`` None: 99).
        device, batch_size, workers, progress, images: as :func:`evaluate_foreground`.
        warn: where the warning of label maps that look like soft maps goes (:func:`soft_map_reason`; default:
            stderr).

    Returns:
        ``(results, metric)``: ``compute()`` of :class:`~segmetrics_torch.HierarchyMeasures`, or for label maps that
        of :class:`~segmetrics_torch.PartitionMeasures` plus ``per_image`` (``{stem: {measure: value}}``).
    """
    import itertools

    import torch

    from .. import HierarchyMeasures, PartitionMeasures
    from ..functional.partition import partition_measures

    hierarchy = input_format != "labels"
    if input_format != "ucm2" and (thresholds is not None or num_regions is not None):
        option = "--thresholds" if thresholds is not None else "--num-regions"
        raise InputError(f"{option} applies to ucm2 hierarchies only, but the predictions are "
                         f"{PREDICTION_FORMATS[input_format]}")  # fmt: skip
    per_image: list[dict[str, Any]] = []

    class PerImage(PartitionMeasures):
        """Keeps every image's values too (for the report), computed once."""

        def update(self, preds: Any, target: Any) -> None:
            values = partition_measures(preds, target, measures=self.measures, **self.options)
            self.update_values(values)
            per_image.append(values)

    if images is None:
        tasks = decode_tasks(distributed.shard(pairs), "partition", input_format=input_format, gt_format=gt_format)
        images = decode_pairs(tasks, workers)
    distributed.shard_progress(progress, len(pairs))
    images = iter(images)
    if input_format == "stack":
        images = _check_depth(images, {stem: Path(pred) for stem, pred, _ in pairs})
    if input_format == "labels":
        images = _check_soft_labels(images, {stem: Path(pred) for stem, pred, _ in pairs}, warn or warn_on_stderr)
    head = next(images)  # a `segs` stack: its depth is the number of levels
    metric: PartitionMeasures | HierarchyMeasures
    if input_format == "stack" and distributed.active():  # torchrun: every rank's stacks have the depth of rank 0's
        (stem0, depth0), *others = distributed.gather((head[0], head[1].shape[0]))
        paths = {stem: Path(pred) for stem, pred, _ in pairs}
        for stem, depth in others:
            if depth != depth0:
                raise InputError(f"{stem}: `segs` of {paths[stem]} holds {depth} levels but that of {paths[stem0]} "
                                 f"holds {depth0}; every hierarchy needs the same number of levels")  # fmt: skip
    if hierarchy:
        levels = head[1].shape[0] if input_format == "stack" else (thresholds or 99)
        metric = HierarchyMeasures(
            levels, num_regions=num_regions, input_format=cast("HierarchyFormat", input_format),
            rule=cast("Rule", rule), measures=measures, gamma_obj=gamma_obj, max_dist=max_dist,
        ).to(device)  # fmt: skip
    else:
        metric = PerImage(measures=measures, gamma_obj=gamma_obj, max_dist=max_dist).to(device)
    for batch in _chunked(itertools.chain([head], images), batch_size):
        run_named(metric.update, batch, device)
        if progress is not None:
            progress.update(len(batch))
    with distributed.peers():
        results = metric.compute()  # under torchrun the Metric sums every rank's states
    sync(device)
    if not hierarchy:
        per_image = [values for part in distributed.gather(per_image) for values in part]  # torchrun: image order
        stems = [stem for stem, _, _ in pairs]
        per = {k: torch.cat([values[k] for values in per_image]).tolist() for k in per_image[0]}
        results = {**results, "per_image": {stem: {k: v[i] for k, v in per.items()} for i, stem in enumerate(stems)}}
    return results, metric


#: a label map with at least this many values, most of whose pixels off its commonest value differ from a
#: 4-neighbour, is a soft map (probability / edge strength), not regions (BSDS annotations: 2-8 %, 3,000 SLIC
#: superpixels: ~48 % of such pixels on a region border; soft and ucm2 maps saved as PNG: 77-100 %)
SOFT_MAP_LEVELS, SOFT_MAP_BORDER = 32, 0.75
#: a label map with values above 255 (16-bit) is a soft map when, besides the above, its gray levels are scattered:
#: at least this many 4-connected runs of equal value per distinct value (16-bit soft maps of the BSDS sample: 4-7,
#: ucm2 saved as 16-bit: 2.2-2.4; label maps: SLIC 1.0, even 25,000-45,000 Felzenszwalb regions 1.4-1.6)
SOFT_MAP_SCATTER = 1.8
#: decoded label maps looked at by the check (the first ones of a method)
SOFT_MAP_CHECKED = 3


def soft_map_reason(labels: np.ndarray) -> str | None:
    """Why an (H, W) label map looks like a soft map saved as gray levels rather than a partition, or None.

    A partition stored as gray has solid regions; a soft boundary or probability map read as labels has one region
    per gray level, scattered in thin runs: at least :data:`SOFT_MAP_LEVELS` values and at least
    :data:`SOFT_MAP_BORDER` of the pixels off the commonest value next to another value. Above 255 (16-bit) a
    partition can have that many small regions (superpixels), so there each value must also fall apart into
    :data:`SOFT_MAP_SCATTER` or more separate runs on average, as gray levels do and regions do not.
    """
    if labels.ndim != 2 or labels.size == 0 or labels.min() < 0:
        return None
    values, counts = np.unique(labels, return_counts=True)
    levels = len(values)
    if levels < SOFT_MAP_LEVELS:
        return None
    common = values[counts.argmax()]
    other = labels != common
    border = np.zeros(labels.shape, bool)
    across, down = labels[:, 1:] != labels[:, :-1], labels[1:] != labels[:-1]
    border[:, 1:] |= across
    border[:, :-1] |= across
    border[1:] |= down
    border[:-1] |= down
    share = float(border[other].mean())
    if share < SOFT_MAP_BORDER:
        return None
    reason = (f"{levels} gray levels; {share:.0%} of its pixels other than its most common value ({int(common)}) "
              "touch a different value")
    if labels.max() <= 255:
        return reason
    runs = _equal_value_runs(labels, across, down)
    if runs < SOFT_MAP_SCATTER * levels:
        return None
    return f"{reason}, and its values fall apart into {runs / levels:.1f} separate runs each"


def _equal_value_runs(labels: np.ndarray, across: np.ndarray, down: np.ndarray) -> int:
    """The number of 4-connected runs of equal value (``across``/``down``: where neighbours differ)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    h, w = labels.shape
    index = np.arange(h * w).reshape(h, w)
    rows = np.concatenate([index[:, 1:][~across], index[1:][~down]])
    cols = np.concatenate([index[:, :-1][~across], index[:-1][~down]])
    graph = coo_matrix((np.ones(len(rows), np.int8), (rows, cols)), shape=(h * w, h * w))
    return int(connected_components(graph, directed=False)[0])


def _check_soft_labels(
    images: Iterator[tuple[str, Any, Any]], paths: dict[str, Path], warn: Callable[[str], None]
) -> Iterator[tuple[str, Any, Any]]:
    """Warn once when the first label maps look like soft maps (:func:`soft_map_reason`): every gray level would be
    read as a region, a silently meaningless score."""
    warned = not distributed.is_main()  # under torchrun rank 0 speaks
    for i, (stem, pred, gt) in enumerate(images):
        reason = soft_map_reason(pred) if i < SOFT_MAP_CHECKED and not warned else None
        if reason is not None:
            warn(f"warning: the predictions look like soft maps (edge strengths or probabilities), not label maps: "
                 f"{paths[stem]}: {reason}. `partition` reads every gray level as a region; evaluate edge maps with "
                 "`segmetrics evaluate boundary`, or save partitions as label maps")  # fmt: skip
            warned = True
        yield stem, pred, gt


def _check_depth(images: Iterator[tuple[str, Any, Any]], paths: dict[str, Path]) -> Iterator[tuple[str, Any, Any]]:
    """Every `segs` stack must have the depth of the first (the levels are the columns of one curve)."""
    first: tuple[Path, int] | None = None
    for stem, pred, gt in images:
        first = first or (paths[stem], pred.shape[0])
        if pred.shape[0] != first[1]:
            raise InputError(
                f"{stem}: `segs` of {paths[stem]} holds {pred.shape[0]} levels but that of {first[0]} holds "
                f"{first[1]}; every hierarchy needs the same number of levels"
            )
        yield stem, pred, gt


def load_measures() -> None:
    """Import torch and the foreground measures' functional core (~1.3 s on CPU: torch, numba; torchmetrics, another
    second, is left to the families whose cores use Metric classes) with the cyclic GC paused.

    Imports allocate millions of objects and no garbage worth collecting; pausing the collector during them saves
    ~15 % of the import time. The collector's previous state is restored.
    """
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        import torch  # noqa: F401

        from ..functional.foreground import suite  # noqa: F401  (the foreground kernels)
    finally:
        if enabled:
            gc.enable()


def default_workers() -> int:
    """Decoding processes by default: the cores but one (the measures run in the main process), at most 4; under
    torchrun, of the cores' share of each of the machine's ranks (``LOCAL_WORLD_SIZE``)."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    cores //= distributed.processes_per_machine()  # under torchrun the ranks of a machine share its cores
    return max(0, min(4, cores - 1))


# ------------------------------------------------------------------------------------------------ object proposals


def _read_proposal_pairs(
    pairs: Sequence[tuple[str, Path, Path]], classes: Mapping[str, Path] | None, void_label: int | None,
    class_option: str,
) -> Iterator[tuple[str, Any, Any]]:
    """Yield ``(stem, pool, ObjectAnnotation)``: pool (P, H, W) bool or an (H, W) label map, checked for size."""
    from ..io import read_objects, read_proposals

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


def evaluate_proposals(
    pairs: Sequence[tuple[str, Path, Path]],
    *,
    counts: Sequence[int],
    classes: Mapping[str, Path] | None = None,
    void_label: int | None = 255,
    num_classes: int = 256,
    chunk_size: int | None = None,
    boundary: bool = False,
    bound_th: float = 0.008,
    device: str | torch.device = "cpu",
    progress: Any = None,
    class_option: str = "--gt-classes",
) -> tuple[dict[str, Any], dict[str, Any], ProposalRecall]:
    """Object proposals of a dataset, the MCG protocol (:class:`~segmetrics_torch.ProposalRecall`).

    Pools are read in this process, one image at a time (a pool of thousands of masks is large; shipping it from a
    worker would cost more than reading it).

    Args:
        pairs: ``(stem, proposals_path, objects_path)`` (:func:`segmetrics_torch.io.read_proposals`,
            :func:`segmetrics_torch.io.read_objects`).
        counts: the numbers of proposals N.
        classes: ``{stem: class image}`` for the class-averaged J_c (Pascal ``SegmentationClass``), or None.
        void_label, num_classes, chunk_size, boundary, bound_th: as the ``evaluate proposals`` options.
        device, progress: as :func:`evaluate_foreground`.
        class_option: how error messages name the class folder.

    Returns:
        ``(results, per_image, metric)``: ``compute()``, ``{stem: {num_proposals, num_objects, best_jaccard[,
        best_boundary_f]}}`` (each object's best J / F within the largest N), and the metric.
    """
    import itertools

    import torch

    from .. import ProposalRecall

    per_image: dict[str, dict[str, Any]] = {}
    distributed.shard_progress(progress, len(pairs))
    images = _read_proposal_pairs(distributed.shard(pairs), classes, void_label, class_option)
    head = next(images)
    with_classes = head[2].classes is not None  # J_c when the annotations carry classes
    metric = ProposalRecall(
        sorted(set(counts)), num_classes=num_classes if with_classes else None, chunk_size=chunk_size,
        boundary=boundary, bound_th=bound_th,
    ).to(device)  # fmt: skip
    for stem, pool, gt in itertools.chain([head], images):
        if (gt.classes is not None) != with_classes:
            raise InputError(f"{stem}: some annotations carry class ids and others do not")
        if with_classes and int(gt.classes.max()) >= num_classes:
            raise InputError(f"{stem}: class id {int(gt.classes.max())} >= --num-classes {num_classes}")
        arrays = [None if x is None else torch.from_numpy(x).to(device)
                  for x in (pool, gt.objects, gt.void, gt.classes)]  # fmt: skip
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
        if progress is not None:
            progress.update(1)
    with distributed.peers():
        results = metric.compute()  # under torchrun the Metric sums every rank's states
    sync(device)
    per_image = {stem: values for part in distributed.gather(per_image) for stem, values in part.items()}
    return results, per_image, metric


# ------------------------------------------------------------------------------------------ boundary distances

#: the files of the surface family: label-map images and NIfTI volumes
SURFACE_EXTENSIONS = (".png", ".bmp", ".tif", ".tiff", ".nii", ".nii.gz")


def _read_surface_pair(
    stem: str, pred_path: Path, gt_path: Path, check_spacing: bool = True
) -> tuple[Any, Any, tuple[float, ...] | None]:
    """``(pred labels, gt labels, spacing)`` of a pair: the ground truth's header gives the spacing (NIfTI), which the
    prediction's must equal when it has one (unless ``check_spacing`` is off: a spacing given by the user replaces
    both); the two must have one shape."""
    from ..io import read_label_volume

    pred, pred_spacing = read_label_volume(pred_path)
    gt, gt_spacing = read_label_volume(gt_path)
    if pred.shape != gt.shape:
        raise InputError(f"{stem}: the prediction has shape {pred.shape} and the ground truth {gt.shape}")
    if (check_spacing and pred_spacing is not None and gt_spacing is not None
            and not np.allclose(pred_spacing, gt_spacing, rtol=1e-5)):  # fmt: skip
        raise InputError(f"{stem}: the prediction's voxel spacing {pred_spacing} differs from the ground truth's "
                         f"{gt_spacing} (give --spacing to use one for both)")  # fmt: skip
    return pred, gt, gt_spacing if gt_spacing is not None else pred_spacing


def evaluate_surface(
    pairs: Sequence[tuple[str, Path, Path]],
    *,
    num_classes: int | None = None,
    include_background: bool = False,
    convention: str = "monai",
    percentile: float = 95.0,
    tolerance: float | list[float] = 1.0,
    spacing: Sequence[float] | float | None = None,
    skip_empty_gt: bool = False,
    device: str | torch.device = "cpu",
    progress: Any = None,
) -> dict[str, Any]:
    """The boundary-distance measures of a dataset of masks / label maps (images or NIfTI volumes), one pair at a time
    (sizes and spacings differ between volumes): :class:`~segmetrics_torch.metrics.surface.SurfaceDistanceMeasures`.

    Args:
        pairs: ``(stem, pred_path, gt_path)``; images read by :func:`~segmetrics_torch.io.read_label_volume`.
        num_classes: label maps with this many classes (None: masks, foreground = any nonzero value, as MedPy).
        include_background, convention, percentile, tolerance: as the Metric.
        spacing: the voxel spacing of every pair (None: each NIfTI header's, unit for images).
        skip_empty_gt: leave out the pairs whose ground truth is empty (every class absent), counted in
            ``"skipped_empty_gt"``.
        device: where the boundary sets are computed (the distances are computed on the CPU).
        progress: a tqdm-like bar (``update(n)``) or None.

    Returns:
        ``{measure: mean (a float, or a list per class), ..., "per_image": {stem: {measure: value or list}},
        "classes": [...] (label maps)}``; under torchrun each rank evaluates its share and the means are of all.
    """
    import torch

    from ..functional.surface import EmptyMaskWarning
    from ..metrics.surface import SurfaceDistanceMeasures

    metric = SurfaceDistanceMeasures(percentile=percentile, tolerance=tolerance, convention=convention,
                                     spacing=spacing, num_classes=num_classes,
                                     include_background=include_background)  # fmt: skip
    rows: list[tuple[str, dict[str, Any]]] = []
    skipped: list[str] = []
    distributed.shard_progress(progress, len(pairs))
    for stem, pred_path, gt_path in distributed.shard(pairs):
        pred, gt, header_spacing = _read_surface_pair(stem, pred_path, gt_path, check_spacing=spacing is None)
        if skip_empty_gt and not gt.any():
            skipped.append(stem)
            if progress is not None:
                progress.update(1)
            continue
        if num_classes is not None:
            for labels, path in ((pred, pred_path), (gt, gt_path)):
                top, low = int(labels.max()), int(labels.min())
                if top >= num_classes or low < 0:
                    rgb = " (a colour image: its labels are (R << 16) | (G << 8) | B; save label maps as gray or "
                    rgb = rgb + "palette images)" if top > 255 else ""
                    raise InputError(f"{path}: labels must lie in 0..{num_classes - 1} (--num-classes {num_classes}), "
                                     f"but it holds {top if top >= num_classes else low}{rgb}")  # fmt: skip
        p, g = torch.from_numpy(pred)[None].to(device), torch.from_numpy(gt)[None].to(device)
        if num_classes is None:
            p, g = p != 0, g != 0
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                metric.update(p, g, spacing=spacing if spacing is not None else header_spacing)
        except ValueError as error:  # named as the files and options are, not as the function's arguments
            message = str(error).replace("`preds`", "the prediction").replace("`target`", "the ground truth")
            for name in ("spacing", "tolerance", "num_classes", "percentile"):
                message = message.replace(f"`{name}`", "--" + name.replace("_", "-"))
            raise InputError(f"{pred_path}: {message}") from None
        # the empty-mask warnings, once per file and class (the functions warn once per measure), naming the file
        seen: set[Any] = set()
        for w in caught:
            empty = w.message if isinstance(w.message, EmptyMaskWarning) else None
            key = (empty.class_id, empty.what) if empty is not None else str(w.message)
            if key in seen:
                continue
            seen.add(key)
            if empty is None:
                print(f"warning: {stem}: {w.message}", file=sys.stderr)
            else:
                cls = "" if empty.class_id is None else f"class {empty.class_id}: "
                print(f"warning: {stem}: {cls}the {empty.what} empty (no foreground)", file=sys.stderr)
        values = metric.last_values or {}
        rows.append((stem, {key: value[0].tolist() for key, value in values.items()}))
        if progress is not None:
            progress.update(1)
    with distributed.peers():
        results: dict[str, Any] = {key: value.tolist() for key, value in metric.compute().items()}
    rows = [row for part in distributed.gather(rows) for row in part]
    results["per_image"] = dict(rows)
    results["skipped_empty_gt"] = [stem for part in distributed.gather(skipped) for stem in part]
    if num_classes is not None:
        results["classes"] = list(range(0 if include_background else 1, num_classes))
    return results
