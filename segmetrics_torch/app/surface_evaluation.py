"""``segmetrics evaluate surface``' evaluator: label maps or masks (PNG, TIFF, NIfTI volumes with their spacing)
through :class:`~segmetrics_torch.SurfaceDistanceMeasures` (Hausdorff, HD95, ASD / ASSD, NSD of a convention),
pair by pair, with the per-file warnings of empty structures."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch

import segmetrics_torch

from ..errors import InputError
from ..functional.surface import AGGREGATION_REFERENCES, EmptyMaskWarning
from ..io import NIFTI_EXTENSIONS, open_image, read_label_volume
from ..metrics import SurfaceDistanceMeasures
from ..registry import MEASURES, SURFACE, SURFACE_SUITE, canonical
from . import distributed
from .family_job import Evaluated, FamilyInput


def _read_surface_pair(
    stem: str, pred_path: Path, gt_path: Path, given: bool = False
) -> tuple[Any, Any, tuple[float, ...] | None, Path | None]:
    """``(pred labels, gt labels, header spacing, its file)`` of a pair: the ground truth's header gives the spacing
    (NIfTI), which the prediction's must equal when it has one; the two must have one shape. With a spacing ``given``
    by the user, which replaces both, the headers' spacings are read only to say where they differ (one that
    disagrees with the other, or a broken ``pixdim``, is then no error: it is not used)."""

    def read(path: Path) -> tuple[Any, tuple[float, ...] | None]:
        if not given:
            return read_label_volume(path)
        try:
            return read_label_volume(path)
        except ValueError:  # a broken pixdim is an error only where it would be used; any other error comes back
            return read_label_volume(path, header_spacing=False)

    pred, pred_spacing = read(pred_path)
    gt, gt_spacing = read(gt_path)
    if pred.shape != gt.shape:
        raise InputError(f"{stem}: the prediction has shape {pred.shape} and the ground truth {gt.shape}")
    if (
        not given
        and pred_spacing is not None
        and gt_spacing is not None
        and not np.allclose(pred_spacing, gt_spacing, rtol=1e-5)
    ):
        raise InputError(
            f"{stem}: the prediction's voxel spacing {pred_spacing} differs from the ground truth's "
            f"{gt_spacing} (give --spacing to use one for both)"
        )
    if gt_spacing is not None:
        return pred, gt, gt_spacing, gt_path
    return pred, gt, pred_spacing, (pred_path if pred_spacing is not None else None)


def _spacing_used(spacing: Any, header: tuple[float, ...] | None, ndim: int) -> list[float]:
    """The spacing the distances of a pair used, one number per axis: the given one (a number for every axis), else
    the header's, else unit."""
    if spacing is None:
        return [float(v) for v in header] if header is not None else [1.0] * ndim
    values = [float(v) for v in (spacing if isinstance(spacing, (list, tuple)) else [spacing])]
    return values * ndim if len(values) == 1 else values


def _note_overridden(spacing: Any, differing: list[tuple[Path, tuple[float, ...]]], total: int) -> None:
    """One ``warning:`` line when the given spacing replaced header spacings that differ from it: the first file
    and its header's spacing, and how many pairs differed."""
    if not differing:
        return
    path, header = differing[0]
    shown = ",".join(f"{v:g}" for v in (spacing if isinstance(spacing, (list, tuple)) else [spacing]))
    more = f" (and {len(differing) - 1} more of the {total} pairs)" if len(differing) > 1 else ""
    print(
        f"warning: --spacing {shown} replaces the voxel spacing {tuple(float(v) for v in header)} of the header of "
        f"{path}{more}; the per-image outputs record the spacing used",
        file=sys.stderr,
    )


