"""A dataset on disk in one call: a prediction folder paired with its ground-truth folder and pre-scanned.

:func:`open_folders` is what every single-folder ``segmetrics evaluate`` form does before any measure runs, and what
a script evaluating a folder pair needs: pair the files by stem (:func:`segmetrics_torch.io.find_pairs`, with the
name mapping), refuse a pairing without a common name (:func:`.prescan.check_pairing`: examples of both sides and
the flags that map names), look at every file once (:func:`.prescan.scan_pairing`) and turn the problems found into
one error listing all of them, or, with ``skip_bad`` / ``skip_empty_gt``, leave those images out and say so
(:func:`.prescan.raise_or_skip`). The result, :class:`FolderDataset`, holds the pairs to evaluate, what was found,
and the names of the method and the dataset (given, or read from the folders' paths:
:func:`.prescan.folder_names`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import IMAGE_EXTENSIONS, Pairing, find_pairs
from .pairing import pairing_error
from .prescan import Problem, Scan, check_pairing, folder_names, listing, raise_or_skip, scan_pairing, warn_on_stderr

__all__ = ["FolderDataset", "open_folders"]


@dataclass(frozen=True)
class FolderDataset:
    """A prediction folder paired with a ground-truth folder, pre-scanned (:func:`open_folders`).

    Attributes:
        pairing: every stem of both folders: the pairs, the ground truths without a prediction (``missing``), the
            predictions without a ground truth (``unmatched``).
        pairs: ``(stem, prediction path, ground-truth path)`` of the images to evaluate: the pairs less those left
            out, in the pairing's (sorted) order.
        scan: what the pre-scan found (:class:`~.prescan.Scan`).
        left_out: the problems whose images are left out (``skip_bad``, ``skip_empty_gt``).
        method_name, dataset_name: the names the results go under: as given to :func:`open_folders`, else read
            from the paths (``preds/MyNet/BSDS500`` -> ``MyNet``; the ground truth's folders name the dataset).
    """

    pairing: Pairing
    pairs: list[tuple[str, Path, Path]]
    scan: Scan
    left_out: list[Problem]
    method_name: str
    dataset_name: str

    def findings(self) -> dict[str, list[dict[str, str]]]:
        """What the pre-scan found, for a JSON report (:meth:`~.prescan.Scan.findings`)."""
        return self.scan.findings(self.left_out)


def open_folders(
    pred: str | Path,
    gt: str | Path,
    family: str,
    *,
    input_format: str = "gray",
    gt_format: str = "gray",
    names: Mapping[str, Any] | None = None,
    extensions: Sequence[str] | None = None,
    pairing: Pairing | None = None,
    allow_missing: bool = False,
    resize: bool = False,
    skip_bad: bool = False,
    skip_empty_gt: bool = False,
    method: str | None = None,
    dataset: str | None = None,
    report: Callable[[str], None] = warn_on_stderr,
) -> FolderDataset:
    """Pair ``pred`` with ``gt`` and pre-scan every file of ``family`` (``"foreground"``, ``"boundary"``, ...).

    Args:
        pred, gt: the prediction and ground-truth folders.
        family: the family whose readers the scan uses; ``input_format`` / ``gt_format``: its formats
            (:data:`~.pairing.PREDICTION_FORMATS`, :data:`~.pairing.GT_FORMATS`).
        names: the name mapping of :func:`segmetrics_torch.io.find_pairs` (``pred_prefix``, ``pred_suffix``,
            ``gt_prefix``, ``gt_suffix``, ``pattern``); ``extensions``: the files paired (None: images).
        pairing: the pairing when the caller made it (the boundary family pairs images and ``.mat`` files), else
            the folders are paired here.
        allow_missing: unpaired files are notes, not errors. ``resize``: a prediction of another size is resized
            (a note). ``skip_bad``: images with a problem are left out instead of stopping the run.
            ``skip_empty_gt``: images whose ground truth is empty are left out (COD10K's convention).
        method, dataset: the names of the method and the dataset; None: read from the paths
            (:func:`~.prescan.folder_names`).
        report: called with each line of what was noted or left out (``note: ...``, ``skipped: ...``); stderr by
            default.

    Raises:
        InputError: no common name, every problem found (one error listing all, unless ``skip_bad``), a bad
            ``pattern``, or nothing left to evaluate.

    Example:
        >>> import tempfile, numpy as np
        >>> from PIL import Image
        >>> root = Path(tempfile.mkdtemp())
        >>> for folder in ("pred", "gt"):
        ...     (root / folder).mkdir()
        ...     Image.fromarray(np.full((4, 4), 255, np.uint8)).save(root / folder / "a.png")
        >>> dataset = open_folders(root / "pred", root / "gt", "foreground")
        >>> [stem for stem, _, _ in dataset.pairs], dataset.method_name
        (['a'], 'pred')
    """
    if pairing is None:
        try:
            pairing = find_pairs(pred, gt, IMAGE_EXTENSIONS if extensions is None else extensions, **(names or {}))
        except ValueError as error:
            raise pairing_error(error) from None
        except OSError as error:  # an InputError, so that under torchrun rank 0's failure ends every rank
            # the OSError names the folder at fault when it has one (a folder that cannot be listed)
            where = f"folder {error.filename}" if error.filename is not None else f"folders {pred} and {gt}"
            raise InputError(f"cannot list the {where}: {error.strerror or error}") from None
    if not pairing.pairs:
        check_pairing(pairing, pred, gt, allow_missing)  # no common name: the pairing error, with examples
    scan = scan_pairing(family, pairing, input_format, gt_format)
    left_out = raise_or_skip(
        [("", scan)], allow_missing=allow_missing, resize=resize, skip_bad=skip_bad, skip_empty_gt=skip_empty_gt
    )[""]
    for line in listing([p for p in scan.problems if p not in left_out]):
        report(f"note:{line[1:]}" if line.startswith(" ") else f"note: {line}")
    for line in listing(left_out):
        report(f"skipped:{line[1:]}")
    images = {p.image for p in left_out}
    pairs = [pair for pair in pairing.pairs if pair[0] not in images]
    if not pairs:
        raise InputError("every image has a problem (listed above); nothing to evaluate")
    return FolderDataset(pairing, pairs, scan, left_out, *folder_names(pred, gt, method, dataset))
