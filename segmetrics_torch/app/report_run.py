"""Evaluation reports of many methods x datasets: ``segmetrics evaluate --config eval.yaml``.

A run evaluates every (dataset, family, method) combination of a configuration with the family cores of
:mod:`segmetrics_torch.app.evaluation` (the code behind
``segmetrics evaluate foreground|boundary|partition|proposals``),
caches each result, and writes a report: a terminal table, Markdown / LaTeX / CSV tables (methods x measures per
dataset, the best value of each column marked), one JSON file with every number and curve, and figures (PR curves,
F- and E-measure against the threshold, proposal recall) as PNG and PDF.

Order of work, so that bad input costs nothing and leaves nothing half-written:

1. the configuration is checked, every folder listed and paired, every format decided (any problem: one
   :class:`~segmetrics_torch.app.evaluation.InputError`, before any image is read);
2. each combination is taken from the cache or computed (progress bar per combination); a computed result is
   written to the cache at once (atomically), so an interrupted run resumes where it stopped;
3. the report is rendered into a temporary folder inside the output folder and its files are then moved into place
   (``os.replace``, atomic per file): a failure before that point writes no output file.

Cache: one JSON file per combination, named by the SHA-256 of its fingerprint: the package version, dataset,
method and family names, the measure settings (the family's options, input formats, ``resize``), the device type
(CUDA may differ from the CPU kernel in the last bits on exact ties) and the file list, each pair as names, sizes
and modification times in nanoseconds (``cache_check: stat``, the default: a re-run costs one ``stat`` per file) or
the SHA-256 of the files' bytes (``cache_check: content``: reads every file, robust to tools that restore
modification times). The batch size and the number of workers are not part of it (they do not change results). An
entry holds the fingerprint and a checksum of its results; an entry that cannot be parsed, has another key or a
wrong checksum (a partial or corrupt file) is reported and recomputed.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import distributed
from .errors import read_text_file
from .evaluation import (
    BOUNDARY_EXTENSIONS,
    DecodeStream,
    DecodeTask,
    InputError,
    boundary_formats,
    boundary_report,
    check_boundary_nms,
    check_pairing,
    decode_tasks,
    default_workers,
    evaluate_boundary,
    evaluate_foreground,
    evaluate_partition,
    evaluate_proposals,
    load_measures,
    match_folders,
    pairing_error,
    partition_formats,
)
from .measures import (
    FOREGROUND_MEASURES,
    check_foreground_measures,
    foreground_measure_error,
    parse_foreground_measures,
)
from .outputs import make_temporary_file

__all__ = [
    "FAMILIES",
    "Dataset",
    "Method",
    "ReportConfig",
    "ResultCache",
    "add_report_arguments",
    "config_from_mapping",
    "load_config",
    "run_report",
]

#: the families a configuration can name
FAMILIES = ("foreground", "boundary", "partition", "proposals")

#: other names users may write for a family: ``sod`` (salient object detection, the name PySODEvalToolkit users know)
#: is the foreground family. Reports, file names and cache keys use ``foreground`` only.
FAMILY_ALIASES = {"sod": "foreground"}

#: what a configuration's families are when it names none (the README's default)
DEFAULT_FAMILIES = ("foreground",)

#: the name-mapping keys of a configuration (and ``--pred-suffix`` ... on the command line)
PAIRING_KEYS = ("pred_prefix", "pred_suffix", "gt_prefix", "gt_suffix", "pair_regex")
#: the keys a method's own entry may set (its prediction names), and a dataset's (its ground-truth names)
PRED_PAIRING_KEYS = ("pred_prefix", "pred_suffix", "pair_regex")
GT_PAIRING_KEYS = ("gt_prefix", "gt_suffix")

#: default images per update of each family (as its ``evaluate`` subcommand)
BATCH_SIZES = {"foreground": 16, "boundary": 8, "partition": 8, "proposals": 1}

FIGURE_FORMATS = ("png", "pdf", "svg")

CACHE_FORMAT = "segmetrics-cache/1"

_TOP_KEYS = {
    "datasets",
    "methods",
    "families",
    "options",
    "output",
    "cache",
    "cache_check",
    "device",
    "batch_size",
    "workers",
    "skip_missing",
    "allow_missing",
    "skip_bad",
    "skip_empty_gt",
    "compare_on",
    "resize",
    "figures",
    "xlsx",
    "method_order",
    "colors",
    "highlight",
    "style",
    *PAIRING_KEYS,
}


# --------------------------------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class Dataset:
    """A ground-truth folder and the families evaluated on it (``gt_labels``: boundary GT images are label maps;
    ``gt_classes``: class images of the proposal family's objects, for J_c)."""

    name: str
    gt: Path
    families: tuple[str, ...]
    gt_labels: bool = False
    gt_classes: Path | None = None
    #: this dataset's own ground-truth name mapping (``gt_prefix`` / ``gt_suffix``), over the top-level keys
    pairing: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Method:
    """A method's predictions: a folder template (``{dataset}``, ``{family}`` replaced) or, per dataset, a folder or
    ``{family: folder}``; a dataset the mapping does not name is not evaluated for this method."""

    name: str
    preds: str | Mapping[str, str | Mapping[str, str]]
    base: Path = Path()
    #: this method's own prediction name mapping (``pred_prefix`` / ``pred_suffix`` / ``pair_regex``), over the
    #: dataset's and the top-level keys; ``dataset_pairing[d]`` over that, for dataset d only
    pairing: Mapping[str, str] = field(default_factory=dict)
    dataset_pairing: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def pairing_for(self, dataset: str) -> dict[str, str]:
        """The method's name mapping on ``dataset``."""
        return {**self.pairing, **self.dataset_pairing.get(dataset, {})}

    def folder(self, dataset: str, family: str) -> Path | None:
        template: str | None
        if isinstance(self.preds, str):
            template = self.preds
        else:
            entry = self.preds.get(dataset)
            template = entry.get(family) if isinstance(entry, Mapping) else entry
            if template is None:
                return None
        return self.base / template.replace("{dataset}", dataset).replace("{family}", family)


@dataclass
class ReportConfig:
    """A checked configuration (see the README, "Evaluation reports", for the file format)."""

    datasets: list[Dataset]
    methods: list[Method]
    output: Path
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    cache: Path | None = None
    cache_check: str = "stat"
    device: str = "cpu"
    batch_size: int | None = None
    workers: int = field(default_factory=default_workers)
    allow_missing: bool = False
    skip_bad: bool = False
    #: leave out the images of empty ground truth (foreground; COD10K's convention)
    skip_empty_gt: bool = False
    compare_on: str = "common"
    pairing: dict[str, str] = field(default_factory=dict)
    resize: bool = False
    figures: tuple[str, ...] = ("png", "pdf")
    xlsx: bool = False
    method_order: list[str] = field(default_factory=list)
    colors: dict[str, Any] = field(default_factory=dict)
    highlight: str | None = None
    style: str | None = None
    progress: bool = True
    source: str = "configuration"
    #: the configuration file the run was read from (``None``: built from the command line)
    config_file: Path | None = None


def _where(source: str, path: str) -> str:
    return f"{source}: {path}" if path else source


def _expect(ok: bool, source: str, path: str, expected: str, value: Any) -> None:
    if not ok:
        raise InputError(f"{_where(source, path)}: expected {expected}, got {value!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_family_options(family: str, options: Any, source: str, path: str) -> dict[str, Any]:
    """The measure options of one family, checked; defaults filled in (those of its ``evaluate`` subcommand)."""
    from ..functional.partition import MEASURES

    _expect(isinstance(options, Mapping), source, path, "a mapping of options", options)
    # each option: (check(value) -> truthy when valid, what was expected)
    allowed: dict[str, tuple[Callable[[Any], Any], str]] = {
        "foreground": {
            "measures": (
                lambda v: isinstance(v, list) and check_foreground_measures(v) is not None,
                f"a list of measure names ({foreground_measure_error(options.get('measures'))})",
            ),
        },
        "boundary": {
            "thresholds": (lambda v: _is_int(v) and v >= 1, "a positive integer"),
            "max_dist": (lambda v: _is_number(v) and v > 0, "a positive number"),
            "thin": (lambda v: isinstance(v, bool), "true or false"),
            "nms": (lambda v: isinstance(v, bool), "true or false"),
        },
        "partition": {
            "measures": (
                lambda v: isinstance(v, list) and v and all(m in MEASURES for m in v),
                f"a list of some of {', '.join(MEASURES)}",
            ),
            "thresholds": (
                lambda v: (_is_int(v) and v >= 1) or (isinstance(v, list) and v and all(map(_is_number, v))),
                "a positive integer or a list of numbers",
            ),
            "num_regions": (
                lambda v: isinstance(v, list) and v and all(_is_int(n) and n >= 1 for n in v),
                "a list of positive integers",
            ),
            "rule": (lambda v: v in ("seism", "bsr"), "seism or bsr"),
            "gamma_obj": (lambda v: _is_number(v) and 0 <= v <= 1, "a number in [0, 1]"),
            "max_dist": (lambda v: _is_number(v) and v > 0, "a positive number"),
        },
        "proposals": {
            "counts": (
                lambda v: isinstance(v, list) and v and all(_is_int(n) and n >= 1 for n in v),
                "a list of positive integers",
            ),
            "num_classes": (lambda v: _is_int(v) and v >= 1, "a positive integer"),
            "chunk_size": (lambda v: v is None or (_is_int(v) and v >= 1), "a positive integer"),
            "boundary": (lambda v: isinstance(v, bool), "true or false"),
            "bound_th": (lambda v: _is_number(v) and v > 0, "a positive number"),
            "void_label": (lambda v: v is None or (_is_int(v) and v >= 0), "a label >= 0 or null"),
        },
    }[family]
    errors: list[str] = []
    for key, value in options.items():
        with _gather(errors):
            if key not in allowed:
                known = ", ".join(allowed) or "none"
                raise InputError(f"{_where(source, f'{path}.{key}')}: unknown option of {family} (known: {known})")
            check, expected = allowed[key]
            _expect(bool(check(value)), source, f"{path}.{key}", expected, value)
    if family == "partition" and "thresholds" in options and "num_regions" in options:
        errors.append(f"{_where(source, path)}: give thresholds or num_regions, not both")
    if errors:  # each mistake on its own line of the configuration's listing
        raise _Mistakes(errors)
    defaults_by_family: dict[str, dict[str, Any]] = {
        "foreground": {"measures": None},
        "boundary": {"thresholds": 99, "max_dist": 0.0075, "thin": True, "nms": False},
        "partition": {
            "measures": None,
            "thresholds": None,
            "num_regions": None,
            "rule": "seism",
            "gamma_obj": 0.9,
            "max_dist": 0.0075,
        },
        # counts None: MCG's numbers of proposals (segmetrics_torch.functional.proposals.MCG_PROPOSAL_COUNTS)
        "proposals": {
            "counts": None,
            "num_classes": 256,
            "chunk_size": None,
            "boundary": False,
            "bound_th": 0.008,
            "void_label": 255,
        },
    }
    return {**defaults_by_family[family], **options}


def _family(name: Any) -> Any:
    return FAMILY_ALIASES.get(name, name) if isinstance(name, str) else name


def _families(value: Any, source: str, path: str) -> tuple[str, ...]:
    families = [value] if isinstance(value, str) else value
    _expect(
        bool(isinstance(families, list) and families and all(_family(f) in FAMILIES for f in families)),
        source,
        path,
        "one or a list of foreground (alias sod), boundary, partition, proposals",
        value,
    )
    return tuple(dict.fromkeys(map(_family, families)))


class _Mistakes(InputError):
    """Several mistakes of one entry (listed one per line by :func:`_gather`)."""

    def __init__(self, mistakes: list[str]) -> None:
        super().__init__("\n  ".join(mistakes) if len(mistakes) > 1 else mistakes[0])
        self.mistakes = mistakes


@contextlib.contextmanager
def _gather(errors: list[str]) -> Iterator[None]:
    """Record the :class:`InputError` of one independent check and go on, so one run names every mistake."""
    try:
        yield
    except _Mistakes as error:
        errors.extend(error.mistakes)
    except InputError as error:
        errors.append(str(error))


def config_from_mapping(data: Any, base: str | Path = ".", source: str = "configuration") -> ReportConfig:
    """Check a parsed configuration (a mapping, as read from YAML or JSON) and resolve its paths against ``base``.

    Every independent entry is checked (each dataset, method, family's options, top-level key), and all the
    mistakes found are reported together.

    Raises:
        InputError: naming the file and the entry at fault (``eval.yaml: datasets.ECSSD.gt: ...``), one line per
            mistake.
    """
    base = Path(base)
    _expect(isinstance(data, Mapping), source, "", "a mapping with `datasets` and `methods`", type(data).__name__)
    errors: list[str] = []
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        errors.append(
            f"{source}: unknown key(s) {', '.join(map(str, unknown))} (known: {', '.join(sorted(_TOP_KEYS))})"
        )
    named = {key: isinstance(data.get(key), Mapping) and bool(data[key]) for key in ("datasets", "methods")}
    for key in ("datasets", "methods"):
        with _gather(errors):
            _expect(named[key], source, key, "a non-empty mapping of names", data.get(key))
    default_families = None
    with _gather(errors):
        default_families = _families(data["families"], source, "families") if "families" in data else None

    # the entries of a section that is not a mapping cannot be checked (nor methods without datasets, which they
    # name); the other keys still are, so that one run lists every mistake
    datasets = []
    for name, entry in data["datasets"].items() if named["datasets"] else ():
        with _gather(errors):
            datasets.append(_dataset(str(name), entry, default_families, base, source))

    methods = []
    for name, entry in data["methods"].items() if named["datasets"] and named["methods"] else ():
        with _gather(errors):
            methods.append(_method(str(name), entry, data["datasets"], base, source))

    options_in = data.get("options", {})
    options: dict[str, dict[str, Any]] = {}
    with _gather(errors):
        _expect(isinstance(options_in, Mapping), source, "options", "a mapping {family: options}", options_in)
    if isinstance(options_in, Mapping):
        for family in options_in:
            if _family(family) not in FAMILIES:
                errors.append(f"{_where(source, f'options.{family}')}: not a family ({', '.join(FAMILIES)})")
        options_in = {_family(f): value for f, value in options_in.items()}
        for f in FAMILIES:
            with _gather(errors):
                options[f] = _check_family_options(f, options_in.get(f) or {}, source, f"options.{f}")

    output = base / str(data.get("output", "segmetrics-report"))
    config = ReportConfig(datasets, methods, output, options, source=source)
    cache = data.get("cache", True)
    with _gather(errors):
        _expect(isinstance(cache, (bool, str)), source, "cache", "true, false or a folder", cache)
        config.cache = (config.output / "cache") if cache is True else (base / cache if isinstance(cache, str)
                                                                        else None)  # fmt: skip
    for key, check, expected in (
        ("cache_check", lambda v: v in ("stat", "content"), "stat or content"),
        ("device", lambda v: isinstance(v, str) and re.fullmatch(r"cpu|auto|cuda(:\d+)?", v) is not None,
         "cpu, cuda, cuda:N or auto"),
        ("batch_size", lambda v: _is_int(v) and v >= 1, "a positive integer"),
        ("workers", lambda v: _is_int(v) and v >= 0, "a non-negative integer"),
        ("allow_missing", lambda v: isinstance(v, bool), "true or false"),
        ("skip_missing", lambda v: isinstance(v, bool), "true or false"),  # the former name of allow_missing
        ("skip_bad", lambda v: isinstance(v, bool), "true or false"),
        ("skip_empty_gt", lambda v: isinstance(v, bool), "true or false"),
        ("resize", lambda v: isinstance(v, bool), "true or false"),
        ("compare_on", lambda v: v in ("common", "each"), "common (the images every method has) or each"),
    ):
        if key in data:
            with _gather(errors):
                _expect(check(data[key]), source, key, expected, data[key])
                setattr(config, "allow_missing" if key == "skip_missing" else key, data[key])
    # colours, order and highlight name methods: checked against the names declared (an entry with a mistake is
    # still a method), not at all where `methods` itself is wrong
    declared = {str(name) for name in data["methods"]} if named["methods"] else None
    _presentation(config, data, source, errors, declared, check_names=named["methods"])
    for key in PAIRING_KEYS:
        if data.get(key) is not None:
            with _gather(errors):
                _expect(isinstance(data[key], str) and data[key], source, key, "a non-empty string", data[key])
                if key == "pair_regex":
                    try:
                        re.compile(data[key])
                    except re.error as error:
                        raise InputError(f"{_where(source, key)}: not a regular expression ({error})") from None
                config.pairing[key] = data[key]
    if "figures" in data:
        with _gather(errors):
            config.figures = _figure_formats(data["figures"], source)
    _raise_all(errors, source)
    return config


def _raise_all(errors: list[str], source: str) -> None:
    if len(errors) == 1:
        raise InputError(errors[0])
    if errors:
        raise InputError("\n  ".join([f"{len(errors)} mistakes in {source}:", *errors]))


def _dataset(name: str, entry: Any, default_families: tuple[str, ...] | None, base: Path, source: str) -> Dataset:
    path = f"datasets.{name}"
    if isinstance(entry, str):
        entry = {"gt": entry}
    _expect(
        isinstance(entry, Mapping) and isinstance(entry.get("gt"), str),
        source,
        path,
        "a folder path or a mapping with `gt`",
        entry,
    )
    extra = sorted(set(entry) - {"gt", "family", "families", "gt_labels", "gt_classes", *GT_PAIRING_KEYS})
    if extra:
        raise InputError(
            f"{_where(source, path)}: unknown key(s) {', '.join(extra)} (known: gt, families, gt_labels, gt_classes, "
            "gt_prefix, gt_suffix)"
        )
    pairing = _pairing_keys(entry, GT_PAIRING_KEYS, source, path)
    families = entry.get("families", entry.get("family"))
    if families is None:
        families = default_families or DEFAULT_FAMILIES
    else:
        families = _families(families, source, f"{path}.families")
    gt_labels = entry.get("gt_labels", False)
    _expect(isinstance(gt_labels, bool), source, f"{path}.gt_labels", "true or false", gt_labels)
    classes = entry.get("gt_classes")
    _expect(classes is None or isinstance(classes, str), source, f"{path}.gt_classes", "a folder path", classes)
    classes = None if classes is None else base / classes
    return Dataset(name, base / entry["gt"], families, gt_labels, classes, pairing)


def _pairing_keys(entry: Mapping[str, Any], keys: Sequence[str], source: str, path: str) -> dict[str, str]:
    """The name-mapping keys of a dataset or method entry, checked (non-empty strings; a compilable regex)."""
    out: dict[str, str] = {}
    for key in keys:
        value = entry.get(key)
        if value is None:
            continue
        _expect(isinstance(value, str) and bool(value), source, f"{path}.{key}", "a non-empty string", value)
        if key == "pair_regex":
            try:
                re.compile(value)
            except re.error as error:
                where = _where(source, f"{path}.{key}")
                raise InputError(f"{where}: not a valid regular expression ({error})") from None
        out[key] = value
    return out


def _with_pairing(entry: Mapping[str, Any], source: str, path: str) -> tuple[Any, dict[str, str]]:
    """A method's (or a method's dataset's) entry ``{path: ..., pred_prefix / pred_suffix / pair_regex: ...}``, checked:
    ``(path value, its name mapping)``."""
    extra = sorted(set(entry) - {"path", *PRED_PAIRING_KEYS})
    if extra:
        raise InputError(
            f"{_where(source, path)}: unknown key(s) {', '.join(map(str, extra))} (known: path, pred_prefix, "
            "pred_suffix, pair_regex)"
        )
    _expect("path" in entry, source, f"{path}.path", "the method's folder (template)", entry.get("path"))
    return entry["path"], _pairing_keys(entry, PRED_PAIRING_KEYS, source, path)


def _method(name: str, entry: Any, datasets: Mapping[str, Any], base: Path, source: str) -> Method:
    path = f"methods.{name}"
    pairing: dict[str, str] = {}
    if isinstance(entry, Mapping) and ("path" in entry or set(entry) & set(PRED_PAIRING_KEYS)):
        # {path: folder template or {dataset: ...}, pred_suffix: ..., pred_prefix: ..., pair_regex: ...}
        entry, pairing = _with_pairing(entry, source, path)
    dataset_pairing: dict[str, dict[str, str]] = {}
    if isinstance(entry, Mapping):
        # a dataset's entry {path: folder, pred_prefix: ..., pred_suffix: ..., pair_regex: ...}: its own name mapping
        entry = dict(entry)
        for dataset, value in list(entry.items()):
            if isinstance(value, Mapping) and "path" in value:
                entry[dataset], dataset_pairing[str(dataset)] = _with_pairing(value, source, f"{path}.{dataset}")
    ok = isinstance(entry, str) or (
        isinstance(entry, Mapping)
        and all(
            isinstance(v, str) or (isinstance(v, Mapping) and all(isinstance(f, str) for f in v.values()))
            for v in entry.values()
        )
    )
    _expect(ok, source, path, "a folder template or a mapping {dataset: folder or {family: folder}}", entry)
    if isinstance(entry, Mapping):
        for dataset, value in entry.items():
            if dataset not in datasets:
                raise InputError(f"{_where(source, f'{path}.{dataset}')}: no dataset of that name")
            if isinstance(value, Mapping) and {_family(f) for f in value} - set(FAMILIES):
                raise InputError(
                    f"{_where(source, f'{path}.{dataset}')}: keys must be families ({', '.join(FAMILIES)})"
                )
        entry = {d: {_family(f): v for f, v in value.items()} if isinstance(value, Mapping) else value
                 for d, value in entry.items()}  # fmt: skip
    return Method(name, entry, base, pairing, dataset_pairing)


def _presentation(
    config: ReportConfig,
    data: Mapping[str, Any],
    source: str,
    errors: list[str],
    names: set[str] | None = None,
    check_names: bool = True,
) -> None:
    """The keys that change how the report looks, not its numbers: xlsx, method_order, colors, highlight, style.

    Method names are checked against ``names`` (default: the configuration's methods), or not at all without
    ``check_names``."""
    if names is None:
        names = {m.name for m in config.methods}
    if "xlsx" in data:
        with _gather(errors):
            _expect(isinstance(data["xlsx"], bool), source, "xlsx", "true or false", data["xlsx"])
            config.xlsx = data["xlsx"]
    if "method_order" in data:
        with _gather(errors):
            order = data["method_order"]
            _expect(isinstance(order, list) and (not check_names or all(m in names for m in order)), source,
                    "method_order", f"a list of method names ({', '.join(sorted(names))})", order)  # fmt: skip
            config.method_order = list(order)
    if "colors" in data:
        colors = data["colors"]
        with _gather(errors):
            _expect(isinstance(colors, Mapping), source, "colors", "a mapping {method: matplotlib colour}", colors)
        if isinstance(colors, Mapping):  # unknown names and bad colours are two mistakes, both listed
            unknown = [str(m) for m in colors if m not in names] if check_names else []
            if unknown:
                errors.append(f"{_where(source, 'colors')}: no method named {', '.join(unknown)} (methods: "
                              f"{', '.join(sorted(names))})")  # fmt: skip
            bad = _bad_colours(colors)
            if bad:
                errors.append(f"{_where(source, 'colors')}: not a matplotlib colour: "
                              f"{', '.join(f'{m}: {c!r}' for m, c in bad.items())}")  # fmt: skip
            if not unknown and not bad:
                config.colors = dict(colors)
    if "highlight" in data:
        with _gather(errors):
            _expect(not check_names or data["highlight"] in names, source, "highlight",
                    f"a method name ({', '.join(sorted(names))})", data["highlight"])  # fmt: skip
            config.highlight = data["highlight"]
    if "style" in data:
        with _gather(errors):
            _expect(isinstance(data["style"], str), source, "style", "a matplotlib style name", data["style"])
            config.style = data["style"]


def _bad_colours(colors: Mapping[str, Any]) -> dict[str, Any]:
    """The entries matplotlib would reject (a name, hex string or RGB(A) list are colours; without matplotlib only
    strings pass: then no figure is drawn either)."""
    try:
        from matplotlib.colors import is_color_like
    except ImportError:  # pragma: no cover - the plot extra is not installed
        return {m: c for m, c in colors.items() if not isinstance(c, str)}
    return {m: c for m, c in colors.items() if isinstance(c, bool) or not is_color_like(c)}


def _figure_formats(value: Any, source: str = "--figures") -> tuple[str, ...]:
    if value is False or value in ("none", []):
        return ()
    formats = [value] if isinstance(value, str) else value
    _expect(
        isinstance(formats, list) and all(f in FIGURE_FORMATS for f in formats),
        source,
        "figures" if source != "--figures" else "",
        f"false or a list of {', '.join(FIGURE_FORMATS)}",
        value,
    )
    return tuple(dict.fromkeys(formats))


def load_config(path: str | Path) -> ReportConfig:
    """Read a YAML (``.yaml``/``.yml``) or JSON configuration; relative paths are relative to its folder."""
    path = Path(path)
    text = read_text_file(path, "the configuration")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text, object_pairs_hook=_unique_json_keys)
        except _DuplicateKey as error:
            lines = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(rf'"{re.escape(error.key)}"\s*:', text)]
            where = f" (lines {' and '.join(map(str, lines))})" if len(lines) > 1 else ""
            raise InputError(f"{path}: the key {error.key!r} appears twice in one object{where}; a later one would "
                             "silently replace the earlier: merge them") from None  # fmt: skip
        except json.JSONDecodeError as error:
            raise InputError(f"{path}: not valid JSON ({error})") from None
    else:
        import yaml

        try:
            data = yaml.load(text, Loader=_unique_keys_yaml_loader())
        except _DuplicateKey as error:
            first, second = error.lines
            message = f"the key {error.key!r} appears twice in one mapping (lines {first} and {second})"
            raise InputError(f"{path}: {message}; a later one would silently replace the earlier: merge them") from None
        except yaml.YAMLError as error:
            raise InputError(f"{path}: not valid YAML ({' '.join(str(error).split())})") from None
    config = config_from_mapping(data, path.parent, str(path))
    config.config_file = path
    return config


