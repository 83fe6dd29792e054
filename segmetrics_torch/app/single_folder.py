"""The single-folder forms of ``segmetrics evaluate foreground|boundary|partition|proposals|surface`` and of
``segmetrics demo``: one handler per command (checked outputs, pairing, pre-scan, the family's runner of
:mod:`.evaluation`, the table, the JSON / CSV files); :mod:`.cli` builds the parser and dispatches to them."""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .. import __version__
from . import distributed
from .errors import InputError
from .evaluation import BOUNDARY_EXTENSIONS, GT_FORMATS, PREDICTION_FORMATS, check_pairing, pairing_error

if TYPE_CHECKING:  # annotations only: building the parser imports no torch
    import torch

    from ..io import Pairing
    from .prescan import Problem, Scan

_T = TypeVar("_T")


CURVE_CONVENTION = (
    "entry i of every 256-point curve binarises the (min-max normalised) map at trunc(255 * p) >= 255 - i, "
    "i.e. thresholds in descending order, as PySODMetrics 1.6.2"
)


def _device(name: str) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; otherwise a torch device that must be available."""
    import torch

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


def _with_progress(args: argparse.Namespace, name: str, total: int, run: Callable[[Any], _T]) -> tuple[_T, float]:
    """``(run(progress), seconds)``: the evaluation under a progress bar on stderr (none with ``--no-progress`` or
    when stderr is not a terminal)."""
    from tqdm.auto import tqdm

    start = time.perf_counter()
    disable = args.no_progress or not sys.stderr.isatty()
    with tqdm(total=total, desc=name, unit="img", file=sys.stderr, disable=disable) as progress:
        out = run(progress)
    return out, time.perf_counter() - start


def _check_output(path: str | None, option: str) -> Path | None:
    """Fail before the evaluation, not after it, when an output file cannot be written."""
    from .outputs import check_output

    return check_output(path, option)


def _shown(path: str) -> str:
    """A folder the user named, as printed: normalised (``a//b/./c/`` -> ``a/b/c``), relative as given."""
    return os.path.normpath(path)


def _check_inputs_safe(args: argparse.Namespace, files: dict[str, Path | None], *, out_dir: Path | None = None) -> None:
    """No output of a single-folder command replaces, deletes or pollutes an input (see ``output_safety``)."""
    from .output_safety import InputFolder, check_outputs

    inputs = [InputFolder("the prediction folder", Path(args.pred))]
    inputs.append(InputFolder("the ground-truth folder", Path(args.gt)))
    if getattr(args, "gt_classes", None):
        inputs.append(InputFolder("the class folder", Path(args.gt_classes)))
    outputs = dict(files)
    if out_dir is not None:
        outputs.update({f"--out-dir ({name})": out_dir / name for name in BSR_FILES})
    check_outputs(outputs, inputs=inputs)
    from .tables import check_csv_outputs

    check_csv_outputs(files)


def _check_pairing(pairing: Pairing, args: argparse.Namespace) -> None:
    """No common stem is an error; unmatched files are one too, or a warning with ``--allow-missing``."""
    check_pairing(pairing, args.pred, args.gt, args.allow_missing)


# --------------------------------------------------------------------------------------------------------- demo


def run_demo(args: argparse.Namespace) -> int:
    import torch

    from .. import ForegroundMeasures
    from ..synthetic import make_foreground_dataset
    from .evaluation import sync
    from .tables import SOD_COLUMNS, format_table, scalar_row

    device = _device(args.device)
    start = time.perf_counter()
    data = make_foreground_dataset(n=args.n, size=(240, 320), seed=args.seed)
    generated = time.perf_counter() - start
    gt = torch.from_numpy(data.gt).to(device)
    # one tiny batch first: compiled kernels (numba on CPU, CUDA context on GPU) start here, outside the timing
    start = time.perf_counter()
    warm = ForegroundMeasures().to(device)
    warm.update(gt[:1, :32, :32], gt[:1, :32, :32])
    warm.compute()
    sync(device)
    warmup = time.perf_counter() - start
    rows: dict[str, dict[str, float]] = {}
    start = time.perf_counter()
    for method, maps in data.preds.items():
        metric = ForegroundMeasures().to(device)
        preds = torch.from_numpy(maps).to(device)
        for i in range(0, args.n, args.batch_size):
            metric.update(preds[i : i + args.batch_size], gt[i : i + args.batch_size])
        rows[method] = scalar_row(metric.compute())
    sync(device)
    elapsed = time.perf_counter() - start
    if not distributed.is_main():  # under torchrun rank 0 reports and writes
        return 0
    empty = " (one with an empty ground truth)" if args.n >= 2 else ""
    print(format_table(rows, SOD_COLUMNS))
    print(
        f"Data: {args.n} synthetic 240x320 ground-truth maps{empty} of random ellipses, blobs and thin structures "
        f"(seed {args.seed}), and per method a map damaged to a graded degree: good = slightly blurred + mild noise, "
        "blurry = strongly blurred + shifted, noisy = strong noise + false blobs (segmetrics_torch.synthetic)."
    )
    print(
        f"Evaluated {args.n * len(rows)} maps with ForegroundMeasures on {device} in {elapsed:.2f} s "
        f"(data generated in {generated:.2f} s; one-time warm-up, e.g. kernel compilation, {warmup:.2f} s)."
    )
    return 0


# ------------------------------------------------------------------------------------------ evaluate foreground


def _write_per_image_csv(
    path: Path, name: str, dataset: str, per_image: Mapping[str, Any], keys: Sequence[str] | None = None
) -> None:
    """``--per-image-csv`` of every evaluate command: one row per image (method, dataset, image, then the image's
    numbers: ``keys`` where given, else every number, a list of numbers -- the best J of each object, for proposals
    -- as its mean ``<key>_mean``), merged into the file by :func:`~.tables.upsert_csv`."""
    from .tables import upsert_csv

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




def _default_name(args: argparse.Namespace) -> str:
    """The method's name from the prediction path, never a generic leaf (``preds/MyNet/BSDS500`` -> ``MyNet``)."""
    from .prescan import dataset_name, method_name

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


def run_evaluate_foreground(args: argparse.Namespace) -> int:

    from ..io import find_pairs
    from .evaluation import evaluate_foreground
    from .measures import foreground_columns
    from .prescan import dataset_name, method_name, scan_foreground
    from .tables import format_table, scalar_row, upsert_csv

    args.measures = _measure_names(args.measures)
    if args.output is not None:
        return _run_foreground_as_report(args)
    if args.figures is not None:
        raise InputError("--figures applies to the report of --output DIR; add --output or leave out --figures")
    device = _device(args.device)
    json_path = _check_output(args.json, "--json")
    csv_path = _check_output(args.csv, "--csv")
    per_image_path = _check_output(args.per_image_csv, "--per-image-csv")
    _check_inputs_safe(args, {"--json": json_path, "--csv": csv_path, "--per-image-csv": per_image_path})
    try:
        pairing = find_pairs(args.pred, args.gt, **pairing_options(args))
    except ValueError as error:
        raise pairing_error(error) from None
    if not pairing.pairs:
        _check_pairing(pairing, args)
    dataset = args.dataset or dataset_name(args.gt)
    name = args.name or method_name(args.pred, dataset, args.gt)

    # every problem of every file at once, before any measure runs
    # under torchrun rank 0 scans and the other ranks take its findings
    reasons = (pairing.gt_reasons, pairing.pred_reasons)
    scan = distributed.main_decides(
        lambda: scan_foreground(pairing.pairs, pairing.missing, pairing.unmatched, reasons=reasons)
    )
    pairs, bad = _scan_and_report(args, scan, pairing.pairs)

    columns, _, include = foreground_columns(args.measures)
    (results, metric), elapsed = _with_progress(
        args, name, len(pairs),
        lambda progress: evaluate_foreground(
            pairs, device=device, batch_size=args.batch_size, workers=args.workers, progress=progress,
            resize=args.resize, per_image=True, include=include,
        ),
    )  # fmt: skip
    if not distributed.is_main():  # under torchrun rank 0 reports and writes
        return 0

    rows = {name: scalar_row(results)}
    print(format_table(rows, columns))
    count = int(metric.count)
    total = len(pairing.pairs) + len(pairing.missing)
    of = f" (of {total} ground truths)" if count != total else ""
    pred_dir, gt_dir = _shown(args.pred), _shown(args.gt)
    print(f"Evaluated {count} image(s){of} of {pred_dir} against {gt_dir} ({dataset}) on {device} in {elapsed:.2f} s")
    per_image = metric.per_image or {}
    if json_path is not None:
        _write_report(
            json_path,
            "foreground",
            name,
            args,
            device,
            count,
            pairing,
            settings={
                "normalize": metric.normalize,
                **metric.settings,
                "reader": "segmetrics_torch.io.read_gray (== cv2.imread(path, cv2.IMREAD_GRAYSCALE))",
                "gt_binarisation": "> 128 (a 0/1 mask: == 1)",
                "resize": args.resize,
                "pairing": pairing_options(args),
                "measures": [key for key, _ in columns],
            },
            extra={"dataset": dataset, "curve_convention": CURVE_CONVENTION, **scan.findings(bad)},
            elapsed=elapsed,
            results={**results, "per_image": per_image},
        )  # fmt: skip
        print(f"Wrote {json_path}")
    keys = [key for key, _ in columns]
    if csv_path is not None:
        row = {"method": name, "dataset": dataset, "num_images": count, **{k: rows[name].get(k) for k in keys}}
        action = upsert_csv(csv_path, [row], ("method", "dataset"), "--csv")
        print(f"{action.capitalize()} {csv_path} (row {name} / {dataset})")
    if per_image_path is not None:
        # per image: the core measures and the chosen ones with one value per image (curve-based ones are dataset-level)
        _write_per_image_csv(per_image_path, name, dataset, per_image, keys)
    return 0


def _measure_names(text: str | None) -> list[str] | None:
    """``--measures`` resolved to the table's names (other spellings mapped), checked before anything is read: an
    unknown name or a measure whose optional packages are missing is one ``error:`` line."""
    from .measures import missing_packages, parse_foreground_measures

    if text is None:
        return None
    names = parse_foreground_measures(text, "--measures")
    problem = missing_packages(names)
    if problem is not None:
        raise InputError(f"--measures: {problem}")
    return names


def _run_foreground_as_report(args: argparse.Namespace) -> int:
    """``evaluate foreground ... --output DIR``: the report of one method on one dataset (the ``--config`` outputs)."""
    from .prescan import dataset_name, method_name
    from .report_run import config_from_mapping, run_report

    for option in ("json", "csv", "per_image_csv"):
        if getattr(args, option) is not None:
            flag = "--" + option.replace("_", "-")
            raise InputError(f"{flag} and --output: give one (--output DIR writes results.json and CSV files there)")
    dataset = args.dataset or dataset_name(args.gt)
    name = args.name or method_name(args.pred, dataset, args.gt)
    data = {
        "datasets": {dataset: {"gt": str(Path(args.gt).resolve()), "families": ["foreground"]}},
        "methods": {name: str(Path(args.pred).resolve())},
        "output": str(Path(args.output).resolve()),
        "allow_missing": args.allow_missing,
        "resize": args.resize,
        "skip_bad": args.skip_bad,
        "skip_empty_gt": bool(getattr(args, "skip_empty_gt", False)),
        "device": args.device,
        "batch_size": args.batch_size,
        "workers": args.workers,
        **({"options": {"foreground": {"measures": args.measures}}} if args.measures else {}),
        **{("pair_regex" if key == "pattern" else key): value for key, value in pairing_options(args).items() if value},
    }
    if args.figures is not None:
        value = args.figures.strip()
        data["figures"] = False if value == "none" else [f.strip() for f in value.split(",")]
    config = config_from_mapping(data, Path.cwd(), "command line")
    config.progress = not args.no_progress
    run_report(config, resolve_device=_device)
    return 0


# ------------------------------------------------------------------------------------------- evaluate boundary

#: the columns of the boundary table: (key of :func:`~segmetrics_torch.app.tables.scalar_row`, header)
BOUNDARY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("ods/threshold", "ODS-T"),
    ("ods/recall", "ODS-R"),
    ("ods/precision", "ODS-P"),
    ("ods/f", "ODS-F"),
    ("ois/recall", "OIS-R"),
    ("ois/precision", "OIS-P"),
    ("ois/f", "OIS-F"),
    ("ap", "AP"),
    ("r50", "R50"),
)


