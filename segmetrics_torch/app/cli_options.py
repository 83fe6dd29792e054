"""The ``segmetrics`` command's shared option builders and value checkers: the input options both ``evaluate``
forms share (one vocabulary: ``--allow-missing``, ``--skip-bad``, ``--resize``, the name-mapping flags ...), the
options of ``segmetrics evaluate`` itself (the report form, one declarative table) and the argparse types. With
:mod:`.cli_parser` (the subcommands) and :mod:`.cli` (``main``), the only modules of the app that use argparse."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any, TypeVar

from ..registry import FOREGROUND, MAX_CLASSES, MAX_THRESHOLDS
from .launch import default_workers

_T = TypeVar("_T")

__all__ = ["add_allow_missing", "add_input_options", "add_report_arguments"]


# ------------------------------------------------------------------------------------------------ value checkers


def checked(convert: Callable[[str], _T], what: str, ok: Callable[[_T], bool]) -> Callable[[str], _T]:
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


positive_int = checked(int, "a positive integer", lambda v: v >= 1)
non_negative_int = checked(int, "a non-negative integer", lambda v: v >= 0)
positive_float = checked(float, "a positive number", lambda v: math.isfinite(v) and v > 0)
#: a seed torch and numpy both take (a larger one overflowed after the run had started)
seed_int = checked(int, "a non-negative integer below 2^63", lambda v: 0 <= v < 2**63)


def int_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer from ``low`` to ``high`` (a library's bound on the memory an option asks for)."""
    return checked(int, f"an integer from {low} to {high}", lambda v: low <= v <= high)


threshold_count, class_count = int_in(1, MAX_THRESHOLDS), int_in(1, MAX_CLASSES)  # the library's bounds


def listed(convert: Callable[[str], _T]) -> Callable[[str], list[_T]]:
    """``"a,b"`` -> ``[convert("a"), convert("b")]`` (spaces around the items ignored)."""
    return lambda text: [convert(item.strip()) for item in text.split(",")]


#: numbers of proposals or regions: positive int64 values
positive_int64_list = checked(
    listed(int), "comma-separated positive integers below 2^63", lambda v: 1 <= min(v) <= max(v) < 2**63
)


# ------------------------------------------------------------------------------------------------- input options


def add_allow_missing(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, dest_prefix: str = "", default: bool | None = False
) -> None:
    """``--allow-missing`` and its hidden alias ``--skip-missing`` (the report form's former spelling)."""

    parser.add_argument(
        "--allow-missing",
        dest=f"{dest_prefix}allow_missing",
        action="store_true",
        default=default,
        help="evaluate the matched pairs when files have no counterpart (listed as notes), and leave out missing "
        "prediction folders; the default is an error",
    )
    parser.add_argument(
        "--skip-missing",
        dest=f"{dest_prefix}allow_missing",
        action="store_true",
        default=default,
        help=argparse.SUPPRESS,
    )


#: --skip-empty-gt's help for the foreground family
_EMPTY_GT_HELP = (
    "leave out the images whose ground truth is empty (COD10K's convention; PySODMetrics keeps them), listed as "
    "skipped and counted in the outputs"
)
#: --skip-empty-gt's help in the report's options (the families that have the convention)
_REPORT_EMPTY_GT_HELP = (
    "foreground and surface jobs: leave out the images whose ground truth is empty (COD10K's convention for "
    "foreground maps; PySODMetrics keeps them), listed as skipped and counted in the outputs"
)


