"""The parser of the ``segmetrics`` command: every subcommand's options and help (``evaluate <family>``, ``evaluate``
itself, ``meta``, ``demo``), with the shared option builders and value checkers of :mod:`.cli_options`. Building it
imports no torch; each subcommand names its handler (``set_defaults(handler=...)``), which :func:`~.cli.main`
calls."""

from __future__ import annotations

import argparse
import importlib
import math
from collections.abc import Callable
from typing import Any, TypeVar

from .. import __version__
from ..registry import (
    META_FOREGROUND,
    META_FOREGROUND_DEFAULT,
    META_PARTITION_DEFAULT,
    PARTITION,
    SURFACE,
    SURFACE_SUITE,
    canonical,
)
from .cli_options import (
    add_allow_missing,
    add_input_options,
    add_report_arguments,
    checked,
    listed,
    non_negative_int,
    positive_float,
    positive_int,
)
from .family_job import BATCH_SIZES
from .launch import default_workers
from .measures import DEFAULT_FOREGROUND_MEASURES, FOREGROUND_MEASURES

_T = TypeVar("_T")

__all__ = ["build_parser"]

#: the partition measures' keys (the torch-free registry's: the evaluate parsers import no torch)
PARTITION_MEASURES = PARTITION


# ------------------------------------------------------------------------------------------------------ helpers


def _handler(module: str, function: str) -> Callable[[argparse.Namespace], int]:
    """The handler ``segmetrics_torch.app.<module>.<function>``, imported when the subcommand runs: building the
    parser imports no evaluator, so that ``--help`` and a mistyped option answer at once, and the evaluators import
    torch and the library at their module tops (the one deferred import of the command, by design)."""

    def run(args: argparse.Namespace) -> int:
        handler: Callable[[argparse.Namespace], int] = getattr(
            importlib.import_module(f"{__package__}.{module}"), function
        )
        return handler(args)

    run.__qualname__ = run.__name__ = function
    return run


# ------------------------------------------------------------------------------------------------------- parser


def _add_run_options(command: argparse.ArgumentParser, batch_size: int, allow_missing: bool = True) -> None:
    """The options every folder-evaluating command shares."""

    command.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto (default: cpu)")
    command.add_argument(
        "--batch-size", type=positive_int, default=batch_size, help=f"images per update (default: {batch_size})"
    )
    if allow_missing:
        add_allow_missing(command)
    command.add_argument("--no-progress", action="store_true", help="no progress bar (it is off when stderr is no TTY)")
    command.add_argument(
        "--name",
        help="method name in the table and outputs (default: from the prediction path, <root>/<method>/<dataset> "
        "-> <method>)",
    )


def _add_per_image_csv_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--per-image-csv",
        metavar="FILE",
        help=f"add one row per image (method, dataset, image, {what}) to a CSV file; rows of the same method, "
        "dataset and image are replaced, other rows are kept",
    )


def _add_workers_option(command: argparse.ArgumentParser) -> None:

    command.add_argument(
        "--workers",
        type=non_negative_int,
        default=default_workers(),
        metavar="N",
        help=f"processes that decode the image files while the measures run (default here: {default_workers()}; one "
        "fewer than the machine's cores, at most 4); 0 decodes in the main process",
    )


def _add_demo_command(commands: Any) -> None:
    """``segmetrics demo``."""
    demo = commands.add_parser(
        "demo",
        help="evaluate three synthetic methods of graded quality on embedded synthetic data",
        description="Generate a synthetic foreground dataset in memory and print every measure for three methods.",
    )
    demo.add_argument("--n", type=positive_int, default=24, help="number of images (default: 24)")
    demo.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (default: auto)")
    demo.add_argument("--seed", type=non_negative_int, default=0, help="random seed (default: 0)")
    demo.add_argument("--batch-size", type=positive_int, default=8, help="images per update (default: 8)")
    demo.set_defaults(handler=_handler("demo_command", "run_demo"))