def _write_report(
    json_path: Path,
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
    extra: dict[str, Any] | None = None,
) -> None:
    """The JSON report every evaluate command writes: provenance, folders, pairing, settings, then the results."""
    from .tables import write_json

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


def _check_out_dir(path: str | None) -> Path | None:
    """Fail before the evaluation when ``--out-dir`` cannot be a folder (it is created when absent)."""
    if path is None:
        return None
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out-dir {out} is a file; give a folder")
    if not out.exists() and not out.parent.is_dir():
        raise InputError(f"--out-dir {out}: the folder {out.parent} does not exist")
    return out


def _match_folders(args: argparse.Namespace) -> tuple[Pairing, str, str]:
    """Pair ``--pred`` and ``--gt`` (images or .mat files) by stem: ``(pairing, pred kind, gt kind)``, kinds
    ``"image"`` / ``"mat"``."""
    from .evaluation import match_folders

    return match_folders(args.pred, args.gt, BOUNDARY_EXTENSIONS, **pairing_options(args))


def _scan_and_report(
    args: argparse.Namespace, scan: Scan, pairs: list[tuple[str, Path, Path]]
) -> tuple[list[tuple[str, Path, Path]], list[Problem]]:
    """Raise one error listing every fatal problem of ``scan`` (unless ``--skip-bad``); print the notes and what is
    left out; ``(the pairs to evaluate, the problems left out)``."""
    from .prescan import listing, raise_or_skip

    resize = bool(getattr(args, "resize", False))
    bad = raise_or_skip([("", scan)], allow_missing=args.allow_missing, resize=resize, skip_bad=args.skip_bad,
                        skip_empty_gt=bool(getattr(args, "skip_empty_gt", False)))[""]  # fmt: skip
    for line in listing([p for p in scan.problems if p not in bad]):
        print(f"note:{line[1:]}" if line.startswith(" ") else f"note: {line}", file=sys.stderr)
    for line in listing(bad):
        print(f"skipped:{line[1:]}", file=sys.stderr)
    left_out = {p.image for p in bad}
    pairs = [pair for pair in pairs if pair[0] not in left_out]
    if not pairs:
        raise InputError("every image has a problem (listed above); nothing to evaluate")
    return pairs, bad