def add_input_options(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    dest_prefix: str = "",
    *,
    resize: bool = True,
    unset: bool = False,
    empty_gt_help: str | None = _EMPTY_GT_HELP,
) -> None:
    """The input options both ``evaluate`` forms share (one vocabulary): ``--allow-missing`` (hidden alias
    ``--skip-missing``), ``--skip-bad``, ``--skip-empty-gt`` (where the family has a convention for an empty ground
    truth: ``empty_gt_help`` None leaves it out, so that argparse refuses it), ``--max-image-pixels``, ``--backend``
    (the library's backend for the run, applied by :mod:`.cli`), ``--resize`` and the name-mapping flags.
    ``unset``: flags default to None (the report form, where None means "as the configuration file says")."""
    default = None if unset else False
    add_allow_missing(parser, dest_prefix, default)
    parser.add_argument(
        "--skip-bad",
        dest=f"{dest_prefix}skip_bad",
        action="store_true",
        default=default,
        help="leave out the images the pre-scan finds unusable (unreadable, corrupt, other size"
        + (" without --resize" if resize else "")
        + "; implies --allow-missing) and record them in the outputs; the default is one error listing every problem",
    )
    if empty_gt_help is not None:
        parser.add_argument(
            "--skip-empty-gt",
            dest=f"{dest_prefix}skip_empty_gt",
            action="store_true",
            default=default,
            help=empty_gt_help,
        )
    parser.add_argument(
        "--max-image-pixels",
        dest="max_image_pixels",
        metavar="N",
        type=int,
        default=None,
        help="the largest image, in pixels (a NIfTI volume: in voxels), that is read (default 178,956,970, Pillow's "
        "own limit against decompression bombs; also SEGMETRICS_MAX_IMAGE_PIXELS); a larger one is a problem of the "
        "pre-scan",
    )
    parser.add_argument(
        "--backend",
        dest="backend",
        choices=("auto", "compiled", "tensor"),  # segmetrics_torch.ops.backend.BACKEND_SETTINGS (a test compares)
        default=None,
        help="which code computes the measures (the same numbers; docs/how-it-works.md, Backends): auto (the default, "
        "or SEGMETRICS_BACKEND: compiled CPU kernels for CPU tensors, Triton on CUDA; a small foreground run on a "
        "machine whose kernels are not compiled yet takes the tensor path instead of waiting for them), compiled (the "
        "same, but always compile), tensor (the tensor code CUDA runs, everywhere)",
    )
    if resize:
        parser.add_argument(
            "--resize",
            dest=f"{dest_prefix}resize",
            action="store_true",
            default=default,
            help=("foreground and boundary (soft map) jobs: " if unset else "")
            + "resize predictions of another size to their ground truth (cv2.resize INTER_LINEAR, as "
            "PySODEvalToolkit); the default is an error",
        )
    for side, what in (("pred", "prediction"), ("gt", "ground-truth")):
        for affix in ("prefix", "suffix"):
            parser.add_argument(
                f"--{side}-{affix}",
                dest=f"{dest_prefix}{side}_{affix}",
                metavar="TEXT",
                help=f"remove this {affix} from {what} file stems before pairing (e.g. --pred-suffix _sal pairs "
                "img_1_sal.png with img_1.png)"
                if (side, affix) == ("pred", "suffix")
                else f"remove this {affix} from {what} file stems before pairing",
            )
    parser.add_argument(
        "--pair-regex",
        dest=f"{dest_prefix}pair_regex",
        metavar="REGEX",
        help="a regular expression searched in both sides' stems (after the affixes); files pair by its group "
        "`id`, else its first group, else the match (e.g. '(?P<id>\\d+)' pairs by the number in the name)",
    )


# -------------------------------------------------------------------------------------------------- report form


