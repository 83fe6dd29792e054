"""Before any measure runs: pair the folders, look at every file once, and report every problem together.

A user evaluating a dataset wants one run to say everything that is wrong with it (a missing prediction, a corrupt
file, a resized map, an RGB mask), not one fatal error per run. :func:`scan_foreground` reads every ground-truth mask
(its values decide "empty" and "0/1 mask") and the header of every prediction (size, colour mode; PIL's ``verify``
checks the file's structure and checksums without decoding the pixels, so the scan costs a fraction of the
evaluation), and returns the problems sorted by kind. :func:`scan_sizes` does the same for the boundary, partition
and proposal families: each file's size from the cheapest source that has it (an image header, an .npz member's
header; .mat files are read whole, as only reading finds a truncated one). The caller turns fatal ones into one
error listing all of them, or with ``--skip-bad`` leaves the bad pairs out and records them.

The pairing's own errors come first (:func:`check_pairing`: no common name, or unmatched files without
``--allow-missing``, each naming a few files of both sides and the flags that change the pairing,
:data:`PAIRING_FLAGS`). Also here: the default names of datasets and methods from common folder layouts
(:func:`dataset_name`, :func:`method_name`).
"""

from __future__ import annotations

import ast
import re
import sys
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..io import (
    IMAGE_EXTENSIONS,
    NIFTI_EXTENSIONS,
    NIFTI_NEEDS_NIBABEL,
    nifti_label_shape,
    open_image,
    read_bsds_ground_truth,
    read_gray_map,
    read_mat_array,
    read_segmentations,
)
from ..readers import reads

if TYPE_CHECKING:  # annotations only: the pre-scan imports no torch
    from ..io import Pairing

__all__ = [
    "PAIRING_FLAGS",
    "Problem",
    "Scan",
    "check_pairing",
    "dataset_name",
    "empty_gt_skips",
    "family_size_readers",
    "folder_names",
    "image_size",
    "listing",
    "method_name",
    "raise_or_skip",
    "scan_foreground",
    "scan_pairing",
    "scan_sizes",
    "warn_on_stderr",
]

#: the command-line flags that map prediction names to ground-truth names (named by pairing errors)
PAIRING_FLAGS = "--pred-suffix/--gt-suffix, --pred-prefix/--gt-prefix or --pair-regex"

#: problem kinds in report order: (label, fatal unless the named flag allows it; None: never fatal, a note)
KINDS: dict[str, tuple[str, str | None]] = {
    "missing": ("ground truth without a prediction", "--allow-missing"),
    "extra": ("prediction without a ground truth", "--allow-missing"),
    "unreadable": ("unreadable or corrupt file", "--skip-bad"),
    # with --resize a note: the prediction is resized as cv2.resize(INTER_LINEAR)
    "size": ("prediction size differs from its ground truth", "--resize"),
    # the inputs that cannot be resized (label maps, ucm2 hierarchies, proposal pools)
    "shape": ("prediction size does not fit its ground truth", "--skip-bad"),
    "colour": ("colour image (read as gray, as cv2.IMREAD_GRAYSCALE)", None),
    "empty": ("empty ground truth (no foreground pixel)", None),
    "binary01": ("0/1 ground-truth mask (read as binary: 1 = foreground)", None),
    # a saliency map given as the ground truth (--pred and --gt swapped) ran silently, binarised at > 128
    "grey": (
        "ground truth with many grey levels on over a tenth of its pixels (binarised at > 128; --pred and --gt "
        "swapped?)",
        None,
    ),
}

_GRAY_MODES = {"L", "1", "LA", "I", "I;16", "I;16B", "I;16L", "I;16N", "F"}

#: shown per kind in a listing
_SHOWN = 8


@dataclass(frozen=True)
class Problem:
    """One finding: its kind (a key of :data:`KINDS`), the image (ground-truth stem) and what was seen."""

    kind: str
    image: str
    detail: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"image": self.image, "problem": self.kind, "detail": self.detail}