def _prescan(
    args: argparse.Namespace, pairing: Pairing, family: str, input_format: str, gt_format: str
) -> tuple[list[tuple[str, Path, Path]], Scan, list[Problem]]:
    """The pre-scan of the boundary, partition and proposal commands: every unpaired name, unreadable file and size
    that does not fit, in one error before any measure runs; ``(pairs to evaluate, scan, left out)``."""
    from .prescan import family_size_readers, scan_sizes

    if not pairing.pairs:
        _check_pairing(pairing, args)  # no common name: the pairing error, with examples of both sides
    read_pred, read_gt, ucm2 = family_size_readers(family, input_format, gt_format)
    resizable = family == "boundary" and input_format == "soft"
    # under torchrun rank 0 scans and the other ranks take its findings
    def scan() -> Scan:
        return scan_sizes(pairing.pairs, pairing.missing, pairing.unmatched, read_pred=read_pred, read_gt=read_gt,
                          ucm2=ucm2, resizable=resizable, reasons=(pairing.gt_reasons, pairing.pred_reasons))

    scanned = distributed.main_decides(scan)
    pairs, bad = _scan_and_report(args, scanned, pairing.pairs)
    return pairs, scanned, bad


#: the files of BSR's collect_eval_bdry.m that --out-dir writes
BSR_FILES = ("eval_bdry.txt", "eval_bdry_thr.txt", "eval_bdry_img.txt")


