"""The single-folder forms of ``segmetrics evaluate foreground|boundary|partition|proposals|surface``: one handler
per command (checked outputs, pairing and pre-scan from :mod:`.folder_io`, the family's runner of
:mod:`.evaluation`, the table, the JSON / CSV files); :mod:`.cli` builds the parser and dispatches to them."""

from __future__ import annotations

import argparse
import functools
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..datasets.pairing import (
    GT_FORMATS,
    PREDICTION_FORMATS,
    SURFACE_EXTENSIONS,
    boundary_formats,
    check_boundary_nms,
    pairing_error,
    partition_formats,
)
from ..datasets.prescan import empty_gt_skips
from ..errors import InputError
from ..io import PROPOSAL_EXTENSIONS, list_images
from ..ops.soft_map_counts import compile_ahead
from ..registry import TOOLBOX_LINE_LAYOUTS, canonical, foreground_columns, parse_measures
from ..reports.figures import plot_proposal_recall
from ..reports.output_safety import check_appended_file, checked_outputs
from ..reports.tables import SURFACE_COLUMNS, format_table, measure_name, scalar_row
from . import distributed
from .folder_io import (
    FolderRun,
    bsr_files,
    check_out_dir,
    parse_device,
    shown_path,
)
from .report_args import run_from_args

# ------------------------------------------------------------------------------------------ evaluate foreground


def run_evaluate_foreground(args: argparse.Namespace) -> int:
    """``evaluate foreground`` of one folder pair: the table, the summary line and the outputs (``--protocol``: the
    convention of the numbers, PySODMetrics' or a MATLAB toolbox's; ``--toolbox-layout``: that of the
    ``--toolbox-lines`` output); with ``--output DIR`` the report of one method on one dataset."""
    protocol, layout = args.protocol, args.toolbox_layout
    if layout not in TOOLBOX_LINE_LAYOUTS:
        raise InputError(f"--toolbox-layout: unknown layout {layout!r} (known: {', '.join(TOOLBOX_LINE_LAYOUTS)})")
    measures = parse_measures(args.measures, "foreground", option="--measures", protocol=protocol)
    columns = foreground_columns(measures, protocol)[0]
    run = FolderRun.from_args(args, "foreground", {"--csv": args.csv, "--toolbox-lines": args.toolbox_lines})
    if args.output is not None:
        return run.report(args.output, measures, protocol=protocol, figures=args.figures)
    if args.figures is not None:
        raise InputError("--figures applies to the report of --output DIR; add --output or leave out --figures")
    # every output checked, then every problem of every file at once, before any measure runs
    files = checked_outputs(run.outputs, inputs=run.inputs, folder_outputs=run.folder_outputs)
    if (lines := files["--toolbox-lines"]) is not None:
        if protocol == "pysodmetrics":
            raise InputError("--toolbox-lines writes the MATLAB toolbox's result line: add --protocol matlab-toolbox")
        check_appended_file(lines, "--toolbox-lines", *TOOLBOX_LINES)
    dataset = run.open_dataset()
    lines_path = files["--toolbox-lines"]
    name = dataset.method_name
    options = {"measures": measures, "protocol": protocol, "toolbox_layout": layout if lines_path else None}
    evaluated, elapsed = run.evaluate(name, dataset.pairs, options, resize=run.resize)
    if not distributed.is_main():  # under torchrun rank 0 reports and writes
        return 0

    results, metric, pairing = evaluated.results, evaluated.state, dataset.pairing
    count, total = int(metric.count), len(pairing.pairs) + len(pairing.missing)
    of = f" (of {total} ground truths)" if count != total else ""
    keys = [key for key, _ in columns]
    appended = {}
    if lines_path is not None:  # the toolbox's main.m appends its result line (fopen 'a'): one file collects runs
        # the functional package loads torch: imported when the line is written, after the decoding workers started
        from ..functional.foreground import format_toolbox_line

        line = format_toolbox_line(results, dataset.dataset_name, name, layout) + "\n"
        appended[lines_path] = (line, f"Added the {layout} result line to {lines_path}")
    run.write_outputs(
        files,
        dataset,
        count,
        settings={"normalize": metric.normalize, **metric.settings, **FOREGROUND_READING, "resize": run.resize}
        | {"pairing": run.pairing, "measures": keys},
        extra={"dataset": dataset.dataset_name, "curve_convention": CURVE_CONVENTIONS[protocol], **dataset.findings()},
        elapsed=elapsed,
        results={**results, "per_image": results["per_image"] or {}},
        # per image: the core measures and the chosen ones with one value per image (curves are dataset-level)
        per_image=results["per_image"] or {},
        keys=keys,
        columns=columns,
        summary=f"Evaluated {count} image(s){of} of {shown_path(run.pred)} against {shown_path(run.gt)} "
        f"({dataset.dataset_name}) on {run.device} in {elapsed:.2f} s",
        appended=appended,  # --toolbox-lines, with the run's other files
    )
    return 0


