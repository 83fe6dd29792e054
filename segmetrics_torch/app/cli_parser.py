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
    DEFAULT_FOREGROUND,
    FOREGROUND,
    FOREGROUND_PROTOCOLS,
    MAX_THRESHOLDS,
    MEASURES,
    META_FOREGROUND,
    META_FOREGROUND_DEFAULT,
    META_PARTITION_DEFAULT,
    PARTITION,
    SURFACE,
    SURFACE_SUITE,
    TOOLBOX_LINE_LAYOUTS,
    canonical,
)
from .cli_options import (
    add_allow_missing,
    add_input_options,
    add_report_arguments,
    checked,
    class_count,
    int_in,
    listed,
    non_negative_int,
    positive_float,
    positive_int,
    positive_int64_list,
    seed_int,
    threshold_count,
)
from .family_job import BATCH_SIZES
from .launch import default_workers

_T = TypeVar("_T")

__all__ = ["build_parser"]

#: the families ``segmetrics warmup`` compiles (segmetrics_torch.warmup.FAMILIES; a test keeps the two equal)
WARMUP_FAMILIES = ("foreground", "boundary", "partition", "proposals", "surface")

#: the most synthetic images ``demo`` and ``meta foreground --demo`` make (each is held in memory)
MAX_DEMO_IMAGES = 100_000

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
        "--html",
        metavar="DIR",
        help="also write a self-contained HTML report into DIR (open DIR/index.html from disk, offline): the table, "
        "the per-image table (sortable, filterable), the worst images with the family's error overlay, histograms",
    )
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
    demo.add_argument("--n", type=int_in(1, MAX_DEMO_IMAGES), default=24, help="number of images (default: 24)")
    demo.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (default: auto)")
    demo.add_argument("--seed", type=seed_int, default=0, help="random seed (default: 0)")
    demo.add_argument("--batch-size", type=positive_int, default=8, help="images per update (default: 8)")
    demo.set_defaults(handler=_handler("demo_command", "run_demo"), one_process="demo")