class _DuplicateKey(Exception):
    def __init__(self, key: str, lines: tuple[int, int] = (0, 0)) -> None:
        super().__init__(key)
        self.key, self.lines = key, lines


def _unique_json_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _unique_keys_yaml_loader() -> type:
    """A ``yaml.SafeLoader`` that rejects a mapping with a repeated key (PyYAML keeps the last one silently)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            first_line: dict[Any, int] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                line = key_node.start_mark.line + 1
                if isinstance(key, str) and key in first_line:
                    raise _DuplicateKey(key, (first_line[key], line))
                if isinstance(key, str):
                    first_line[key] = line
            return super().construct_mapping(node, deep=deep)

    return Loader


# --------------------------------------------------------------------------------------------------------- cache


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, allow_nan=False, separators=(",", ":"))


class ResultCache:
    """One JSON file per (dataset, method, family, settings, files) fingerprint, written atomically."""

    def __init__(self, root: Path, warn: Callable[[str], None] | None = None) -> None:
        self.root = Path(root)
        self.warn = warn or (lambda message: print(message, file=sys.stderr))

    def path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def load(self, key: str) -> dict[str, Any] | None:
        """The cached record of ``key``; None when absent, or when corrupt or partial (reported, then rebuilt)."""
        path = self.path(key)
        if not path.is_file():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            problem = (
                "not a cache entry"
                if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT
                else "its key differs from its name"
                if entry.get("key") != key
                else "its checksum does not match its results"
                if hashlib.sha256(_canonical(entry["record"]).encode()).hexdigest() != entry.get("checksum")
                else None
            )
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
            problem = f"unreadable ({type(error).__name__}: {error})"
        if problem is not None:
            self.warn(f"warning: the cache entry {path} is corrupt or partial ({problem}); recomputing it")
            return None
        return entry["record"]

    def store(self, key: str, record: dict[str, Any], fingerprint: dict[str, Any]) -> Path:
        """Write the entry to a temporary file in the cache folder, flush it to disk, then rename it into place."""
        self.root.mkdir(parents=True, exist_ok=True)
        entry = {
            "format": CACHE_FORMAT,
            "key": key,
            "checksum": hashlib.sha256(_canonical(record).encode()).hexdigest(),
            "fingerprint": fingerprint,
            "record": record,
        }
        handle, temp = make_temporary_file(self.root, f".{key[:16]}-", ".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as f:
                f.write(json.dumps(entry, allow_nan=False))
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, self.path(key))
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        return self.path(key)


def _class_images(folder: Path) -> dict[str, Path]:
    from ..io import list_images

    try:
        return list_images(folder, name="gt_classes folder")
    except ValueError as error:
        raise InputError(str(error)) from None


def _file_id(path: Path, check: str) -> list[Any]:
    if check == "content":
        digest = hashlib.sha256()
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return [path.name, digest.hexdigest()]
    stat = path.stat()
    return [path.name, stat.st_size, stat.st_mtime_ns]


# ---------------------------------------------------------------------------------------------------- planning


@dataclass
class Job:
    """One (dataset, family, method) combination, planned: its pairs, formats, settings and cache key."""

    dataset: Dataset
    family: str
    method: str
    pred_dir: Path
    pairing: Any
    input_format: str
    gt_format: str
    settings: dict[str, Any]
    key: str = ""
    fingerprint: dict[str, Any] = field(default_factory=dict)
    classes: dict[str, Path] | None = None
    device_type: str = ""
    #: the pre-scan's findings (foreground), the images left out (``--skip-bad``), the ground truths of the dataset
    scan: Any = None
    skipped: list[dict[str, str]] = field(default_factory=list)
    gt_total: int | None = None


#: the settings of :class:`~segmetrics_torch.ForegroundMeasures` as the foreground family runs it (its defaults; a test
#: checks them against the class), a constant so that planning, cache keys included, needs no torch import
SOD_SETTINGS: dict[str, Any] = {
    "normalize": True,
    "beta2": 0.3,
    "wf_beta2": 1.0,
    "alpha": 0.5,
    "empty_quadrant": "nan",
    "edt_backend": "auto",
    "gt_binarisation": "> 128 (a mask holding only 0 and 1: == 1)",
    "reader": "cv2.imread(path, IMREAD_GRAYSCALE) (segmetrics_torch.io.read_gray_map)",
    # part of the cache key: records cached before per-image scores existed are recomputed, not shown without them
    "per_image": True,
}


def _plan(config: ReportConfig, warn: Callable[[str], None], device_type: str) -> tuple[list[Job], list[str]]:
    """Every combination, checked and paired before anything is computed; also the skipped ones (as sentences)."""
    jobs, skipped = [], []
    missing_gt = [
        f"dataset {d.name}: the ground-truth folder {d.gt} {'is not a folder' if d.gt.exists() else 'does not exist'}"
        for d in config.datasets
        if not d.gt.is_dir()
    ]
    missing_pred: list[str] = []
    for dataset in config.datasets:
        if not dataset.gt.is_dir():
            continue
        for family in dataset.families:
            for method in config.methods:
                pred_dir = method.folder(dataset.name, family)
                label = f"{dataset.name} / {family} / {method.name}"
                if pred_dir is None:
                    skipped.append(f"{label}: no prediction folder given")
                elif not pred_dir.is_dir():
                    missing_pred.append(f"{label}: the prediction folder {pred_dir} does not exist")
                    skipped.append(f"{label}: no folder {pred_dir}")
    # every missing folder in one error (ground truths always; predictions unless --allow-missing leaves them out)
    fatal = missing_gt + ([] if config.allow_missing or config.skip_bad else missing_pred)
    if len(fatal) == 1:
        hint = "" if missing_gt else " (use --allow-missing to leave it out)"
        raise InputError(f"{fatal[0]}{hint}")
    if fatal:
        hint = "" if missing_gt else "; use --allow-missing to leave the missing prediction folders out"
        raise InputError("\n  ".join([f"{len(fatal)} folder(s) do not exist{hint}:", *fatal]))
    for message in missing_pred:
        warn(f"warning: {message}; skipped")
    for dataset in config.datasets:
        for family in dataset.families:
            for method in config.methods:
                pred_dir = method.folder(dataset.name, family)
                if pred_dir is None or not pred_dir.is_dir():
                    continue
                label = f"{dataset.name} / {family} / {method.name}"
                try:
                    jobs.append(_plan_job(config, dataset, family, method.name, pred_dir, device_type,
                                          {**dataset.pairing, **method.pairing_for(dataset.name)}))  # fmt: skip
                except InputError as error:
                    raise InputError(f"{label}: {error}") from None
    if not jobs:
        raise InputError("nothing to evaluate: no method has predictions for any dataset")
    _prescan(jobs, config, warn)
    for job in jobs:
        _fingerprint(job, config)
    return jobs, skipped


def _prescan(jobs: list[Job], config: ReportConfig, warn: Callable[[str], None]) -> None:
    """Every problem of every job in one error (or, with ``skip_bad``, the bad images left out and recorded); notes
    printed once per kind; then, by default, the methods of each dataset and family restricted to the images they all
    have (``compare_on: common``)."""
    from .prescan import Problem, Scan, family_size_readers, listing, raise_or_skip, scan_foreground, scan_sizes

    scanned = jobs
    # ground truths scanned once per dataset (their findings differ by family and format)
    gt_caches: dict[tuple[str, str], dict[Path, Any]] = {}

    def scan_job(job: Job) -> Scan:
        pairing, gt_cache = job.pairing, gt_caches.setdefault((job.family, job.gt_format), {})
        reasons = (pairing.gt_reasons, pairing.pred_reasons)
        if job.family == "foreground":
            return scan_foreground(
                pairing.pairs, pairing.missing, pairing.unmatched, gt_cache=gt_cache, reasons=reasons
            )
        read_pred, read_gt, ucm2 = family_size_readers(job.family, job.input_format, job.gt_format)
        resizable = job.family == "boundary" and job.input_format == "soft"
        return scan_sizes(pairing.pairs, pairing.missing, pairing.unmatched, read_pred=read_pred, read_gt=read_gt,
                          ucm2=ucm2, resizable=resizable, gt_cache=gt_cache, reasons=reasons)  # fmt: skip

    scans = []
    def scan_or_cached(job: Job) -> Any:
        if config.cache is not None:
            # a result cached for exactly these pairs was computed without leaving any out, so their files had no
            # fatal problem: a re-run reads no image (as before the pre-scan existed); unpaired names still count
            _fingerprint(job, config)
            cached = ResultCache(config.cache, lambda _: None).load(job.key)  # a corrupt entry: scanned, recomputed
            if cached is not None:
                found = [Problem(p["problem"], p["image"], p.get("detail", "")) for p in cached.get("problems", [])]
                return Scan(found, len(job.pairing.pairs))
        return scan_job(job)

    # under torchrun rank 0 scans (or reads its cache) and the other ranks take its findings
    results = distributed.main_decides(lambda: [scan_or_cached(j) for j in scanned])
    for job, found in zip(scanned, results, strict=True):
        job.scan = found
        scans.append((f"{job.dataset.name} / {job.family} / {job.method}", job.scan))
    bad = raise_or_skip(scans, allow_missing=config.allow_missing, resize=config.resize, skip_bad=config.skip_bad,
                        skip_empty_gt=config.skip_empty_gt)  # fmt: skip
    said: set[tuple[str, str]] = set()
    for job, (label, scan) in zip(scanned, scans, strict=True):
        job.skipped = [p.as_dict() for p in bad[label]]
        notes = [p for p in scan.problems if p not in bad[label]]
        # findings of the ground truth (0/1 masks, empty masks, colour masks) are the dataset's: said once, not per
        # method
        of_gt = [p for p in notes if p.kind in ("binary01", "empty")
                 or (p.kind == "colour" and p.detail.startswith("ground truth"))]  # fmt: skip
        for line in listing(of_gt, prefix=""):
            if (job.dataset.name, line) not in said:
                said.add((job.dataset.name, line))
                warn(f"note: dataset {job.dataset.name}: {line}")
        for line in listing([p for p in notes if p not in of_gt], prefix=""):
            warn(f"note: {label}: {line}")
        for line in listing(bad[label], prefix=""):
            warn(f"skipped: {label}: {line}")
        left_out = {p.image for p in bad[label]}
        job.gt_total = len(job.pairing.pairs) + len(job.pairing.missing)
        job.pairing = replace(job.pairing, pairs=[pair for pair in job.pairing.pairs if pair[0] not in left_out])
        if not job.pairing.pairs:
            raise InputError(f"{label}: every image has a problem (listed above); nothing to evaluate")
    if config.compare_on == "common":
        by_dataset: dict[tuple[str, str], list[Job]] = {}
        for job in scanned:
            by_dataset.setdefault((job.dataset.name, job.family), []).append(job)
        for (dataset, family), group in by_dataset.items():
            common = set.intersection(*({stem for stem, _, _ in job.pairing.pairs} for job in group))
            if not common:
                raise InputError(
                    f"dataset {dataset} ({family}): no image has a prediction of every method; compare each method "
                    "on its own images with --compare-on each"
                )
            for job in group:
                job.pairing = replace(job.pairing, pairs=[pair for pair in job.pairing.pairs if pair[0] in common])


_PAIR_REGEX = "pair_regex (--pair-regex)"  # the configuration key and the flag that give the pairing pattern


def _plan_job(
    config: ReportConfig,
    dataset: Dataset,
    family: str,
    method: str,
    pred_dir: Path,
    device_type: str,
    own_pairing: Mapping[str, str] | None = None,
) -> Job:
    from ..io import find_pairs

    # the name mapping: the top-level keys, then the dataset's own, then the method's own
    merged = {**config.pairing, **(own_pairing or {})}
    pairing_keys = {key: value for key, value in merged.items() if key != "pair_regex"}
    if "pair_regex" in merged:
        pairing_keys["pattern"] = merged["pair_regex"]
    try:
        if family == "foreground":
            pairing = find_pairs(pred_dir, dataset.gt, **pairing_keys)
            pred_kind, gt_kind = "image", "image"
        elif family == "proposals":
            from ..io import PROPOSAL_EXTENSIONS

            pairing = find_pairs(pred_dir, dataset.gt, PROPOSAL_EXTENSIONS, **pairing_keys)
            pred_kind, gt_kind = "pool", "objects"
        else:
            pairing, pred_kind, gt_kind = match_folders(pred_dir, dataset.gt, BOUNDARY_EXTENSIONS,
                                                        pattern_option=_PAIR_REGEX, **pairing_keys)  # fmt: skip
    except ValueError as error:
        raise pairing_error(error, _PAIR_REGEX) from None
    # no common name is an error here; missing and extra files are listed by the pre-scan with every other problem
    check_pairing(pairing, pred_dir, dataset.gt, True, option="--allow-missing", warn=lambda message: None)
    options = dict(config.options[family])
    if family == "foreground":
        input_format = gt_format = "gray"
        settings = {**SOD_SETTINGS, "resize": config.resize}
        if options.get("measures"):
            settings["measures"] = check_foreground_measures(options["measures"])
    elif family == "boundary":
        input_format, gt_format = boundary_formats(pred_kind, gt_kind, dataset.gt_labels, dataset.gt)
        check_boundary_nms(options["nms"], input_format, f"options.boundary.nms ({pred_dir})")
        resize = config.resize and input_format == "soft"
        settings = {**options, "input_format": input_format, "gt_format": gt_format, "resize": resize}
    elif family == "proposals":
        input_format, gt_format = "pool", "objects"
        settings = {**options, "gt_classes": None if dataset.gt_classes is None else str(dataset.gt_classes)}
    else:
        input_format, gt_format = partition_formats(pairing, pred_kind, gt_kind)
        # the family's thresholds / num_regions pick the levels of ucm2 hierarchies; the other methods of the
        # family (label maps, stacks of levels) have their own levels and are evaluated as they are
        options.update(_ucm2_only_options(options, input_format))
        settings = {**options, "input_format": input_format, "gt_format": gt_format}
    job = Job(dataset, family, method, pred_dir, pairing, input_format, gt_format, settings)
    job.device_type = device_type
    return job


def _ucm2_only_options(options: Mapping[str, Any], input_format: str) -> dict[str, Any]:
    """``thresholds`` / ``num_regions`` as a partition method of ``input_format`` uses them (None unless ucm2)."""
    keys = ("thresholds", "num_regions")
    return {key: options[key] for key in keys} if input_format == "ucm2" else dict.fromkeys(keys)


def _fingerprint(job: Job, config: ReportConfig) -> None:
    """The job's cache key: version, names, settings, device type and the files of its (final) pairs."""
    from .. import __version__

    dataset, check = job.dataset, config.cache_check
    files = [[stem, *_file_id(Path(p), check), *_file_id(Path(g), check)] for stem, p, g in job.pairing.pairs]
    if job.family == "proposals" and dataset.gt_classes is not None:
        job.classes = _class_images(dataset.gt_classes)
        files += [["class", stem, *_file_id(path, check)] for stem, path in job.classes.items()]
    job.fingerprint = {"segmetrics_version": __version__, "dataset": dataset.name, "method": job.method,
                       "family": job.family, "settings": job.settings, "device": job.device_type,
                       "cache_check": check, "files": files}  # fmt: skip
    job.key = hashlib.sha256(_canonical(job.fingerprint).encode()).hexdigest()