def _several_labels(labels: np.ndarray, path: Path) -> str | None:
    """``"<path> holds labels 1 and 2"`` (or ``"from 1 to 5"``) when the array holds two nonzero values or more (a
    label map read as a mask; a 0/255 mask holds one), else None. Two passes over the array, no sort."""
    top = labels.max()
    if top == 0 or not np.any((labels != 0) & (labels != top)):
        return None
    low = labels[labels != 0].min()
    return f"{path} holds labels {low} and {top}" if top - low == 1 else f"{path} holds labels from {low} to {top}"


def _check_labels(images: Iterable[tuple[Any, Path]], num_classes: int) -> None:
    """Every label of the (array, path) pairs in ``0..num_classes - 1``, else an error naming the file and value (with
    :func:`_colour_hint` where the file is a colour image)."""
    for labels, path in images:
        top, low = int(labels.max()), int(labels.min())
        if top >= num_classes or low < 0:
            found = top if top >= num_classes else low
            raise InputError(
                f"{path}: labels must lie in 0..{num_classes - 1} (--num-classes {num_classes}), but it holds "
                f"{found}{_colour_hint(Path(path))}"
            )


def _colour_hint(path: Path) -> str:
    """Why a colour image's labels are large: :func:`~segmetrics_torch.io.read_labels` reads an RGB image as one label
    per colour. Only a colour image gets it: the labels of a NIfTI volume or a gray (8/16-bit) or palette image are
    the stored values, which the hint would misdescribe."""

    if path.name.lower().endswith(NIFTI_EXTENSIONS):
        return ""
    try:
        with open_image(path) as image:
            mode = image.mode
    except (OSError, ValueError):  # it was read a moment ago; without its mode, no hint rather than a wrong one
        return ""
    if mode not in ("RGB", "RGBA", "RGBX"):
        return ""
    return " (a colour image: its labels are (R << 16) | (G << 8) | B; save label maps as gray or palette images)"


def _print_empty_mask_warnings(
    stem: str, empty: Iterable[EmptyMaskWarning], caught: Iterable[warnings.WarningMessage]
) -> None:
    """The warnings of one file's measures on stderr, naming the file: its other warnings once each, then its empty
    pairs (the Metrics' ``last_empty``, every file's: the Metrics warn of the first such batch only) once per class
    and side, with what each measure returned there."""

    seen: set[str] = set()
    for w in caught:
        if not isinstance(w.message, EmptyMaskWarning) and str(w.message) not in seen:
            seen.add(str(w.message))
            print(f"warning: {stem}: {w.message}", file=sys.stderr)
    empties: dict[Any, list[str]] = {}
    for message in empty:
        found = empties.setdefault((message.class_id, message.what), [])
        result = f"{message.measure} {message.value}".strip()
        if result and result not in found:
            found.append(result)
    for (class_id, what), results in empties.items():
        cls = "" if class_id is None else f"class {class_id}: "
        values = f": {', '.join(results)}" if results else ""
        print(f"warning: {stem}: {cls}the {what} empty (no foreground){values}", file=sys.stderr)


def _chosen_measures(names: Any) -> list[str]:
    """The registry keys of ``names`` (any spelling), in order, once each; None: the one pass's five."""
    if names is None:
        return list(SURFACE_SUITE)
    keys = [canonical(str(name), "surface") for name in names]
    unknown = [name for name, key in zip(names, keys, strict=True) if key is None]
    if unknown:
        raise InputError(
            f"measures: unknown boundary-distance measure(s) {', '.join(map(str, unknown))} (known: "
            f"{', '.join(SURFACE)})"
        )
    return list(dict.fromkeys(k for k in keys if k is not None))