def _add_foreground_task(commands: Any) -> None:
    """``segmetrics evaluate foreground`` (alias ``sod``)."""
    fg = commands.add_parser(
        "foreground",
        aliases=["sod"],
        help="foreground maps (salient / camouflaged object detection): MAE, S, weighted F, F, E, IoU, Dice",
        description=(
            "Evaluate grayscale prediction maps against binary ground-truth masks, files paired by name (stem). "
            "Images are read as cv2.imread(..., IMREAD_GRAYSCALE); ground truth is binarised > 128 (a mask holding "
            "only 0 and 1 is read as binary, with a note); the results equal PySODMetrics 1.6.2. Every file is "
            "checked before the measures run and every problem is listed at once. `sod` is an alias."
        ),
    )
    fg.add_argument("--pred", required=True, metavar="DIR", help="folder of prediction maps")
    fg.add_argument("--gt", required=True, metavar="DIR", help="folder of ground-truth masks")
    fg.add_argument(
        "--output",
        metavar="DIR",
        help="write a report folder (tables.md/.tex, csv/, results.json, figures/) as `evaluate --config` does "
        "(its results.json holds what --json would: give one of the two)",
    )
    fg.add_argument(
        "--figures", metavar="LIST", help="with --output: figure formats, comma-separated of png,pdf,svg, or none"
    )
    fg.add_argument(
        "--json",
        metavar="FILE",
        help="write every number (curves and per-image scores included) and metadata as JSON (not with --output)",
    )
    fg.add_argument(
        "--csv",
        metavar="FILE",
        help="add this run's row (method, dataset, images, scalar measures) to a CSV file; a row of the same method "
        "and dataset is replaced, other rows are kept",
    )
    fg.add_argument(
        "--per-image-csv",
        metavar="FILE",
        help="add this run's per-image scores (one row per image) to a CSV file, as --csv does",
    )
    fg.add_argument("--dataset", metavar="NAME", help="dataset name (default: from the ground-truth path)")
    fg.add_argument(
        "--measures",
        metavar="LIST",
        help=f"the table's measures, comma-separated, of {','.join(FOREGROUND_MEASURES)} (default: "
        f"{','.join(DEFAULT_FOREGROUND_MEASURES)}; si*, *msiou, hce, cm, meanber, meankappa, meanacc are computed by "
        "ForegroundMeasures(include=...)'s measures, only when asked; PySODEvalToolkit's spellings such as maxEm, "
        "Smeasure, wFmeasure, adpFm are accepted)",
    )
    add_input_options(fg)
    _add_run_options(fg, batch_size=BATCH_SIZES["foreground"], allow_missing=False)
    _add_workers_option(fg)
    fg.set_defaults(handler=_handler("single_folder", "run_evaluate_foreground"))


def _add_boundary_task(commands: Any) -> None:
    """``segmetrics evaluate boundary``."""
    bdry = commands.add_parser(
        "boundary",
        help="boundary maps: the BSDS500 boundary benchmark (ODS, OIS, AP, R50)",
        description=(
            "Evaluate boundary predictions against annotator boundaries, files paired by name (stem), as the BSDS500 "
            "benchmark (BSR): per threshold the thinned machine boundaries are matched one-to-one with every "
            "annotator's within max-dist; ODS, OIS, AP and R50 as collect_eval_bdry.m. Predictions are soft "
            "boundary maps (8-bit images, read / 255) or BSR ucm2 .mat files (a variable `ucm2`, (2H+1)x(2W+1))."
        ),
    )
    bdry.add_argument(
        "--pred", required=True, metavar="DIR", help="folder of soft boundary maps (images) or of ucm2 .mat files"
    )
    bdry.add_argument(
        "--gt",
        required=True,
        metavar="DIR",
        help="folder of BSDS groundTruth .mat files, or of boundary images (one annotator each; boundary = value > 0)",
    )
    bdry.add_argument(
        "--gt-labels",
        action="store_true",
        help="the ground-truth images are label maps; their boundaries are thin(seg2bmap(labels)) as BSDS's",
    )
    bdry.add_argument(
        "--thresholds", type=positive_int, default=99, metavar="N", help="number of thresholds (default: 99)"
    )
    bdry.add_argument(
        "--max-dist",
        type=positive_float,
        default=0.0075,
        metavar="F",
        help="match tolerance: fraction of the image diagonal (< 1) or pixels (>= 1) (default: 0.0075)",
    )
    bdry.add_argument("--no-thin", action="store_true", help="do not thin the thresholded maps (BSR thins them)")
    bdry.add_argument(
        "--nms",
        action="store_true",
        help="edge non-maximum suppression of the soft maps before thresholding (Dollar's edgesNms, as pyEdgeEval's "
        "apply_nms; the protocol for HED / RCF / BDCN / PiDiNet outputs); not for ucm2",
    )
    bdry.add_argument(
        "--out-dir", metavar="DIR", help="write BSR's eval_bdry.txt, eval_bdry_thr.txt, eval_bdry_img.txt there"
    )
    _add_per_image_csv_option(bdry, "the image's best threshold, recall, precision and F")
    bdry.add_argument("--json", metavar="FILE", help="write every number (curves, per image) and metadata as JSON")
    add_input_options(bdry, empty_gt_help=None)
    _add_run_options(bdry, batch_size=BATCH_SIZES["boundary"], allow_missing=False)
    _add_workers_option(bdry)
    bdry.set_defaults(handler=_handler("single_folder", "run_evaluate_boundary"))