# ----------------------------------------------------------------------------------------------------- running


def _compute(job: Job, config: ReportConfig, device: Any, progress: Any, images: Any) -> dict[str, Any]:
    """Run the family core on the job's pairs; the record that goes into the cache and the JSON report."""
    from .tables import to_jsonable

    pairs = job.pairing.pairs
    batch_size = config.batch_size or BATCH_SIZES[job.family]
    run = {"device": device, "batch_size": batch_size, "progress": progress, "images": images}
    options = dict(config.options[job.family])
    derived: dict[str, Any] = {}
    start = time.perf_counter()
    if job.family == "foreground":
        from .measures import foreground_columns

        include = foreground_columns(job.settings.get("measures"))[2]
        results, metric = evaluate_foreground(pairs, resize=config.resize, per_image=True, include=include, **run)
        results = {**results, "per_image": metric.per_image}
    elif job.family == "boundary":
        summary = evaluate_boundary(
            pairs, input_format=job.input_format, gt_format=job.gt_format, **options, resize=config.resize, **run
        )
        results = boundary_report(summary, [stem for stem, _, _ in pairs])
    elif job.family == "proposals":
        from ..functional.proposals import MCG_PROPOSAL_COUNTS

        options["counts"] = sorted(set(options["counts"] or MCG_PROPOSAL_COUNTS))
        results, per_image, proposals = evaluate_proposals(
            pairs, classes=job.classes, device=device, progress=progress, class_option="gt_classes", **options
        )
        results = {**results, "per_image": per_image}
        derived = {"counts": options["counts"], "num_classes": proposals.num_classes}
    else:
        options.update(_ucm2_only_options(options, job.input_format))
        results, metric = evaluate_partition(
            pairs, input_format=job.input_format, gt_format=job.gt_format, **options, **run
        )
        derived = {"measures": list(metric.measures)}
        if job.input_format != "labels":
            derived.update(parameters=metric.levels, unique_occurrence=metric.unique_occurrence)
    elapsed = time.perf_counter() - start
    return to_jsonable(
        {
            "dataset": job.dataset.name,
            "method": job.method,
            "family": job.family,
            "pred_dir": str(job.pred_dir.resolve()),
            "gt_dir": str(job.dataset.gt.resolve()),
            "num_images": len(pairs),
            "missing_predictions": job.pairing.missing,
            "unmatched_predictions": job.pairing.unmatched,
            "num_ground_truths": job.gt_total or len(pairs) + len(job.pairing.missing),
            "compared_on": config.compare_on,
            "problems": [p.as_dict() for p in job.scan.problems] if job.scan is not None else [],
            "skipped": job.skipped,
            "settings": {**job.settings, **derived},
            "device": str(device),
            "elapsed_s": elapsed,
            "results": results,
        }
    )


