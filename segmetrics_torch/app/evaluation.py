"""The family evaluators of foreground maps and boundaries (those of partitions, proposals and boundary distances
are :mod:`.partition_evaluation`, :mod:`.proposal_evaluation` and :mod:`.surface_evaluation`): each takes a
:class:`~.family_job.FamilyInput`
from :mod:`.runner` (this rank's decoded pairs, counted on the progress bar) and returns an
:class:`~.family_job.Evaluated`, computed by the library's own measures (nothing here re-implements a measure):

* :func:`evaluate_foreground`: :class:`~segmetrics_torch.ForegroundMeasures`' state and ``compute()`` over grayscale
  maps (the library's torchmetrics-free :class:`~segmetrics_torch.functional.ForegroundSums`), with each image's row
  (:class:`~.foreground_rows.ForegroundRows`);
* :func:`evaluate_boundary`: :func:`~segmetrics_torch.functional.boundary.boundary_pr_counts` per batch, then
  :func:`~segmetrics_torch.functional.boundary.summarize_counts` (BSR ``collect_eval_bdry.m``).

The batching and error-naming every evaluator uses is :mod:`.batching`; decoding (in worker processes) is
:mod:`segmetrics_torch.datasets.decoding`, started by the runner.

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

import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from . import distributed
from .family_job import Evaluated, FamilyInput

if TYPE_CHECKING:  # annotations only: the app imports torch lazily
    from ..functional.boundary import InputFormat


import torch

from ..functional.boundary import BoundaryCounts, annotator_boundaries, boundary_pr_counts, summarize_counts
from ..functional.foreground import (
    S_MEASURE_NAN_REASON,
    SI_MAE_NAN_REASON,
    TOOLBOX_LAYOUTS,
    ForegroundSums,
    ToolboxSums,
    summarize_toolbox,
)
from ..registry import DEFAULT_FOREGROUND, INCLUDABLE, foreground_columns
from .batching import batches, chunked, run_named, sync, update_naming_the_image, warn_nan_images
from .cold_start import cold_start
from .foreground_rows import ForegroundRows

__all__ = ["boundary_report", "evaluate_boundary", "evaluate_foreground"]

# ------------------------------------------------------------------------------------------ foreground, boundary


def evaluate_foreground(work: FamilyInput) -> Evaluated:
    """Every foreground measure of a dataset, PySODMetrics-exact: the sums and ``compute()`` of
    :class:`~segmetrics_torch.ForegroundMeasures` in :class:`~segmetrics_torch.functional.ForegroundSums`, each
    image's row from the per-image values its ``update`` returns (:class:`~.foreground_rows.ForegroundRows`).

    ``work.images``: decoded grayscale maps (:func:`~segmetrics_torch.io.read_gray_map`) and ground truths
    (binarised ``> 128``); ``work.options["measures"]``: the table's measures, of which those beyond the core are
    computed by their own Metric classes (which import torchmetrics: only when asked) and join ``results`` under
    their names. ``work.options["protocol"]`` (default ``"pysodmetrics"``): a MATLAB-toolbox protocol accumulates in
    :class:`~segmetrics_torch.functional.ToolboxSums` instead (the toolbox's numbers, its sensitivity and
    specificity; ``docs/matlab-toolbox.md``), whose measures the caller has checked (``registry.outside_protocol``);
    ``work.options["toolbox_layout"]``: the layout of a result line to be written (its weighted F is then computed).

    Returns:
        ``results``: ``metric.compute()`` (nested dict of tensors, curves included) and ``per_image``
        (``{stem: {measure: value}}``); ``state``: the accumulator (its ``count``, ``settings``, ``normalize``).
    """
    # the Metric's sums without torchmetrics, whose import alone costs about a second of a command's run

    device, total = work.device, len(work.pairs)
    measures = work.options.get("measures")
    protocol = work.options.get("protocol", "pysodmetrics")
    metric: ForegroundSums | ToolboxSums
    if protocol == "pysodmetrics":
        metric, rows = ForegroundSums(device=device), ForegroundRows()
    else:  # the weighted F costs a distance transform per image: only when the table or the result line shows it
        layout = work.options.get("toolbox_layout")
        line_keys = {key for _, key in TOOLBOX_LAYOUTS[layout]} if layout else set()
        weighted_f = "wf" in (measures or DEFAULT_FOREGROUND) or "weighted_f_measure" in line_keys
        metric = ToolboxSums(protocol=protocol, weighted_f=weighted_f, device=device)
        rows = ForegroundRows(summarize_toolbox)
    extra = _included_metrics(foreground_columns(measures, protocol)[2], device)
    with cold_start(total) as plan:  # a small run on a cold machine takes the tensor path (see cold_start)
        for names, preds, target in batches(work.images, work.batch_size, device):
            if plan.decide(preds):  # the tensor path's EDT too: its "auto" backend would compile the numba one
                metric.edt_backend = "torch"
            rows.add(names, metric.update(preds, target))
            _update_included(extra, preds, target, names, rows.per_image)
        # under torchrun: every rank's sums (the Metrics sync then); ToolboxSums has ForegroundSums' sums() / load() /
        # count, which is all merge_foreground reads (its annotation names ForegroundSums only)
        distributed.merge_foreground(metric, rows, total)
        if not int(metric.count):
            raise ValueError("No images were added: the foreground measures of an empty dataset are undefined.")
        with warnings.catch_warnings():  # a NaN S-measure is announced below, naming the images
            warnings.simplefilter("ignore", RuntimeWarning)
            results = metric.compute()
        if extra:
            with distributed.peers(), warnings.catch_warnings():  # under torchrun the Metrics sum every rank's states
                warnings.simplefilter("ignore", RuntimeWarning)  # NaNs are announced below, naming the images
                results = {**results, **{name: m.compute() for name, m in extra.items()}}
    sync(device)
    # the NaN images of the per-image measures, named from the rows (every rank's under torchrun)
    nan_stems = {key: [stem for stem, row in rows.per_image.items() if _is_nan(row.get(key))] for key in extra}
    nan_stems["s_measure"] = [work.pairs[i][0] for i in rows.nan_s_images]
    if protocol != "pysodmetrics":  # the toolbox's 0 / 0 where a ground truth covers its whole image
        nan_stems["specificity"] = [stem for stem, row in rows.per_image.items() if _is_nan(row["specificity/mean"])]
    _warn_foreground_nans(nan_stems, total)
    return Evaluated({**results, "per_image": rows.per_image}, state=metric)


def _included_metrics(include: Sequence[str], device: Any) -> dict[str, Any]:
    """The Metrics of ``ForegroundMeasures(include=...)`` beyond the core, by the registry's table, on ``device``
    (none: no import; the Metric classes import torchmetrics)."""
    if not include:
        return {}
    # the Metric classes import torchmetrics (about a second): only a run that asks for such a measure loads it
    from .. import metrics

    return {name: getattr(metrics, INCLUDABLE[name])(normalize=True, validate_args=True).to(device) for name in include}


def _warn_foreground_nans(nan_stems: Mapping[str, list[str]], total: int) -> None:
    """One warning per measure that is NaN on some images, naming them (size-invariant MAE, S-measure)."""
    if nan_stems.get("size_invariant_mae"):
        warn_nan_images("size-invariant MAE", nan_stems["size_invariant_mae"], total, SI_MAE_NAN_REASON)
    if nan_stems["s_measure"]:
        warn_nan_images("S-measure", nan_stems["s_measure"], total, f"images with {S_MEASURE_NAN_REASON}")
    if nan_stems.get("specificity"):
        reason = "images whose ground truth covers the whole image (the MATLAB toolbox's TN / (TN + FP) = 0 / 0)"
        warn_nan_images("specificity", nan_stems["specificity"], total, reason)


def _is_nan(value: Any) -> bool:
    return value != value


def _update_included(
    extra: Mapping[str, Any],
    preds: Any,
    target: Any,
    names: list[str],
    per_image: dict[str, dict[str, Any]],
) -> None:
    """Update the included Metrics (``--measures`` beyond the core) with one batch; those with one value per image
    add it to ``per_image``."""
    for key, m in extra.items():
        update_naming_the_image(m, preds, target, names)
        values = getattr(m, "last_image_values", None)
        if values is None:
            continue
        for stem, value in zip(names, values.tolist(), strict=True):
            per_image[stem][key] = value


def evaluate_boundary(work: FamilyInput) -> Evaluated:
    """The BSDS boundary benchmark of a dataset: counts per image and threshold, summarised as BSR.

    ``work.input_format``: "soft" (8-bit maps, read / 255) or "ucm2" (.mat); ``work.gt_format``: "mat" (BSDS
    groundTruth), "boundaries" (boundary images) or "labels" (label images); ``work.options``: ``thresholds``,
    ``max_dist``, ``thin``, ``nms`` as :func:`~segmetrics_torch.functional.boundary.boundary_pr_counts`.

    Returns:
        ``results``: :func:`boundary_report` of the summary; ``state``:
        :func:`~segmetrics_torch.functional.boundary.summarize_counts` with every tensor on the CPU.
    """

    images: Iterable[tuple[str, Any, Any]] = work.images
    if work.gt_format == "labels":
        images = ((stem, pred, annotator_boundaries(torch.from_numpy(gt)).numpy()) for stem, pred, gt in images)
    options = {key: work.options[key] for key in ("thresholds", "max_dist", "thin", "nms")}
    fmt = cast("InputFormat", work.input_format)  # checked by boundary_pr_counts
    parts = [
        run_named(
            lambda p, g: boundary_pr_counts(p, g, **options, input_format=fmt, backend="auto"), batch, work.device
        )
        for batch in chunked(images, work.batch_size)
    ]
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
    sync(work.device)
    return Evaluated(boundary_report(summary, [stem for stem, _, _ in work.pairs]), state=summary)


def boundary_report(summary: dict[str, Any], stems: Sequence[str]) -> dict[str, Any]:
    """The boundary ``results`` of a JSON report: the summary with the per-image bests keyed by stem."""
    per = {key: value.tolist() for key, value in summary["per_image"].items()}
    results = {key: value for key, value in summary.items() if key != "per_image"}
    results["per_image"] = {stem: {key: per[key][i] for key in per} for i, stem in enumerate(stems)}
    return results
