"""The command-line form of the evaluation report: the :class:`~.report_config.ReportConfig` that the options of
``segmetrics evaluate`` itself (without a subcommand; declared in :mod:`.cli_parser`) make, and the single-folder
form's files (``--json``, ``--csv``, ``--per-image-csv``) written from a report's records. The run itself is
:mod:`.report_run`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..datasets.prescan import dataset_name, method_name
from ..errors import InputError
from ..registry import parse_measures
from ..reports.files import check_output
from ..reports.report import table_columns, table_row
from ..reports.tables import write_run_files
from . import distributed
from .pysod_toolkit import toolkit_configuration
from .report_config import (
    FAMILY_NAMES,
    PAIRING_KEYS,
    ReportConfig,
    config_from_mapping,
    family_name,
    figure_formats,
    load_config,
    presentation,
    raise_all,
)
from .report_run import SuiteResult, run_report


def _pred_argument(text: str, dataset: str, gt: Path) -> tuple[str, str]:

    name, sep, folder = text.partition("=")
    if not sep:
        folder = text
        name = method_name(text, dataset, gt)
    if not name or not folder:
        raise InputError(f"--pred {text!r}: expected DIR or NAME=DIR")
    return name, folder


def _base_config(args: argparse.Namespace) -> ReportConfig:
    """The configuration before the command line's overrides: from ``--config``, from ``--datasets-json`` and
    ``--methods-json``, or from ``--gt``/``--pred``/``--family`` (exactly one of them)."""
    single = args.report_gt is not None or args.report_pred or args.report_family or args.report_dataset
    toolkit = [getattr(args, f"report_{k}_json", None) for k in ("datasets", "methods")]
    if any(toolkit):
        if not all(toolkit):
            raise InputError(
                "PySODEvalToolkit's configurations come in two files: give --datasets-json and --methods-json"
            )
        if args.report_config is not None or single:
            raise InputError("give --datasets-json/--methods-json, --config, or --gt/--pred, one of them")

        data = {**toolkit_configuration(str(toolkit[0]), str(toolkit[1])), "output": "segmetrics-report"}
        return config_from_mapping(data, Path.cwd(), "PySODEvalToolkit configuration")
    if args.report_config is not None and single:
        raise InputError("give --config, or --gt/--pred/--family for one dataset, not both")
    if args.report_config is not None:
        return load_config(args.report_config)
    if args.report_gt is None or not args.report_pred:
        raise InputError("one dataset needs --gt DIR and at least one --pred [NAME=]DIR (or give --config FILE)")

    families = [f.strip() for f in ("foreground" if args.report_family is None else args.report_family).split(",")]
    unknown = [f for f in families if family_name(f) is None]
    if unknown:  # (named here: the configuration's check would name a key of a file the user did not write)
        raise InputError(f"--family: {', '.join(map(repr, unknown))} is not a family (known: {FAMILY_NAMES})")
    gt = Path(args.report_gt)
    name = args.report_dataset or dataset_name(gt)
    methods: dict[str, str] = {}
    for text in args.report_pred:
        method, folder = _pred_argument(text, name, gt)
        if method in methods:
            raise InputError(f"--pred: two methods are named {method!r}; name them: --pred NAME=DIR")
        methods[method] = str(Path(folder).resolve())
    data = {
        "datasets": {
            name: {
                "gt": str(gt.resolve()),
                "families": families,
                "gt_labels": bool(args.report_gt_labels),
            }
        },
        "methods": methods,
        "output": "segmetrics-report",
    }
    return config_from_mapping(data, Path.cwd(), "command line")


def config_from_args(args: argparse.Namespace) -> ReportConfig:
    """The configuration of ``segmetrics evaluate`` options: the file's (``--config``), PySODEvalToolkit's two files
    or one dataset's (``--gt``/``--pred``), then the command-line overrides."""
    config = _base_config(args)
    for option, attribute in (
        ("report_device", "device"),
        ("report_batch_size", "batch_size"),
        ("report_workers", "workers"),
        ("report_allow_missing", "allow_missing"),
        ("report_skip_bad", "skip_bad"),
        ("report_skip_empty_gt", "skip_empty_gt"),
        ("report_resize", "resize"),
        ("report_compare_on", "compare_on"),
        ("report_cache_check", "cache_check"),
    ):
        value = getattr(args, option)
        if value is not None:
            setattr(config, attribute, value)
    for key in PAIRING_KEYS:
        value = getattr(args, f"report_{key}")
        if value is not None:
            config.pairing[key] = value
    if args.report_output is not None:
        cache_default = config.cache == config.output / "cache"
        config.output = Path(args.report_output)
        if cache_default:
            config.cache = config.output / "cache"
    if args.report_cache is not None:
        config.cache = Path(args.report_cache)
    if args.report_no_cache:
        config.cache = None
    if args.report_figures is not None:
        value = args.report_figures.strip()
        config.figures = figure_formats("none" if value == "none" else [f.strip() for f in value.split(",")])
    config.progress = not args.report_no_progress
    if args.report_html is not None:
        config.html = Path(args.report_html)
    overrides = {}
    if args.report_xlsx is not None:
        overrides["xlsx"] = args.report_xlsx
    if args.report_method_order is not None:
        overrides["method_order"] = [m.strip() for m in args.report_method_order.split(",") if m.strip()]
    if args.report_highlight is not None:
        overrides["highlight"] = args.report_highlight
    if args.report_style is not None:
        overrides["style"] = args.report_style
    if args.report_digits is not None:
        overrides["digits"] = args.report_digits
    if args.report_measures is not None:
        measures = parse_measures(args.report_measures, "foreground", option="--measures")
        config.options["foreground"] = {**config.options["foreground"], "measures": measures}
    flags = {
        "xlsx": "--xlsx",
        "method_order": "--method-order",
        "highlight": "--highlight",
        "style": "--style",
        "digits": "--digits",
    }
    errors: list[str] = []
    presentation(config, overrides, "command line", errors)
    for i, error in enumerate(errors):
        for key, flag in flags.items():
            if f"command line: {key}:" in error:
                errors[i] = error.replace(f"command line: {key}:", f"{flag}:")
    raise_all(errors, "the command line")
    return config