def _add_foreground_task(commands: Any) -> None:
    """``segmetrics evaluate foreground`` (alias ``sod``)."""
    # the --protocol and --toolbox-layout names (the module's imports: the lead's list)
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
    fg.add_argument(
        "--toolbox-lines",
        metavar="FILE",
        help="with a toolbox --protocol: append the run's result line, as the toolbox's main.m writes it to "
        "<dataset>_result.txt ('(Dataset:D; Model:M) meanDic:0.899;...'), to this text file, to diff against a "
        "paper's released result files (not with --output)",
    )
    fg.add_argument(
        "--toolbox-layout",
        metavar="NAME",
        default="pranet",
        help=f"the fields of --toolbox-lines, one of {', '.join(TOOLBOX_LINE_LAYOUTS)}: PraNet's line (default), "
        "Inf-Net's, or SINet's and the COD toolbox's",
    )
    fg.add_argument("--dataset", metavar="NAME", help="dataset name (default: from the ground-truth path)")
    fg.add_argument(
        "--measures",
        metavar="LIST",
        help=f"the table's measures, comma-separated, of {','.join(FOREGROUND)} (default: "
        f"{','.join(DEFAULT_FOREGROUND)}; si*, *msiou, hce, cm, meanber, meankappa, meanacc are computed by "
        "ForegroundMeasures(include=...)'s measures, only when asked; PySODEvalToolkit's spellings such as maxEm, "
        "Smeasure, wFmeasure, adpFm, meanSen, meanSpe are accepted)",
    )
    fg.add_argument(
        "--protocol",
        metavar="NAME",
        default="pysodmetrics",
        help=f"the convention of the numbers, one of {', '.join(FOREGROUND_PROTOCOLS)}: pysodmetrics (PySODMetrics "
        "1.6.2, the default) or the MATLAB evaluation "
        "toolbox of PraNet / Inf-Net / SINet, matlab-toolbox (as first released: the 2020 papers' tables) or "
        "matlab-toolbox-2020-11 (its update of 2020-11-21); a toolbox protocol offers mae, s, wf, adp/mean/max F and "
        "E, mean/max IoU and Dice, adp/mean/max sensitivity (meanSen) and specificity (meanSpe): see "
        "docs/matlab-toolbox.md",
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
        "--thresholds", type=threshold_count, default=99, metavar="N", help="number of thresholds (default: 99)"
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
            f"a positive integer (at most {MAX_THRESHOLDS}) or comma-separated numbers",
            lambda v: 1 <= v <= MAX_THRESHOLDS if isinstance(v, int) else all(map(math.isfinite, v)),
        ),
        metavar="N|LIST",
        help="ucm2 only: N thresholds linspace(1/(N+1), 1-1/(N+1), N), or the values (default: 99)",
    )
    levels.add_argument(
        "--num-regions",
        type=positive_int64_list,
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
        "--num-classes", type=class_count, default=256, metavar="C", help="class ids are 0..C-1 (default: 256)"
    )
    prop.add_argument(
        "--void-label",
        type=checked(int, "-1 (none) or a non-negative label", lambda v: v >= -1),
        default=255,
        metavar="V",
        help="label of void pixels in instance images, excluded from every count (default: 255; -1 for none)",
    )
    prop.add_argument(
        "--counts",
        type=positive_int64_list,
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
    """``segmetrics evaluate surface``. The options that pass a keyword of the measures' functions on
    (``--directed``, ``--distance-metric``, ``--aggregation``) say which measures they apply to from the registry's
    records (their ``options``), as ``--measures`` lists its names from there."""

    def applies_to(keyword: str) -> str:
        headers = [MEASURES[k].header for k in SURFACE if keyword in MEASURES[k].options]
        return f" (applies to {', '.join(headers)})" if headers else ""

    surf = commands.add_parser(
        "surface",
        help="boundary distances of masks / label maps (2-D images, NIfTI volumes): HD, HD95, ASD, ASSD, NSD",
        description=(
            "Evaluate masks or label maps against ground-truth ones, files paired by name (stem): PNG / TIFF / BMP "
            "label images, or NIfTI volumes (.nii, .nii.gz; the `nifti` extra) whose headers give the voxel spacing. "
            "Hausdorff distance, its percentile (HD95), the average surface distance (directed, and symmetric: "
            "ASSD) and the normalised surface distance at a tolerance (--tolerance: no default), from one pass of "
            "exact distance transforms, in the convention of MONAI (default), MedPy, DeepMind's surface-distance or "
            "TorchMetrics. Without --num-classes the files are masks (foreground: any nonzero value). Dataset values "
            "are means over the images; a missed structure (one mask empty) keeps its class's mean infinite unless "
            "--aggregation says otherwise (docs/surface-distances.md)."
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
        "of distance transforms; nsd with --tolerance only); each other one is its Metric's "
        "(docs/surface-distances.md)",
    )
    surf.add_argument("--pred", required=True, metavar="DIR", help="folder of predicted masks / label maps")
    surf.add_argument("--gt", required=True, metavar="DIR", help="folder of ground-truth masks / label maps")
    surf.add_argument(
        "--num-classes", type=class_count, metavar="C", help="label maps with classes 0..C-1 (default: masks)"
    )
    surf.add_argument("--include-background", action="store_true", help="with --num-classes: also class 0")
    surf.add_argument(
        "--class-names",
        metavar="LIST",
        type=checked(listed(str), "comma-separated names", lambda v: all(n.strip() for n in v)),
        help="with --num-classes: the name of each label 0..C-1, comma-separated, in every table, file and figure "
        "(default: class 1, class 2, ...)",
    )
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
        "--directed",
        action="store_true",
        help="the Hausdorff distances from the prediction to the ground truth only" + applies_to("directed"),
    )
    surf.add_argument(
        "--distance-metric",
        choices=("euclidean", "chessboard", "taxicab"),
        default="euclidean",
        help="the point-to-point distance (default: euclidean); chessboard / taxicab with --convention monai take "
        "no spacing (MONAI ignores it; unit spacing only) and with torchmetrics scale by it"
        + applies_to("distance_metric"),
    )
    surf.add_argument(
        "--tolerance",
        type=checked(listed(float), "comma-separated non-negative numbers", lambda v: min(v) >= 0),
        metavar="T",
        help="the NSD tolerance in spacing units (mm for NIfTI volumes), one value or one per class; no default: "
        "without it the NSD is not computed",
    )
    surf.add_argument(
        "--aggregation",
        choices=("inf", "drop_nan", "worst_case"),
        default="inf",
        help="what a missed structure (one mask empty) does to the dataset mean of a distance: inf (default: the "
        "mean is inf), drop_nan (MONAI's do_metric_reduction: NaN values left out, inf kept; counted as dropped), "
        "worst_case (BraTS: it counts as --worst-case)" + applies_to("aggregation"),
    )
    surf.add_argument(
        "--worst-case",
        type=checked(float, "a non-negative number", lambda v: 0 <= v < math.inf),
        metavar="V",
        help="with --aggregation worst_case: the value of a missed structure, in spacing units (BraTS: 373.13 "
        "for HD95 in mm)",
    )
    surf.add_argument(
        "--spacing",
        type=checked(listed(float), "comma-separated positive numbers", lambda v: min(v) > 0),
        metavar="S",
        help="voxel spacing, one value or one per axis (default: the NIfTI header's, unit for images); a header "
        "that differs is named once",
    )
    _add_per_image_csv_option(surf, "its measures (one column per class for label maps) and the spacing used")
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


def _add_semantic_boundary_task(tasks: Any) -> None:
    """``segmetrics evaluate semantic-boundary``: each option is an argument of
    ``segmetrics_torch.functional.semantic_boundary`` (``semantic_boundary_protocol`` and the fields it overrides,
    then ``evaluate_semantic_boundary_folders``)."""
    sb = tasks.add_parser(
        "semantic-boundary",
        help="semantic boundaries (SBD, Cityscapes): per-class ODS / OIS / AP and their mean (mF), MATLAB or SEAL",
        description=(
            "Evaluate per-class boundary maps (pyEdgeEval's layout: class_XXX/<id>.png|bmp, XXX the 1-based class, "
            "Cityscapes trainId + 1) against SBD ground truth (cls/<id>.mat, inst/<id>.mat) or Cityscapes gtFine "
            "(searched recursively) with the BSDS matching rule per class, under a named protocol: matlab (the SBD "
            "MATLAB benchmark, CASENet's numbers), pre-seal or post-seal (SEAL's, as pyEdgeEval 0.2.8); each "
            "setting can be changed. Prints one row per class and the class mean (docs/semantic-boundaries.md)."
        ),
    )
    sb.add_argument("--config", metavar="FILE", help="a report of methods x datasets (docs/semantic-boundaries.md)")
    sb.add_argument("--pred", metavar="DIR", help="folder of class_XXX/ folders of soft maps (required)")
    sb.add_argument("--gt", metavar="DIR", help="SBD: the folder of cls/ (and inst/); or gtFine (required)")
    sb.add_argument("--dataset", choices=("sbd", "cityscapes"), help="the ground truth's layout (required)")
    sb.add_argument("--preset", choices=("matlab", "pre-seal", "post-seal"), help="default: post-seal")
    maps = sb.add_mutually_exclusive_group()
    # no parser defaults: with --config a given --preset / --thin / --raw is refused, so it must be seen as given
    maps.add_argument("--thin", dest="thin", action="store_true", default=None, help="thinned maps (the default)")
    maps.add_argument("--raw", dest="thin", action="store_false", help="raw maps; regenerated GT of radius 2")
    preset = "(default: the preset's)"
    for flag, what in (
        ("--instance-sensitive", "boundaries between two instances of one class count"),
        ("--kill-internal", "drop predictions inside the class farther than max-dist from its edges"),
        ("--skip-if-nonexistent", "an image without GT edges of a class adds no counts to it"),
    ):
        sb.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=f"{what} {preset}")
    for flag, kind, meta, what in (
        ("--thresholds", threshold_count, "N", "number of thresholds"),
        ("--max-dist", positive_float, "F", "match tolerance: fraction of the diagonal (< 1) or pixels (>= 1)"),
        ("--ignore-border", int_in(0, 2**31 - 1), "N", "ignored frame, pixels"),
        ("--radius", positive_float, "R", "regenerated GT half width, pixels"),
        ("--scale", checked(float, "a number in (0, 1]", lambda v: 0 < v <= 1), "S", "evaluation scale"),
    ):
        sb.add_argument(flag, type=kind, metavar=meta, help=f"{what} {preset}")
    sb.add_argument(
        "--classes",
        type=checked(listed(str), "comma-separated class numbers or names", lambda v: all(c.strip() for c in v)),
        metavar="LIST",
        help="comma-separated 1-based class numbers (as class_XXX) or names (default: all 20 / 19)",
    )
    sb.add_argument("--ids", metavar="FILE", help="text file of the image ids to evaluate, one a line (val.txt)")
    sb.add_argument("--name", help="method name in the CSV and JSON (default: from the prediction path)")
    _add_per_image_csv_option(sb, "class, best threshold, recall, precision, F, GT edge pixels: a row per class")
    sb.add_argument("--json", metavar="FILE", help="write every number (curves, per image and class) as JSON")
    sb.add_argument("--plot", metavar="FILE", help="write the PR curves of every class in one figure (.png/.pdf/.svg)")
    sb.add_argument(
        "--out-dir", metavar="DIR", help="write the SBD benchmark's class_XXX/eval_bdry*.txt and <id>_ev1.txt there"
    )
    sb.add_argument(
        "--figures",
        type=checked(listed(str), "comma-separated of png,pdf,svg", lambda v: set(v) <= {"png", "pdf", "svg"}),
        metavar="LIST",
        help="with --out-dir: also each class's PR curve, class_XXX/pr_curve.<format>, comma-separated of png,pdf,svg",
    )
    sb.add_argument("--no-progress", action="store_true", help="as every evaluate form (this one shows no bar)")
    sb.set_defaults(
        handler=_handler("semantic_boundary_command", "run_evaluate_semantic_boundary"),
        one_process="evaluate semantic-boundary",
    )


def _add_davis_task(tasks: Any) -> None:
    """``segmetrics evaluate davis``: each option is the ``segmetrics_torch.functional.evaluate_davis`` argument of the
    same name (``--set``: ``subset``); the defaults are its defaults (a test keeps them equal)."""
    davis = tasks.add_parser(
        "davis",
        help="video object segmentation: the DAVIS J&F protocol (semi-supervised, unsupervised)",
        description=(
            "Evaluate a method's results (<results>/<sequence>/<frame>.png palette PNGs) on a DAVIS 2017 set as "
            "davis2017-evaluation does: J (region IoU) and F (boundary) per object and frame, their Mean, Recall and "
            "Decay. Prints the global table; writes the reference's global_results-<set>.csv and "
            "per-sequence_results-<set>.csv into --out (docs/video.md)."
        ),
    )
    davis.add_argument("--config", metavar="FILE", help="a report of methods x (root, set, task)s (docs/video.md)")
    davis.add_argument("--davis-root", metavar="DIR", help="the DAVIS folder (ImageSets, Annotations) (required)")
    davis.add_argument("--results", metavar="DIR", help="the method's folder of <sequence>/ folders (required)")
    davis.add_argument("--task", choices=("semi-supervised", "unsupervised"), help="the protocol (required)")
    davis.add_argument(
        "--set",
        default="val",
        type=checked(
            str, "a set name of letters, digits, - and _", lambda v: v.replace("-", "").replace("_", "").isalnum()
        ),
        help="the sequences of ImageSets/2017/<set>.txt (default: val)",
    )
    davis.add_argument("--resolution", default="480p", help="the annotations' folder: 480p or Full-Resolution")
    davis.add_argument(
        "--sequences",
        type=checked(listed(str), "comma-separated sequence names", lambda v: all(v)),
        metavar="LIST",
        help="evaluate these comma-separated sequences instead of the set's list",
    )
    davis.add_argument(
        "--decay-edges",
        choices=("reference", "corrected"),
        default="reference",
        help="Decay's quarters: the reference's uint8 edges, wrapped beyond 256 frames (default), or corrected",
    )
    davis.add_argument("--max-proposals", type=positive_int, default=20, metavar="N", help="unsupervised limit (20)")
    davis.add_argument(
        "--bound-th", type=positive_float, default=0.008, metavar="F", help="F's tolerance, of the diagonal (0.008)"
    )
    davis.add_argument("--chunk-frames", type=positive_int, default=32, metavar="N", help="frames at a time (32)")
    davis.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto (default: cpu)")
    davis.add_argument(
        "--backend",
        choices=("auto", "compiled", "tensor"),  # segmetrics_torch.ops.backend.BACKEND_SETTINGS, as every form
        help="the library's backend for the run, as every evaluate form (default: auto, or SEGMETRICS_BACKEND)",
    )
    davis.add_argument(
        "--max-image-pixels",
        type=int,
        metavar="N",
        help="the largest frame, in pixels, that is read (default: Pillow's limit, or SEGMETRICS_MAX_IMAGE_PIXELS)",
    )
    davis.add_argument("--workers", type=positive_int, default=2, metavar="N", help="PNG-decoding threads (2)")
    davis.add_argument("--out", metavar="DIR", help="folder of the two CSVs and the figure (created if absent)")
    davis.add_argument("--json", metavar="FILE", help="write the global row, every object's numbers and the settings")
    davis.add_argument("--no-progress", action="store_true", help="as every evaluate form (this one shows no bar)")
    davis.set_defaults(handler=_handler("davis_command", "run_evaluate_davis"), one_process="evaluate davis")


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
    _add_semantic_boundary_task(tasks)
    _add_davis_task(tasks)
    evaluate.set_defaults(handler=_handler("single_folder", "run_evaluate_report"), subparser=evaluate)

    _add_meta_command(commands)
    _add_warmup_command(commands)
    return parser


def _add_warmup_command(commands: Any) -> None:
    """``segmetrics warmup``."""
    warmup = commands.add_parser(
        "warmup",
        help="compile the CPU kernels ahead of time (for Docker images and CI; numba caches them on disk)",
        description="Compile (or load from numba's on-disk cache) the CPU kernels every family uses, on tiny "
        "synthetic data, so that the first real run does not wait for them; prints the time of each family and the "
        "cache folder (NUMBA_CACHE_DIR, else the package's ops/_kernels/__pycache__).",
    )
    warmup.add_argument(
        "--families",
        type=checked(
            listed(str),
            f"comma-separated families of {','.join(WARMUP_FAMILIES)}",
            lambda v: set(v) <= set(WARMUP_FAMILIES),
        ),
        metavar="LIST",
        default=None,
        help=f"comma-separated families (default: all of {','.join(WARMUP_FAMILIES)})",
    )
    warmup.set_defaults(handler=_handler("warmup_command", "run_warmup"), one_process="warmup")


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
    part.add_argument("--seed", type=seed_int, default=0, help="random seed (default: 0)")
    part.add_argument("--json", metavar="FILE", help="write the rates with their counts as JSON")
    part.set_defaults(handler=_handler("meta_command", "run_meta_partition"), one_process="meta partition")

    fg = tests.add_parser(
        "foreground",
        help="generic-map, noise, GT-switch and annotation-error tests of foreground measures",
        description="Meta-measures of foreground-map measures. Measures: " + ", ".join(META_FOREGROUND.values()),
    )
    fg.add_argument("--demo", action="store_true", help="use the synthetic demo data (segmetrics demo's)")
    fg.add_argument("--n", type=int_in(1, MAX_DEMO_IMAGES), default=24, help="--demo: number of images (default: 24)")
    fg.add_argument("--pred", action="append", metavar="DIR", help="a method's prediction folder (repeatable)")
    fg.add_argument("--gt", metavar="DIR", help="folder of ground-truth masks")
    fg.add_argument("--measures", default=",".join(META_FOREGROUND_DEFAULT), help="comma-separated measure names")
    fg.add_argument("--noise-maps", type=int_in(1, 1000), default=4, help="noise maps per image (default: 4)")
    fg.add_argument("--radius", type=positive_float, default=5.0, help="perturbation disk radius (default: 5)")
    fg.add_argument(
        "--pairing",
        choices=("all", "random"),
        default="all",
        help="GT switch: every other image (default) or one seeded random other image",
    )
    fg.add_argument("--seed", type=seed_int, default=0, help="random seed (default: 0)")
    fg.add_argument("--json", metavar="FILE", help="write the rates with their counts as JSON")
    fg.set_defaults(handler=_handler("meta_command", "run_meta_foreground"), one_process="meta foreground")
    meta.set_defaults(handler=None, subparser=meta)