def _add_partition_task(commands: Any) -> None:
    """``segmetrics evaluate partition``."""
    MEASURES = PARTITION_MEASURES
    part = commands.add_parser(
        "partition",
        help="partitions and hierarchies: SEISM measures (Fop, PRI, VoI, covering, ...), ODS/OIS/AP, BSR regions",
        description=(
            "Evaluate machine partitions against human partitions, files paired by name (stem), with SEISM's "
            "measures (Pont-Tuset & Marques). Label-map images are flat partitions: one value per measure (mean over "
            "images; Fop, Fr: F of the mean precision and recall; Fb: pooled counts). BSR ucm2 .mat files (a "
            "(2H+1)x(2W+1) `ucm2`) and BSR segs .mat files (a cell `segs` of label maps, one per level) are "
            "hierarchies: ODS / OIS / AP per measure and the Berkeley region benchmark (covering ODS / OIS / Best, "
            "PRI and VoI ODS / OIS, as collect_eval_reg.m)."
        ),
    )
    part.add_argument(
        "--pred",
        required=True,
        metavar="DIR",
        help="folder of label-map images (8/16-bit gray, palette or RGB), of ucm2 .mat or of segs .mat files",
    )
    part.add_argument(
        "--gt",
        required=True,
        metavar="DIR",
        help="folder of BSDS groundTruth .mat files (their `Segmentation`s) or of label-map images (one annotator)",
    )
    part.add_argument(
        "--measures",
        type=checked(listed(str), f"comma-separated keys of {','.join(MEASURES)}", lambda v: set(v) <= set(MEASURES)),
        metavar="LIST",
        help=f"comma-separated, of {','.join(MEASURES)} (default: all for label maps; all but fb, whose boundary "
        "matching is slow, for hierarchies)",
    )
    levels = part.add_mutually_exclusive_group()
    levels.add_argument(
        "--thresholds",
        type=checked(
            lambda t: int(t) if t.strip().isdigit() else listed(float)(t),
            "a positive integer or comma-separated numbers",
            lambda v: v >= 1 if isinstance(v, int) else all(map(math.isfinite, v)),
        ),
        metavar="N|LIST",
        help="ucm2 only: N thresholds linspace(1/(N+1), 1-1/(N+1), N), or the values (default: 99)",
    )
    levels.add_argument(
        "--num-regions",
        type=checked(listed(int), "comma-separated positive integers", lambda v: min(v) >= 1),
        metavar="LIST",
        help="ucm2 only: SEISM's numbers of regions instead of thresholds",
    )
    part.add_argument(
        "--rule",
        choices=("seism", "bsr"),
        default="seism",
        help="ucm2 partitions: seism = gridbmap2seg(ucm2 > t), 4-connected; bsr = bwlabel(ucm2 <= t), 8-connected "
        "(default: seism)",
    )
    part.add_argument(
        "--gamma-obj",
        type=checked(float, "a number in [0, 1]", lambda v: 0 <= v <= 1),
        default=0.9,
        metavar="F",
        help="Fop object threshold (default: 0.9, SEISM's code; the CVPR'13 paper says 0.95)",
    )
    part.add_argument(
        "--max-dist",
        type=positive_float,
        default=0.0075,
        metavar="F",
        help="Fb match tolerance: fraction of the image diagonal (< 1) or pixels (>= 1) (default: 0.0075)",
    )
    _add_per_image_csv_option(part, "the measures of a label map")
    part.add_argument("--json", metavar="FILE", help="write every number (curves, per image for label maps) as JSON")
    add_input_options(part, resize=False, empty_gt_help=None)
    _add_run_options(part, batch_size=BATCH_SIZES["partition"], allow_missing=False)
    _add_workers_option(part)
    part.set_defaults(handler=_handler("single_folder", "run_evaluate_partition"))