@dataclass
class Scan:
    """The problems of a set of pairs, and which images must be left out to evaluate the rest."""

    problems: list[Problem] = field(default_factory=list)
    pairs: int = 0

    def fatal(self, allow_missing: bool, resize: bool) -> list[Problem]:
        allowed = _allowed_flags(allow_missing, resize)
        return [p for p in self.problems if KINDS[p.kind][1] is not None and KINDS[p.kind][1] not in allowed]

    def count(self, kind: str) -> int:
        return sum(p.kind == kind for p in self.problems)

    def findings(self, skipped: Sequence[Problem]) -> dict[str, list[dict[str, str]]]:
        """What a JSON report records: every problem found, and every image left out: ``skipped`` (the problems
        whose pairs were taken out) and the ground truths without a prediction (``--allow-missing``), which no pair
        holds."""
        taken = set(skipped)
        left_out = [*skipped, *(p for p in self.problems if p.kind == "missing" and p not in taken)]
        return {"problems": [p.as_dict() for p in self.problems], "skipped": [p.as_dict() for p in left_out]}


def _allowed_flags(allow_missing: bool, resize: bool) -> set[str]:
    """The flags of :data:`KINDS` that the user gave: the problems they name stop no run."""
    return {flag for flag, given in (("--allow-missing", allow_missing), ("--resize", resize)) if given}


def empty_gt_skips(stems: Iterable[str]) -> list[dict[str, str]]:
    """The records of images left out for an empty ground truth that a family found while evaluating (the boundary
    distances read volumes themselves), in the form of :meth:`Scan.findings`' ``skipped``: every JSON of the command
    lists its left-out images in one place, its top-level ``skipped``."""
    return [Problem("empty", stem).as_dict() | {"detail": KINDS["empty"][0]} for stem in stems]


def _unpaired(
    missing: Iterable[str], extra: Iterable[str], reasons: tuple[dict[str, str], dict[str, str]], pairs: int
) -> Scan:
    """A scan holding the unpaired names, each with why it took part in no pairing when the name mapping says."""
    gt_why, pred_why = reasons
    found = [Problem("missing", s, gt_why.get(s, "")) for s in missing]
    return Scan(found + [Problem("extra", s, pred_why.get(s, "")) for s in extra], pairs)


def _header(path: Path) -> tuple[tuple[int, int], str]:
    """(W, H) and the mode of an image, its structure verified (chunks, checksums) without decoding the pixels."""

    if Path(path).stat().st_size == 0:
        raise ValueError(f"{path} is an empty file (0 bytes)")
    with open_image(path) as image:
        size, mode = image.size, image.mode
        image.verify()
    return size, mode


def _scan_gt(path: Path) -> tuple[Any, str | None]:
    """``((W, H), mode, max, foreground pixels, grey)`` of a ground-truth mask (``grey``: more than 32 levels, and over
    a tenth of its pixels strictly between 0 and its maximum: a soft map, not a mask with anti-aliased edges or a few
    grey labels), or ``(None, error)``."""

    try:
        size, mode = _header(path)
        values = read_gray_map(path)
    except (OSError, ValueError, SyntaxError) as error:  # PIL raises SyntaxError for some broken headers
        return None, str(error) or type(error).__name__
    top = int(values.max())
    foreground = int((values > 128).sum()) if top > 1 else int((values == 1).sum())
    grey = False
    if top > 1 and values.dtype == np.uint8:
        # a soft map: many levels, on many pixels (a mask has 2; anti-aliased edges cover few pixels; a few grey
        # labels, as PySODMetrics' test mask 19 has 7 levels on 15 % of it, are a mask too)
        counts = np.bincount(values.ravel(), minlength=256)
        grey = bool(np.count_nonzero(counts) > 32 and (values.size - counts[0] - counts[top]) * 10 > values.size)
    return (size, mode, top, foreground, grey), None


#: PIL's modes of a 16-bit grayscale image: decoded by the pre-scan (rare, and read by a rule that can refuse them)
_MODES_16 = ("I;16", "I;16B", "I;16L", "I")


def _scan_pred(path: Path) -> tuple[Any, str | None]:
    """``((W, H), mode)`` of a prediction from its header, or ``(None, error)``; a 16-bit one is decoded as well, so
    that one whose values all lie below 256 (:func:`~segmetrics_torch.io.read_gray_map` refuses it) is found here,
    listed with the others and skippable, not after the measures started."""
    try:
        header = _header(path)
        if header[1] in _MODES_16:
            read_gray_map(path)
        return header, None
    except (OSError, ValueError, SyntaxError) as error:
        return None, str(error) or type(error).__name__