#: how ``evaluate foreground`` reads its files, as its ``--json`` report records it
FOREGROUND_READING = {
    "reader": "segmetrics_torch.io.read_gray (== cv2.imread(path, cv2.IMREAD_GRAYSCALE))",
    "gt_binarisation": "> 128 (a 0/1 mask: == 1)",
}

#: what the 256-point curves of each foreground protocol's report hold
CURVE_CONVENTIONS = {
    "pysodmetrics": (
        "entry i of every 256-point curve binarises the (min-max normalised) map at trunc(255 * p) >= 255 - i, "
        "i.e. thresholds in descending order, as PySODMetrics 1.6.2"
    ),
    **dict.fromkeys(
        ("matlab-toolbox", "matlab-toolbox-2020-11"),
        "entry i of every 256-point curve binarises the mapminmax-normalised map at p >= t_i (the E-measure of "
        "protocol matlab-toolbox at p > t_i) with t = 1:-1/255:0, i.e. thresholds in descending order, as the "
        "MATLAB toolbox",
    ),
}

#: ``--toolbox-lines`` appends to its file (as the toolbox's ``main.m`` does): a file of other lines is refused
TOOLBOX_LINES = (lambda line: line.startswith("(Dataset:"), "the toolbox's result lines ((Dataset:...) ...)")


# ------------------------------------------------------------------------------------------- evaluate boundary

#: the columns of the boundary table: (key of :func:`~segmetrics_torch.reports.tables.scalar_row`, header)
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


def _warn_about_r50(summary: Mapping[str, Any]) -> None:
    """The warnings of the boundary table's R50 (recall at precision 0.5) on stderr: never reached (nan), reached
    below the lowest threshold (a lower bound), or ambiguous (the curve comes back to 0.5)."""
    if math.isnan(float(summary["r50"])):
        print(
            "warning: precision never reaches 0.5 on these images, so R50 (recall at precision 0.5) is nan",
            file=sys.stderr,
        )
    first, dollar = float(summary["r50"]), float(summary["r50_dollar"])
    if float(summary["precision"][0]) > 0.5:
        # more thresholds extend the curve; never the advice to pass the count already given
        count = len(summary["thresholds"])
        more = f"e.g. --thresholds {max(99, 2 * count - 1)}" if count < 255 else "a denser --thresholds list"
        print(
            f"warning: precision is above 0.5 already at the lowest threshold ({float(summary['thresholds'][0]):g}), "
            f"so R50 is that threshold's recall, a lower bound of the recall at precision 0.5 (more thresholds, "
            f"{more}, extend the curve)",
            file=sys.stderr,
        )
    if abs(first - dollar) > 0.01:  # NaN on either side compares False: nothing to say
        print(
            f"warning: precision comes back to 0.5 along the PR curve, so R50 is ambiguous: precision first reaches "
            f"0.5 at recall {first:.4f} (the table's R50); Dollar's unique-precision interpolation gives {dollar:.4f} "
            "(r50_dollar in --json)",
            file=sys.stderr,
        )


