"""Evaluation reports of the protocol families: methods x datasets of semantic boundaries and of DAVIS.

``segmetrics evaluate semantic-boundary --config FILE`` and ``segmetrics evaluate davis --config FILE`` run through
this module, and a script can too: :func:`load_protocol_config` reads and checks a configuration,
:func:`run_protocol_report` evaluates every (dataset, method) pair and writes the report folder. The report looks
like the other families' (``segmetrics evaluate --config``, :mod:`.report`): ``results.json`` (the configuration and
every number), ``tables.md`` / ``tables.tex`` (a table per dataset), ``combined.md`` / ``combined.tex`` /
``csv/combined_<family>.csv`` (methods as rows, every dataset's measures as columns, the top three marked),
``csv/<dataset>_<family>.csv``, per (method, dataset) CSVs and figures. The measures and their directions are the
registry's (:func:`segmetrics_torch.registry.report_columns`): mF (ODS), mF (OIS), mAP for semantic boundaries; the
DAVIS global row for DAVIS (the Decays lower is better).

A **dataset** is, for semantic boundaries, a ground-truth folder with its layout and protocol::

    datasets:
      SBD-val: {gt: SBD/dataset, dataset: sbd, preset: matlab, ids: SBD/dataset/val.txt}
      Cityscapes-val: {gt: cityscapes/gtFine/val, dataset: cityscapes, preset: post-seal, thin: false}

(keys: ``gt``, ``dataset`` (sbd or cityscapes), ``preset`` (matlab, pre-seal, post-seal; default post-seal),
``thin``, ``instance_sensitive``, ``classes`` (numbers or names), ``ids`` (a file of image ids), and any protocol
field: ``thresholds``, ``max_dist``, ``kill_internal``, ``skip_if_nonexistent``, ``ignore_border``, ``radius``,
``scale``); for DAVIS a (root, set, task)::

    datasets:
      DAVIS17-val: {root: DAVIS, set: val, task: semi-supervised}
      DAVIS17-unsup: {root: DAVIS, set: val, task: unsupervised}

(keys: ``root``, ``set`` (default val), ``task``, ``resolution``, ``sequences``, ``decay_edges``, ``max_proposals``,
``bound_th``; top-level ``device``, ``workers``, ``chunk_frames``). A **method** is a folder per dataset: a template
(``results/CASENet/{dataset}``) or a mapping ``{dataset: folder}`` (a dataset it does not name is not evaluated for
it). Top-level presentation keys as in every report: ``output`` (default ``segmetrics-report``), ``figures``
(``[png, pdf]``, or false), ``digits`` (3), ``method_order``. Relative paths are relative to the configuration's
folder.

The rules are those of every report: the YAML / JSON file may not repeat a key in a mapping; every mistake is
named at once with the key's path (``eval.yaml: datasets.SBD.preset: expected ...``); no output replaces or lies
inside an input (:mod:`.output_safety`, checked before anything runs); the files are rendered into a temporary
folder and moved into place, so an error or an interruption writes nothing, and the files of a previous report
that this one does not write again are removed (those it lists in its manifest, nothing else).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.util
import math
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from .. import __version__
from ..errors import InputError, shown_value
from ..functional import davis_global_csv, davis_per_sequence_csv, evaluate_davis
from ..functional.semantic_boundary import (
    class_numbers,
    class_pr_curves,
    evaluate_semantic_boundary_folders,
    per_image_rows,
    semantic_boundary_protocol,
    summary_rows,
)
from ..registry import lower_is_better, report_columns
from .combined import LATEX_MACROS, combine, format_combined_latex, format_combined_markdown, write_combined_csv
from .figures import plot_pr_curves
from .files import slug
from .named_inputs import read_config_mapping, read_text_file
from .output_safety import InputFile, InputFolder, check_outputs, report_folder
from .report import check_report_folder, write_report_folder
from .tables import format_latex_table, format_markdown_table, format_table, write_csv, write_json, write_rows
from .video_figures import plot_davis_per_sequence

__all__ = [
    "PROTOCOL_FAMILIES",
    "ProtocolDataset",
    "ProtocolMethod",
    "ProtocolReportConfig",
    "check_protocol_report_outputs",
    "evaluate_protocol_grid",
    "load_protocol_config",
    "protocol_config_from_mapping",
    "render_protocol_report",
    "resolved_device_name",
    "run_protocol_report",
]

#: the families of this module and their registry family (the table's columns and directions)
PROTOCOL_FAMILIES: Mapping[str, str] = {"semantic-boundary": "semantic-boundary", "davis": "video"}
_TITLES = {"semantic-boundary": "semantic boundaries (class means)", "davis": "video object segmentation (DAVIS)"}

#: the protocol fields a semantic-boundary dataset entry may override: (check, expected)
_SB_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "thresholds": (lambda v: _is_int(v) and v >= 1, "a positive integer"),
    "max_dist": (lambda v: _is_number(v) and v > 0, "a positive number (fraction of the diagonal, or pixels >= 1)"),
    "kill_internal": (lambda v: isinstance(v, bool), "true or false"),
    "skip_if_nonexistent": (lambda v: isinstance(v, bool), "true or false"),
    "ignore_border": (lambda v: _is_int(v) and v >= 0, "a non-negative integer"),
    "radius": (lambda v: _is_number(v) and v > 0, "a positive number"),
    "scale": (lambda v: _is_number(v) and 0 < v <= 1, "a number in (0, 1]"),
}
_SB_KEYS = ("gt", "dataset", "preset", "thin", "instance_sensitive", "classes", "ids", *_SB_FIELDS)
_DAVIS_KEYS = ("root", "set", "task", "resolution", "sequences", "decay_edges", "max_proposals", "bound_th")
_COMMON_TOP = ("datasets", "methods", "output", "figures", "digits", "method_order")
_DAVIS_TOP = ("device", "workers", "chunk_frames")
_FIGURE_FORMATS = ("png", "pdf", "svg")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


# --------------------------------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class ProtocolDataset:
    """One dataset of a report: its name, its checked settings (semantic boundaries: ``gt``, ``dataset``,
    ``protocol`` (a :class:`~segmetrics_torch.functional.semantic_boundary.SemanticBoundaryProtocol`), ``classes``,
    ``ids``, ``ids_file``; DAVIS: ``root`` and the keyword arguments of
    :func:`~segmetrics_torch.functional.evaluate_davis`) and the input folder it reads (``root`` / ``gt``)."""

    name: str
    settings: Mapping[str, Any]
    input_folder: Path


@dataclass(frozen=True)
class ProtocolMethod:
    """A method: its folder on each dataset it is evaluated on."""

    name: str
    folders: Mapping[str, Path]


@dataclass
class ProtocolReportConfig:
    """A checked configuration of a report of ``family`` ("semantic-boundary" or "davis")."""

    family: str
    datasets: list[ProtocolDataset]
    methods: list[ProtocolMethod]
    output: Path
    figures: tuple[str, ...] = ("png", "pdf")
    digits: int = 3
    method_order: list[str] = field(default_factory=list)
    #: DAVIS: where the counts run ("cpu", "cuda", "cuda:N", "auto"), PNG-decoding threads, frames at a time
    device: str = "cpu"
    workers: int = 2
    chunk_frames: int = 32
    source: str = "configuration"
    config_file: Path | None = None

    def pairs(self) -> list[tuple[ProtocolDataset, ProtocolMethod, Path]]:
        """The (dataset, method, folder) pairs to evaluate, datasets in order, methods in ``method_order`` first."""
        order = {name: i for i, name in enumerate(self.method_order)}
        methods = sorted(self.methods, key=lambda m: order.get(m.name, len(order)))
        return [(d, m, m.folders[d.name]) for d in self.datasets for m in methods if d.name in m.folders]


class _Mistakes(InputError):
    """Every mistake of a configuration, one per line after a count (one mistake: that line)."""

    def __init__(self, mistakes: list[str], source: str) -> None:
        lines = mistakes if len(mistakes) == 1 else [f"{len(mistakes)} mistakes in {source}:", *mistakes]
        super().__init__("\n  ".join(lines))
        self.mistakes = mistakes


@contextlib.contextmanager
def _gather(errors: list[str]) -> Iterator[None]:
    try:
        yield
    except _Mistakes as error:
        errors.extend(error.mistakes)
    except InputError as error:
        errors.append(str(error))


def _expect(ok: bool, source: str, path: str, expected: str, value: Any) -> None:
    if not ok:
        raise InputError(f"{source}: {path}: expected {expected}, got {shown_value(value)}")


def load_protocol_config(path: str | Path, family: str) -> ProtocolReportConfig:
    """Read and check the configuration file ``path`` of a ``family`` report (module doc); relative paths are
    relative to its folder.

    Raises:
        InputError: every mistake, each with the key's path (:func:`protocol_config_from_mapping`).
    """
    path = Path(path)
    config = protocol_config_from_mapping(read_config_mapping(path), family, path.parent, str(path))
    config.config_file = path
    return config


def protocol_config_from_mapping(
    data: Any, family: str, base: str | Path = ".", source: str = "configuration"
) -> ProtocolReportConfig:
    """Check a parsed configuration of a ``family`` report (module doc) and resolve its paths against ``base``.

    Every independent entry is checked (each dataset, method and top-level key), and all the mistakes are reported
    together.

    Raises:
        ValueError: ``family`` is not "semantic-boundary" or "davis".
        InputError: ``eval.yaml: datasets.SBD.preset: expected ...``, one line per mistake.
    """
    if family not in PROTOCOL_FAMILIES:
        raise ValueError(f"Expected `family` to be one of {', '.join(PROTOCOL_FAMILIES)}, but got {family!r}.")
    base = Path(base)
    if not isinstance(data, Mapping):
        raise InputError(f"{source}: expected a mapping with `datasets` and `methods`, got {type(data).__name__}")
    errors: list[str] = []
    known = _COMMON_TOP + (_DAVIS_TOP if family == "davis" else ())
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        errors.append(f"{source}: unknown key(s) {', '.join(unknown)} (known: {', '.join(known)})")
    named = {key: isinstance(data.get(key), Mapping) and bool(data[key]) for key in ("datasets", "methods")}
    for key in ("datasets", "methods"):
        if not named[key]:
            errors.append(f"{source}: {key}: expected a non-empty mapping of names, got {shown_value(data.get(key))}")

    datasets: list[ProtocolDataset] = []
    for name, entry in data["datasets"].items() if named["datasets"] else ():
        with _gather(errors):
            check = _sb_dataset if family == "semantic-boundary" else _davis_dataset
            datasets.append(check(str(name), entry, base, source))
    dataset_names = [str(n) for n in data["datasets"]] if named["datasets"] else []
    method_names = [str(n) for n in data["methods"]] if named["methods"] else []
    errors += _shared_file_names(dataset_names, "datasets", source)
    errors += _shared_file_names(method_names, "methods", source)
    methods: list[ProtocolMethod] = []
    for name, entry in data["methods"].items() if named["methods"] and named["datasets"] else ():
        with _gather(errors):
            methods.append(_method(str(name), entry, dataset_names, base, source))

    config = ProtocolReportConfig(family, datasets, methods, base / str(data.get("output", "segmetrics-report")))
    config.source = source
    _top_level(config, data, method_names, errors)
    if errors:
        raise _Mistakes(errors, source)
    return config


def _top_level(config: ProtocolReportConfig, data: Mapping[str, Any], methods: list[str], errors: list[str]) -> None:
    source = config.source
    checks: list[tuple[str, Callable[[Any], bool], str]] = [
        ("output", lambda v: isinstance(v, str) and bool(v), "a folder path"),
        ("digits", lambda v: _is_int(v) and 1 <= v <= 10, "an integer from 1 to 10"),
        ("method_order", lambda v: isinstance(v, list) and all(m in methods for m in v), f"a list of {methods}"),
        ("device", lambda v: isinstance(v, str) and re.fullmatch(r"cpu|auto|cuda(:\d+)?", v) is not None, "cpu, cuda, "
         "cuda:N or auto"),
        ("workers", lambda v: _is_int(v) and v >= 1, "a positive integer"),
        ("chunk_frames", lambda v: _is_int(v) and v >= 1, "a positive integer"),
    ]  # fmt: skip
    for key, check, expected in checks:
        if key in data and (key not in _DAVIS_TOP or config.family == "davis"):
            with _gather(errors):
                _expect(check(data[key]), source, key, expected, data[key])
                if key != "output":
                    setattr(config, key, list(data[key]) if key == "method_order" else data[key])
    if "figures" in data:
        value = data["figures"]
        formats = [] if value is False else [value] if isinstance(value, str) else value
        ok = isinstance(formats, list) and all(f in _FIGURE_FORMATS for f in formats)
        with _gather(errors):
            _expect(ok, source, "figures", f"false or a list of {', '.join(_FIGURE_FORMATS)}", value)
            config.figures = tuple(dict.fromkeys(formats))


def _shared_file_names(names: Sequence[str], what: str, source: str) -> list[str]:
    """A mistake per name whose files (named by :func:`~.files.slug`, letter case aside) would be an earlier name's:
    the per-(method, dataset) files carry both names."""
    first: dict[str, str] = {}
    mistakes = []
    for name in names:
        stem = slug(name).casefold()
        if stem in first:
            mistakes.append(
                f"{source}: {what}: {first[stem]!r} and {name!r} would write their files under one name "
                f"({slug(name)!r}, letter case aside): rename one of them"
            )
        first.setdefault(stem, name)
    return mistakes


def _entry(name: str, entry: Any, keys: Sequence[str], required: Sequence[str], source: str) -> Mapping[str, Any]:
    path = f"datasets.{name}"
    _expect(isinstance(entry, Mapping), source, path, f"a mapping with {', '.join(required)}", entry)
    errors = []
    extra = sorted(str(k) for k in entry if k not in keys)
    if extra:
        errors.append(f"{source}: {path}: unknown key(s) {', '.join(extra)} (known: {', '.join(keys)})")
    errors += [f"{source}: {path}.{key}: missing" for key in required if key not in entry]
    if errors:
        raise _Mistakes(errors, source)
    return entry


def _sb_dataset(name: str, entry: Any, base: Path, source: str) -> ProtocolDataset:

    entry = _entry(name, entry, _SB_KEYS, ("gt", "dataset"), source)
    path = f"datasets.{name}"
    errors: list[str] = []
    checks: list[tuple[str, Callable[[Any], bool], str]] = [
        ("gt", lambda v: isinstance(v, str) and bool(v), "a folder path"),
        ("dataset", lambda v: v in ("sbd", "cityscapes"), "sbd or cityscapes"),
        ("preset", lambda v: v in ("matlab", "pre-seal", "post-seal"), "matlab, pre-seal or post-seal"),
        ("thin", lambda v: isinstance(v, bool), "true or false"),
        ("instance_sensitive", lambda v: v is None or isinstance(v, bool), "true, false or null (the preset's)"),
        ("classes", lambda v: isinstance(v, list) and bool(v), "a list of class numbers or names"),
        ("ids", lambda v: isinstance(v, str) and bool(v), "a file of image ids, one a line"),
        *((key, check, expected) for key, (check, expected) in _SB_FIELDS.items()),
    ]
    for key, check, expected in checks:
        if key in entry:
            with _gather(errors):
                _expect(check(entry[key]), source, f"{path}.{key}", expected, entry[key])
    if errors:
        raise _Mistakes(errors, source)
    overrides = {key: entry[key] for key in _SB_FIELDS if key in entry}
    preset = entry.get("preset", "post-seal")
    try:
        protocol = semantic_boundary_protocol(
            preset, entry["dataset"], thin=entry.get("thin", True), instance_sensitive=entry.get("instance_sensitive"),
            **overrides,
        )  # fmt: skip
    except ValueError as error:
        raise InputError(f"{source}: {path}: preset {preset} on {entry['dataset']}: {error}") from None
    classes = None
    if "classes" in entry:
        try:
            classes = class_numbers(entry["classes"], entry["dataset"])
        except ValueError as error:
            raise InputError(f"{source}: {path}.classes: {error}") from None
    ids, ids_file = None, None
    if "ids" in entry:  # read now: a named input (no output may replace it), and an empty list is a mistake now
        ids_file = base / entry["ids"]
        ids = [line.strip() for line in read_text_file(ids_file, f"{path}.ids").splitlines() if line.strip()]
        if not ids:
            raise InputError(f"{source}: {path}.ids: {ids_file} lists no image id")
    gt = base / entry["gt"]
    settings = {"gt": gt, "dataset": entry["dataset"], "protocol": protocol, "classes": classes, "ids": ids}
    return ProtocolDataset(name, {**settings, "ids_file": ids_file}, gt)


def _davis_dataset(name: str, entry: Any, base: Path, source: str) -> ProtocolDataset:
    entry = _entry(name, entry, _DAVIS_KEYS, ("root", "task"), source)
    path = f"datasets.{name}"
    errors: list[str] = []
    checks: list[tuple[str, Callable[[Any], bool], str]] = [
        ("root", lambda v: isinstance(v, str) and bool(v), "the DAVIS folder (ImageSets, Annotations)"),
        ("set", lambda v: isinstance(v, str) and re.fullmatch(r"[\w-]+", v) is not None, "a set name (val, ...)"),
        ("task", lambda v: v in ("semi-supervised", "unsupervised"), "semi-supervised or unsupervised"),
        ("resolution", lambda v: v in ("480p", "Full-Resolution"), "480p or Full-Resolution"),
        ("sequences", lambda v: isinstance(v, list) and bool(v) and all(isinstance(s, str) and s for s in v),
         "a list of sequence names"),
        ("decay_edges", lambda v: v in ("reference", "corrected"), "reference or corrected"),
        ("max_proposals", lambda v: _is_int(v) and v >= 1, "a positive integer"),
        ("bound_th", lambda v: _is_number(v) and v > 0, "a positive number"),
    ]  # fmt: skip
    for key, check, expected in checks:
        if key in entry:
            with _gather(errors):
                _expect(check(entry[key]), source, f"{path}.{key}", expected, entry[key])
    if errors:
        raise _Mistakes(errors, source)
    root = base / entry["root"]
    settings = {"root": root, "subset": entry.get("set", "val")}
    settings |= {key: entry[key] for key in ("task", *_DAVIS_KEYS[3:]) if key in entry}
    return ProtocolDataset(name, settings, root)


def _method(name: str, entry: Any, datasets: Sequence[str], base: Path, source: str) -> ProtocolMethod:
    path = f"methods.{name}"
    if isinstance(entry, str) and entry:
        return ProtocolMethod(name, {d: base / entry.replace("{dataset}", d) for d in datasets})
    ok = isinstance(entry, Mapping) and bool(entry) and all(isinstance(v, str) and v for v in entry.values())
    _expect(ok, source, path, "a folder template ({dataset} replaced) or a mapping {dataset: folder}", entry)
    unknown = [str(d) for d in entry if d not in datasets]
    if unknown:
        raise InputError(f"{source}: {path}: no dataset named {', '.join(unknown)} (datasets: {', '.join(datasets)})")
    return ProtocolMethod(name, {str(d): base / folder for d, folder in entry.items()})


# ---------------------------------------------------------------------------------------------------- checking


def check_protocol_report_outputs(config: ProtocolReportConfig) -> None:
    """Before anything runs: the output folder can be made, is no input, holds no input where the report writes,
    lies inside no input tree (both families read their folders recursively), and figures can be drawn.

    Raises:
        InputError: naming the output and the input.
    """
    out = config.output
    if out.exists() and not out.is_dir():
        raise InputError(f"the output {out} is a file; give a folder")
    if not out.exists() and not out.parent.is_dir():
        raise InputError(f"the output folder {out}: its parent {out.parent} does not exist")
    # both families read their folders as trees
    role = _input_role(config.family)
    inputs = [InputFolder(f"the {role} of {d.name}", d.input_folder, tree=True) for d in config.datasets]
    inputs += [InputFolder(f"the folder of {m.name} on {d.name}", f, tree=True) for d, m, f in config.pairs()]
    files = [InputFile("the configuration file", config.config_file)] if config.config_file is not None else []
    check_outputs({}, folders=[report_folder(out, "the output folder")], inputs=inputs, input_files=files)
    check_report_folder(out, option="the output folder")
    if config.figures and importlib.util.find_spec("matplotlib") is None:
        raise InputError("figures need matplotlib: pip install 'segmetrics-torch[plot]' (or `figures: false`)")


def _input_role(family: str) -> str:
    return "ground-truth folder" if family == "semantic-boundary" else "DAVIS root"


# ----------------------------------------------------------------------------------------------------- running


def resolved_device_name(device: Any) -> str:
    """The device a run used, as a typed name: ``"cpu"``, ``"cuda:0"`` (a CUDA device without an index is the
    current one), never the option's text (``"auto"``).

    Example:
        >>> import torch
        >>> resolved_device_name(torch.device("cpu"))
        'cpu'
    """

    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return str(device)


@dataclass
class _Evaluated:
    """One (dataset, method) pair: the JSON record, the table row, its own files and figure."""

    record: dict[str, Any]
    row: dict[str, float]
    files: dict[str, Callable[[Path], Any]] = field(default_factory=dict)
    draw: Callable[[list[Path]], Any] | None = None


def _semantic_boundary(dataset: ProtocolDataset, method: str, folder: Path, stem: str) -> _Evaluated:

    s = dataset.settings
    start = time.perf_counter()
    result = evaluate_semantic_boundary_folders(folder, s["gt"], s["protocol"], classes=s["classes"], ids=s["ids"])
    elapsed = time.perf_counter() - start
    record = {
        "dataset": dataset.name,
        "method": method,
        "pred_dir": str(folder.resolve()),
        "gt_dir": str(Path(s["gt"]).resolve()),
        "layout": s["dataset"],
        "ids_file": None if s["ids_file"] is None else str(Path(s["ids_file"]).resolve()),
        "protocol": dataclasses.asdict(result.protocol),
        "num_images": len(result.ids),
        "ids": result.ids,
        "classes": result.classes,
        "class_names": result.class_names,
        "elapsed_s": elapsed,
        "results": result.summary,
    }
    mean = result.summary["mean"]
    row = {f"mean/{k}": float(mean[k]) for k in ("ods_f", "ois_f", "ap")}
    curves = class_pr_curves(result)
    files: dict[str, Callable[[Path], Any]] = {
        f"csv/{stem}_classes.csv": functools.partial(write_csv, rows=summary_rows(result), index_header="class"),
        f"csv/{stem}_per_image.csv": functools.partial(write_rows, rows=per_image_rows(result)),
    }
    title = f"{method} on {dataset.name}"

    def draw(paths: list[Path]) -> None:
        plot_pr_curves(curves, paths if len(paths) > 1 else paths[0], summary="ODS", title=title, iso_f=True)

    return _Evaluated(record, row, files, draw)


def _davis(dataset: ProtocolDataset, method: str, folder: Path, stem: str, config: ProtocolReportConfig,
           device: Any) -> _Evaluated:  # fmt: skip

    s = dict(dataset.settings)
    root = s.pop("root")
    start = time.perf_counter()
    result = evaluate_davis(
        root, folder, device=device, chunk_frames=config.chunk_frames, workers=config.workers, **s
    )  # fmt: skip
    row = result.global_results()
    elapsed = time.perf_counter() - start
    per_sequence = result.per_sequence()
    record = {
        "dataset": dataset.name,
        "method": method,
        "davis_root": str(Path(root).resolve()),
        "results_dir": str(folder.resolve()),
        "settings": {**s, "device": resolved_device_name(device), "chunk_frames": config.chunk_frames},
        "sequences": list(result.sequences),
        "num_images": len(result.objects),  # the table's count: DAVIS averages over objects
        "elapsed_s": elapsed,
        "global": row,
        "per_sequence": per_sequence,
        "objects": result.object_rows(),
    }
    subset = s["subset"]
    texts = {"global_results": davis_global_csv(result), "per-sequence_results": davis_per_sequence_csv(result)}
    files = {f"csv/{stem}_{k}-{subset}.csv": functools.partial(_write_text, text) for k, text in texts.items()}
    title = f"{method} on {dataset.name} ({s['task']}, {subset})"
    return _Evaluated(record, row, dict(files), functools.partial(_draw_sequences, per_sequence, title))


def _draw_sequences(per_sequence: Mapping[str, Any], title: str, paths: list[Path]) -> None:

    plot_davis_per_sequence(per_sequence, paths if len(paths) > 1 else paths[0], title=title)


def _write_text(text: str, path: Path) -> None:
    path.write_text(text, encoding="utf-8")


def evaluate_protocol_grid(
    config: ProtocolReportConfig, *, device: Any = None, out: Callable[[str], None] | None = None
) -> dict[str, dict[str, Any]]:
    """Evaluate every (dataset, method) pair of ``config``: ``{dataset: {method: evaluated}}`` (the private records
    :func:`render_protocol_report` takes), datasets and methods in the configuration's order.

    Args:
        config: the checked configuration.
        device: DAVIS: the torch device (default: ``config.device``, ``"auto"`` the GPU when there is one).
        out: where a line per evaluated pair goes (default: nowhere).

    Raises:
        InputError: an input the evaluation rejects, the message prefixed with ``dataset / method``.
    """
    if config.family == "davis" and device is None:
        name = config.device
        device = torch.device("cuda" if name == "auto" and torch.cuda.is_available() else name.replace("auto", "cpu"))
    grid: dict[str, dict[str, Any]] = {}
    for dataset, method, folder in config.pairs():
        stem = f"{slug(dataset.name)}__{slug(method.name)}"
        try:
            if config.family == "semantic-boundary":
                evaluated = _semantic_boundary(dataset, method.name, folder, stem)
            else:
                evaluated = _davis(dataset, method.name, folder, stem, config, device)
        except (ValueError, FileNotFoundError) as error:  # the message names the file, sequence or frame
            raise InputError(f"{dataset.name} / {method.name}: {error}") from None
        grid.setdefault(dataset.name, {})[method.name] = evaluated
        if out is not None:
            out(f"{dataset.name} / {method.name}: evaluated in {evaluated.record['elapsed_s']:.2f} s")
    return grid


# -------------------------------------------------------------------------------------------------- rendering


def render_protocol_report(
    grid: Mapping[str, Mapping[str, Any]], config: ProtocolReportConfig
) -> tuple[dict[str, Callable[[Path], Any]], str]:
    """``({relative path: write(path)}, terminal tables)`` of an evaluated grid (:func:`evaluate_protocol_grid`)."""
    family, registry_family = config.family, PROTOCOL_FAMILIES[config.family]
    columns = list(report_columns(registry_family))  # type: ignore[arg-type]
    lower = [key for key, _ in columns if lower_is_better(registry_family, key)]  # type: ignore[arg-type]
    count = ("num_images", "images" if family == "semantic-boundary" else "objects")
    files: dict[str, Callable[[Path], Any]] = {}
    markdown, latex, terminal = ["# Evaluation report", ""], [], []
    per_dataset = {}
    for dataset, by_method in grid.items():
        rows = {m: {"num_images": float(e.record["num_images"]), **e.row} for m, e in by_method.items()}
        per_dataset[dataset] = (columns, lower, rows)
        title = f"{dataset}: {_TITLES[family]}"
        shown = [count, *columns]
        terminal.append(f"{title}\n{format_table(rows, shown)}")
        table = format_markdown_table(rows, shown, lower_is_better=lower, digits=config.digits)
        markdown += [f"## {title}", "", table, "", "Best value of each column in bold; ↑ higher is better, ↓ lower is "
                     "better.", ""]  # fmt: skip
        label = f"tab:{slug(dataset)}-{family}"
        latex.append(format_latex_table(rows, shown, lower_is_better=lower, digits=config.digits, caption=title,
                                        label=label))  # fmt: skip
        files[f"csv/{slug(dataset)}_{family}.csv"] = functools.partial(write_csv, rows=rows)
        for method, evaluated in by_method.items():
            files.update(evaluated.files)
            if config.figures and evaluated.draw is not None:
                name = f"{slug(dataset)}__{slug(method)}_{'pr' if family == 'semantic-boundary' else 'per_sequence'}"
                files[f"figures/{name}.{config.figures[0]}"] = functools.partial(
                    _draw_formats, evaluated.draw, list(config.figures)
                )
                files.update({f"figures/{name}.{fmt}": _nothing for fmt in config.figures[1:]})
                if "png" in config.figures:
                    markdown += [f"![{name}](figures/{name}.png)", ""]
    combined = combine(family, per_dataset, config.method_order, config.digits)
    legend = (
        "Methods as rows, every dataset's measures as columns; per column 1st **bold**, 2nd <ins>underlined</ins>, 3rd "
        f"_italic_ (compared as printed, {config.digits} decimals); ↑ higher is better, ↓ lower is better."
    )
    heading = f"{_TITLES[family]}: {', '.join(combined.datasets)}"
    md = ["# Combined tables", "", legend, "", f"## {heading}", "", format_combined_markdown(combined), ""]
    tex = "\n\n".join(
        ["% needs \\usepackage{booktabs} and \\usepackage{graphicx}; generated by segmetrics evaluate", LATEX_MACROS,
         format_combined_latex(combined, heading, f"tab:combined-{family}")]
    )  # fmt: skip
    files["combined.md"] = functools.partial(_write_text, "\n".join(md))
    files["combined.tex"] = functools.partial(_write_text, tex + "\n")
    files[f"csv/combined_{family}.csv"] = functools.partial(_swap, write_combined_csv, combined)
    markdown[2:2] = ["All datasets in one table: [combined.md](combined.md).", ""]
    files["tables.md"] = functools.partial(_write_text, "\n".join(markdown))
    preamble = "% needs \\usepackage{booktabs}; generated by segmetrics evaluate\n"
    files["tables.tex"] = functools.partial(_write_text, preamble + "\n\n".join(latex) + "\n")
    document = {
        "segmetrics_version": __version__,
        "generated_by": f"segmetrics evaluate {family} --config",
        "config": {
            "source": config.source,
            "family": family,
            "datasets": {d.name: _plain(d.settings) for d in config.datasets},
            "methods": {m.name: {d: str(f.resolve()) for d, f in m.folders.items()} for m in config.methods},
            "figures": list(config.figures),
            "digits": config.digits,
        },
        "results": {d: {m: e.record for m, e in by_method.items()} for d, by_method in grid.items()},
    }
    files["results.json"] = functools.partial(write_json, obj=document)
    return files, "\n\n".join(terminal)


def _plain(settings: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in settings.items():
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = dataclasses.asdict(value)
        out[key] = str(Path(value).resolve()) if isinstance(value, Path) else value
    return out


def _swap(write: Callable[[Any, Path], Any], what: Any, path: Path) -> None:
    write(what, path)


def _nothing(path: Path) -> None:
    """The other formats of a figure: saved by the first format's writer."""