#: ``segmetrics evaluate``'s own options, in the order of its help: (flag, dest without ``report_``, add_argument
#: keywords; ``type`` names one of the parser's checkers). The input options (``--allow-missing`` ...) of
#: :func:`add_input_options` follow ``--workers``.
_OPTIONS_BEFORE_INPUT: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("--config", "config", {"metavar": "FILE", "help": "YAML or JSON configuration"}),
    (
        "--datasets-json",
        "datasets_json",
        {
            "metavar": "FILE",
            "help": ("PySODEvalToolkit's dataset configuration (JSON), read as it is; with --methods-json"),
        },
    ),
    (
        "--methods-json",
        "methods_json",
        {
            "metavar": "FILE",
            "help": ("PySODEvalToolkit's method configuration (JSON), read as it is; with --datasets-json"),
        },
    ),
    ("--gt", "gt", {"metavar": "DIR", "help": "one dataset: its ground-truth folder"}),
    (
        "--pred",
        "pred",
        {
            "action": "append",
            "metavar": "[NAME=]DIR",
            "help": ("one dataset: a method's prediction folder (repeat for each method)"),
        },
    ),
    (
        "--family",
        "family",
        {
            "metavar": "LIST",
            "help": (
                "one dataset: families, comma-separated (foreground (alias sod), boundary, partition, proposals, "
                "surface; default: foreground)"
            ),
        },
    ),
    (
        "--dataset",
        "dataset",
        {
            "metavar": "NAME",
            "help": (
                "one dataset: its name (default: from the ground-truth path, e.g. COD10K-v3/Test/GT_Object -> COD10K)"
            ),
        },
    ),
    (
        "--gt-labels",
        "gt_labels",
        {"action": "store_true", "help": ("one dataset: boundary ground truth images are label maps")},
    ),
    (
        "--output",
        "output",
        {"metavar": "DIR", "help": ("report folder (default: the file's `output`, else ./segmetrics-report)")},
    ),
    ("--device", "device", {"metavar": "NAME", "help": "cpu, cuda, cuda:N or auto"}),
    (
        "--batch-size",
        "batch_size",
        {
            "type": "positive_int",
            "metavar": "N",
            "help": ("images per update (default: foreground 16, boundary / partition 8)"),
        },
    ),
    (
        "--workers",
        "workers",
        {
            "type": "non_negative_int",
            "metavar": "N",
            "help": (
                "processes that decode the image files while the measures run (default: one fewer than the "
                "machine's cores, at most 4: {workers} here); 0 decodes in the main process"
            ),
        },
    ),
)
_OPTIONS_AFTER_INPUT: tuple[tuple[str, str, dict[str, Any]], ...] = (
    (
        "--compare-on",
        "compare_on",
        {
            "choices": ("common", "each"),
            "help": (
                "foreground, with --allow-missing / --skip-bad: compare the methods of a dataset on the images they "
                "all have (common, default; the tables say so) or each on its own images (each; counts in every "
                "table)"
            ),
        },
    ),
    (
        "--json",
        "json",
        {
            "metavar": "FILE",
            "help": ("also write every record (numbers, curves, per-image scores) to FILE, as the single-folder form"),
        },
    ),
    (
        "--csv",
        "csv",
        {
            "metavar": "FILE",
            "help": (
                "merge the foreground rows (method, dataset, images, measures) into FILE, as the single-folder form"
            ),
        },
    ),
    (
        "--per-image-csv",
        "per_image_csv",
        {"metavar": "FILE", "help": ("merge the foreground per-image rows into FILE, as the single-folder form")},
    ),
    ("--cache", "cache", {"metavar": "DIR", "help": "cache folder (default: OUTPUT/cache)"}),
    ("--no-cache", "no_cache", {"action": "store_true", "help": "neither read nor write a cache"}),
    (
        "--cache-check",
        "cache_check",
        {
            "choices": ("stat", "content"),
            "help": ("how files are recognised: stat = names, sizes, mtimes (default); content = SHA-256"),
        },
    ),
    (
        "--figures",
        "figures",
        {"metavar": "LIST", "help": ("figure formats, comma-separated of png,pdf,svg, or none (default: png,pdf)")},
    ),
    ("--no-progress", "no_progress", {"action": "store_true", "help": "no progress bars"}),
    (
        "--html",
        "html",
        {
            "metavar": "DIR",
            "help": "also write a self-contained HTML report into DIR (one page per family, DIR/<family>/ when the run "
            "has several): tables, sortable per-image table, worst images with error overlays, every method side "
            "by side, distributions; opens from disk, offline",
        },
    ),
    (
        "--xlsx",
        "xlsx",
        {
            "action": "store_true",
            "default": None,
            "help": (
                "also write the combined table as combined.xlsx (needs openpyxl: pip install 'segmetrics-torch[xlsx]')"
            ),
        },
    ),
    (
        "--method-order",
        "method_order",
        {
            "metavar": "LIST",
            "help": ("comma-separated method names: the order of table rows and legends (others follow)"),
        },
    ),
    (
        "--highlight",
        "highlight",
        {"metavar": "METHOD", "help": ("draw this method's curves thick and on top (your method)")},
    ),
    (
        "--digits",
        "digits",
        {
            "metavar": "N",
            "type": "positive_int",
            "help": (
                "decimals of every table of the report (Markdown, LaTeX, combined; default 3), which also decide its "
                "bold and top-3 marks: values equal as printed tie"
            ),
        },
    ),
    (
        "--style",
        "style",
        {
            "metavar": "NAME",
            "help": ("a matplotlib style for the figures (e.g. seaborn-v0_8-paper, or a .mplstyle file)"),
        },
    ),
    (
        "--measures",
        "measures",
        {
            "metavar": "LIST",
            "help": (
                "the foreground tables' measures, comma-separated, of {measures} (as options.foreground.measures; "
                "default: the 11 of today's table)"
            ),
        },
    ),
)


def add_report_arguments(evaluate: argparse.ArgumentParser) -> None:
    """The options of ``segmetrics evaluate`` itself (the many-methods run); dests start with ``report_``."""
    group = evaluate.add_argument_group(
        "evaluation report (many methods x datasets)",
        "segmetrics evaluate --config eval.yaml [options], or for one dataset: segmetrics evaluate --gt DIR --pred "
        "[NAME=]DIR [--pred [NAME=]DIR ...] --family foreground|boundary|partition|proposals|surface [options]. "
        "Command-line options override the file's.",
    )
    checkers = {"positive_int": positive_int, "non_negative_int": non_negative_int}
    filled = {"workers": default_workers(), "measures": ",".join(FOREGROUND)}
    for options in (_OPTIONS_BEFORE_INPUT, None, _OPTIONS_AFTER_INPUT):
        if options is None:
            add_input_options(group, "report_", unset=True, empty_gt_help=_REPORT_EMPTY_GT_HELP)
            continue
        for flag, dest, keywords in options:
            keywords = dict(keywords)
            if "type" in keywords:
                keywords["type"] = checkers[keywords["type"]]
            keywords["help"] = keywords["help"].format(**filled)
            group.add_argument(flag, dest=f"report_{dest}", **keywords)