def run_evaluate_boundary(args: argparse.Namespace) -> int:
    run = FolderRun.from_args(args, "boundary")
    out_dir = check_out_dir(args.out_dir)
    files = run.check_outputs(out_dir=out_dir)
    pairing, pred_kind, gt_kind = run.pair_boundary()
    input_format, gt_format = boundary_formats(pred_kind, gt_kind, args.gt_labels, args.gt)
    check_boundary_nms(args.nms, input_format, "--nms")
    if args.resize and input_format != "soft":
        raise InputError("--resize applies to soft boundary maps (images); a ucm2 must be (2H+1)x(2W+1)")
    # a first run on a new machine: the matching kernel (the largest) compiles in a second process from now on
    compile_ahead()
    dataset = run.open_dataset(input_format, gt_format, pairing=pairing)
    pairs = dataset.pairs
    name = dataset.method_name
    stems = [stem for stem, _, _ in pairs]
    options = {"thresholds": args.thresholds, "max_dist": args.max_dist, "thin": not args.no_thin, "nms": args.nms}

    evaluated, elapsed = run.evaluate(
        name, pairs, options, input_format=input_format, gt_format=gt_format, resize=args.resize
    )
    if not distributed.is_main():  # under torchrun rank 0 reports and writes
        return 0

    summary = evaluated.state  # 0-d tensors and (K,) / (B,) curves, on the CPU
    count = len(stems)
    _warn_about_r50(summary)
    rows = {name: scalar_row({key: summary[key] for key in ("ods", "ois", "ap", "r50")})}
    print(format_table(rows, BOUNDARY_COLUMNS))
    thin = ("" if options["thin"] else ", no thinning") + (", edge NMS" if options["nms"] else "")
    print(
        f"Evaluated {count} image(s) of {shown_path(args.pred)} ({input_format} maps) against {shown_path(args.gt)} "
        f"({gt_format}) with "
        f"{args.thresholds} thresholds, max_dist {args.max_dist:g}{thin} on {run.device} in {elapsed:.2f} s."
    )
    results = evaluated.results if files["--json"] or files["--per-image-csv"] or run.html else {}
    run.write_outputs(
        files,
        dataset,
        count,
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
            "pairing": run.pairing,
        },
        extra=dataset.findings(),
        elapsed=elapsed,
        results=results,
        per_image=results.get("per_image", {}),
        columns=BOUNDARY_COLUMNS,
        other_texts=bsr_files(out_dir, summary) if out_dir is not None else None,
    )
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


def _print_partition_tables(
    args: argparse.Namespace, name: str, results: Mapping[str, Any], metric: Any, input_format: str
) -> tuple[str, dict[str, Any]]:
    """Print the partition tables; ``(the summary line's setting, the --json settings of a hierarchy)``."""

    if input_format != "labels":  # hierarchies: ODS / OIS / AP per measure, and the region benchmark
        rows = {measure_name(m): scalar_row(results[m]) for m in metric.measures}
        print(format_table(rows, HIERARCHY_COLUMNS, index_header="measure"))
        region = {
            ("Covering" if k == "covering" else measure_name(k)): scalar_row(v)
            for k, v in results["region_benchmark"].items()
        }
        print("\nRegion benchmark (BSR eval_cover.txt, eval_RI_VOI.txt):")
        print(format_table(region, REGION_COLUMNS, index_header="measure"))
        kind = "region counts" if args.num_regions else "levels" if input_format == "stack" else "thresholds"
        setting = f" at {metric.levels.numel()} {kind}" + (f", rule {args.rule}" if input_format == "ucm2" else "")
        hierarchy_settings = {
            "parameters": metric.levels,
            "parameter_kind": kind,
            **({"rule": args.rule} if input_format == "ucm2" else {}),
            "region_benchmark": True,
            "unique_occurrence": metric.unique_occurrence,
        }
    else:
        rows = {name: scalar_row(results)}
        print(format_table(rows, [(m, measure_name(m)) for m in metric.measures]))
        setting, hierarchy_settings = "", {}
    return setting, hierarchy_settings


