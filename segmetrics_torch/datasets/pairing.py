"""Pairing two folders for evaluation: files matched by stem (prefixes, suffixes, a pattern), the folder's kind
(images or .mat files) and the boundary / partition formats decided from them. What the pairing left unpaired is the
pre-scan's to report (:func:`~.prescan.check_pairing`, :func:`~.prescan.scan_pairing`)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..io import find_pairs, list_images, mat_variables
from . import prescan

if TYPE_CHECKING:  # annotations only: the app imports torch lazily
    from ..io import Pairing

__all__ = [
    "BOUNDARY_EXTENSIONS",
    "GT_FORMATS",
    "PREDICTION_FORMATS",
    "SURFACE_EXTENSIONS",
    "boundary_formats",
    "check_boundary_nms",
    "hierarchy_format",
    "match_folders",
    "pairing_error",
    "partition_formats",
]


#: names that moved to :mod:`.prescan` (the pairing's errors are the pre-scan's, 2026-11-30): still importable from
#: here for a minor release, with a DeprecationWarning
_MOVED_TO_PRESCAN = ("check_pairing", "warn_on_stderr")


def __getattr__(name: str) -> Any:
    if name in _MOVED_TO_PRESCAN:
        warnings.warn(
            f"`segmetrics_torch.datasets.pairing.{name}` is deprecated; use `segmetrics_torch.datasets.prescan.{name}` "
            "(the same function).",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(prescan, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: the files of the surface family: label-map images and NIfTI volumes
SURFACE_EXTENSIONS = (".png", ".bmp", ".tif", ".tiff", ".nii", ".nii.gz")
#: what the boundary and partition commands list in their folders: images and .mat files (ucm2, segs, groundTruth)
BOUNDARY_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".mat")

PREDICTION_FORMATS = {
    "labels": "label-map images (one partition each)",
    "ucm2": "BSR ucm2 .mat files (double-size hierarchies)",
    "stack": "BSR segs .mat files (a cell of label maps, one per level)",
}

GT_FORMATS = {
    "mat": "BSDS groundTruth .mat files (their `Boundaries`, one map per annotator)",
    "boundaries": "boundary images (one annotator; boundary = pixel value > 0)",
    "labels": "label-map images (one annotator; boundaries = thin(seg2bmap(labels)), as BSDS `Boundaries`)",
}

# ------------------------------------------------------------------------------------------------ pairing folders


def _names(paths: Sequence[Path], shown: int = 3) -> str:
    names = ", ".join(p.name for p in paths[:shown])
    return names if len(paths) <= shown else f"{names} ... and {len(paths) - shown} more"


def _folder_kind(files: dict[str, Path], folder: str | Path, what: str) -> str:
    """``"mat"`` when every listed file of a folder is a .mat file, ``"image"`` when none is; a mix is an error."""
    mats = [path for path in files.values() if path.suffix.lower() == ".mat"]
    if not mats:
        return "image"
    if len(mats) == len(files):
        return "mat"
    images = [path for path in files.values() if path.suffix.lower() != ".mat"]
    raise InputError(
        f"the {what} {folder} mixes .mat files ({_names(mats)}) and images ({_names(images)}); "
        "keep one format per folder"
    )


def pairing_error(error: ValueError, option: str = "--pair-regex") -> InputError:
    """A listing or pairing error of :func:`segmetrics_torch.io.find_pairs` as the command's input error; a bad
    pairing pattern names the ``option`` that gave it (the flag, or a configuration key)."""
    prefix = f"{option}: " if "pairing pattern" in str(error) else ""
    return InputError(f"{prefix}{error}")


def match_folders(
    pred_dir: str | Path,
    gt_dir: str | Path,
    exts: Sequence[str] = BOUNDARY_EXTENSIONS,
    *,
    pattern_option: str = "--pair-regex",
    **pairing_options: Any,
) -> tuple[Pairing, str, str]:
    """Pair two folders (images or .mat files) by stem: ``(pairing, pred kind, gt kind)``, kinds ``"image"`` /
    ``"mat"`` (a folder mixing both is an error). ``pairing_options``: the name mapping of
    :func:`segmetrics_torch.io.find_pairs` (prefixes, suffixes, pattern); a bad pattern is named
    ``pattern_option``."""

    try:
        pred_files = list_images(pred_dir, exts, name="prediction folder")
        gt_files = list_images(gt_dir, exts, name="ground-truth folder")
        pairing = find_pairs(pred_dir, gt_dir, exts, **pairing_options)
    except ValueError as error:
        raise pairing_error(error, pattern_option) from None
    pred_kind = _folder_kind(pred_files, pred_dir, "prediction folder")
    return pairing, pred_kind, _folder_kind(gt_files, gt_dir, "ground-truth folder")


def boundary_formats(pred_kind: str, gt_kind: str, gt_labels: bool, gt_dir: str | Path) -> tuple[str, str]:
    """``(input_format, gt_format)`` of the boundary benchmark from the folder kinds: ucm2 .mat or soft maps; BSDS
    .mat, label images (``gt_labels``) or boundary images."""
    if gt_kind == "mat" and gt_labels:
        raise InputError(
            f"--gt-labels is for label-map images, but {gt_dir} holds BSDS .mat files (their `Boundaries` are used)"
        )
    gt_format = "mat" if gt_kind == "mat" else "labels" if gt_labels else "boundaries"
    return ("ucm2" if pred_kind == "mat" else "soft"), gt_format


def check_boundary_nms(nms: bool, input_format: str, option: str) -> None:
    """Refuse edge NMS (``option`` names the switch) for other than soft boundary maps: NMS thins soft detector
    maps; a ucm2 hierarchy is one-pixel contours already (BSDS: no NMS)."""
    if nms and input_format != "soft":
        raise InputError(f"{option} applies to soft boundary maps (images), not to {input_format} predictions")


def hierarchy_format(path: Path) -> str:
    """``"ucm2"`` or ``"stack"`` by the variables of a prediction .mat file."""

    try:
        names = mat_variables(path)
    except (ValueError, OSError) as error:
        raise InputError(str(error)) from None
    for key, kind in (("ucm2", "ucm2"), ("segs", "stack")):
        if key in names:
            return kind
    raise InputError(f"{path}: expected a variable `ucm2` (hierarchy) or `segs` (stack of label maps), found {names}")


def partition_formats(pairing: Pairing, pred_kind: str, gt_kind: str) -> tuple[str, str]:
    """``(input_format, gt_format)`` of the partition family: label images, ucm2 or segs .mat (by the variables of
    the first prediction); BSDS .mat or label images."""
    if pred_kind != "mat":
        return "labels", ("mat" if gt_kind == "mat" else "labels")
    # the first readable prediction decides; an unreadable one is the pre-scan's to report with the others
    error: InputError | None = None
    for _, pred_path, _ in pairing.pairs:
        try:
            return hierarchy_format(pred_path), ("mat" if gt_kind == "mat" else "labels")
        except InputError as problem:
            error = error or problem
    raise error or InputError("no prediction to read")