def _write_bsr_files(out_dir: Path, summary: dict[str, Any]) -> list[Path]:
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


def run_evaluate_boundary(args: argparse.Namespace) -> int:

    from .evaluation import boundary_formats, boundary_report, check_boundary_nms, evaluate_boundary
    from .tables import format_table, scalar_row

    device = _device(args.device)
    json_path = _check_output(args.json, "--json")
    per_image_path = _check_output(args.per_image_csv, "--per-image-csv")
    out_dir = _check_out_dir(args.out_dir)
    _check_inputs_safe(args, {"--json": json_path, "--per-image-csv": per_image_path}, out_dir=out_dir)
    pairing, pred_kind, gt_kind = _match_folders(args)
    input_format, gt_format = boundary_formats(pred_kind, gt_kind, args.gt_labels, args.gt)
    check_boundary_nms(args.nms, input_format, "--nms")
    if args.resize and input_format != "soft":
        raise InputError("--resize applies to soft boundary maps (images); a ucm2 must be (2H+1)x(2W+1)")
    pairs, scan, bad = _prescan(args, pairing, "boundary", input_format, gt_format)
    name = args.name or _default_name(args)
    stems = [stem for stem, _, _ in pairs]
    options = {"thresholds": args.thresholds, "max_dist": args.max_dist, "thin": not args.no_thin, "nms": args.nms}

    summary, elapsed = _with_progress(
        args, name, len(pairs),
        lambda progress: evaluate_boundary(  # 0-d tensors and (K,) / (B,) curves, on the CPU
            pairs, input_format=input_format, gt_format=gt_format, **options, device=device,
            batch_size=args.batch_size, workers=args.workers, progress=progress, resize=args.resize,
        ),
    )  # fmt: skip
    if not distributed.is_main():  # under torchrun rank 0 reports and writes
        return 0

    count = len(stems)
    if math.isnan(float(summary["r50"])):
        print(
            "warning: precision never reaches 0.5 on these images, so R50 (recall at precision 0.5) is nan",
            file=sys.stderr,
        )
    first, dollar = float(summary["r50"]), float(summary["r50_dollar"])
    if float(summary["precision"][0]) > 0.5:
        print(
            f"warning: precision is above 0.5 already at the lowest threshold ({float(summary['thresholds'][0]):g}), "
            "so R50 is that threshold's recall, a lower bound of the recall at precision 0.5 (more thresholds, "
            "e.g. --thresholds 99, extend the curve)",
            file=sys.stderr,
        )
    if abs(first - dollar) > 0.01:  # NaN on either side compares False: nothing to say
        print(
            f"warning: precision comes back to 0.5 along the PR curve, so R50 is ambiguous: precision first reaches "
            f"0.5 at recall {first:.4f} (the table's R50); Dollar's unique-precision interpolation gives {dollar:.4f} "
            "(r50_dollar in --json)",
            file=sys.stderr,
        )
    rows = {name: scalar_row({key: summary[key] for key in ("ods", "ois", "ap", "r50")})}
    print(format_table(rows, BOUNDARY_COLUMNS))
    thin = ("" if options["thin"] else ", no thinning") + (", edge NMS" if options["nms"] else "")
    print(
        f"Evaluated {count} image(s) of {_shown(args.pred)} ({input_format} maps) against {_shown(args.gt)} "
        f"({gt_format}) with "
        f"{args.thresholds} thresholds, max_dist {args.max_dist:g}{thin} on {device} in {elapsed:.2f} s."
    )
    if out_dir is not None:
        paths = _write_bsr_files(out_dir, summary)
        print(f"Wrote {', '.join(p.name for p in paths)} to {out_dir}")
    if json_path is not None:
        results = boundary_report(summary, stems)
        _write_report(
            json_path,
            "boundary",
            name,
            args,
            device,
            count,
            pairing,
            settings={
                "thresholds": args.thresholds,
                "max_dist": args.max_dist,
                "thin": options["thin"],
                "nms": options["nms"],
                "input_format": input_format,
                "gt_format": gt_format,
                "gt_description": GT_FORMATS[gt_format],
                "unique_occurrence": "last",
                "backend": "auto",
                "reader": (
                    "ucm2: scipy.io.loadmat(path)['ucm2'] as float64"
                    if input_format == "ucm2"
                    else "segmetrics_torch.io.read_gray (== cv2.imread(path, cv2.IMREAD_GRAYSCALE)), / 255"
                ),
                "resize": args.resize,
                "pairing": pairing_options(args),
            },
            extra=scan.findings(bad),
            elapsed=elapsed,
            results=results,
        )
        print(f"Wrote {json_path}")
    if per_image_path is not None:
        from .prescan import dataset_name

        per_image = boundary_report(summary, stems)["per_image"]
        _write_per_image_csv(per_image_path, name, dataset_name(args.gt), per_image)
    return 0