def run_evaluate_partition(args: argparse.Namespace) -> int:
    run = FolderRun.from_args(args, "partition")
    files = run.check_outputs()
    pairing, pred_kind, gt_kind = run.pair_boundary()
    if not pairing.pairs:
        run.check_pairing(pairing)  # no common name: the pairing error, with examples of both sides
    input_format, gt_format = partition_formats(pairing, pred_kind, gt_kind)
    hierarchy = input_format != "labels"
    if hierarchy and files["--per-image-csv"] is not None:
        raise InputError(
            f"--per-image-csv needs label-map partitions: {args.pred} holds {PREDICTION_FORMATS[input_format]}, whose "
            "ODS/OIS/AP are dataset-level (their per-image curves are in --json)"
        )
    if input_format != "ucm2" and (args.thresholds is not None or args.num_regions is not None):
        option = "--thresholds" if args.thresholds is not None else "--num-regions"
        raise InputError(
            f"{option} applies to ucm2 hierarchies only, but {args.pred} holds {PREDICTION_FORMATS[input_format]}"
        )
    dataset = run.open_dataset(input_format, gt_format, pairing=pairing)
    pairs = dataset.pairs
    name = dataset.method_name
    stems = [stem for stem, _, _ in pairs]
    options = {
        "measures": args.measures,
        "gamma_obj": args.gamma_obj,
        "max_dist": args.max_dist,
        "thresholds": args.thresholds,
        "num_regions": args.num_regions,
        "rule": args.rule,
    }
    evaluated, elapsed = run.evaluate(name, pairs, options, input_format=input_format, gt_format=gt_format)
    if not distributed.is_main():  # under torchrun rank 0 reports and writes
        return 0

    results, metric = evaluated.results, evaluated.state

    setting, hierarchy_settings = _print_partition_tables(args, name, results, metric, input_format)
    print(
        f"Evaluated {len(stems)} image(s) of {shown_path(args.pred)} ({input_format}) against {shown_path(args.gt)} "
        f"({gt_format}){setting} "
        f"on {run.device} in {elapsed:.2f} s."
    )
    run.write_outputs(
        files,
        dataset,
        len(stems),
        settings={
            "input_format": input_format,
            "input_description": PREDICTION_FORMATS[input_format],
            "gt_format": gt_format,
            "measures": list(metric.measures),
            **metric.options,
            **hierarchy_settings,
            "pairing": run.pairing,
        },
        extra=dataset.findings(),
        elapsed=elapsed,
        results=results,
        per_image=results.get("per_image", {}),
        columns=[(m, measure_name(m)) for m in metric.measures],
    )
    return 0


PROPOSAL_TABLE_N = (10, 100, 1000)


def _proposal_table(results: Mapping[str, Any], name: str, *, boundary: bool) -> str:
    """The proposals table: J_i (J_c with classes), median J, recalls and AR (and the boundary F columns) at
    N = 10, 100, 1000 and the largest N."""

    n = results["counts"].tolist()
    shown = sorted({i for i, c in enumerate(n) if c in PROPOSAL_TABLE_N} | {len(n) - 1})
    columns = [
        ("num_proposals", "#prop"),
        ("jaccard_object", "J_i"),
        ("jaccard_median", "median J"),
        ("recall_50", "R@.5"),
        ("recall_70", "R@.7"),
        ("recall_85", "R@.85"),
        ("average_recall", "AR"),
    ]
    if "jaccard_class" in results:
        columns.insert(2, ("jaccard_class", "J_c"))
    if boundary:
        columns += [("boundary_f_object", "F_i"), ("boundary_recall_50", "F R@.5"), ("boundary_average_recall", "F AR")]
    rows = {f"N={n[i]}": {k: float(results[k][i]) for k, _ in columns} for i in shown}
    return format_table(rows, columns, index_header=name)