@dataclass
class SuiteResult:
    """What a run produced: ``records[dataset][family][method]``, where each came from, the files written."""

    records: dict[str, dict[str, dict[str, dict[str, Any]]]]
    computed: list[str]
    cached: list[str]
    skipped: list[str]
    written: list[Path]
    tables: str


def _device_type(name: str) -> str | None:
    """The device type of a device name, without importing torch (None for "auto", which needs torch)."""
    if name == "auto":
        return None
    return name.split(":")[0]


def _stream(job: Job, config: ReportConfig) -> DecodeStream | None:
    """The decoding of a job's pairs, started (proposal pools are read by the family core itself)."""
    if job.family == "proposals":
        return None
    return DecodeStream(distributed.shard(_tasks(job, config.resize)), config.workers)  # torchrun: this rank's


def _tasks(job: Job, resize: bool) -> list[DecodeTask]:
    formats: dict[str, Any] = {"input_format": job.input_format, "gt_format": job.gt_format}
    if job.family == "foreground":
        formats = {"resize": resize}
    elif job.family == "boundary":
        formats["resize"] = resize
    return decode_tasks(job.pairing.pairs, job.family, **formats)


def run_report(
    config: ReportConfig,
    *,
    resolve_device: Callable[[str], Any] | None = None,
    out: Callable[[str], None] = print,
    warn: Callable[[str], None] | None = None,
    file_outputs: Mapping[str, Path] | None = None,
) -> SuiteResult:
    """Evaluate a configuration and write its report (see the module doc for the order of work).

    Planning (listing, pairing, fingerprints, cache look-ups) imports no torch. The decoding workers start on the
    first combination to compute before torch and the measures are imported (~2.5 s on CPU), so that they decode
    meanwhile.

    Args:
        config: the checked configuration.
        resolve_device: ``config.device`` -> a torch device, raising :class:`InputError` for an unavailable one
            (default: ``torch.device``).
        out: where the tables and the summary go (stdout).
        warn: where warnings go (default: stderr).
        file_outputs: ``option -> path`` of the single-file outputs written after the report (``--json``,
            ``--csv``, ``--per-image-csv``), checked with the report's own against the inputs before anything runs.

    Returns:
        The records, which combinations were computed / taken from the cache / skipped, and the written files.
    """
    import importlib.util

    warn = warn or (lambda message: print(message, file=sys.stderr))
    _check_output_folder(config)
    from .measures import missing_packages

    problem = missing_packages(config.options.get("foreground", {}).get("measures"))
    if problem is not None:
        raise InputError(f"{config.source}: options.foreground.measures: {problem}")
    check_report_outputs(config, file_outputs or {})
    if config.xlsx:
        from .combined import check_xlsx

        check_xlsx()
    if config.figures and importlib.util.find_spec("matplotlib") is None:
        raise InputError("figures need matplotlib: pip install 'segmetrics-torch[plot]' (or --figures none)")
    if config.figures and config.style is not None:
        import matplotlib.style

        if config.style not in matplotlib.style.available and not Path(config.style).is_file():
            raise InputError(
                f"--style / the configuration's `style`: {config.style!r} is not a matplotlib style (available: "
                f"{', '.join(sorted(matplotlib.style.available)[:8])} ...; or a .mplstyle file)"
            )
    with _output_lock(config.output):
        return _run_checked(config, resolve_device, out, warn)