def _add_proposals_task(commands: Any) -> None:
    """``segmetrics evaluate proposals``."""
    prop = commands.add_parser(
        "proposals",
        help="object proposals: best overlap per object vs the number of proposals (MCG protocol), J and boundary F",
        description=(
            "Evaluate ranked pools of object proposals against annotated objects, files paired by name (stem), with "
            "the MCG benchmark protocol (Pont-Tuset & Marques, PAMI 2016): each object's best Jaccard within the "
            "first N proposals for every N, then per N the mean and median best J, recall at J > 0.5 / 0.7 / 0.85, "
            "average recall over 0.5:0.05:0.95 and, with classes, the class-averaged J_c; with --boundary the same "
            "with the morphological boundary F (DAVIS f_boundary)."
        ),
    )
    prop.add_argument(
        "--pred",
        required=True,
        metavar="DIR",
        help="one file per image: .npz with `masks` (P, H, W) ranked binary masks or `labels` (H, W), or a label image "
        "(8/16-bit PNG) of non-overlapping proposals (label i = rank i, 0 = none)",
    )
    prop.add_argument(
        "--gt",
        required=True,
        metavar="DIR",
        help="one file per image: an instance label image (Pascal SegmentationObject: 0 background, each other label "
        "an object, --void-label void) or .npz with `objects` (K, H, W) and optional `void` (H, W), `classes` (K,)",
    )
    prop.add_argument("--gt-classes", metavar="DIR", help="class label images (Pascal SegmentationClass), for J_c")
    prop.add_argument(
        "--num-classes", type=positive_int, default=256, metavar="C", help="class ids are 0..C-1 (default: 256)"
    )
    prop.add_argument(
        "--void-label",
        type=int,
        default=255,
        metavar="V",
        help="label of void pixels in instance images, excluded from every count (default: 255; -1 for none)",
    )
    prop.add_argument(
        "--counts",
        type=checked(listed(int), "comma-separated positive integers", lambda v: min(v) >= 1),
        metavar="LIST",
        help="numbers of proposals N (default: MCG's 10..100 step 5, 125..1000 step 25, 1500..6000 step 500, all)",
    )
    prop.add_argument("--boundary", action="store_true", help="also the morphological boundary F curves")
    prop.add_argument(
        "--bound-th",
        type=positive_float,
        default=0.008,
        metavar="F",
        help="boundary tolerance: fraction of the image diagonal (< 1) or pixels (>= 1) (default: 0.008, DAVIS)",
    )
    prop.add_argument(
        "--chunk-size", type=positive_int, metavar="P", help="proposals converted at a time (memory bound)"
    )
    _add_per_image_csv_option(prop, "its numbers of proposals and objects, mean best J")
    prop.add_argument("--json", metavar="FILE", help="write every curve, the settings and per-image best J as JSON")
    prop.add_argument("--plot", metavar="FILE", help="write the recall-vs-number-of-proposals figure (.png/.pdf/.svg)")
    add_input_options(prop, resize=False, empty_gt_help=None)
    _add_run_options(prop, batch_size=BATCH_SIZES["proposals"], allow_missing=False)
    prop.set_defaults(handler=_handler("single_folder", "run_evaluate_proposals"))


