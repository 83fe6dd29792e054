"""``segmetrics evaluate semantic-boundary``: the options read into a protocol
(:func:`~segmetrics_torch.functional.semantic_boundary.semantic_boundary_protocol`), the outputs checked, one call of
:func:`~segmetrics_torch.functional.semantic_boundary.evaluate_semantic_boundary_folders`, the table and the files.
Everything a script could reuse (table rows, per-image rows, curves, the BSR texts) is the library's."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..datasets.prescan import method_name
from ..errors import InputError
from ..functional.semantic_boundary import (
    MEAN_ROW,
    SUMMARY_COLUMNS,
    SemanticBoundaryResult,
    bsr_files,
    class_folder_name,
    class_numbers,
    class_pr_curves,
    evaluate_semantic_boundary_folders,
    per_image_rows,
    semantic_boundary_protocol,
    summary_rows,
)
from ..reports import output_safety
from ..reports.figures import plot_pr_curves
from ..reports.files import check_output
from ..reports.named_inputs import read_text_file
from ..reports.output_safety import FolderOutput, InputFolder
from ..reports.tables import check_csv_outputs, format_table, write_run_files
from .davis_command import run_config
from .folder_io import check_out_dir, shown_path

#: the protocol fields that options of the same names override
OVERRIDES = ("thresholds", "max_dist", "kill_internal", "skip_if_nonexistent", "ignore_border", "radius", "scale")
#: the per-class files of ``--out-dir`` besides one ``<id>_ev1.txt`` per image
CLASS_FILES = ("eval_bdry.txt", "eval_bdry_thr.txt", "eval_bdry_img.txt")


def run_evaluate_semantic_boundary(args: argparse.Namespace) -> int:
    single = ("json", "per_image_csv", "plot", "out_dir", "figures", "ids", "classes", "name", "instance_sensitive")
    if args.config is not None and args.thin is not None:
        raise InputError(f"--config {args.config} names each dataset's maps: drop {'--thin' if args.thin else '--raw'}")
    if run_config(args, "semantic-boundary", ("pred", "gt", "dataset"), (*single, "preset", *OVERRIDES)):
        return 0
    overrides = {field: getattr(args, field) for field in OVERRIDES if getattr(args, field) is not None}
    preset: Any = args.preset or "post-seal"  # the defaults: post-seal, thinned maps
    thin = args.thin is not False
    try:
        protocol = semantic_boundary_protocol(
            preset, args.dataset, thin=thin, instance_sensitive=args.instance_sensitive, **overrides
        )
    except ValueError as error:
        raise InputError(f"--preset {preset} --dataset {args.dataset}: {error}") from None
    try:
        classes = None if args.classes is None else class_numbers(args.classes, args.dataset)
    except ValueError as error:
        raise InputError(f"--classes: {error}") from None
    ids = None if args.ids is None else _read_ids(Path(args.ids))  # a named input before the outputs are checked

    files = {
        o: check_output(v, o, probe=False)
        for o, v in (("--json", args.json), ("--per-image-csv", args.per_image_csv), ("--plot", args.plot))
    }
    out_dir = check_out_dir(args.out_dir)
    # read as trees: the class folders must hold maps only (another file there is an error of the next run), and the
    # ground truth is searched recursively
    inputs = [
        InputFolder(f"the {r} folder", Path(p), tree=True)
        for r, p in (("prediction", args.pred), ("ground-truth", args.gt))
    ]
    # the rule of every form: inputs, files read by name (--ids), duplicates
    folders = [] if out_dir is None else [FolderOutput("--out-dir", out_dir, anywhere=True)]  # class_NNN/ folders
    output_safety.check_outputs(files, folders=folders, inputs=inputs)
    output_safety.check_outputs_are_not_folders(files, {"--out-dir": out_dir})
    _check_outside_class_folders(files, out_dir)
    output_safety.probe_outputs(files, {"--out-dir": out_dir})
    check_csv_outputs(files)
    if files["--plot"] is not None and files["--plot"].suffix.lower() not in (".png", ".pdf", ".svg"):
        raise InputError(f"--plot {files['--plot']}: give a .png, .pdf or .svg file name")
    if args.figures is not None and args.out_dir is None:
        raise InputError("--figures writes each class's PR curve into --out-dir's class folders: add --out-dir")
    if files["--plot"] is not None or args.figures:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise InputError("--plot and --figures need matplotlib: pip install 'segmetrics-torch[plot]'") from None

    start = time.perf_counter()
    try:
        result = evaluate_semantic_boundary_folders(args.pred, args.gt, protocol, classes=classes, ids=ids)
    except (ValueError, FileNotFoundError) as error:  # a file or folder of the inputs (the message names it)
        raise InputError(str(error)) from None
    elapsed = time.perf_counter() - start

    print(format_table(summary_rows(result), SUMMARY_COLUMNS, index_header="class"))
    print(
        f"Evaluated {len(result.ids)} image(s) x {len(result.classes)} class(es) of {shown_path(args.pred)} against "
        f"{shown_path(args.gt)} ({args.dataset}, protocol {protocol.name}: {protocol.thresholds} thresholds, max_dist "
        f"{protocol.max_dist:g}) in {elapsed:.2f} s; {MEAN_ROW}: the class mean of ODS-F, OIS-F, AP (mF)."
    )
    name = args.name or method_name(args.pred, args.dataset, args.gt)  # results/<method>/sbd -> <method>
    curves = class_pr_curves(result)
    texts, writes = ({}, []) if out_dir is None else _class_files(out_dir, result, curves, args.figures or ())
    if (plot := files["--plot"]) is not None:
        writes.append((plot, functools.partial(plot_pr_curves, curves, summary="ODS", title=name, iso_f=True)))
    json_path, csv_path = files["--json"], files["--per-image-csv"]
    rows = [{"method": name, "dataset": args.dataset, **row} for row in per_image_rows(result)]
    tables = [(csv_path, rows, ("method", "dataset", "image", "class"), "--per-image-csv")] if csv_path else []
    json_file = (json_path, _report(args, name, result, elapsed)) if json_path is not None else None
    # every file of the run written together: an interruption leaves the previous run's set or this one's
    actions = write_run_files(json_file, tables, files=writes, texts=texts)
    if out_dir is not None:
        shown = ", ".join(CLASS_FILES) + ", <id>_ev1.txt" + "".join(f", pr_curve.{f}" for f in args.figures or ())
        print(f"Wrote {shown} of {len(result.classes)} class(es) to {out_dir}/class_XXX")
    for path in (plot, json_path):
        if path is not None:
            print(f"Wrote {path}")
    if csv_path is not None:
        print(f"{actions[-1].capitalize()} {csv_path} ({len(rows)} rows of {name} / {args.dataset})")
    return 0


def _read_ids(path: Path) -> list[str]:
    """``--ids``: one image id a line (SBD's train.txt / val.txt), blank lines skipped; recorded as an input."""
    ids = [line.strip() for line in read_text_file(path, "--ids").splitlines() if line.strip()]
    if not ids:
        raise InputError(f"--ids {path} lists no image id")
    return ids


def _check_outside_class_folders(files: dict[str, Path | None], out_dir: Path | None) -> None:
    """No file output where ``--out-dir`` writes its classes' files (``class_NNN/``)."""
    base = None if out_dir is None else Path(os.path.realpath(out_dir))
    for option, path in files.items():
        real = Path(os.path.realpath(path)) if path is not None else None
        parts = real.relative_to(base).parts if real and base and real.is_relative_to(base) else ()
        if parts and parts[0].startswith("class_") and (parts[1:] or parts[0][6:].isdigit()):
            raise InputError(f"{option} {path} is inside {out_dir}/{parts[0]}, which --out-dir writes")


def _class_files(
    out_dir: Path, result: SemanticBoundaryResult, curves: Mapping[str, Any], figures: Sequence[str]
) -> tuple[dict[Path, str], list[tuple[Path, Callable[[Path], object]]]]:
    """Each class's SBD-benchmark files as ``{path: text}`` and PR-curve figures (of ``curves``, by class name) as
    ``(path, write)`` in ``out_dir/class_XXX/``, for the run's files written together (which makes the folders)."""
    texts: dict[Path, str] = {}
    writes: list[tuple[Path, Callable[[Path], object]]] = []
    for k, (number, class_name) in enumerate(zip(result.classes, result.class_names, strict=True)):
        folder = out_dir / class_folder_name(number)
        texts |= {folder / file_name: text for file_name, text in bsr_files(result, k).items()}
        for fmt in figures:
            curve = {class_name: curves[class_name]}
            draw = functools.partial(plot_pr_curves, curve, summary="ODS", iso_f=True)
            writes.append((folder / f"pr_curve.{fmt}", draw))
    return texts, writes


def _report(args: argparse.Namespace, name: str, result: SemanticBoundaryResult, elapsed: float) -> dict[str, Any]:
    """The ``--json`` document: provenance, the protocol (every field), the images and classes, the summary (per
    class: ODS, OIS, AP, curves, per-image bests; the class mean)."""
    return {
        "segmetrics_version": __version__,
        "task": "semantic-boundary",
        "name": name,
        "dataset": args.dataset,
        "pred_dir": str(Path(args.pred).resolve()),
        "gt_dir": str(Path(args.gt).resolve()),
        "ids_file": None if args.ids is None else str(Path(args.ids).resolve()),
        "protocol": dataclasses.asdict(result.protocol),
        "num_images": len(result.ids),
        "ids": result.ids,
        "classes": result.classes,
        "class_names": result.class_names,
        "elapsed_s": elapsed,
        "results": result.summary,
    }