def scan_foreground(
    pairs: Sequence[tuple[str, Path, Path]],
    missing: Iterable[str] = (),
    extra: Iterable[str] = (),
    *,
    workers: int = 1,
    gt_cache: dict[Path, Any] | None = None,
    reasons: tuple[dict[str, str], dict[str, str]] = ({}, {}),
) -> Scan:
    """Every problem of the foreground pairs (and the unpaired names) in one :class:`Scan`.

    Args:
        pairs: ``(stem, pred_path, gt_path)``.
        missing, extra: ground-truth stems without a prediction, prediction stems without a ground truth.
        workers: unused (kept for the callers): the scan runs in the main thread, so that Ctrl-C meets no reading
            thread (an interrupt during another thread's import prints a traceback) and exits 130 cleanly.
        gt_cache: results of ground-truth files already scanned (several methods share one dataset).
        reasons: ``(Pairing.gt_reasons, Pairing.pred_reasons)``: why names took part in no pairing (the listing's
            detail).
    """
    scan = _unpaired(missing, extra, reasons, len(pairs))
    gt_cache = {} if gt_cache is None else gt_cache
    todo = sorted({Path(g) for _, _, g in pairs} - set(gt_cache))
    del workers
    gt_cache.update((path, _scan_gt(path)) for path in todo)
    preds = [_scan_pred(Path(p)) for _, p, _ in pairs]
    for (stem, pred_path, gt_path), (pred, pred_error) in zip(pairs, preds, strict=True):
        gt, gt_error = gt_cache[Path(gt_path)]
        for error, path in ((pred_error, pred_path), (gt_error, gt_path)):
            if error is not None:
                scan.problems.append(
                    Problem("unreadable", stem, error if str(Path(path).name) in error else f"{path}: {error}")
                )
        if pred is not None and pred[1] not in _GRAY_MODES:
            scan.problems.append(Problem("colour", stem, f"prediction {Path(pred_path).name} is {pred[1]}"))
        if gt is None:
            continue
        size, mode, top, foreground, grey = gt
        if mode not in _GRAY_MODES:
            scan.problems.append(Problem("colour", stem, f"ground truth {Path(gt_path).name} is {mode}"))
        if top == 1:
            scan.problems.append(Problem("binary01", stem))
        if grey:
            scan.problems.append(Problem("grey", stem))
        if foreground == 0:
            scan.problems.append(Problem("empty", stem))
        if pred is not None and pred[0] != size:
            (w, h), (gw, gh) = pred[0], size
            scan.problems.append(Problem("size", stem, f"prediction {w}x{h}, ground truth {gw}x{gh} (WxH)"))
    order = list(KINDS)
    scan.problems.sort(key=lambda p: (order.index(p.kind), p.image))
    return scan


#: a file's (H, W) from the cheapest source that has it; raises ValueError / OSError for an unusable file
SizeReader = Callable[[Path], tuple[int, ...]]


def image_size(path: Path) -> tuple[int, int]:
    """(H, W) of an image from its header, the file's structure verified."""
    (w, h), _ = _header(path)
    return h, w


@reads((".npz",), "the array shapes of .npz archives (proposal pools), from their headers")
def _npz_size(keys: Sequence[str]) -> SizeReader:
    """(H, W) of the first of ``keys`` held by an .npz archive, from its member's .npy header (no array is read)."""

    def read(path: Path) -> tuple[int, int]:

        try:
            with zipfile.ZipFile(path) as archive:
                names = {name.removesuffix(".npy"): name for name in archive.namelist()}
                key = next((k for k in keys if k in names), None)
                if key is None:
                    raise ValueError(
                        f"{path}: expected an array {' or '.join(f'`{k}`' for k in keys)}, found {sorted(names)}"
                    )
                with archive.open(names[key]) as member:
                    fmt = np.lib.format
                    version = fmt.read_magic(member)
                    header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
                    shape = header(member)[0]
        except (zipfile.BadZipFile, EOFError) as error:
            raise ValueError(f"{path}: cannot read it as a numpy .npz archive ({error})") from None
        if len(shape) < 2:
            raise ValueError(f"{path}: `{key}` has shape {shape}, not (..., H, W)")
        return shape[-2], shape[-1]

    return read


def _array_size(read: Callable[[Path], Any]) -> SizeReader:
    """(H, W) of the array a reader returns (for files whose size is only known once read)."""

    def size(path: Path) -> tuple[int, int]:
        shape = read(path).shape
        return shape[-2], shape[-1]

    return size