@contextlib.contextmanager
def _output_lock(folder: Path) -> Iterator[None]:
    """Hold the output folder for this run: a second run into it at the same time is an input error.

    An advisory lock (``flock``) on ``folder/.segmetrics-lock``, which holds the pid of the run that holds it: the
    kernel releases it when the process ends, however it ends, so a killed run never leaves the folder locked. Only
    the writing rank locks under torchrun. A folder this run created and left empty (it failed before writing) is
    removed again. Where ``fcntl`` does not exist (Windows) nothing is locked.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    if not distributed.is_main():
        yield
        return
    created = not folder.exists()
    folder.mkdir(exist_ok=True)
    lock_path = folder / LOCK_FILE
    handle = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(handle, 32, 0).decode("ascii", "replace").strip() or "?"
            raise InputError(
                f"another segmetrics run is writing {folder} (pid {holder}); wait for it or choose another --output"
            ) from None
        os.ftruncate(handle, 0)
        os.pwrite(handle, f"{os.getpid()}\n".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(handle, 0)
    finally:
        os.close(handle)  # releases the lock
        if created and [p.name for p in folder.iterdir()] == [LOCK_FILE]:
            lock_path.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                folder.rmdir()


def _run_checked(
    config: ReportConfig,
    resolve_device: Callable[[str], Any] | None,
    out: Callable[[str], None],
    warn: Callable[[str], None],
) -> SuiteResult:
    """:func:`run_report` once the configuration's outputs are checked and the output folder is held."""
    device = None
    device_type = _device_type(config.device)
    if device_type is None:
        device = _resolve(config.device, resolve_device)
        device_type = device.type
    jobs, skipped = _plan(config, warn, device_type)
    cache = ResultCache(config.cache, warn) if config.cache is not None else None
    records: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    found = {job.key: cache.load(job.key) for job in jobs} if cache is not None and distributed.is_main() else {}
    found = distributed.share_cached(found)  # under torchrun rank 0 reads the cache and says what to compute
    todo = [job for job in jobs if found.get(job.key) is None]
    computed, cached = [], []
    streams = {}
    start = time.perf_counter()
    try:
        if todo:
            first = todo[0]
            streams[first.key] = _stream(first, config)
        if todo:
            load_measures()  # torch and the measures load while the workers decode
        if device is None:
            device = _resolve(config.device, resolve_device)
        from tqdm.auto import tqdm

        show = config.progress and sys.stderr.isatty()
        for job in jobs:
            label = f"{job.dataset.name} / {job.family} / {job.method}"
            record = found.get(job.key)
            if record is None:
                stream = streams.pop(job.key) if job.key in streams else _stream(job, config)
                with tqdm(
                    total=len(job.pairing.pairs), desc=label, unit="img", file=sys.stderr, disable=not show, leave=True
                ) as progress:
                    try:
                        record = _compute(job, config, device, progress, stream)
                    except InputError as error:
                        raise InputError(f"{label}: {error}") from None
                    finally:
                        if stream is not None:
                            stream.close()
                if cache is not None and distributed.is_main():
                    cache.store(job.key, record, job.fingerprint)
                computed.append(label)
            else:
                cached.append(label)
            records.setdefault(job.dataset.name, {}).setdefault(job.family, {})[job.method] = record
    except KeyboardInterrupt:
        if cache is not None and computed:
            warn(f"note: {len(computed)} finished evaluation(s) are cached in {cache.root}; run again to resume")
        raise
    finally:
        for stream in streams.values():
            if stream is not None:
                stream.close()
    elapsed = time.perf_counter() - start
    if not distributed.is_main():  # under torchrun rank 0 reports and writes
        return SuiteResult(records, computed, cached, skipped, [], "")

    from .report_render import render_report

    files, tables = render_report(records, config)
    written = _write_atomically(config.output, files)
    out(tables)
    out("")
    cache_note = f" ({len(cached)} from the cache in {cache.root})" if cache is not None and cached else ""
    out(
        f"Evaluated {len(jobs)} (dataset, family, method) combination(s) on {device}: {len(computed)} computed"
        f"{cache_note}, in {elapsed:.2f} s."
    )
    for line in skipped:
        out(f"Not evaluated: {line}")
    top = sorted({p.relative_to(config.output).parts[0] + ("/" if p.parent != config.output else "")
                  for p in written if p.is_relative_to(config.output)})  # fmt: skip
    out(f"Wrote {len(written)} file(s) to {config.output}: {', '.join(top)}")
    return SuiteResult(records, computed, cached, skipped, written, tables)


