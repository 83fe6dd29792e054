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
from ..functional.surface import EmptyMaskWarning
from ..io import NIFTI_EXTENSIONS, open_image, read_label_volume
from ..metrics import SurfaceDistanceMeasures
from ..registry import MEASURES, SURFACE, SURFACE_SUITE, canonical
from . import distributed
from .family_job import Evaluated, FamilyInput

#: the files of the surface family: label-map images and NIfTI volumes
SURFACE_EXTENSIONS = (".png", ".bmp", ".tif", ".tiff", ".nii", ".nii.gz")


def _read_surface_pair(
    stem: str, pred_path: Path, gt_path: Path, check_spacing: bool = True
) -> tuple[Any, Any, tuple[float, ...] | None]:
    """``(pred labels, gt labels, spacing)`` of a pair: the ground truth's header gives the spacing (NIfTI), which the
    prediction's must equal when it has one (unless ``check_spacing`` is off: a spacing given by the user replaces
    both); the two must have one shape."""

    # a spacing given by the user replaces the headers': theirs is then neither read nor checked (a broken pixdim
    # is an error only where it would be used)
    pred, pred_spacing = read_label_volume(pred_path, header_spacing=check_spacing)
    gt, gt_spacing = read_label_volume(gt_path, header_spacing=check_spacing)
    if pred.shape != gt.shape:
        raise InputError(f"{stem}: the prediction has shape {pred.shape} and the ground truth {gt.shape}")
    if (
        check_spacing
        and pred_spacing is not None
        and gt_spacing is not None
        and not np.allclose(pred_spacing, gt_spacing, rtol=1e-5)
    ):
        raise InputError(
            f"{stem}: the prediction's voxel spacing {pred_spacing} differs from the ground truth's "
            f"{gt_spacing} (give --spacing to use one for both)"
        )
    return pred, gt, gt_spacing if gt_spacing is not None else pred_spacing


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


def _print_empty_mask_warnings(stem: str, caught: Iterable[warnings.WarningMessage]) -> None:
    """The warnings of one file's measures on stderr, naming the file: the empty-mask ones once per class and side,
    with what each measure returned there, the others once each."""

    empties: dict[Any, list[str]] = {}
    seen: set[str] = set()
    for w in caught:
        if isinstance(w.message, EmptyMaskWarning):
            found = empties.setdefault((w.message.class_id, w.message.what), [])
            result = f"{w.message.measure} {w.message.value}".strip()
            if result and result not in found:
                found.append(result)
        elif str(w.message) not in seen:
            seen.add(str(w.message))
            print(f"warning: {stem}: {w.message}", file=sys.stderr)
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
    ``tolerance`` as the Metric,
    ``spacing`` (the voxel spacing of every pair; None: each NIfTI header's, unit for images) and
    ``skip_empty_gt`` (leave out the pairs whose ground truth is empty, every class absent, listed in
    ``"skipped_empty_gt"``). The boundary sets are computed on ``work.device``, the distances on the CPU.

    Returns:
        ``results``: ``{measure: mean (a float, or a list per class), ..., "per_image": {stem: {measure: value or
        list}}, "skipped_empty_gt": [...], "classes": [...] (label maps)}``; under torchrun each rank evaluates its
        share and the means are of all.
    """

    o, device = work.options, work.device
    num_classes, spacing = o["num_classes"], o["spacing"]
    chosen = _chosen_measures(o.get("measures"))
    metric = SurfaceDistanceMeasures(
        percentile=o["percentile"],
        tolerance=o["tolerance"],
        convention=o["convention"],
        spacing=spacing,
        num_classes=num_classes,
        include_background=o["include_background"],
    )
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
    for stem, pred_path, gt_path in work.images:
        pred, gt, header_spacing = _read_surface_pair(stem, pred_path, gt_path, check_spacing=spacing is None)
        if o["skip_empty_gt"] and not gt.any():
            skipped.append(stem)
            continue
        if num_classes is not None:
            _check_labels(((pred, pred_path), (gt, gt_path)), num_classes)
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
            message = str(error).replace("prediction (`preds`)", "prediction").replace("truth (`target`)", "truth")
            message = message.replace("`preds`", "the prediction").replace("`target`", "the ground truth")
            for name in ("spacing", "tolerance", "num_classes", "percentile"):
                message = message.replace(f"`{name}`", "--" + name.replace("_", "-"))
            raise InputError(f"{pred_path}: {message}") from None
        _print_empty_mask_warnings(stem, caught)
        values = {k: v for k, v in (metric.last_values or {}).items() if k in suite_keys} if suite_keys else {}
        values.update({key: other.last_values["value"] for key, other in others.items() if other.last_values})
        rows.append((stem, {key: value[0].tolist() for key, value in values.items()}))
    with distributed.peers():
        results: dict[str, Any] = (
            {key: value.tolist() for key, value in metric.compute().items() if key in suite_keys} if suite_keys else {}
        )
        results.update({key: other.compute().tolist() for key, other in others.items()})
    rows = [row for part in distributed.gather(rows) for row in part]
    results["per_image"] = dict(rows)
    results["skipped_empty_gt"] = [stem for part in distributed.gather(skipped) for stem in part]
    if num_classes is not None:
        results["classes"] = list(range(0 if o["include_background"] else 1, num_classes))
    return Evaluated(results)