@reads((*IMAGE_EXTENSIONS, *NIFTI_EXTENSIONS), "the shapes of NIfTI volumes and images, from their headers")
def _volume_size(path: Path) -> tuple[int, ...]:
    """The shape :func:`~segmetrics_torch.io.read_label_volume` will give a NIfTI volume, from its header (no voxel
    read; trailing axes of length 1 dropped, the size limit checked), else the (H, W) of an image."""
    if not path.name.lower().endswith(NIFTI_EXTENSIONS):
        return image_size(path)
    try:
        return nifti_label_shape(path)
    except ImportError:  # the run's environment, not this file: no file is readable, --skip-bad helps none
        raise InputError(NIFTI_NEEDS_NIBABEL) from None


def family_size_readers(family: str, input_format: str, gt_format: str) -> tuple[SizeReader, SizeReader, bool]:
    """``(pred size, ground-truth size, ucm2)`` readers of a family's formats (those of
    :func:`~segmetrics_torch.datasets.pairing.boundary_formats` / ``partition_formats``; proposals: .npz or images);
    ``ucm2``: the prediction is a double-size (2H+1, 2W+1) ucm2."""

    def npz_or_image(npz: SizeReader) -> SizeReader:
        return lambda path: npz(path) if Path(path).suffix.lower() == ".npz" else image_size(path)

    gt_mat = _array_size(lambda p: read_bsds_ground_truth(p).boundaries)
    if family == "surface":
        return _volume_size, _volume_size, False
    if family == "proposals":
        return npz_or_image(_npz_size(("masks", "labels"))), npz_or_image(_npz_size(("objects",))), False
    # .mat files are read whole: their headers do not show truncated or corrupt data (scipy reads lazily)
    ucm2 = _array_size(lambda p: read_mat_array(p, "ucm2"))
    pred = {"ucm2": ucm2, "stack": _array_size(read_segmentations)}.get(input_format, image_size)
    return pred, (gt_mat if gt_format == "mat" else image_size), input_format == "ucm2"


def check_pairing(
    pairing: Pairing,
    pred_dir: str | Path,
    gt_dir: str | Path,
    allow_missing: bool,
    *,
    option: str = "--allow-missing",
    warn: Callable[[str], None] | None = None,
) -> None:
    """No common stem is an error; unmatched files are one too, or a warning when ``allow_missing``. Both errors show
    a few names of each side and the flags that map names."""

    def examples() -> str:
        gt = ", ".join(pairing.missing[:3]) or "none"
        pred = ", ".join(pairing.unmatched[:3]) or "none"
        return f"unmatched ground truths: {gt}; unmatched predictions: {pred}"

    if not pairing.pairs:
        sides = (("prediction", pairing.pred_reasons), ("ground truth", pairing.gt_reasons))
        left_out = [(side, stem, why) for side, reasons in sides for stem, why in reasons.items()]
        if left_out:  # the mapping given took the files out: say so, not "map the names" with the flag that did it
            side, stem, why = left_out[0]
            raise InputError(
                f"no prediction in {pred_dir} matches a ground truth in {gt_dir}: the name mapping left out "
                f"{len(pairing.pred_reasons)} prediction(s) and {len(pairing.gt_reasons)} ground truth(s) (the "
                f"{side} {stem}: {why}); check {PAIRING_FLAGS}"
            )
        raise InputError(
            f"no prediction in {pred_dir} matches a ground truth in {gt_dir} by file name (stem) ({examples()}); "
            f"map the names with {PAIRING_FLAGS}"
        )
    if not pairing.complete:
        if not allow_missing:
            hint = (
                f"; if the names differ, map them with {PAIRING_FLAGS}"
                if len(pairing.pairs) < len(pairing.missing) + len(pairing.unmatched)
                else ""
            )
            raise InputError(f"the folders do not match: {pairing.problems()} (use {option} to skip them{hint})")
        shout = warn or warn_on_stderr
        shout(f"warning: {pairing.problems()}; evaluating the {len(pairing.pairs)} matched pair(s) only")


def warn_on_stderr(message: str) -> None:
    """The default ``warn`` of the runners: the line on stderr."""
    print(message, file=sys.stderr)