def _resolve(name: str, resolve_device: Callable[[str], Any] | None) -> Any:
    if resolve_device is not None:
        return resolve_device(name)
    import torch

    try:
        return torch.device(name)
    except (RuntimeError, ValueError):
        raise InputError(f"unknown device {name!r} (use cpu, cuda, cuda:N or auto)") from None


def _check_output_folder(config: ReportConfig) -> None:
    out = config.output
    if out.exists() and not out.is_dir():
        raise InputError(f"the output {out} is a file; give a folder")
    if not out.exists() and not out.parent.is_dir():
        raise InputError(f"the output folder {out}: its parent {out.parent} does not exist")
    if config.cache is not None and config.cache.exists() and not config.cache.is_dir():
        raise InputError(f"the cache {config.cache} is a file; give a folder")


def check_report_outputs(config: ReportConfig, file_outputs: Mapping[str, Path]) -> None:
    """No output of the report (its folder, its cache, ``--json`` / ``--csv`` / ``--per-image-csv``) replaces,
    deletes or pollutes an input: a ground-truth, prediction or class folder, or the configuration file (see
    :mod:`~segmetrics_torch.app.output_safety`)."""
    from .output_safety import FolderOutput, InputFile, InputFolder, check_outputs, report_folder

    inputs: list[InputFolder] = []
    for dataset in config.datasets:
        inputs.append(InputFolder(f"the ground-truth folder of {dataset.name}", dataset.gt))
        if dataset.gt_classes is not None:
            inputs.append(InputFolder(f"the class folder of {dataset.name}", dataset.gt_classes))
        for method in config.methods:
            for family in dataset.families:
                folder = method.folder(dataset.name, family)
                if folder is not None:
                    inputs.append(InputFolder(f"the prediction folder of {method.name} on {dataset.name}", folder))
    default_cache = config.cache is not None and config.cache == config.output / "cache"
    folders = [report_folder(config.output, "the output folder", default_cache=default_cache)]
    if config.cache is not None and not default_cache:
        folders.append(FolderOutput("the cache folder", config.cache))
    sources = [InputFile("the configuration file", config.config_file)] if config.config_file is not None else []
    files = {("--" + option.replace("_", "-")): path for option, path in file_outputs.items()}
    check_outputs(files, folders=folders, inputs=inputs, input_files=sources, cache=config.cache)
    from .tables import check_csv_outputs

    check_csv_outputs(files)