def evaluate_surface(work: FamilyInput) -> Evaluated:
    """The boundary-distance measures of a dataset of masks / label maps (images or NIfTI volumes), one pair at a time
    (sizes and spacings differ between volumes): :class:`~segmetrics_torch.metrics.surface.SurfaceDistanceMeasures`.

    ``work.images``: ``(stem, pred_path, gt_path)``, read by :func:`~segmetrics_torch.io.read_label_volume`.
    ``work.options``: ``measures`` (registry keys of the surface family; absent or None: the one pass of
    :class:`~segmetrics_torch.SurfaceDistanceMeasures`, HD, HD95, ASD, ASSD, NSD; any other measure is its own
    registered Metric's, updated with the same pairs), ``num_classes`` (label maps with this many classes; None:
    masks, foreground = any nonzero value, as MedPy), ``include_background``, ``convention``, ``percentile``,
    ``tolerance`` (None: no NSD in the one pass; ``measures`` naming nsd without one is an error), and, each
    optional, ``directed``, ``distance_metric``, ``aggregation``, ``worst_case`` as the Metric, ``class_names`` (one
    per label 0..C-1), ``spacing`` (the voxel spacing of every pair; None: each NIfTI header's, unit for images;
    given, it replaces the headers, and one ``warning:`` line names the first header that differs) and
    ``skip_empty_gt`` (leave out the pairs whose ground truth is empty, every class absent, listed in
    ``"skipped_empty_gt"``). The boundary sets are computed on ``work.device``, the distances on the CPU.

    Returns:
        ``results``: ``{measure: mean (a float, or a list per class), ..., "per_image": {stem: {measure: value or
        list, "spacing": [the spacing used, per axis]}}, "skipped_empty_gt": [...], "aggregation": {"rule",
        "worst_case", "reference", "dropped": {measure: values left out of its mean (per class)}}, "classes": [...]
        and "class_names" (label maps)}``; under torchrun each rank evaluates its share and the means are of all.
    """

    o, device = work.options, work.device
    num_classes, spacing = o["num_classes"], o["spacing"]
    chosen = _chosen_measures(o.get("measures"))
    tolerance = o.get("tolerance")
    if tolerance is None and "nsd" in chosen:
        if o.get("measures") is not None:
            raise InputError(
                "tolerance: the NSD needs a tolerance in spacing units (mm for NIfTI volumes), which has no default: "
                "give --tolerance T (options.surface.tolerance in a configuration), or leave nsd out of the measures"
            )
        chosen = [k for k in chosen if k != "nsd"]  # the one pass without a tolerance: no NSD
    aggregation, worst_case = o.get("aggregation", "inf"), o.get("worst_case")
    class_names = _class_names(o.get("class_names"), num_classes)
    try:
        metric = SurfaceDistanceMeasures(
            percentile=o["percentile"],
            tolerance=tolerance,
            directed=bool(o.get("directed", False)),
            aggregation=aggregation,
            worst_case=worst_case,
            convention=o["convention"],
            distance_metric=o.get("distance_metric", "euclidean"),
            spacing=spacing,
            num_classes=num_classes,
            include_background=o["include_background"],
        )
    except ValueError as error:  # named as the options are
        raise InputError(_as_options(str(error))) from None
    suite_keys = {MEASURES[k].result for k in chosen if k in SURFACE_SUITE}
    # every other measure by its registry record: its public Metric, reading the pairs as the suite does
    try:
        others = {
            MEASURES[k].result: getattr(segmetrics_torch, MEASURES[k].metric)(
                num_classes=num_classes, include_background=o["include_background"]
            )
            for k in chosen
            if k not in SURFACE_SUITE
        }
    except ImportError as error:  # a measure's optional dependency (clDice: scikit-image), named by the measure
        raise InputError(str(error)) from None
    rows: list[tuple[str, dict[str, Any]]] = []
    skipped: list[str] = []
    differing: list[tuple[Path, tuple[float, ...]]] = []
    merged: str | None = None  # the first ground truth of several labels read as one mask (no --num-classes)
    total = 0
    for stem, pred_path, gt_path in work.images:
        total += 1
        pred, gt, header_spacing, header_file = _read_surface_pair(stem, pred_path, gt_path, given=spacing is not None)
        if o["skip_empty_gt"] and not gt.any():
            skipped.append(stem)
            continue
        used = _spacing_used(spacing, header_spacing, gt.ndim)
        if spacing is not None and header_spacing is not None and header_file is not None:
            if len(header_spacing) != len(used) or not np.allclose(header_spacing, used, rtol=1e-5):
                differing.append((header_file, header_spacing))
        if num_classes is not None:
            _check_labels(((pred, pred_path), (gt, gt_path)), num_classes)
        elif merged is None:
            merged = _several_labels(gt, gt_path)
        p, g = torch.from_numpy(pred)[None].to(device), torch.from_numpy(gt)[None].to(device)
        if num_classes is None:
            p, g = p != 0, g != 0
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                if suite_keys:
                    metric.update(p, g, spacing=spacing if spacing is not None else header_spacing)
                for other in others.values():
                    other.update(p, g)
        except ValueError as error:  # named as the files and options are, not as the function's arguments
            raise InputError(f"{pred_path}: {_as_options(str(error))}") from None
        updated = ([metric] if suite_keys else []) + list(others.values())
        _print_empty_mask_warnings(stem, [w for m in updated for w in m.last_empty], caught)
        values = {k: v for k, v in (metric.last_values or {}).items() if k in suite_keys} if suite_keys else {}
        values.update({key: other.last_values["value"] for key, other in others.items() if other.last_values})
        row = {key: value[0].tolist() for key, value in values.items()}
        row["spacing"] = used
        rows.append((stem, row))
    _note_overridden(spacing, differing, total)
    if merged is not None:
        print(
            f"note: {merged}; without --num-classes every nonzero label is one foreground mask (MedPy's reading): "
            "give --num-classes N to measure each class",
            file=sys.stderr,
        )
    with distributed.peers():
        results: dict[str, Any] = (
            {key: value.tolist() for key, value in metric.compute().items() if key in suite_keys} if suite_keys else {}
        )
        results.update({key: other.compute().tolist() for key, other in others.items()})
        dropped = {key: value.tolist() for key, value in metric.dropped().items() if key in suite_keys}
        dropped.update({key: other.dropped().tolist() for key, other in others.items()})
    rows = [row for part in distributed.gather(rows) for row in part]
    results["per_image"] = dict(rows)
    results["skipped_empty_gt"] = [stem for part in distributed.gather(skipped) for stem in part]
    results["aggregation"] = {
        "rule": metric.aggregation,
        "worst_case": metric.worst_case,
        "reference": AGGREGATION_REFERENCES[metric.aggregation],
        "dropped": dropped,
    }
    if num_classes is not None:
        results["classes"] = list(range(0 if o["include_background"] else 1, num_classes))
        if class_names is not None:
            results["class_names"] = [class_names[c] for c in results["classes"]]
    return Evaluated(results)


def _class_names(names: Any, num_classes: int | None) -> list[str] | None:
    """``class_names`` checked: one name per label 0..C-1, with label maps only."""
    if names is None:
        return None
    if num_classes is None:
        raise InputError("class names: give them with --num-classes (masks have one structure, named by --name)")
    names = [str(n).strip() for n in names]
    if len(names) != num_classes or not all(names) or len(set(names)) != len(names):
        raise InputError(
            f"class names: expected {num_classes} different names, one per label 0..{num_classes - 1} "
            f"(--num-classes {num_classes}), but got {len(names)}: {','.join(names)}"
        )
    return names


def _as_options(message: str) -> str:
    """A message of the library in the command's words: the files and the options, not the arguments."""
    message = message.replace("prediction (`preds`)", "prediction").replace("truth (`target`)", "truth")
    message = message.replace("`preds`", "the prediction").replace("`target`", "the ground truth")
    for name in ("spacing", "tolerance", "num_classes", "percentile", "distance_metric", "worst_case", "aggregation"):
        message = message.replace(f"`{name}`", "--" + name.replace("_", "-"))
    return message