def scan_pairing(
    family: str, pairing: Pairing, input_format: str, gt_format: str, gt_cache: dict[Path, Any] | None = None
) -> Scan:
    """The pre-scan of one job, whatever the command form: every unpaired name and every problem of its files
    (:func:`scan_foreground` for foreground maps, :func:`scan_sizes` with the family's readers otherwise).
    ``gt_cache``: findings of ground truths already scanned (a report scans each dataset's once)."""
    reasons = (pairing.gt_reasons, pairing.pred_reasons)
    if family == "foreground":
        return scan_foreground(pairing.pairs, pairing.missing, pairing.unmatched, gt_cache=gt_cache, reasons=reasons)
    read_pred, read_gt, ucm2 = family_size_readers(family, input_format, gt_format)
    resizable = family == "boundary" and input_format == "soft"
    return scan_sizes(
        pairing.pairs,
        pairing.missing,
        pairing.unmatched,
        read_pred=read_pred,
        read_gt=read_gt,
        ucm2=ucm2,
        resizable=resizable,
        gt_cache=gt_cache,
        reasons=reasons,
    )


def scan_sizes(
    pairs: Sequence[tuple[str, Path, Path]],
    missing: Iterable[str] = (),
    extra: Iterable[str] = (),
    *,
    read_pred: SizeReader,
    read_gt: SizeReader,
    ucm2: bool = False,
    resizable: bool = False,
    gt_cache: dict[Path, Any] | None = None,
    reasons: tuple[dict[str, str], dict[str, str]] = ({}, {}),
) -> Scan:
    """Every problem of boundary / partition / proposal pairs (and the unpaired names) in one :class:`Scan`:
    unreadable files and sizes that do not fit (a ucm2 must be (2H+1, 2W+1) for an (H, W) ground truth).

    Args:
        pairs: ``(stem, pred_path, gt_path)``.
        missing, extra: ground-truth stems without a prediction, prediction stems without a ground truth.
        read_pred, read_gt: (H, W) of a file (:func:`family_size_readers`).
        ucm2: the predictions are double-size ucm2 hierarchies.
        resizable: another size is a ``size`` problem (``--resize`` fixes it: soft boundary maps), else ``shape``.
        gt_cache: sizes of ground-truth files already scanned (several methods share one dataset).
        reasons: as :func:`scan_foreground`.
    """
    scan = _unpaired(missing, extra, reasons, len(pairs))
    gt_cache = {} if gt_cache is None else gt_cache

    def probe(read: SizeReader, path: Path) -> tuple[Any, str | None]:
        try:
            return read(Path(path)), None
        except (OSError, ValueError, SyntaxError) as error:  # PIL raises SyntaxError for some broken headers
            message = str(error) or type(error).__name__
            return None, message if Path(path).name in message else f"{path}: {message}"

    for stem, pred_path, gt_path in pairs:
        if Path(gt_path) not in gt_cache:
            gt_cache[Path(gt_path)] = probe(read_gt, gt_path)
        (gt, gt_error), (pred, pred_error) = gt_cache[Path(gt_path)], probe(read_pred, pred_path)
        for error in (pred_error, gt_error):
            if error is not None:
                scan.problems.append(Problem("unreadable", stem, error))
        if gt is None or pred is None:
            continue
        if len(gt) != 2 or len(pred) != 2:  # volumes (the surface family): their shapes must be equal
            if tuple(pred) != tuple(gt):
                shown = "x".join(map(str, pred)), "x".join(map(str, gt))
                scan.problems.append(Problem("shape", stem, f"prediction {shown[0]}, ground truth {shown[1]}"))
            continue
        (h, w), (ph, pw) = gt, pred
        need = (2 * h + 1, 2 * w + 1) if ucm2 else (h, w)
        if (ph, pw) != need:
            wanted = f", which needs a double-size ucm2 of {need[1]}x{need[0]}" if ucm2 else ""
            detail = f"prediction {pw}x{ph}, ground truth {w}x{h} (WxH){wanted}"
            scan.problems.append(Problem("size" if resizable else "shape", stem, detail))
    order = list(KINDS)
    scan.problems.sort(key=lambda p: (order.index(p.kind), p.image))
    return scan


def listing(
    problems: Sequence[Problem], prefix: str = "  ", mark_notes: bool = False, allowed: Iterable[str] = ()
) -> list[str]:
    """One line per kind: its label, count and up to a few images (with what was seen); ``mark_notes``: kinds that
    never stop a run say so, and those whose flag is among ``allowed`` (given by the user) say that it allows them."""
    allowed = set(allowed)
    lines = []
    for kind, (label, flag) in KINDS.items():
        found = [p for p in problems if p.kind == kind]
        if not found:
            continue
        shown = ", ".join(f"{p.image} ({p.detail})" if p.detail else p.image for p in found[:_SHOWN])
        more = f" ... and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
        note = ""
        if mark_notes and flag is None:
            note = " (a note, not an error)"
        elif mark_notes and flag in allowed:
            note = f" (allowed by {flag}, not an error)"
        lines.append(f"{prefix}{label}: {len(found)}{note}: {shown}{more}")
    return lines