#: the list of files a report wrote, in its folder: the next report removes those it does not write again
MANIFEST = ".segmetrics-manifest.json"
#: the lock file of a report folder (see ``_output_lock``)
LOCK_FILE = ".segmetrics-lock"


def _write_atomically(folder: Path, files: Mapping[str, Callable[[Path], None]]) -> list[Path]:
    """Render every file into a temporary folder inside ``folder``, then move them into place (``os.replace``).

    The report is a set: the files the previous report listed in its manifest and this one does not write (a dataset
    dropped from the configuration, figures after ``--figures none``) are removed, so no table or figure is left
    that the new ``tables.md`` does not describe. Files the report never wrote are not touched.
    """
    folder.mkdir(exist_ok=True)
    # a run killed (SIGKILL, power loss) while writing leaves its temporary folder behind: the next run into the same
    # output removes it (one run writes one output folder at a time, as documented)
    for stale in folder.glob(".segmetrics-report-*"):
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)
    temp = Path(tempfile.mkdtemp(prefix=".segmetrics-report-", dir=folder))
    try:
        for relative, write in files.items():
            target = temp / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            write(target)
        written = []
        for relative in files:
            final = folder / relative
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(temp / relative, final)
            written.append(final)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    _replace_manifest(folder, sorted(files))
    return written