def run_evaluate_proposals(args: argparse.Namespace) -> int:
    run = FolderRun.from_args(args, "proposals", {"--plot": args.plot})
    files = run.check_outputs()
    if (plot_path := files["--plot"]) is not None:
        if plot_path.suffix.lower() not in (".png", ".pdf", ".svg"):
            raise InputError(f"--plot {plot_path}: give a .png, .pdf or .svg file name")
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise InputError("--plot needs matplotlib: pip install 'segmetrics-torch[plot]'") from None
    try:
        classes = None if args.gt_classes is None else list_images(args.gt_classes, name="class folder")
    except ValueError as error:
        raise pairing_error(error) from None
    dataset = run.open_dataset("pool", "objects", extensions=PROPOSAL_EXTENSIONS)
    pairs = dataset.pairs
    void_label = None if args.void_label < 0 else args.void_label
    name = dataset.method_name
    options = {
        "counts": args.counts,
        "classes": classes,
        "void_label": void_label,
        "num_classes": args.num_classes,
        "chunk_size": args.chunk_size,
        "boundary": args.boundary,
        "bound_th": args.bound_th,
        "class_option": "--gt-classes",
    }
    evaluated, elapsed = run.evaluate(name, pairs, options, input_format="pool", gt_format="objects")
    if not distributed.is_main():  # under torchrun rank 0 reports and writes
        return 0

    results, per_image, metric = evaluated.results, evaluated.results["per_image"], evaluated.state

    n = results["counts"].tolist()
    # every process's objects (the gathered per-image rows): the Metric's own state is this process's after compute()
    objects = sum(int(row["num_objects"]) for row in per_image.values())
    print(_proposal_table(results, name, boundary=args.boundary))
    print(
        f"Evaluated {len(per_image)} image(s), {objects} object(s), of {shown_path(args.pred)} against "
        f"{shown_path(args.gt)} on "
        f"{run.device} in {elapsed:.2f} s (#prop: mean proposals per image within N)."
    )
    draw = functools.partial(plot_proposal_recall, {name: results}, title=name)
    run.write_outputs(
        files,
        dataset,
        len(per_image),
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
            "pairing": run.pairing,
        },
        extra=dataset.findings(),
        elapsed=elapsed,
        results=results,
        per_image=per_image,
        other_files=[(plot_path, draw)] if plot_path is not None else (),
    )
    return 0


# ------------------------------------------------------------------------------------------ evaluation report


def run_evaluate_report(args: argparse.Namespace) -> int:

    return run_from_args(args, parse_device)


# ------------------------------------------------------------------------------------------ boundary distances