def run_from_args(args: argparse.Namespace, resolve_device: Callable[[str], Any]) -> int:
    """The ``segmetrics evaluate`` handler without a subcommand: help when no option is given, else a run."""
    toolkit = args.report_datasets_json is not None or args.report_methods_json is not None
    if args.report_config is None and args.report_gt is None and not args.report_pred and not toolkit:
        args.subparser.print_help(sys.stderr)
        return 2
    outputs = _check_file_outputs(args)
    result = run_report(config_from_args(args), resolve_device=resolve_device, file_outputs=outputs)
    if distributed.is_main():
        _write_file_outputs(result, outputs)
    return 0


def _check_file_outputs(args: argparse.Namespace) -> dict[str, Path]:
    """``--json`` / ``--csv`` / ``--per-image-csv`` of the report form, checked before anything runs."""

    outputs = {}
    for option in ("json", "csv", "per_image_csv"):
        # writable; probed for a new file once checked against the inputs (report_run.check_report_outputs)
        path = check_output(getattr(args, f"report_{option}", None), "--" + option.replace("_", "-"), probe=False)
        if path is not None:
            outputs[option] = path
    return outputs


def _write_file_outputs(result: SuiteResult, outputs: Mapping[str, Path]) -> None:
    """The single-folder form's files from a report's records: ``--json`` (results.json's records), ``--csv`` and
    ``--per-image-csv`` (the foreground rows, merged by method and dataset as ``evaluate foreground`` merges them)."""

    rows, images = [], []
    for dataset, families in result.records.items():
        by_method = families.get("foreground", {})
        if not by_method:
            continue
        keys = [key for key, _ in table_columns("foreground", by_method)[0]]
        for method, record in by_method.items():
            values = table_row("foreground", record["results"])
            rows.append(
                {
                    "method": method,
                    "dataset": dataset,
                    "num_images": record["num_images"],
                    **{k: values.get(k) for k in keys},
                }
            )
            for image, scores in (record["results"].get("per_image") or {}).items():
                images.append(
                    {
                        "method": method,
                        "dataset": dataset,
                        "image": image,
                        **{k: scores[k] for k in keys if k in scores},
                    }
                )
    tables = [
        (outputs[option], table_rows, keys, f"--{option.replace('_', '-')}")
        for option, table_rows, keys in (
            ("csv", rows, ("method", "dataset")),
            ("per_image_csv", images, ("method", "dataset", "image")),
        )
        if option in outputs
    ]
    # written together: an interruption leaves the previous run's files or this run's, never a mix
    write_run_files((outputs["json"], {"results": result.records}) if "json" in outputs else None, tables)
    if "json" in outputs:
        print(f"Wrote {outputs['json']}")
    for path, table_rows, _, option in tables:
        what = "foreground row(s)" if option == "--csv" else "row(s)"
        print(f"Wrote {path} ({len(table_rows)} {what} of this run merged in)")
