"""A :class:`~.evaluation.SemanticBoundaryResult` as papers and the benchmarks print it: the per-class table rows and
the class mean (mF), one row per image and class, the PR curves per class, and the SBD benchmark's ``class_XXX/``
folder of each class. Plain Python values (floats, strings), ready for any table, CSV or figure writer (the
``segmetrics evaluate semantic-boundary`` command writes them with :mod:`segmetrics_torch.reports`).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

from ...errors import shown_value
from .evaluation import SemanticBoundaryResult
from .ground_truth import CITYSCAPES_CLASSES, SBD_CLASSES

__all__ = [
    "MEAN_ROW",
    "SUMMARY_COLUMNS",
    "class_folder_name",
    "class_numbers",
    "class_pr_curves",
    "per_image_rows",
    "summary_rows",
]

#: the per-class table's columns, ``(key of a row of summary_rows, header)``: BSR's eval_bdry.txt of each class; the
#: class mean fills ODS-F, OIS-F and AP (mF as CASENet / SEAL / pyEdgeEval report it)
SUMMARY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("ods/threshold", "ODS-T"),
    ("ods/recall", "ODS-R"),
    ("ods/precision", "ODS-P"),
    ("ods/f", "ODS-F"),
    ("ois/f", "OIS-F"),
    ("ap", "AP"),
)
#: the name of the class-mean row of :func:`summary_rows` (no class of SBD or Cityscapes is called so)
MEAN_ROW = "mean"


def class_folder_name(class_number: int) -> str:
    """The folder of a 1-based class in pyEdgeEval's and the SBD benchmark's layouts: ``class_XXX``.

    Example:
        >>> class_folder_name(15)
        'class_015'
    """
    if isinstance(class_number, bool) or not isinstance(class_number, int) or not 1 <= class_number <= 999:
        raise ValueError(f"Expected `class_number` to be an int in 1..999, but got {class_number!r}.")
    return f"class_{class_number:03d}"


def class_numbers(classes: Sequence[int | str], dataset: str) -> list[int]:
    """1-based class numbers (``class_XXX``) of classes given by number or by name (any case) of ``dataset``.

    Example:
        >>> class_numbers(["person", 3, "7", "TV/Monitor"], "sbd")
        [15, 3, 7, 20]
    """
    names = {"sbd": SBD_CLASSES, "cityscapes": CITYSCAPES_CLASSES}.get(dataset)
    if names is None:
        raise ValueError(f"Expected `dataset` to be 'sbd' or 'cityscapes', but got {dataset!r}.")
    lowered = [n.lower() for n in names]
    out = []
    for c in classes:
        text = str(c).strip() if isinstance(c, (str, numbers.Integral)) else ""  # (str() of a list can be huge)
        if text.isdigit() and 1 <= int(text) <= len(names):
            out.append(int(text))
        elif text.lower() in lowered:
            out.append(lowered.index(text.lower()) + 1)
        else:
            raise ValueError(
                f"Expected class numbers 1..{len(names)} or class names of {dataset} ({', '.join(names)}), but got "
                f"{shown_value(c)}."
            )
    return out


def summary_rows(result: SemanticBoundaryResult) -> dict[str, dict[str, float]]:
    """One row per evaluated class (by name, in ``result.classes`` order) and the class mean (:data:`MEAN_ROW`).

    Returns:
        ``{class name: {"ods/threshold", "ods/recall", "ods/precision", "ods/f", "ois/f", "ap"}, "mean": {"ods/f",
        "ois/f", "ap"}}``, Python floats (the keys of :data:`SUMMARY_COLUMNS`). The mean is the plain mean over the
        evaluated classes of ODS F, OIS F and AP (:func:`~.evaluation.summarize_semantic_counts`).

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional.semantic_boundary import (
        ...     SemanticBoundaryResult, semantic_boundary_counts, semantic_boundary_protocol, summarize_semantic_counts,
        ... )
        >>> gt = torch.zeros(1, 2, 32, 32, dtype=torch.bool); gt[0, :, 16, 4:28] = True
        >>> pb = torch.zeros(1, 2, 32, 32); pb[0, :, 16, 4:16] = 0.8; pb[0, 1, 16, 16:28] = 0.3
        >>> counts = semantic_boundary_counts(pb, gt, thresholds=4, max_dist=2)  # classes 1 and 15 of an image
        >>> result = SemanticBoundaryResult(
        ...     semantic_boundary_protocol("matlab"), ["2008_000001"], [1, 15], ["aeroplane", "person"], counts,
        ...     summarize_semantic_counts(counts),
        ... )
        >>> rows = summary_rows(result)
        >>> list(rows), round(rows["aeroplane"]["ods/f"], 4), rows["person"]["ods/f"], round(rows["mean"]["ods/f"], 4)
        (['aeroplane', 'person', 'mean'], 0.6667, 1.0, 0.8333)
    """
    summary = result.summary
    rows: dict[str, dict[str, float]] = {}
    for name, res in zip(result.class_names, summary["classes"], strict=True):
        ods = res["ods"]
        rows[name] = {
            "ods/threshold": float(ods["threshold"]),
            "ods/recall": float(ods["recall"]),
            "ods/precision": float(ods["precision"]),
            "ods/f": float(ods["f"]),
            "ois/f": float(res["ois"]["f"]),
            "ap": float(res["ap"]),
        }
    mean = summary["mean"]
    rows[MEAN_ROW] = {"ods/f": float(mean["ods_f"]), "ois/f": float(mean["ois_f"]), "ap": float(mean["ap"])}
    return rows


def per_image_rows(result: SemanticBoundaryResult) -> list[dict[str, Any]]:
    """One row per image and class (image-major): each image's best threshold and its recall, precision and F (BSR's
    ``eval_bdry_img.txt`` rows, interpolated), and the number of GT edge pixels of the class in the image (0: the
    class is absent; with ``skip_if_nonexistent`` such an image adds no counts and its row is all zeros).

    Returns:
        ``[{"image", "class" (name), "class_number" (1-based), "threshold", "recall", "precision", "f",
        "gt_edge_pixels"}, ...]``.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional.semantic_boundary import (
        ...     SemanticBoundaryResult, semantic_boundary_counts, semantic_boundary_protocol, summarize_semantic_counts,
        ... )
        >>> gt = torch.zeros(1, 2, 32, 32, dtype=torch.bool); gt[0, :, 16, 4:28] = True
        >>> pb = torch.zeros(1, 2, 32, 32); pb[0, :, 16, 4:16] = 0.8; pb[0, 1, 16, 16:28] = 0.3
        >>> counts = semantic_boundary_counts(pb, gt, thresholds=4, max_dist=2)  # classes 1 and 15 of an image
        >>> result = SemanticBoundaryResult(
        ...     semantic_boundary_protocol("matlab"), ["2008_000001"], [1, 15], ["aeroplane", "person"], counts,
        ...     summarize_semantic_counts(counts),
        ... )
        >>> [(r["class"], r["recall"], r["gt_edge_pixels"]) for r in per_image_rows(result)]
        [('aeroplane', 0.5, 24), ('person', 1.0, 24)]
    """
    per_class = [res["per_image"] for res in result.summary["classes"]]
    per_class = [{key: value.tolist() for key, value in per.items()} for per in per_class]
    # sumR is the number of GT edge pixels at every threshold (matched or not): the first threshold's is the image's
    gt_pixels = result.counts.sum_r[..., 0].tolist()
    rows = []
    for b, image_id in enumerate(result.ids):
        for k, (number, name) in enumerate(zip(result.classes, result.class_names, strict=True)):
            per = per_class[k]
            rows.append(
                {
                    "image": image_id,
                    "class": name,
                    "class_number": number,
                    "threshold": per["threshold"][b],
                    "recall": per["recall"][b],
                    "precision": per["precision"][b],
                    "f": per["f"][b],
                    "gt_edge_pixels": int(gt_pixels[b][k]),
                }
            )
    return rows


def class_pr_curves(result: SemanticBoundaryResult) -> dict[str, dict[str, Any]]:
    """Each class's PR curve in the form of :func:`segmetrics_torch.reports.figures.plot_pr_curves`.

    Returns:
        ``{class name: {"recall": [T], "precision": [T], "value": ODS F, "point": (ODS recall, ODS precision)}}``.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional.semantic_boundary import (
        ...     SemanticBoundaryResult, semantic_boundary_counts, semantic_boundary_protocol, summarize_semantic_counts,
        ... )
        >>> gt = torch.zeros(1, 2, 32, 32, dtype=torch.bool); gt[0, :, 16, 4:28] = True
        >>> pb = torch.zeros(1, 2, 32, 32); pb[0, :, 16, 4:16] = 0.8; pb[0, 1, 16, 16:28] = 0.3
        >>> counts = semantic_boundary_counts(pb, gt, thresholds=4, max_dist=2)  # classes 1 and 15 of an image
        >>> result = SemanticBoundaryResult(
        ...     semantic_boundary_protocol("matlab"), ["2008_000001"], [1, 15], ["aeroplane", "person"], counts,
        ...     summarize_semantic_counts(counts),
        ... )
        >>> person = class_pr_curves(result)["person"]  # thresholds 0.2, 0.4, 0.6, 0.8
        >>> person["recall"], person["precision"], person["point"]
        ([1.0, 0.5, 0.5, 0.5], [1.0, 1.0, 1.0, 1.0], (1.0, 1.0))
    """
    curves = {}
    for name, res in zip(result.class_names, result.summary["classes"], strict=True):
        ods = res["ods"]
        curves[name] = {
            "recall": res["recall"].tolist(),
            "precision": res["precision"].tolist(),
            "value": float(ods["f"]),
            "point": (float(ods["recall"]), float(ods["precision"])),
        }
    return curves