def _draw_formats(draw: Callable[[list[Path]], Any], formats: list[str], path: Path) -> None:
    draw([path.with_suffix(f".{fmt}") for fmt in formats])


def run_protocol_report(
    config: ProtocolReportConfig, *, device: Any = None, out: Callable[[str], None] = print
) -> list[Path]:
    """Check the outputs, evaluate every (dataset, method) pair, print the tables and write the report folder.

    Args:
        config: the checked configuration (:func:`load_protocol_config`).
        device: DAVIS: the torch device (default: from ``config.device``).
        out: where the tables and the summary lines go.

    Returns:
        The files written.

    Raises:
        InputError: an output that would replace or lie inside an input (before anything runs), an input the
            evaluation rejects (nothing written).
    """
    check_protocol_report_outputs(config)
    start = time.perf_counter()
    grid = evaluate_protocol_grid(config, device=device)
    elapsed = time.perf_counter() - start
    files, tables = render_protocol_report(grid, config)
    written = write_report_folder(config.output, files)
    n = sum(len(by_method) for by_method in grid.values())
    out(tables)
    out("")
    out(f"Evaluated {n} (dataset, method) pair(s) in {elapsed:.2f} s.")
    top = sorted({p.relative_to(config.output).parts[0] + ("/" if p.parent != config.output else "") for p in written})
    out(f"Wrote {len(written)} file(s) to {config.output}: {', '.join(top)}")
    return written
