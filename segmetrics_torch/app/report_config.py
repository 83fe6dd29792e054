"""The evaluation report's configuration: the schema of ``eval.yaml`` / ``--config``, its checks (every mistake
named at once, with the key's path) and the YAML / JSON loaders that refuse duplicate keys."""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, shown_value
from ..reports.files import slug
from ..reports.named_inputs import read_config_mapping, read_text_file
from .family_options import OPTION_CHECKS, OPTION_DEFAULTS, is_int
from .launch import default_workers
from .runner import FAMILY_EVALUATORS

#: the families a configuration can name
FAMILIES = tuple(FAMILY_EVALUATORS)

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

FIGURE_FORMATS = ("png", "pdf", "svg")


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
    "html",
    "method_order",
    "colors",
    "highlight",
    "style",
    "digits",
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
    #: decimals of every table of the report (Markdown, LaTeX, combined), and of the comparison behind their marks
    digits: int = 3
    progress: bool = True
    source: str = "configuration"
    #: the configuration file the run was read from (``None``: built from the command line)
    config_file: Path | None = None
    #: the folder of the HTML report (``html:`` / ``--html``), None: none
    html: Path | None = None


def _where(source: str, path: str) -> str:
    return f"{source}: {path}" if path else source


def _expect(ok: bool, source: str, path: str, expected: str, value: Any) -> None:
    if not ok:
        raise InputError(f"{_where(source, path)}: expected {expected}, got {shown_value(value)}")


def _check_family_options(family: str, options: Any, source: str, path: str) -> dict[str, Any]:
    """The measure options of one family, checked (:data:`~.family_options.OPTION_CHECKS`); defaults filled in
    (:data:`~.family_options.OPTION_DEFAULTS`, those of its ``evaluate`` subcommand)."""
    _expect(isinstance(options, Mapping), source, path, "a mapping of options", options)
    allowed = OPTION_CHECKS[family]
    errors: list[str] = []
    for key, value in options.items():
        with _gather(errors):
            if key not in allowed:
                known = ", ".join(allowed) or "none"
                raise InputError(f"{_where(source, f'{path}.{key}')}: unknown option of {family} (known: {known})")
            check, expected = allowed[key]
            _expect(
                bool(check(value)),
                source,
                f"{path}.{key}",
                expected if isinstance(expected, str) else expected(value),
                value,
            )
    if family == "partition" and "thresholds" in options and "num_regions" in options:
        errors.append(f"{_where(source, path)}: give thresholds or num_regions, not both")
    if errors:  # each mistake on its own line of the configuration's listing
        raise _Mistakes(errors)
    return {**OPTION_DEFAULTS[family], **options}


def _family(name: Any) -> Any:
    return FAMILY_ALIASES.get(name, name) if isinstance(name, str) else name


#: the families a configuration or ``--family`` names, as its messages list them
FAMILY_NAMES = ", ".join(
    f"{f} (alias {a})" if (a := {v: k for k, v in FAMILY_ALIASES.items()}.get(f)) else f for f in FAMILIES
)


def family_name(name: object) -> str | None:
    """The family ``name`` spells (an alias resolved), None when it names none."""
    family = _family(name)
    return family if family in FAMILIES else None


def _families(value: Any, source: str, path: str) -> tuple[str, ...]:
    families = [value] if isinstance(value, str) else value
    _expect(
        bool(isinstance(families, list) and families and all(family_name(f) for f in families)),
        source,
        path,
        f"one or a list of {FAMILY_NAMES}",
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


def _all_family_options(options_in: Any, source: str, errors: list[str]) -> dict[str, dict[str, Any]]:
    """``options``: every family's options checked (defaults filled in), family aliases resolved; mistakes are
    added to ``errors``."""
    options: dict[str, dict[str, Any]] = {}
    with _gather(errors):
        _expect(isinstance(options_in, Mapping), source, "options", "a mapping {family: options}", options_in)
    if isinstance(options_in, Mapping):
        spelt: dict[str, str] = {}
        for given in options_in:
            if _family(given) not in FAMILIES:
                errors.append(f"{_where(source, f'options.{given}')}: not a family ({', '.join(FAMILIES)})")
            elif _family(given) in spelt:  # foreground and its alias sod both given: one would replace the other
                errors.append(
                    f"{_where(source, 'options')}: {spelt[_family(given)]} and {given} name one family: merge them"
                )
            spelt[_family(given)] = str(given)
        options_in = {_family(f): value for f, value in options_in.items()}
        for f in FAMILIES:
            with _gather(errors):
                given = options_in.get(f, {})
                options[f] = _check_family_options(f, {} if given is None else given, source, f"options.{f}")
    return options


def _pairing_settings(config: ReportConfig, data: Mapping[str, Any], source: str, errors: list[str]) -> None:
    """The top-level pairing keys (prefixes, suffixes, ``pair_regex``) into ``config.pairing``, checked."""
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
    errors += _shared_file_names([str(name) for name in data["datasets"]] if named["datasets"] else [], source)

    methods = []
    for name, entry in data["methods"].items() if named["datasets"] and named["methods"] else ():
        with _gather(errors):
            methods.append(_method(str(name), entry, data["datasets"], base, source))

    options = _all_family_options(data.get("options", {}), source, errors)

    output_in = data.get("output", "segmetrics-report")
    if isinstance(output_in, int) and not isinstance(output_in, bool):
        output_in = str(output_in)  # output: 2024, a folder's name YAML reads as a number
    is_path = isinstance(output_in, str) and bool(output_in.strip())
    with _gather(errors):  # (str() of null, false or a list named a folder "None", "False", "['a', 'b']")
        _expect(is_path, source, "output", "a folder path", output_in)
    output = base / (output_in if is_path else "segmetrics-report")
    config = ReportConfig(datasets, methods, output, options, source=source)
    cache = data.get("cache", True)
    with _gather(errors):
        _expect(
            isinstance(cache, bool) or (isinstance(cache, str) and bool(cache.strip())),
            source,
            "cache",
            "true, false or a folder",
            cache,
        )
        config.cache = (
            (config.output / "cache") if cache is True else (base / cache if isinstance(cache, str) else None)
        )
    for key, check, expected in (
        ("cache_check", lambda v: v in ("stat", "content"), "stat or content"),
        (
            "device",
            lambda v: isinstance(v, str) and re.fullmatch(r"cpu|auto|cuda(:\d+)?", v) is not None,
            "cpu, cuda, cuda:N or auto",
        ),
        ("batch_size", lambda v: is_int(v) and v >= 1, "a positive integer"),
        ("workers", lambda v: is_int(v) and v >= 0, "a non-negative integer"),
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
    presentation(config, data, source, errors, declared, check_names=named["methods"])
    _pairing_settings(config, data, source, errors)
    if "figures" in data:
        with _gather(errors):
            config.figures = figure_formats(data["figures"], source)
    if "html" in data:
        with _gather(errors):
            _expect(isinstance(data["html"], str) and bool(data["html"]), source, "html", "a folder", data["html"])
            config.html = base / data["html"]
    raise_all(errors, source)
    return config


def _shared_file_names(names: Sequence[str], source: str) -> list[str]:
    """One mistake per dataset name whose report files (``csv/<slug>_<family>.csv``, its tables' labels and figures,
    by :func:`~segmetrics_torch.reports.files.slug`) would be those of an earlier name: the second would silently
    replace the first's. (Method names are rows and legend entries, never file names.)"""

    first: dict[str, str] = {}
    mistakes = []
    for name in names:
        # compared case-folded: on a case-insensitive file system (macOS, Windows) `duts` and `DUTS` are one file
        stem = slug(name).casefold()
        if stem not in first:
            first[stem] = name
            continue
        mistakes.append(
            f"{_where(source, 'datasets')}: the datasets {first[stem]!r} and {name!r} would write their tables, CSV "
            f"files and figures under one file name ({slug(name)!r}, letter case aside): rename one of them"
        )
    return mistakes


def raise_all(errors: list[str], source: str) -> None:
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
        entry = {
            d: {_family(f): v for f, v in value.items()} if isinstance(value, Mapping) else value
            for d, value in entry.items()
        }
    return Method(name, entry, base, pairing, dataset_pairing)


def presentation(
    config: ReportConfig,
    data: Mapping[str, Any],
    source: str,
    errors: list[str],
    names: set[str] | None = None,
    check_names: bool = True,
) -> None:
    """The keys that change how the report looks, not its numbers: xlsx, method_order, colors, highlight, style,
    digits.

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
            _expect(
                isinstance(order, list)
                and all(isinstance(m, str) for m in order)
                and (not check_names or all(m in names for m in order)),
                source,
                "method_order",
                f"a list of method names ({', '.join(sorted(names))})",
                order,
            )
            config.method_order = list(order)
    if "colors" in data:
        colors = data["colors"]
        with _gather(errors):
            _expect(isinstance(colors, Mapping), source, "colors", "a mapping {method: matplotlib colour}", colors)
        if isinstance(colors, Mapping):  # unknown names and bad colours are two mistakes, both listed
            unknown = [str(m) for m in colors if m not in names] if check_names else []
            if unknown:
                errors.append(
                    f"{_where(source, 'colors')}: no method named {', '.join(unknown)} (methods: "
                    f"{', '.join(sorted(names))})"
                )
            bad = _bad_colours(colors)
            if bad:
                errors.append(
                    f"{_where(source, 'colors')}: not a matplotlib colour: "
                    f"{', '.join(f'{m}: {shown_value(c)}' for m, c in bad.items())}"
                )
            if not unknown and not bad:
                config.colors = dict(colors)
    if "highlight" in data:
        with _gather(errors):
            _expect(
                isinstance(data["highlight"], str) and (not check_names or data["highlight"] in names),
                source,
                "highlight",
                f"a method name ({', '.join(sorted(names))})",
                data["highlight"],
            )
            config.highlight = data["highlight"]
    if "digits" in data:
        with _gather(errors):
            value = data["digits"]
            _expect(
                isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 10,
                source,
                "digits",
                "an integer from 1 to 10",
                value,
            )
            config.digits = value
    if "style" in data:
        with _gather(errors):
            _expect(isinstance(data["style"], str), source, "style", "a matplotlib style name", data["style"])
            config.style = data["style"]
            if Path(config.style).is_file():  # a .mplstyle file (matplotlib reads it): an input no output may replace,
                # read now as the text it must be (matplotlib failed on it after the run)
                try:
                    read_text_file(Path(config.style), "the style file")
                except InputError as error:
                    raise InputError(f"{_where(source, 'style')}: {error}") from None


def _bad_colours(colors: Mapping[str, Any]) -> dict[str, Any]:
    """The entries matplotlib would reject (a name, hex string or RGB(A) list are colours; without matplotlib only
    strings pass: then no figure is drawn either)."""
    try:
        from matplotlib.colors import is_color_like
    except ImportError:  # pragma: no cover - the plot extra is not installed
        return {m: c for m, c in colors.items() if not isinstance(c, str)}

    def finite(c: Any) -> bool:  # matplotlib takes [nan, 0, 0] and fails only when a PDF is written, after the run
        return not isinstance(c, (list, tuple)) or all(isinstance(v, str) or math.isfinite(v) for v in c)

    return {m: c for m, c in colors.items() if isinstance(c, bool) or not is_color_like(c) or not finite(c)}


def figure_formats(value: Any, source: str = "--figures") -> tuple[str, ...]:
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
    """Read a YAML (``.yaml``/``.yml``) or JSON configuration (:func:`~segmetrics_torch.reports.named_inputs.
    read_config_mapping`: a key given twice is an error); relative paths are relative to its folder."""
    path = Path(path)
    config = config_from_mapping(read_config_mapping(path), path.parent, str(path))
    config.config_file = path
    return config