def run_evaluate_surface(args: argparse.Namespace) -> int:
    run = FolderRun.from_args(args, "surface")
    files = run.check_outputs()
    if args.tolerance is not None and args.num_classes is None and len(args.tolerance) > 1:
        raise InputError("--tolerance: one value per class needs --num-classes (masks have one class)")
    if (args.aggregation == "worst_case") != (args.worst_case is not None):
        raise InputError(
            "--worst-case V goes with --aggregation worst_case (the value of a missed structure, in spacing units; "
            "BraTS: 373.13 for HD95 in mm), and that aggregation needs it"
        )
    if args.class_names is not None and (args.num_classes is None or len(args.class_names) != args.num_classes):
        raise InputError(
            f"--class-names: one name per label 0..C-1 with --num-classes C, but got {len(args.class_names)} "
            f"name(s) and --num-classes {args.num_classes}"
        )
    dataset = run.open_dataset("labels", "labels", extensions=SURFACE_EXTENSIONS)
    pairs = dataset.pairs
    name = dataset.method_name
    tolerance: float | list[float] | None = (
        None if args.tolerance is None else (args.tolerance[0] if len(args.tolerance) == 1 else args.tolerance)
    )
    measures = None if args.measures is None else list(dict.fromkeys(canonical(m, "surface") for m in args.measures))
    settings: dict[str, Any] = {
        "convention": args.convention,
        "percentile": args.percentile,
        "tolerance": tolerance,
        "spacing": args.spacing,
        "num_classes": args.num_classes,
        "include_background": args.include_background,
        "directed": args.directed,
        "distance_metric": args.distance_metric,
        "aggregation": args.aggregation,
        "worst_case": args.worst_case,
    }
    if args.class_names is not None:
        settings["class_names"] = args.class_names
    if measures is not None:  # absent: the one pass of the distance measures
        settings = {"measures": measures, **settings}
    spacing = None if args.spacing is None else (args.spacing[0] if len(args.spacing) == 1 else args.spacing)
    options = {**settings, "spacing": spacing, "skip_empty_gt": bool(args.skip_empty_gt)}
    try:
        evaluated, elapsed = run.evaluate(name, pairs, options, input_format="labels", gt_format="labels")
        results = evaluated.results
    except ValueError as error:  # an argument the measures reject (a spacing of the wrong length, a tolerance ...)
        raise InputError(str(error)) from None
    if not distributed.is_main():  # under torchrun rank 0 reports and writes
        return 0

    q = f"{args.percentile:g}"
    columns = [(key, header.format(q=q)) for key, header in SURFACE_COLUMNS if key in results]
    classes = results.get("classes")
    # a class is shown by its name where --class-names gives one: table rows, CSV columns
    labels = results.get("class_names") or [f"class {c}" for c in classes or []]
    if classes is None:
        rows = {name: {key: results[key] for key, _ in columns}}
    else:  # one row per class
        rows = {f"{name} / {label}": {key: results[key][i] for key, _ in columns} for i, label in enumerate(labels)}
    print(format_table(rows, columns))
    shown = ", ".join(header for _, header in columns) + (f" at tolerance {tolerance}" if "nsd" in results else "")
    skipped = results.pop("skipped_empty_gt", None) or []  # listed with the other left-out images: "skipped"
    left_out = f" ({len(skipped)} left out: empty ground truth)" if skipped else ""
    count = len(pairs) - len(skipped)
    rule = results["aggregation"]["rule"] + (f" {args.worst_case:g}" if args.worst_case is not None else "")
    print(
        f"Evaluated {count} pair(s){left_out} of {shown_path(args.pred)} against {shown_path(args.gt)}: {shown} "
        f"({args.convention} convention, --aggregation {rule}) on {run.device} in {elapsed:.2f} s."
    )
    headers = dict(columns)
    dropped = {
        headers[key]: n if isinstance(n, int) else sum(n)
        for key, n in results["aggregation"]["dropped"].items()
        if key in headers
    }
    if any(dropped.values()):
        print(
            "Left out of the means (NaN: both masks empty"
            + (", or MONAI's NaN of a missed structure" if args.aggregation == "drop_nan" else "")
            + "): "
            + ", ".join(f"{header} {n}" for header, n in dropped.items() if n)
        )
    if "nsd" not in results and measures is None and args.convention in ("monai", "deepmind"):
        print("NSD: not computed (it needs --tolerance T, in spacing units: mm for NIfTI volumes; no default).")
    per_image: dict[str, dict[str, Any]] = {}
    suffixes = list(results.get("class_names") or classes or [])  # per-class CSV columns: by name where given
    for stem, values in results["per_image"].items():
        flat: dict[str, Any] = {}
        for key, value in values.items():
            if key == "spacing":  # one number per axis, exact
                flat[key] = "x".join(repr(float(v)) for v in value)
            elif isinstance(value, list):  # label maps: one column per class
                flat.update({f"{key}/{label}": v for label, v in zip(suffixes, value, strict=True)})
            else:
                flat[key] = value
        per_image[stem] = flat
    run.write_outputs(
        files,
        dataset,
        count,
        settings={**settings, "pairing": run.pairing},
        extra={**(found := dataset.findings()), "skipped": found["skipped"] + empty_gt_skips(skipped)},
        elapsed=elapsed,
        results=results,
        per_image=per_image,
        keys=list(dict.fromkeys(key for flat in per_image.values() for key in flat)),
        columns=columns,
    )
    return 0
