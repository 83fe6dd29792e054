"""What every single-folder ``segmetrics evaluate`` command shares before and after its measures run: the device,
the output files checked before anything is read (writable, never an input), the pairing and its errors, the
pre-scan with ``--skip-bad``, the progress bar, and the ``--json`` / ``--per-image-csv`` writers. The handlers
themselves are in :mod:`.single_folder`."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import torch

from .. import __version__
from ..datasets.pairing import BOUNDARY_EXTENSIONS, check_pairing, match_folders
from ..datasets.prescan import dataset_name, listing, method_name, raise_or_skip, scan_pairing
from ..errors import InputError
from ..reports.files import check_output
from ..reports.tables import check_csv_outputs, upsert_csv, write_json
from . import distributed
from .output_safety import InputFolder, check_outputs

if TYPE_CHECKING:  # annotations only: building the parser imports no torch
    import torch

    from ..datasets.prescan import Problem, Scan
    from ..io import Pairing

_T = TypeVar("_T")


def parse_device(name: str) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; otherwise a torch device that must be available."""

    if name == "auto":
        return distributed.device_for(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise InputError(f"unknown device {name!r} (use cpu, cuda, cuda:N or auto)") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise InputError(f"device {name!r} requested but CUDA is not available (use --device cpu)")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise InputError(f"device {name!r} requested but only {torch.cuda.device_count()} CUDA device(s) exist")
    elif device.type == "mps" and not torch.backends.mps.is_available():
        raise InputError(f"device {name!r} requested but MPS is not available (use --device cpu)")
    return distributed.device_for(device)  # under torchrun, "cuda" is this rank's GPU


def with_progress(args: argparse.Namespace, name: str, total: int, run: Callable[[Any], _T]) -> tuple[_T, float]:
    """``(run(progress), seconds)``: the evaluation under a progress bar on stderr (none with ``--no-progress`` or
    when stderr is not a terminal)."""
    from tqdm.auto import tqdm

    start = time.perf_counter()
    disable = args.no_progress or not sys.stderr.isatty()
    with tqdm(total=total, desc=name, unit="img", file=sys.stderr, disable=disable) as progress:
        out = run(progress)
    return out, time.perf_counter() - start


def check_output_file(path: str | None, option: str) -> Path | None:
    """Fail before the evaluation, not after it, when an output file cannot be written."""

    return check_output(path, option)


def shown_path(path: str) -> str:
    """A folder the user named, as printed: normalised (``a//b/./c/`` -> ``a/b/c``), relative as given."""
    return os.path.normpath(path)


def check_inputs_safe(args: argparse.Namespace, files: dict[str, Path | None], *, out_dir: Path | None = None) -> None:
    """No output of a single-folder command replaces, deletes or pollutes an input (see ``output_safety``)."""

    inputs = [InputFolder("the prediction folder", Path(args.pred))]
    inputs.append(InputFolder("the ground-truth folder", Path(args.gt)))
    if getattr(args, "gt_classes", None):
        inputs.append(InputFolder("the class folder", Path(args.gt_classes)))
    outputs = dict(files)
    if out_dir is not None:
        outputs.update({f"--out-dir ({name})": out_dir / name for name in BSR_FILES})
    check_outputs(outputs, inputs=inputs)

    check_csv_outputs(files)


def check_folder_pairing(pairing: Pairing, args: argparse.Namespace) -> None:
    """No common stem is an error; unmatched files are one too, or a warning with ``--allow-missing``."""
    check_pairing(pairing, args.pred, args.gt, args.allow_missing)


def write_per_image_csv(
    path: Path, name: str, dataset: str, per_image: Mapping[str, Any], keys: Sequence[str] | None = None
) -> None:
    """``--per-image-csv`` of every evaluate command: one row per image (method, dataset, image, then the image's
    numbers: ``keys`` where given, else every number, a list of numbers -- the best J of each object, for proposals
    -- as its mean ``<key>_mean``), merged into the file by :func:`~segmetrics_torch.reports.tables.upsert_csv`."""

    rows = []
    for stem, values in per_image.items():
        row: dict[str, Any] = {"method": name, "dataset": dataset, "image": stem}
        if keys is not None:
            row.update({k: values[k] for k in keys if k in values})
        else:
            for key, value in values.items():
                if value is None or isinstance(value, (int, float)):
                    row[key] = value
                elif isinstance(value, list) and all(isinstance(v, (int, float)) for v in value):
                    row[f"{key}_mean"] = sum(value) / len(value) if value else None
        rows.append(row)
    action = upsert_csv(path, rows, ("method", "dataset", "image"), "--per-image-csv")
    print(f"{action.capitalize()} {path} ({len(rows)} rows of {name} / {dataset})")


def default_method_name(args: argparse.Namespace) -> str:
    """The method's name from the prediction path, never a generic leaf (``preds/MyNet/BSDS500`` -> ``MyNet``)."""

    return method_name(args.pred, dataset_name(args.gt), args.gt)


def pairing_options(args: argparse.Namespace) -> dict[str, Any]:
    """The name-mapping flags of ``args`` as :func:`segmetrics_torch.io.find_pairs` keywords."""
    return {
        "pred_prefix": args.pred_prefix or "",
        "pred_suffix": args.pred_suffix or "",
        "gt_prefix": args.gt_prefix or "",
        "gt_suffix": args.gt_suffix or "",
        "pattern": args.pair_regex,
    }


def output_files(
    args: argparse.Namespace, more: Mapping[str, str | None] | None = None, *, out_dir: Path | None = None
) -> dict[str, Path | None]:
    """``--json``, ``--per-image-csv`` and the command's other output files (``more``: option -> value), each
    checked before anything is read: writable, and none of them (nor ``--out-dir``'s files) an input."""
    files = {"--json": check_output_file(args.json, "--json")}
    files.update({option: check_output_file(value, option) for option, value in (more or {}).items()})
    files["--per-image-csv"] = check_output_file(args.per_image_csv, "--per-image-csv")
    check_inputs_safe(args, files, out_dir=out_dir)
    return files


def write_outputs(
    files: Mapping[str, Path | None],
    task: str,
    name: str,
    args: argparse.Namespace,
    device: str | torch.device,
    count: int,
    pairing: Pairing,
    *,
    settings: dict[str, Any],
    elapsed: float,
    results: Any,
    per_image: Mapping[str, Any],
    extra: dict[str, Any] | None = None,
    dataset: str | None = None,
    keys: Sequence[str] | None = None,
) -> None:
    """The ``--json`` report (provenance, folders, pairing, settings, then the results) and the ``--per-image-csv``
    rows (:func:`write_per_image_csv`; ``dataset`` defaults to the ground-truth folder's) of an evaluate command,
    where asked for."""
    json_path, per_image_path = files["--json"], files["--per-image-csv"]
    if json_path is not None:
        write_json(
            json_path,
            {
                "segmetrics_version": __version__,
                "task": task,
                "name": name,
                "pred_dir": str(Path(args.pred).resolve()),
                "gt_dir": str(Path(args.gt).resolve()),
                "num_images": count,
                "missing_predictions": pairing.missing,
                "unmatched_predictions": pairing.unmatched,
                "settings": {
                    "device": str(device),
                    "batch_size": args.batch_size,
                    "allow_missing": args.allow_missing,
                    **settings,
                },
                **(extra or {}),
                "elapsed_s": elapsed,
                "results": results,
            },
        )
        print(f"Wrote {json_path}")
    if per_image_path is not None:
        write_per_image_csv(per_image_path, name, dataset or dataset_name(args.gt), per_image, keys)


def check_out_dir(path: str | None) -> Path | None:
    """Fail before the evaluation when ``--out-dir`` cannot be a folder (it is created when absent)."""
    if path is None:
        return None
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out-dir {out} is a file; give a folder")
    if not out.exists() and not out.parent.is_dir():
        raise InputError(f"--out-dir {out}: the folder {out.parent} does not exist")
    return out


def pair_boundary_folders(args: argparse.Namespace) -> tuple[Pairing, str, str]:
    """Pair ``--pred`` and ``--gt`` (images or .mat files) by stem: ``(pairing, pred kind, gt kind)``, kinds
    ``"image"`` / ``"mat"``."""

    return match_folders(args.pred, args.gt, BOUNDARY_EXTENSIONS, **pairing_options(args))


def scan_and_report(
    args: argparse.Namespace, scan: Scan, pairs: list[tuple[str, Path, Path]]
) -> tuple[list[tuple[str, Path, Path]], list[Problem]]:
    """Raise one error listing every fatal problem of ``scan`` (unless ``--skip-bad``); print the notes and what is
    left out; ``(the pairs to evaluate, the problems left out)``."""

    resize = bool(getattr(args, "resize", False))
    bad = raise_or_skip(
        [("", scan)],
        allow_missing=args.allow_missing,
        resize=resize,
        skip_bad=args.skip_bad,
        skip_empty_gt=bool(getattr(args, "skip_empty_gt", False)),
    )[""]
    for line in listing([p for p in scan.problems if p not in bad]):
        print(f"note:{line[1:]}" if line.startswith(" ") else f"note: {line}", file=sys.stderr)
    for line in listing(bad):
        print(f"skipped:{line[1:]}", file=sys.stderr)
    left_out = {p.image for p in bad}
    pairs = [pair for pair in pairs if pair[0] not in left_out]
    if not pairs:
        raise InputError("every image has a problem (listed above); nothing to evaluate")
    return pairs, bad


def prescan_job(
    args: argparse.Namespace, pairing: Pairing, family: str, input_format: str, gt_format: str
) -> tuple[list[tuple[str, Path, Path]], Scan, list[Problem]]:
    """The pre-scan of a single-folder command (:func:`~segmetrics_torch.datasets.prescan.scan_pairing`, the
    report's too): every unpaired name, unreadable file and size that does not fit, in one error before any measure
    runs (a pairing without a common name: the pairing error); ``(pairs to evaluate, scan, left out)``."""

    if not pairing.pairs:
        check_folder_pairing(pairing, args)  # no common name: the pairing error, with examples of both sides
    # under torchrun rank 0 scans and the other ranks take its findings
    scanned = distributed.main_decides(lambda: scan_pairing(family, pairing, input_format, gt_format))
    pairs, bad = scan_and_report(args, scanned, pairing.pairs)
    return pairs, scanned, bad


#: the files of BSR's collect_eval_bdry.m that --out-dir writes
BSR_FILES = ("eval_bdry.txt", "eval_bdry_thr.txt", "eval_bdry_img.txt")


def write_bsr_files(out_dir: Path, summary: dict[str, Any]) -> list[Path]:
    """BSR ``collect_eval_bdry.m`` outputs, every number as MATLAB's ``%10g``, fields separated by one space."""

    def line(*values: float) -> str:
        return " ".join(f"{v:10g}" for v in values) + "\n"  # == "%10g" % v, C printf semantics as MATLAB's fprintf

    ods, ois = summary["ods"], summary["ois"]
    best = (ods["threshold"], ods["recall"], ods["precision"], ods["f"], ois["recall"], ois["precision"], ois["f"])
    curves = zip(*(summary[k].tolist() for k in ("thresholds", "recall", "precision", "f")), strict=True)
    per = summary["per_image"]
    images = zip(*(per[k].tolist() for k in ("threshold", "recall", "precision", "f")), strict=True)
    out_dir.mkdir(exist_ok=True)
    texts = {
        "eval_bdry.txt": line(*(float(v) for v in best), float(summary["ap"])),
        "eval_bdry_thr.txt": "".join(line(*row) for row in curves),
        "eval_bdry_img.txt": "".join(f"{i:10d} " + line(*row) for i, row in enumerate(images, start=1)),
    }
    paths = []
    for file_name, text in texts.items():
        path = out_dir / file_name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths
