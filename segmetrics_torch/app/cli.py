"""The ``segmetrics`` command: a demo on embedded synthetic data, and evaluation of prediction folders.

Usage::

    segmetrics demo [--n 24] [--device auto] [--seed 0]
    segmetrics evaluate --config eval.yaml [--output DIR] [--device cpu] [--workers N] [--allow-missing] [--skip-bad]
                        [--resize] [--no-cache | --cache DIR] [--figures png,pdf|none] [--xlsx] [--highlight M]
                        [--json FILE] [--csv FILE] [--per-image-csv FILE]   (many methods x datasets: a report;
                                                                             see segmetrics_torch.app.report_run)
    segmetrics evaluate --gt DIR --pred [NAME=]DIR [--pred ...]
                        [--family foreground|boundary|partition|proposals|surface]
    segmetrics evaluate foreground (alias sod) --pred DIR --gt DIR [--json FILE] [--csv FILE] [--per-image-csv FILE]
                            [--output DIR] [--measures LIST] [--allow-missing] [--skip-bad] [--resize]
                            [--pred-suffix S] [--gt-suffix S] [--pred-prefix P] [--gt-prefix P] [--pair-regex RE]
                            [--device cpu] [--batch-size 16] [--no-progress] [--name NAME] [--dataset NAME]
                            (options of both forms: docs/evaluate.md)
    segmetrics evaluate boundary --pred DIR --gt DIR [--gt-labels] [--thresholds 99] [--max-dist 0.0075] [--no-thin]
                                 [--out-dir DIR] [--json FILE] [--device cpu] [--batch-size 8] [--allow-missing]
                                 [--no-progress] [--name NAME]
    segmetrics evaluate partition --pred DIR --gt DIR [--measures LIST] [--thresholds 99 | --num-regions LIST]
                                  [--rule seism|bsr] [--gamma-obj 0.9] [--max-dist 0.0075] [--json FILE]
                                  [--device cpu] [--batch-size 8] [--allow-missing] [--no-progress] [--name NAME]
    segmetrics evaluate proposals --pred DIR --gt DIR [--gt-classes DIR] [--counts LIST] [--boundary]
                                  [--bound-th 0.008] [--void-label 255] [--chunk-size P] [--json FILE] [--plot FILE]
                                  [--device cpu] [--allow-missing] [--no-progress] [--name NAME]
    segmetrics meta partition --gt DIR [--ucm DIR] [--measures LIST] [--seed 0] [--json FILE]
    segmetrics meta foreground (--demo | --pred DIR [--pred DIR ...] --gt DIR) [--measures LIST] [--seed 0]
                               [--json FILE]          (meta-measures: see segmetrics_torch.app.meta_command)

Exit status: 0 on success; 2 for usage and input errors (a missing folder, unmatched files, unreadable or mismatched
images, an unavailable device), reported as one ``error: ...`` line on stderr; 1 for unexpected errors (with the
traceback); 130 when interrupted. The table and a summary go to stdout, warnings and the progress bar to stderr.

``evaluate boundary`` is the BSDS500 boundary benchmark: predictions are soft boundary maps (images) or BSR
``ucm2`` .mat files, ground truth BSDS ``groundTruth`` .mat files or PNG boundary (or, with ``--gt-labels``, label)
maps; ``--out-dir`` writes BSR's ``eval_bdry.txt``, ``eval_bdry_thr.txt`` and ``eval_bdry_img.txt``.

``evaluate partition`` scores partitions with SEISM's measures: label-map images are flat partitions (one value per
measure), BSR ``ucm2`` or ``segs`` .mat files hierarchies (ODS / OIS / AP per measure and the BSR region benchmark);
ground truth BSDS ``groundTruth`` .mat files (their ``Segmentation``) or label-map images.

``evaluate proposals`` scores ranked pools of object proposals (.npz mask stacks or label images) against annotated
objects (instance label images with a void label, or .npz) with the MCG protocol, and ``--plot`` draws the recall
curves against the number of proposals.

This module only parses arguments and orchestrates: reading is :mod:`segmetrics_torch.io`, measures are
:class:`segmetrics_torch.ForegroundMeasures`, :mod:`segmetrics_torch.functional.boundary`,
:class:`segmetrics_torch.PartitionMeasures` and :class:`segmetrics_torch.HierarchyMeasures`, tables and files are
:mod:`segmetrics_torch.app.tables`.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any, TypeVar

from .. import __version__
from ..registry import PARTITION
from . import distributed
from .demo_command import run_demo
from .errors import InputError
from .single_folder import (
    run_evaluate_boundary,
    run_evaluate_foreground,
    run_evaluate_partition,
    run_evaluate_proposals,
    run_evaluate_report,
    run_evaluate_surface,
)

if TYPE_CHECKING:  # annotations only: building the parser imports no torch

    pass

_T = TypeVar("_T")

__all__ = ["main"]

#: the partition measures' keys (the torch-free registry's: the evaluate parsers import no torch)
PARTITION_MEASURES = PARTITION


# ------------------------------------------------------------------------------------------------------ helpers


def _number(convert: Callable[[str], _T], what: str, ok: Callable[[_T], bool]) -> Callable[[str], _T]:
    """An argparse type: ``convert(text)`` accepted when ``ok(value)``, else a usage error naming ``what``."""

    def parse(text: str) -> _T:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


_positive_int = _number(int, "a positive integer", lambda v: v >= 1)
_non_negative_int = _number(int, "a non-negative integer", lambda v: v >= 0)
_positive_float = _number(float, "a positive number", lambda v: math.isfinite(v) and v > 0)


def _split(convert: Callable[[str], _T]) -> Callable[[str], list[_T]]:
    """``"a,b"`` -> ``[convert("a"), convert("b")]`` (spaces around the items ignored)."""
    return lambda text: [convert(item.strip()) for item in text.split(",")]


# ------------------------------------------------------------------------------------------------------- parser


def _add_run_options(command: argparse.ArgumentParser, batch_size: int, allow_missing: bool = True) -> None:
    """The options every folder-evaluating command shares."""
    from .prescan import add_allow_missing

    command.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto (default: cpu)")
    command.add_argument(
        "--batch-size", type=_positive_int, default=batch_size, help=f"images per update (default: {batch_size})"
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
    from .evaluation import default_workers

    command.add_argument(
        "--workers",
        type=_non_negative_int,
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
    demo.add_argument("--n", type=_positive_int, default=24, help="number of images (default: 24)")
    demo.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (default: auto)")
    demo.add_argument("--seed", type=_non_negative_int, default=0, help="random seed (default: 0)")
    demo.add_argument("--batch-size", type=_positive_int, default=8, help="images per update (default: 8)")
    demo.set_defaults(handler=run_demo)


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
        help="write a report folder (tables.md/.tex, csv/, results.json, figures/) as `evaluate --config` does",
    )
    fg.add_argument(
        "--figures", metavar="LIST", help="with --output: figure formats, comma-separated of png,pdf,svg, or none"
    )
    fg.add_argument(
        "--json", metavar="FILE", help="write every number (curves and per-image scores included) and metadata as JSON"
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
    from .measures import DEFAULT_FOREGROUND_MEASURES, FOREGROUND_MEASURES

    fg.add_argument(
        "--measures",
        metavar="LIST",
        help=f"the table's measures, comma-separated, of {','.join(FOREGROUND_MEASURES)} (default: "
        f"{','.join(DEFAULT_FOREGROUND_MEASURES)}; si*, *msiou, hce, cm, meanber, meankappa, meanacc are computed by "
        "ForegroundMeasures(include=...)'s measures, only when asked; PySODEvalToolkit's spellings such as maxEm, "
        "Smeasure, wFmeasure, adpFm are accepted)",
    )
    from .prescan import add_input_options

    add_input_options(fg)
    _add_run_options(fg, batch_size=16, allow_missing=False)
    _add_workers_option(fg)
    fg.set_defaults(handler=run_evaluate_foreground)


def _add_boundary_task(commands: Any) -> None:
    """``segmetrics evaluate boundary``."""
    from .prescan import add_input_options

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
        "--thresholds", type=_positive_int, default=99, metavar="N", help="number of thresholds (default: 99)"
    )
    bdry.add_argument(
        "--max-dist",
        type=_positive_float,
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
    add_input_options(bdry)
    _add_run_options(bdry, batch_size=8, allow_missing=False)
    _add_workers_option(bdry)
    bdry.set_defaults(handler=run_evaluate_boundary)


def _add_partition_task(commands: Any) -> None:
    """``segmetrics evaluate partition``."""
    from .prescan import add_input_options

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
        type=_number(_split(str), f"comma-separated keys of {','.join(MEASURES)}", lambda v: set(v) <= set(MEASURES)),
        metavar="LIST",
        help=f"comma-separated, of {','.join(MEASURES)} (default: all for label maps; all but fb, whose boundary "
        "matching is slow, for hierarchies)",
    )  # fmt: skip
    levels = part.add_mutually_exclusive_group()
    levels.add_argument(
        "--thresholds",
        type=_number(
            lambda t: int(t) if t.strip().isdigit() else _split(float)(t),
            "a positive integer or comma-separated numbers",
            lambda v: v >= 1 if isinstance(v, int) else all(map(math.isfinite, v)),
        ),
        metavar="N|LIST",
        help="ucm2 only: N thresholds linspace(1/(N+1), 1-1/(N+1), N), or the values (default: 99)",
    )
    levels.add_argument(
        "--num-regions",
        type=_number(_split(int), "comma-separated positive integers", lambda v: min(v) >= 1),
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
        type=_number(float, "a number in [0, 1]", lambda v: 0 <= v <= 1),
        default=0.9,
        metavar="F",
        help="Fop object threshold (default: 0.9, SEISM's code; the CVPR'13 paper says 0.95)",
    )
    part.add_argument(
        "--max-dist",
        type=_positive_float,
        default=0.0075,
        metavar="F",
        help="Fb match tolerance: fraction of the image diagonal (< 1) or pixels (>= 1) (default: 0.0075)",
    )
    _add_per_image_csv_option(part, "the measures of a label map")
    part.add_argument("--json", metavar="FILE", help="write every number (curves, per image for label maps) as JSON")
    add_input_options(part, resize=False)
    _add_run_options(part, batch_size=8, allow_missing=False)
    _add_workers_option(part)
    part.set_defaults(handler=run_evaluate_partition)


def _add_proposals_task(commands: Any) -> None:
    """``segmetrics evaluate proposals``."""
    from .prescan import add_input_options

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
        "--num-classes", type=_positive_int, default=256, metavar="C", help="class ids are 0..C-1 (default: 256)"
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
        type=_number(_split(int), "comma-separated positive integers", lambda v: min(v) >= 1),
        metavar="LIST",
        help="numbers of proposals N (default: MCG's 10..100 step 5, 125..1000 step 25, 1500..6000 step 500, all)",
    )
    prop.add_argument("--boundary", action="store_true", help="also the morphological boundary F curves")
    prop.add_argument(
        "--bound-th",
        type=_positive_float,
        default=0.008,
        metavar="F",
        help="boundary tolerance: fraction of the image diagonal (< 1) or pixels (>= 1) (default: 0.008, DAVIS)",
    )
    prop.add_argument(
        "--chunk-size", type=_positive_int, metavar="P", help="proposals converted at a time (memory bound)"
    )
    _add_per_image_csv_option(prop, "its numbers of proposals and objects, mean best J")
    prop.add_argument("--json", metavar="FILE", help="write every curve, the settings and per-image best J as JSON")
    prop.add_argument("--plot", metavar="FILE", help="write the recall-vs-number-of-proposals figure (.png/.pdf/.svg)")
    add_input_options(prop, resize=False)
    _add_run_options(prop, batch_size=1, allow_missing=False)
    prop.set_defaults(handler=run_evaluate_proposals)


def _add_surface_task(commands: Any) -> None:
    """``segmetrics evaluate surface``."""
    from .prescan import add_input_options

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
    surf.add_argument("--pred", required=True, metavar="DIR", help="folder of predicted masks / label maps")
    surf.add_argument("--gt", required=True, metavar="DIR", help="folder of ground-truth masks / label maps")
    surf.add_argument(
        "--num-classes", type=_positive_int, metavar="C", help="label maps with classes 0..C-1 (default: masks)"
    )
    surf.add_argument("--include-background", action="store_true", help="with --num-classes: also class 0")
    surf.add_argument(
        "--convention", choices=("monai", "medpy", "deepmind", "torchmetrics"), default="monai",
        help="the reference whose rules are reproduced (default: monai)",
    )  # fmt: skip
    surf.add_argument(
        "--percentile", type=_number(float, "a number in [0, 100]", lambda v: 0 <= v <= 100), default=95.0,
        metavar="Q", help="the percentile Hausdorff distance's percentile (default: 95)",
    )  # fmt: skip
    surf.add_argument(
        "--tolerance", type=_number(_split(float), "comma-separated non-negative numbers", lambda v: min(v) >= 0),
        metavar="T", help="the NSD tolerance in spacing units, one value or one per class (default: 1)",
    )  # fmt: skip
    surf.add_argument(
        "--spacing", type=_number(_split(float), "comma-separated positive numbers", lambda v: min(v) > 0),
        metavar="S", help="voxel spacing, one value or one per axis (default: the NIfTI header's, unit for images)",
    )  # fmt: skip
    _add_per_image_csv_option(surf, "its measures (one column per class for label maps)")
    surf.add_argument("--json", metavar="FILE", help="write every number, per image and per class, as JSON")
    add_input_options(surf, resize=False)
    _add_run_options(surf, batch_size=1, allow_missing=False)
    surf.set_defaults(handler=run_evaluate_surface)


def _build_parser() -> argparse.ArgumentParser:
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
    from .report_args import add_report_arguments

    add_report_arguments(evaluate, _positive_int, _non_negative_int)
    tasks = evaluate.add_subparsers(dest="task", metavar="TASK")
    _add_foreground_task(tasks)
    _add_boundary_task(tasks)
    _add_partition_task(tasks)
    _add_proposals_task(tasks)
    _add_surface_task(tasks)
    evaluate.set_defaults(handler=run_evaluate_report, subparser=evaluate)

    from .meta_command import add_meta_parser

    add_meta_parser(commands, _positive_int, _non_negative_int, _positive_float)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``segmetrics`` command line.

    Args:
        argv: arguments without the program name (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 ok, 2 usage or input error, 1 unexpected error, 130 interrupted. ``--help`` and argparse's
        own usage errors raise ``SystemExit`` (0 and 2) as usual.
    """
    _passive_idle_threads()
    stdout = sys.stdout
    guarded = _GuardedStdout(stdout)
    sys.stdout = guarded
    try:
        with distributed.session(), warnings.catch_warnings():  # under torchrun: one rank of the process group
            warnings.showwarning = _warning_line
            # the library's warnings are shown once per place, whatever filters the caller set (a test's "error");
            # the categories Python hides by default (ResourceWarning of a file an interruption left open, ...) stay
            # hidden
            for category in (RuntimeWarning, UserWarning):
                warnings.simplefilter("default", category)
            status = _main(argv)
        guarded.flush()  # a full disk shows here, not as a traceback at the interpreter's exit
        return status
    except KeyboardInterrupt:  # during start-up (importing torch) or argument parsing
        print("error: interrupted", file=sys.stderr)
        return 130
    except InputError as error:  # standard output could not be written
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        sys.stdout = stdout


def _warning_line(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, file: IO[str] | None = None,
    line: str | None = None,
) -> None:
    """A library warning as the command's other warnings: one ``warning:`` line on stderr, no source location."""
    text = " ".join(str(message).split())
    print(f"warning: {text}", file=sys.stderr)


class _GuardedStdout:
    """Standard output for the command: ordinary faults of the reader are not bugs.

    * The reader went away (``segmetrics ... | head -1``, ``| true``): the rest of the output is discarded (the
      descriptor is pointed at ``/dev/null``, so no later flush fails either) and the run goes on to write its
      files and exits 0, as the work was done.
    * Any other write error (``> /dev/full``: no space left; an I/O error) is an :class:`InputError`, exit 2:
      ``error: cannot write to standard output: no space left on device``.
    """

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            self._guard(lambda: self._stream.write(text))
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            self._guard(self._stream.flush)

    def _guard(self, action: Callable[[], object]) -> None:
        try:
            action()
        except BrokenPipeError:
            self._gone = True
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, self._stream.fileno())
                os.close(devnull)
            except (OSError, ValueError, AttributeError):  # no descriptor (a test's capture): nothing to redirect
                pass
        except OSError as error:
            reason = (error.strerror or str(error)).lower()
            raise InputError(f"cannot write to standard output: {reason}") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _passive_idle_threads() -> None:
    """Let idle OpenMP threads sleep instead of spinning (``OMP_WAIT_POLICY=PASSIVE``), unless the user set a policy.

    torch and numba's kernels each keep a pool of OpenMP threads, and by default a thread that has finished its share
    of a parallel loop spins for a while, waiting for more. On a few cores shared with other work the spinning threads
    take the cores that the computing ones need: ``segmetrics meta partition`` (thousands of short parallel regions
    of both pools) used 84 s of CPU in 90 s on a shared 2-core machine, and 31 s in 30 s passive, with the same
    output (the policy changes how threads wait, not how many there are or what they compute). OpenMP reads the
    variable once, when torch loads it, so it is set before any command imports torch (none has at this point).
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _main(argv: Sequence[str] | None) -> int:
    import gc

    enabled = gc.isenabled()
    gc.disable()  # building the parser imports torch (~1 s): no garbage worth collecting meanwhile
    try:
        parser = _build_parser()
    finally:
        if enabled:
            gc.enable()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    _announce_compilation()
    try:
        _check_environment(args)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if handler is None:
        (getattr(args, "subparser", None) or parser).print_help(sys.stderr)
        return 2
    try:
        status = handler(args)
        if argv is None:
            # run as a program: freeze the heap, so that the interpreter's final collections skip the millions of
            # objects of torch, numba and matplotlib (~0.5 s at exit); never in-process (tests), where it would
            # keep garbage alive
            gc.freeze()
        return status
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        if _interrupted(error):
            # Ctrl-C while a compiled (numba) kernel ran surfaces as SystemError("... returned a result with an
            # exception set") whose context is the KeyboardInterrupt: an interruption, not a bug
            print("error: interrupted", file=sys.stderr)
            return 130
        if isinstance(error, OSError) and error.filename is not None:
            # a file or folder the user named cannot be read or written (permissions, a folder where a file is
            # expected, a vanished file): an input problem, named, not a traceback
            print(f"error: {_os_error_line(error)}", file=sys.stderr)
            return 2
        traceback.print_exc()
        print(f"error: unexpected {type(error).__name__}: {error} (a bug? please report it)", file=sys.stderr)
        return 1


class _CompileNote(logging.Handler):
    """Prints the library's one-time compilation message as a ``note:`` line on stderr (once per process)."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.INFO:
            print(f"note: {record.getMessage()}; this run waits for it, later runs do not", file=sys.stderr)


def _announce_compilation() -> None:
    """A cold numba cache makes the first run compile the kernels (seconds to a minute): say so, once."""
    logger = logging.getLogger("segmetrics_torch.compile")  # ops._kernels._compile_log.LOGGER_NAME
    if not any(isinstance(h, _CompileNote) for h in logger.handlers):
        logger.addHandler(_CompileNote())
        logger.setLevel(logging.INFO)
        logger.propagate = False


def _check_environment(args: argparse.Namespace) -> None:
    """Settings that reach the libraries through the environment, checked (and set) before any of them loads.

    ``--max-image-pixels`` becomes ``SEGMETRICS_MAX_IMAGE_PIXELS`` (so that decoding workers inherit it); a value the
    libraries would reject later with an unexplained error is an input error naming the variable: a non-positive
    ``NUMBA_NUM_THREADS`` (numba raises "Number of threads specified must be > 0" at import; a non-number only makes
    numba warn and use its default, which stays so) and a malformed ``SEGMETRICS_MAX_IMAGE_PIXELS``.
    """
    from ..io import MAX_IMAGE_PIXELS_ENV, max_image_pixels

    pixels = getattr(args, "max_image_pixels", None)
    if pixels is not None:
        if pixels < 1:
            raise InputError(f"--max-image-pixels {pixels}: expected a positive number of pixels")
        os.environ[MAX_IMAGE_PIXELS_ENV] = str(pixels)
    try:
        max_image_pixels()
    except ValueError as error:
        raise InputError(str(error)) from None
    threads = os.environ.get("NUMBA_NUM_THREADS", "").strip()
    try:
        count = int(threads) if threads else None
    except ValueError:
        count = None
    if count is not None and count < 1:
        raise InputError(
            f"NUMBA_NUM_THREADS={threads}: numba needs a positive number of threads; unset the variable or give a "
            "count such as 2"
        )


def _interrupted(error: BaseException) -> bool:
    """Whether a KeyboardInterrupt is in ``error``'s chain of causes and contexts."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _os_error_line(error: OSError) -> str:
    what = error.strerror or type(error).__name__
    target = f"{error.filename} -> {error.filename2}" if error.filename2 is not None else str(error.filename)
    return f"cannot access {target}: {what}"


if __name__ == "__main__":
    raise SystemExit(main())