# ------------------------------------------------------------------------------------------ evaluate partition

#: per-measure table of hierarchies (SEISM): (key of a ``compute()`` entry, header); AP for fb, fop and fr only
HIERARCHY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("ods_parameter", "ODS-T"),
    ("ods", "ODS"),
    ("ois", "OIS"),
    ("ap", "AP"),
)
#: the region benchmark table (BSR eval_cover.txt / eval_RI_VOI.txt)
REGION_COLUMNS: tuple[tuple[str, str], ...] = (*HIERARCHY_COLUMNS[:3], ("best", "Best"))


def run_evaluate_partition(args: argparse.Namespace) -> int:

    from .evaluation import evaluate_partition, partition_formats
    from .tables import format_table, measure_name, scalar_row

    device = _device(args.device)
    json_path = _check_output(args.json, "--json")
    per_image_path = _check_output(args.per_image_csv, "--per-image-csv")
    _check_inputs_safe(args, {"--json": json_path, "--per-image-csv": per_image_path})
    pairing, pred_kind, gt_kind = _match_folders(args)
    if not pairing.pairs:
        _check_pairing(pairing, args)  # no common name: the pairing error, with examples of both sides
    input_format, gt_format = partition_formats(pairing, pred_kind, gt_kind)
    hierarchy = input_format != "labels"
    if hierarchy and per_image_path is not None:
        raise InputError(
            f"--per-image-csv needs label-map partitions: {args.pred} holds {PREDICTION_FORMATS[input_format]}, whose "
            "ODS/OIS/AP are dataset-level (their per-image curves are in --json)"
        )
    if input_format != "ucm2" and (args.thresholds is not None or args.num_regions is not None):
        option = "--thresholds" if args.thresholds is not None else "--num-regions"
        raise InputError(
            f"{option} applies to ucm2 hierarchies only, but {args.pred} holds {PREDICTION_FORMATS[input_format]}"
        )
    pairs, scan, bad = _prescan(args, pairing, "partition", input_format, gt_format)
    name = args.name or _default_name(args)
    stems = [stem for stem, _, _ in pairs]
    options = {"measures": args.measures, "gamma_obj": args.gamma_obj, "max_dist": args.max_dist}

    (results, metric), elapsed = _with_progress(
        args, name, len(pairs),
        lambda progress: evaluate_partition(
            pairs, input_format=input_format, gt_format=gt_format, **options, thresholds=args.thresholds,
            num_regions=args.num_regions, rule=args.rule, device=device, batch_size=args.batch_size,
            workers=args.workers, progress=progress,
        ),
    )  # fmt: skip
    if not distributed.is_main():  # under torchrun rank 0 reports and writes
        return 0

    if hierarchy:
        rows = {measure_name(m): scalar_row(results[m]) for m in metric.measures}
        print(format_table(rows, HIERARCHY_COLUMNS, index_header="measure"))
        region = {("Covering" if k == "covering" else measure_name(k)): scalar_row(v)
                  for k, v in results["region_benchmark"].items()}  # fmt: skip
        print("\nRegion benchmark (BSR eval_cover.txt, eval_RI_VOI.txt):")
        print(format_table(region, REGION_COLUMNS, index_header="measure"))
        kind = "region counts" if args.num_regions else "levels" if input_format == "stack" else "thresholds"
        setting = f" at {metric.levels.numel()} {kind}" + (f", rule {args.rule}" if input_format == "ucm2" else "")
        hierarchy_settings = {
            "parameters": metric.levels,
            "parameter_kind": kind,
            "region_benchmark": True,
            "unique_occurrence": metric.unique_occurrence,
        }
    else:
        rows = {name: scalar_row(results)}
        print(format_table(rows, [(m, measure_name(m)) for m in metric.measures]))
        setting, hierarchy_settings = "", {}
    print(
        f"Evaluated {len(stems)} image(s) of {_shown(args.pred)} ({input_format}) against {_shown(args.gt)} "
        f"({gt_format}){setting} "
        f"on {device} in {elapsed:.2f} s."
    )
    if json_path is not None:
        _write_report(
            json_path,
            "partition",
            name,
            args,
            device,
            len(stems),
            pairing,
            settings={
                "input_format": input_format,
                "input_description": PREDICTION_FORMATS[input_format],
                "gt_format": gt_format,
                "measures": list(metric.measures),
                **metric.options,
                **hierarchy_settings,
                "pairing": pairing_options(args),
            },
            extra=scan.findings(bad),
            elapsed=elapsed,
            results=results,
        )
        print(f"Wrote {json_path}")
    if per_image_path is not None:
        from .prescan import dataset_name

        _write_per_image_csv(per_image_path, name, dataset_name(args.gt), results.get("per_image", {}))
    return 0