def _add_surface_task(commands: Any) -> None:
    """``segmetrics evaluate surface``."""
    surf = commands.add_parser(
        "surface",
        help="boundary distances of masks / label maps (2-D images, NIfTI volumes): HD, HD95, ASD, ASSD, NSD",
        description=(
            "Evaluate masks or label maps against ground-truth ones, files paired by name (stem): PNG / TIFF / BMP "
            "label images, or NIfTI volumes (.nii, .nii.gz; the `nifti` extra) whose headers give the voxel spacing. "
            "Hausdorff distance, its percentile (HD95), the average surface distance (directed, and symmetric: "
            "ASSD) and the normalised surface distance at a tolerance, from one pass of exact distance transforms, "
            "in the convention of MONAI (default), MedPy, DeepMind's surface-distance or TorchMetrics. Without "
            "--num-classes the files are masks (foreground: any nonzero value). Dataset values are means over the "
            "images; a missed structure (one mask empty) keeps its class's mean infinite."
        ),
    )
    surf.add_argument(
        "--measures",
        metavar="LIST",
        type=checked(
            listed(str),
            f"comma-separated names of {', '.join(SURFACE)}",
            lambda v: all(canonical(n, "surface") for n in v),
        ),
        help=f"the measures, comma-separated, of {', '.join(SURFACE)} (default: {','.join(SURFACE_SUITE)}, one pass "
        "of distance transforms); each other one is its Metric's (docs/surface-distances.md)",
    )
    surf.add_argument("--pred", required=True, metavar="DIR", help="folder of predicted masks / label maps")
    surf.add_argument("--gt", required=True, metavar="DIR", help="folder of ground-truth masks / label maps")
    surf.add_argument(
        "--num-classes", type=positive_int, metavar="C", help="label maps with classes 0..C-1 (default: masks)"
    )
    surf.add_argument("--include-background", action="store_true", help="with --num-classes: also class 0")
    surf.add_argument(
        "--convention",
        choices=("monai", "medpy", "deepmind", "torchmetrics"),
        default="monai",
        help="the reference whose rules are reproduced (default: monai)",
    )
    surf.add_argument(
        "--percentile",
        type=checked(float, "a number in [0, 100]", lambda v: 0 <= v <= 100),
        default=95.0,
        metavar="Q",
        help="the percentile Hausdorff distance's percentile (default: 95)",
    )
    surf.add_argument(
        "--tolerance",
        type=checked(listed(float), "comma-separated non-negative numbers", lambda v: min(v) >= 0),
        metavar="T",
        help="the NSD tolerance in spacing units, one value or one per class (default: 1)",
    )
    surf.add_argument(
        "--spacing",
        type=checked(listed(float), "comma-separated positive numbers", lambda v: min(v) > 0),
        metavar="S",
        help="voxel spacing, one value or one per axis (default: the NIfTI header's, unit for images)",
    )
    _add_per_image_csv_option(surf, "its measures (one column per class for label maps)")
    surf.add_argument("--json", metavar="FILE", help="write every number, per image and per class, as JSON")
    add_input_options(
        surf,
        resize=False,
        empty_gt_help="leave out the images whose ground truth is empty (their distances are "
        "infinite or NaN: the empty-mask table of docs/surface-distances.md), listed as skipped and counted in the "
        "outputs",
    )
    _add_run_options(surf, batch_size=BATCH_SIZES["surface"], allow_missing=False)
    surf.set_defaults(handler=_handler("single_folder", "run_evaluate_surface"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="segmetrics",
        description="Reference-exact segmentation evaluation measures (PySODMetrics-exact foreground measures).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_demo_command(commands)

    evaluate = commands.add_parser(
        "evaluate",
        help="evaluate a folder of predictions, or many methods x datasets into a report (--config)",
        description="Evaluate a folder of predictions (TASK), or many methods x datasets into an evaluation report: "
        "tables (terminal, Markdown, LaTeX, CSV), JSON and figures, cached per (dataset, method, settings). "
        "Exit status: 0 success, 2 usage or input error (one `error:` line; no report file written), 1 unexpected "
        "error, 130 interrupted (finished evaluations stay cached).",
    )
    add_report_arguments(evaluate)
    tasks = evaluate.add_subparsers(dest="task", metavar="TASK")
    _add_foreground_task(tasks)
    _add_boundary_task(tasks)
    _add_partition_task(tasks)
    _add_proposals_task(tasks)
    _add_surface_task(tasks)
    evaluate.set_defaults(handler=_handler("single_folder", "run_evaluate_report"), subparser=evaluate)

    _add_meta_command(commands)
    return parser


def _add_meta_command(commands: Any) -> None:
    """Register ``meta partition`` and ``meta foreground`` on the ``segmetrics`` sub-command set."""

    meta = commands.add_parser(
        "meta",
        help="meta-measures: how well each measure tells good results from bad ones (SIHD, SABD, SISD, ...)",
        description="Run the meta-measure tests of segmetrics_torch.meta on a dataset and print a table.",
    )
    tests = meta.add_subparsers(dest="family", metavar="FAMILY")
    part = tests.add_parser(
        "partition",
        help="SIHD, SABD (quadtree and random hierarchy) and SISD of partition measures (Pont-Tuset & Marques 2013)",
        description=(
            "SIHD from BSDS groundTruth .mat files; with --ucm, SABD and SISD of the ucm2 hierarchies at each "
            "measure's ODS. Measures: " + ", ".join(PARTITION_MEASURES)
        ),
    )
    part.add_argument("--gt", required=True, metavar="DIR", help="folder of BSDS groundTruth .mat files")
    part.add_argument("--ucm", metavar="DIR", help="folder of ucm2 .mat files of a method (enables SABD and SISD)")
    part.add_argument(
        "--measures",
        default=",".join(META_PARTITION_DEFAULT),
        help="comma-separated SEISM keys (default: CVPR 2013 Table 2's, in its order)",
    )
    part.add_argument(
        "--max-different",
        type=positive_int,
        metavar="N",
        help="SIHD: a seeded sample of N different-image pairs (default: all)",
    )
    part.add_argument(
        "--unordered",
        action="store_true",
        help="SIHD: score each pair of human partitions in one direction (default: both)",
    )
    part.add_argument(
        "--pairing",
        choices=("all", "random"),
        default="all",
        help="SISD: every other image (default) or one seeded random other image",
    )
    part.add_argument("--seed", type=non_negative_int, default=0, help="random seed (default: 0)")
    part.add_argument("--json", metavar="FILE", help="write the rates with their counts as JSON")
    part.set_defaults(handler=_handler("meta_command", "run_meta_partition"))

    fg = tests.add_parser(
        "foreground",
        help="generic-map, noise, GT-switch and annotation-error tests of foreground measures",
        description="Meta-measures of foreground-map measures. Measures: " + ", ".join(META_FOREGROUND.values()),
    )
    fg.add_argument("--demo", action="store_true", help="use the synthetic demo data (segmetrics demo's)")
    fg.add_argument("--n", type=positive_int, default=24, help="--demo: number of images (default: 24)")
    fg.add_argument("--pred", action="append", metavar="DIR", help="a method's prediction folder (repeatable)")
    fg.add_argument("--gt", metavar="DIR", help="folder of ground-truth masks")
    fg.add_argument("--measures", default=",".join(META_FOREGROUND_DEFAULT), help="comma-separated measure names")
    fg.add_argument("--noise-maps", type=positive_int, default=4, help="noise maps per image (default: 4)")
    fg.add_argument("--radius", type=positive_float, default=5.0, help="perturbation disk radius (default: 5)")
    fg.add_argument(
        "--pairing",
        choices=("all", "random"),
        default="all",
        help="GT switch: every other image (default) or one seeded random other image",
    )
    fg.add_argument("--seed", type=non_negative_int, default=0, help="random seed (default: 0)")
    fg.add_argument("--json", metavar="FILE", help="write the rates with their counts as JSON")
    fg.set_defaults(handler=_handler("meta_command", "run_meta_foreground"))
    meta.set_defaults(handler=None, subparser=meta)