def _replace_manifest(folder: Path, relatives: list[str]) -> list[str]:
    """Remove the previous report's files that ``relatives`` does not name, then record ``relatives``."""
    from .output_safety import report_owns

    manifest = folder / MANIFEST
    removed = []
    try:
        previous = json.loads(manifest.read_text(encoding="utf-8")).get("files", [])
    except (OSError, ValueError, AttributeError):
        previous = []  # no manifest (first report, or one of an older version): nothing is known to be stale
    keep = set(relatives)
    root = folder.resolve()
    for relative in previous:
        if not isinstance(relative, str) or relative in keep or not report_owns(relative):
            continue  # a manifest names only files a report writes: anything else there is not removed
        path = (folder / relative).resolve()
        if root not in path.parents or not path.is_file():  # only files inside the report folder
            continue
        path.unlink()
        removed.append(relative)
        parent = path.parent
        while parent != root and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    text = json.dumps({"format": "segmetrics-report-manifest/1", "files": relatives}, indent=1)
    handle, temp = make_temporary_file(folder, ".manifest-")
    with os.fdopen(handle, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    os.replace(temp, manifest)
    return removed


# --------------------------------------------------------------------------------------------- command line


def add_report_arguments(
    evaluate: argparse.ArgumentParser, positive_int: Callable[[str], int], non_negative_int: Callable[[str], int]
) -> None:
    """The options of ``segmetrics evaluate`` itself (the many-methods run); dests start with ``report_``."""
    group = evaluate.add_argument_group(
        "evaluation report (many methods x datasets)",
        "segmetrics evaluate --config eval.yaml [options], or for one dataset: segmetrics evaluate --gt DIR --pred "
        "[NAME=]DIR [--pred [NAME=]DIR ...] --family foreground|boundary|partition|proposals [options]. Command-line "
        "options override the file's.",
    )
    group.add_argument("--config", dest="report_config", metavar="FILE", help="YAML or JSON configuration")
    group.add_argument(
        "--datasets-json",
        dest="report_datasets_json",
        metavar="FILE",
        help="PySODEvalToolkit's dataset configuration (JSON), read as it is; with --methods-json",
    )
    group.add_argument(
        "--methods-json",
        dest="report_methods_json",
        metavar="FILE",
        help="PySODEvalToolkit's method configuration (JSON), read as it is; with --datasets-json",
    )
    group.add_argument("--gt", dest="report_gt", metavar="DIR", help="one dataset: its ground-truth folder")
    group.add_argument(
        "--pred",
        dest="report_pred",
        action="append",
        metavar="[NAME=]DIR",
        help="one dataset: a method's prediction folder (repeat for each method)",
    )
    group.add_argument(
        "--family",
        dest="report_family",
        metavar="LIST",
        help="one dataset: families, comma-separated (foreground (alias sod), boundary, partition, proposals; "
        "default: foreground)",
    )
    group.add_argument(
        "--dataset",
        dest="report_dataset",
        metavar="NAME",
        help="one dataset: its name (default: from the ground-truth path, e.g. COD10K-v3/Test/GT_Object -> COD10K)",
    )
    group.add_argument(
        "--gt-labels",
        dest="report_gt_labels",
        action="store_true",
        help="one dataset: boundary ground truth images are label maps",
    )
    group.add_argument(
        "--output",
        dest="report_output",
        metavar="DIR",
        help="report folder (default: the file's `output`, else ./segmetrics-report)",
    )
    group.add_argument("--device", dest="report_device", metavar="NAME", help="cpu, cuda, cuda:N or auto")
    group.add_argument(
        "--batch-size",
        dest="report_batch_size",
        type=positive_int,
        metavar="N",
        help="images per update (default: foreground 16, boundary / partition 8)",
    )
    group.add_argument(
        "--workers",
        dest="report_workers",
        type=non_negative_int,
        metavar="N",
        help=f"processes that decode the image files while the measures run (default here: {default_workers()}; "
        "one fewer than the machine's cores, at most 4); 0 decodes in the main process",
    )
    from .prescan import add_input_options

    add_input_options(group, "report_", unset=True)
    group.add_argument(
        "--compare-on",
        dest="report_compare_on",
        choices=("common", "each"),
        help="foreground, with --allow-missing / --skip-bad: compare the methods of a dataset on the images they all "
        "have (common, default; the tables say so) or each on its own images (each; counts in every table)",
    )
    group.add_argument(
        "--json", dest="report_json", metavar="FILE",
        help="also write every record (numbers, curves, per-image scores) to FILE, as the single-folder form",
    )  # fmt: skip
    group.add_argument(
        "--csv", dest="report_csv", metavar="FILE",
        help="merge the foreground rows (method, dataset, images, measures) into FILE, as the single-folder form",
    )  # fmt: skip
    group.add_argument(
        "--per-image-csv", dest="report_per_image_csv", metavar="FILE",
        help="merge the foreground per-image rows into FILE, as the single-folder form",
    )  # fmt: skip
    group.add_argument("--cache", dest="report_cache", metavar="DIR", help="cache folder (default: OUTPUT/cache)")
    group.add_argument("--no-cache", dest="report_no_cache", action="store_true", help="neither read nor write a cache")
    group.add_argument(
        "--cache-check",
        dest="report_cache_check",
        choices=("stat", "content"),
        help="how files are recognised: stat = names, sizes, mtimes (default); content = SHA-256",
    )
    group.add_argument(
        "--figures",
        dest="report_figures",
        metavar="LIST",
        help="figure formats, comma-separated of png,pdf,svg, or none (default: png,pdf)",
    )
    group.add_argument("--no-progress", dest="report_no_progress", action="store_true", help="no progress bars")
    group.add_argument(
        "--xlsx", dest="report_xlsx", action="store_true", default=None,
        help="also write the combined table as combined.xlsx (needs openpyxl: pip install 'segmetrics-torch[xlsx]')",
    )  # fmt: skip
    group.add_argument(
        "--method-order", dest="report_method_order", metavar="LIST",
        help="comma-separated method names: the order of table rows and legends (others follow)",
    )  # fmt: skip
    group.add_argument("--highlight", dest="report_highlight", metavar="METHOD",
                       help="draw this method's curves thick and on top (your method)")  # fmt: skip
    group.add_argument(
        "--style", dest="report_style", metavar="NAME",
        help="a matplotlib style for the figures (e.g. seaborn-v0_8-paper, or a .mplstyle file)",
    )  # fmt: skip
    group.add_argument(
        "--measures", dest="report_measures", metavar="LIST",
        help=f"the foreground tables' measures, comma-separated, of {','.join(FOREGROUND_MEASURES)} (as "
        "options.foreground.measures; default: the 11 of today's table)",
    )  # fmt: skip


def _pred_argument(text: str, dataset: str, gt: Path) -> tuple[str, str]:
    from .prescan import method_name

    name, sep, folder = text.partition("=")
    if not sep:
        folder = text
        name = method_name(text, dataset, gt)
    if not name or not folder:
        raise InputError(f"--pred {text!r}: expected DIR or NAME=DIR")
    return name, folder


def config_from_args(args: argparse.Namespace) -> ReportConfig:
    """The configuration of ``segmetrics evaluate`` options: the file's (``--config``) or one dataset's, then the
    command-line overrides."""
    single = args.report_gt is not None or args.report_pred or args.report_family or args.report_dataset
    toolkit = [getattr(args, f"report_{k}_json", None) for k in ("datasets", "methods")]
    if any(toolkit):
        if not all(toolkit):
            raise InputError("PySODEvalToolkit's configurations come in two files: give --datasets-json and "
                             "--methods-json")  # fmt: skip
        if args.report_config is not None or single:
            raise InputError("give --datasets-json/--methods-json, --config, or --gt/--pred, one of them")
        from .pysod_toolkit import toolkit_configuration

        data = {**toolkit_configuration(str(toolkit[0]), str(toolkit[1])), "output": "segmetrics-report"}
        config = config_from_mapping(data, Path.cwd(), "PySODEvalToolkit configuration")
    elif args.report_config is not None and single:
        raise InputError("give --config, or --gt/--pred/--family for one dataset, not both")
    elif args.report_config is not None:
        config = load_config(args.report_config)
    else:
        if args.report_gt is None or not args.report_pred:
            raise InputError("one dataset needs --gt DIR and at least one --pred [NAME=]DIR (or give --config FILE)")
        from .prescan import dataset_name

        families = (args.report_family or "foreground").split(",")
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
                    "families": [f.strip() for f in families],
                    "gt_labels": bool(args.report_gt_labels),
                }
            },
            "methods": methods,
            "output": "segmetrics-report",
        }
        config = config_from_mapping(data, Path.cwd(), "command line")
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
        config.figures = _figure_formats("none" if value == "none" else [f.strip() for f in value.split(",")])
    config.progress = not args.report_no_progress
    overrides = {}
    if args.report_xlsx is not None:
        overrides["xlsx"] = args.report_xlsx
    if args.report_method_order is not None:
        overrides["method_order"] = [m.strip() for m in args.report_method_order.split(",") if m.strip()]
    if args.report_highlight is not None:
        overrides["highlight"] = args.report_highlight
    if args.report_style is not None:
        overrides["style"] = args.report_style
    if args.report_measures is not None:
        measures = parse_foreground_measures(args.report_measures, "--measures")
        config.options["foreground"] = {**config.options["foreground"], "measures": measures}
    flags = {"xlsx": "--xlsx", "method_order": "--method-order", "highlight": "--highlight", "style": "--style"}
    errors: list[str] = []
    _presentation(config, overrides, "command line", errors)
    for i, error in enumerate(errors):
        key = next(k for k in flags if f": {k}:" in error)
        errors[i] = error.replace(f"command line: {key}:", f"{flags[key]}:")
    _raise_all(errors, "the command line")
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
    from .outputs import check_output

    outputs = {}
    for option in ("json", "csv", "per_image_csv"):
        path = check_output(getattr(args, f"report_{option}", None), "--" + option.replace("_", "-"))
        if path is not None:
            outputs[option] = path
    return outputs


def _write_file_outputs(result: SuiteResult, outputs: Mapping[str, Path]) -> None:
    """The single-folder form's files from a report's records: ``--json`` (results.json's records), ``--csv`` and
    ``--per-image-csv`` (the foreground rows, merged by method and dataset as ``evaluate foreground`` merges them)."""
    from .report_render import table_columns, table_row
    from .tables import upsert_csv, write_json

    if "json" in outputs:
        write_json(outputs["json"], {"results": result.records})
        print(f"Wrote {outputs['json']}")
    rows, images = [], []
    for dataset, families in result.records.items():
        by_method = families.get("foreground", {})
        if not by_method:
            continue
        keys = [key for key, _ in table_columns("foreground", by_method)[0]]
        for method, record in by_method.items():
            values = table_row("foreground", record["results"])
            rows.append({"method": method, "dataset": dataset, "num_images": record["num_images"],
                         **{k: values.get(k) for k in keys}})  # fmt: skip
            for image, scores in (record["results"].get("per_image") or {}).items():
                images.append({"method": method, "dataset": dataset, "image": image,
                               **{k: scores[k] for k in keys if k in scores}})  # fmt: skip
    if "csv" in outputs:
        upsert_csv(outputs["csv"], rows, ("method", "dataset"), "--csv")
        print(f"Wrote {outputs['csv']} ({len(rows)} foreground row(s) of this run merged in)")
    if "per_image_csv" in outputs:
        upsert_csv(outputs["per_image_csv"], images, ("method", "dataset", "image"), "--per-image-csv")
        print(f"Wrote {outputs['per_image_csv']} ({len(images)} row(s) of this run merged in)")