PROPOSAL_TABLE_N = (10, 100, 1000)


def run_evaluate_proposals(args: argparse.Namespace) -> int:

    from ..functional.proposals import MCG_PROPOSAL_COUNTS
    from ..io import PROPOSAL_EXTENSIONS, find_pairs, list_images
    from .evaluation import evaluate_proposals
    from .tables import format_table

    device = _device(args.device)
    json_path = _check_output(args.json, "--json")
    per_image_path = _check_output(args.per_image_csv, "--per-image-csv")
    plot_path = _check_output(args.plot, "--plot")
    if plot_path is not None:
        if plot_path.suffix.lower() not in (".png", ".pdf", ".svg"):
            raise InputError(f"--plot {plot_path}: give a .png, .pdf or .svg file name")
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise InputError("--plot needs matplotlib: pip install 'segmetrics-torch[plot]'") from None
    _check_inputs_safe(args, {"--json": json_path, "--per-image-csv": per_image_path, "--plot": plot_path})
    try:
        pairing = find_pairs(args.pred, args.gt, PROPOSAL_EXTENSIONS, **pairing_options(args))
        classes = None if args.gt_classes is None else list_images(args.gt_classes, name="class folder")
    except ValueError as error:
        raise pairing_error(error) from None
    pairs, scan, bad = _prescan(args, pairing, "proposals", "pool", "objects")
    counts = sorted(set(args.counts or MCG_PROPOSAL_COUNTS))
    void_label = None if args.void_label < 0 else args.void_label
    name = args.name or _default_name(args)
    (results, per_image, metric), elapsed = _with_progress(
        args, name, len(pairs),
        lambda progress: evaluate_proposals(
            pairs, counts=counts, classes=classes, void_label=void_label, num_classes=args.num_classes,
            chunk_size=args.chunk_size, boundary=args.boundary, bound_th=args.bound_th, device=device,
            progress=progress,
        ),
    )  # fmt: skip
    if not distributed.is_main():  # under torchrun rank 0 reports and writes
        return 0

    n = results["counts"].tolist()
    shown = sorted({i for i, c in enumerate(n) if c in PROPOSAL_TABLE_N} | {len(n) - 1})
    columns = [("num_proposals", "#prop"), ("jaccard_object", "J_i"), ("jaccard_median", "median J"),
               ("recall_50", "R@.5"), ("recall_70", "R@.7"), ("recall_85", "R@.85"), ("average_recall", "AR")]
    if "jaccard_class" in results:
        columns.insert(2, ("jaccard_class", "J_c"))
    if args.boundary:
        columns += [("boundary_f_object", "F_i"), ("boundary_recall_50", "F R@.5"), ("boundary_average_recall", "F AR")]
    rows = {f"N={n[i]}": {k: float(results[k][i]) for k, _ in columns} for i in shown}
    print(format_table(rows, columns, index_header=name))
    print(
        f"Evaluated {len(per_image)} image(s), {int(metric.objects)} object(s), of {_shown(args.pred)} against "
        f"{_shown(args.gt)} on "
        f"{device} in {elapsed:.2f} s (#prop: mean proposals per image within N)."
    )
    if plot_path is not None:
        from .plots import plot_proposal_recall

        plot_proposal_recall({name: results}, plot_path, title=name)
        print(f"Wrote {plot_path}")
    if json_path is not None:
        _write_report(
            json_path,
            "proposals",
            name,
            args,
            device,
            len(per_image),
            pairing,
            settings={
                "counts": n,
                "boundary": args.boundary,
                "bound_th": args.bound_th,
                "void_label": void_label,
                "gt_classes_dir": None if args.gt_classes is None else str(Path(args.gt_classes).resolve()),
                "num_classes": metric.num_classes,
                "chunk_size": args.chunk_size,
                "protocol": "MCG eval_proposals.m: best J per object within the first N proposals; recall strict >, "
                "average recall >= over 0.5:0.05:0.95; x = mean min(N, P) per image",
                "pairing": pairing_options(args),
            },
            extra=scan.findings(bad),
            elapsed=elapsed,
            results={**results, "per_image": per_image},
        )
        print(f"Wrote {json_path}")
    if per_image_path is not None:
        from .prescan import dataset_name

        _write_per_image_csv(per_image_path, name, dataset_name(args.gt), per_image)
    return 0