def _partial_suffix_hints(problems: Iterable[Problem]) -> list[str]:
    """A hint per affix that some names lack while others paired (a new user set --pred-suffix for the one file that
    carried it): the pattern that pairs names with and without it."""
    hints = []
    for affix in sorted({m.group(1) for p in problems if (m := _NO_SUFFIX.fullmatch(p.detail))}):
        suffix = ast.literal_eval(affix)
        pattern = f"^(.*?)(?:{re.escape(suffix)})?$"
        hints.append(f"hint: if only some names end in {affix}, --pair-regex '{pattern}' pairs them with the others")
    return hints


#: the reason a name took part in no pairing because it lacks the suffix (io._pair_key's wording)
_NO_SUFFIX = re.compile(r"its name does not end in ('.*'|\".*\")")


def raise_or_skip(
    scans: Sequence[tuple[str, Scan]], *, allow_missing: bool, resize: bool, skip_bad: bool, skip_empty_gt: bool = False
) -> dict[str, list[Problem]]:
    """Raise one :class:`InputError` listing every problem of every scan when one is fatal (unless ``skip_bad``);
    return, per scan label, the problems whose images are left out (fatal ones, with ``skip_bad``; the images of
    empty ground truth, with ``skip_empty_gt``: COD10K's convention)."""
    fatal = {label: scan.fatal(allow_missing or skip_bad, resize) for label, scan in scans}
    allowed = _allowed_flags(allow_missing, resize)  # marked so in the listing (skip_bad raises nothing)
    count = sum(map(len, fatal.values()))
    if count and not skip_bad:
        flags = sorted({f for problems in fatal.values() for p in problems if (f := KINDS[p.kind][1])} | {"--skip-bad"})
        unpaired = sum(scan.count("missing") + scan.count("extra") for _, scan in scans)
        paired = sum(scan.pairs for _, scan in scans)
        # unpaired names the user allowed are no sign of names that differ
        differ = unpaired and unpaired >= paired and not allow_missing
        names = f"; if the names differ, map them with {PAIRING_FLAGS}" if differ else ""
        if count == 1:
            # one problem: the error line itself names the file and what is wrong with it
            label, problem = next((label, p[0]) for label, p in fatal.items() if p)
            detail = f" ({problem.detail})" if problem.detail else ""
            where = f"{label}: " if label else ""
            lines = [
                f"{where}{problem.image}: {KINDS[problem.kind][0]}{detail}; found before evaluating (nothing was "
                f"computed); fix it, or pass {', '.join(flags)} (--skip-bad evaluates the other images){names}"
            ]
            others = [(label, [p for p in scan.problems if p is not problem]) for label, scan in scans]
        else:
            lines = [
                f"{count} problem(s) in the inputs, found before evaluating (nothing was computed); fix them, or "
                f"pass {', '.join(flags)} (--skip-bad evaluates the other images){names}:"
            ]
            others = [(label, scan.problems) for label, scan in scans]
        for label, problems in others:
            if problems:
                lines.append(f"{label}:" if label else "")
                lines.extend(listing(problems, "  ", mark_notes=True, allowed=allowed))
        lines += _partial_suffix_hints(p for _, scan in scans for p in scan.problems)
        raise InputError("\n".join(line for line in lines if line))
    out = {label: [p for p in problems if p.kind not in ("missing", "extra")] for label, problems in fatal.items()}
    if skip_empty_gt:
        for label, scan in scans:
            out[label] += [p for p in scan.problems if p.kind == "empty"]
    return out


# ------------------------------------------------------------------------------------------------------ names