# ------------------------------------------------------------------------------------------ evaluation report


def run_evaluate_report(args: argparse.Namespace) -> int:
    from .report_run import run_from_args

    return run_from_args(args, _device)


# ------------------------------------------------------------------------------------------ boundary distances

def run_evaluate_surface(args: argparse.Namespace) -> int:
    from ..io import find_pairs
    from .evaluation import SURFACE_EXTENSIONS, evaluate_surface
    from .prescan import dataset_name
    from .tables import SURFACE_COLUMNS, format_table

    device = _device(args.device)
    json_path = _check_output(args.json, "--json")
    per_image_path = _check_output(args.per_image_csv, "--per-image-csv")
    _check_inputs_safe(args, {"--json": json_path, "--per-image-csv": per_image_path})
    if args.tolerance is not None and args.num_classes is None and len(args.tolerance) > 1:
        raise InputError("--tolerance: one value per class needs --num-classes (masks have one class)")
    try:
        pairing = find_pairs(args.pred, args.gt, SURFACE_EXTENSIONS, **pairing_options(args))
    except ValueError as error:
        raise pairing_error(error) from None
    if not pairing.pairs:
        _check_pairing(pairing, args)
    pairs, scan, bad = _prescan(args, pairing, "surface", "labels", "labels")
    name = args.name or _default_name(args)
    tolerance: float | list[float] = 1.0 if args.tolerance is None else (
        args.tolerance[0] if len(args.tolerance) == 1 else args.tolerance)  # fmt: skip
    settings = {"convention": args.convention, "percentile": args.percentile, "tolerance": tolerance,
                "spacing": args.spacing, "num_classes": args.num_classes,
                "include_background": args.include_background}  # fmt: skip
    try:
        results, elapsed = _with_progress(
            args, name, len(pairs),
            lambda progress: evaluate_surface(
                pairs, num_classes=args.num_classes, include_background=args.include_background,
                convention=args.convention, percentile=args.percentile, tolerance=tolerance,
                spacing=None if args.spacing is None else (
                    args.spacing[0] if len(args.spacing) == 1 else args.spacing),
                skip_empty_gt=bool(args.skip_empty_gt), device=device, progress=progress,
            ),
        )  # fmt: skip
    except ValueError as error:  # an argument the measures reject (a spacing of the wrong length, a tolerance ...)
        raise InputError(str(error)) from None
    if not distributed.is_main():  # under torchrun rank 0 reports and writes
        return 0

    q = f"{args.percentile:g}"
    columns = [(key, header.format(q=q)) for key, header in SURFACE_COLUMNS if key in results]
    classes = results.get("classes")
    if classes is None:
        rows = {name: {key: results[key] for key, _ in columns}}
    else:  # one row per class
        rows = {f"{name} / class {c}": {key: results[key][i] for key, _ in columns} for i, c in enumerate(classes)}
    print(format_table(rows, columns))
    shown = ", ".join(header for _, header in columns) + (f" at tolerance {tolerance}" if "nsd" in results else "")
    skipped = results.get("skipped_empty_gt") or []
    left_out = f" ({len(skipped)} left out: empty ground truth)" if skipped else ""
    count = len(pairs) - len(skipped)
    print(f"Evaluated {count} pair(s){left_out} of {_shown(args.pred)} against {_shown(args.gt)}: {shown} "
          f"({args.convention} convention) on {device} in {elapsed:.2f} s.")  # fmt: skip
    if json_path is not None:
        _write_report(json_path, "surface", name, args, device, count, pairing,
                      settings={**settings, "pairing": pairing_options(args)}, extra=scan.findings(bad),
                      elapsed=elapsed, results=results)  # fmt: skip
        print(f"Wrote {json_path}")
    if per_image_path is not None:
        per_image: dict[str, dict[str, Any]] = {}
        for stem, values in results["per_image"].items():
            flat: dict[str, Any] = {}
            for key, value in values.items():
                if isinstance(value, list):  # label maps: one column per class
                    flat.update({f"{key}/{c}": v for c, v in zip(classes or [], value, strict=True)})
                else:
                    flat[key] = value
            per_image[stem] = flat
        _write_per_image_csv(per_image_path, name, dataset_name(args.gt), per_image)
    return 0