#: folder names that name a role, not a dataset or a method (compared case-insensitively, without "-_ ")
GENERIC_NAMES = {
    "gt",
    "gts",
    "groundtruth",
    "groundtruths",
    "mask",
    "masks",
    "gtobject",
    "gtinstance",
    "gtedge",
    "annotation",
    "annotations",
    "label",
    "labels",
    "test",
    "tests",
    "testing",
    "train",
    "training",
    "val",
    "valid",
    "validation",
    "data",
    "dataset",
    "datasets",
    "image",
    "images",
    "img",
    "imgs",
    "pred",
    "preds",
    "prediction",
    "predictions",
    "result",
    "results",
    "output",
    "outputs",
    "saliency",
    "salmap",
    "salmaps",
    "map",
    "maps",
    "png",
    "segmentation",
    "segmentations",
    "objectmask",
    "binarymask",
    "testdataset",
    "testset",
    "testingset",
    "eval",
    "evaluation",
    "ucm2",
    "ucm",
    "segs",
    "edge",
    "edges",
    "edgemaps",
    "boundary",
    "boundaries",
    "contour",
    "contours",
    "proposals",
    "mat",
    "npz",
}


def _plain(name: str) -> str:
    return re.sub(r"[-_ .]", "", name).lower()


def _is_generic(name: str) -> bool:
    return not name or _plain(name) in GENERIC_NAMES


def _dataset_from(name: str) -> str:
    """``COD10K-v3`` -> ``COD10K``; ``DUTS-TE-Mask`` -> ``DUTS-TE``; ``ECSSD_GT`` -> ``ECSSD``."""
    name = re.sub(r"[-_ ]?v\d+(\.\d+)*$", "", name, flags=re.IGNORECASE)
    name = re.sub(r"[-_ ](mask|masks|gt|groundtruth|images?|imgs)$", "", name, flags=re.IGNORECASE)
    return name


def dataset_name(gt_dir: str | Path) -> str:
    """A dataset's name from its ground-truth folder: the nearest folder up the path that is not a role
    (``GT``, ``Test``, ``groundTruth``, ``masks`` ...), version and role suffixes removed: ``COD10K-v3/Test/GT_Object``
    -> ``COD10K``, ``DUTS-TE/DUTS-TE-Mask`` -> ``DUTS-TE``, ``BSR/BSDS500/data/groundTruth/test`` -> ``BSDS500``; a
    BSDS-like ``groundTruth`` path without a named folder above it -> ``BSDS500``."""
    parts = Path(gt_dir).resolve().parts
    for part in reversed(parts[1:]):
        if not _is_generic(part):
            return _dataset_from(part)
    if any(_plain(p) == "groundtruth" for p in parts):
        return "BSDS500"
    return Path(gt_dir).resolve().name or "dataset"


def method_name(pred_dir: str | Path, dataset: str | None = None, gt_dir: str | Path | None = None) -> str:
    """A method's name from its prediction folder: the nearest folder up the path that is neither a role
    (``preds``, ``results`` ...) nor the dataset's name (``<root>/<method>/<dataset>`` -> ``<method>``). With
    ``gt_dir``, only the folders below the one the two paths share are candidates (``exp/pred`` beside ``exp/gt``
    names nothing above ``exp``); when none qualifies, the prediction folder's own name."""
    parts = Path(pred_dir).resolve().parts
    start = 1
    if gt_dir is not None:
        shared = 0
        for a, b in zip(parts, Path(gt_dir).resolve().parts, strict=False):
            if a != b:
                break
            shared += 1
        start = max(1, shared)
    skip = {_plain(dataset)} if dataset else set()
    for part in reversed(parts[start:]):
        if not _is_generic(part) and _plain(part) not in skip and _plain(_dataset_from(part)) not in skip:
            return part
    return Path(pred_dir).resolve().name or "method"


def folder_names(
    pred_dir: str | Path, gt_dir: str | Path, method: str | None = None, dataset: str | None = None
) -> tuple[str, str]:
    """``(method, dataset)``: the names a run of the prediction folder against the ground-truth folder goes under,
    each as given or, where None (or empty), read from the paths (:func:`dataset_name` first, then
    :func:`method_name`, which leaves the dataset's name out).

    Example:
        >>> folder_names("/data/preds/MyNet/DUTS-TE", "/data/DUTS-TE/DUTS-TE-Mask")
        ('MyNet', 'DUTS-TE')
        >>> folder_names("/data/preds/MyNet/DUTS-TE", "/data/DUTS-TE/DUTS-TE-Mask", "Mine", "DUTS")
        ('Mine', 'DUTS')
    """
    dataset = dataset or dataset_name(gt_dir)
    return method or method_name(pred_dir, dataset, gt_dir), dataset
