"""Reporting: plain-text tables, JSON-ready conversion of ``compute()`` results, JSON and CSV files.

Results of the metrics are nested dicts of tensors (see :class:`segmetrics_torch.ForegroundMeasures`). This module
flattens them to ``"family/summary"`` keys (``"f_measure/max"``, ``"e_measure/adaptive"``, ...) as
:func:`segmetrics_torch.flatten_results` does, formats rows of such scalars as an aligned table, and converts whole
results (curves included) to plain Python for ``json``. Non-finite numbers (an undefined S-measure is NaN) become
``None`` in JSON (strict JSON has no NaN) and ``nan`` in tables and CSV.
"""

from __future__ import annotations

import collections
import csv
import functools
import io
import json
import math
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError

# the report's file names: defined where importing costs no torch (the configuration check uses it too)
from ..registry import DEFAULT_FOREGROUND, MEASURES, report_columns
from .files import Output, slug, write_atomically, write_together

__all__ = [
    "SOD_COLUMNS",
    "SURFACE_COLUMNS",
    "best_rows",
    "cell_text",
    "check_csv_outputs",
    "format_latex_table",
    "format_markdown_table",
    "format_table",
    "is_value",
    "measure_name",
    "merged_csv",
    "per_image_rows",
    "run_file_outputs",
    "scalar_row",
    "slug",
    "to_jsonable",
    "upsert_csv",
    "write_csv",
    "write_json",
    "write_rows",
    "write_run_files",
]

#: the columns of the foreground (SOD) table: (key of :func:`scalar_row`, header), the registry's default table
SOD_COLUMNS: tuple[tuple[str, str], ...] = tuple((MEASURES[k].result, MEASURES[k].header) for k in DEFAULT_FOREGROUND)

#: the boundary-distance table (the surface family): (result key, header); ``{q}`` is the percentile of HD<q>
SURFACE_COLUMNS: tuple[tuple[str, str], ...] = report_columns("surface")


def _is_tensor(value: Any) -> bool:
    """Whether ``value`` is a torch tensor, without importing torch (a value cannot be one before torch is loaded: a
    report formats cached results before any measure runs)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def scalar_row(results: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """Flatten a nested ``compute()`` result to ``{"f_measure/max": 0.91, ...}``, scalars only, as Python floats.

    Args:
        results: nested dict of tensors / numbers (curves, i.e. tensors with more than one element, are dropped).
        prefix: prepended to every key.

    Returns:
        Flat dict of floats, in the order of ``results``.
    """
    row: dict[str, float] = {}
    for key, value in results.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            row.update(scalar_row(value, f"{name}/"))
            continue
        if isinstance(value, np.ndarray) or _is_tensor(value):
            if value.size == 1 if isinstance(value, np.ndarray) else value.numel() == 1:
                row[name] = float(value.item())
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            row[name] = float(value)
    return row


#: columns that count (images), not measure: printed as integers, without an arrow, never marked best
COUNT_COLUMNS = frozenset({"num_images"})


def _format_number(value: float | None, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


#: measures whose per-image value is a count (HCE: the corrections a human needs): the dataset mean is printed as
#: an integer when it is one and with one decimal otherwise, not as 24.0000
COUNT_MEASURES = frozenset({"human_correction_effort"})


def format_count_measure(value: float) -> str:
    """A count measure's dataset value: ``24``, ``24.5``, ``nan``."""
    if math.isnan(value):
        return "nan"
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def _table_cell(values: Mapping[str, Any], key: str, digits: int) -> str:
    if key not in values:
        return "-"
    if key in COUNT_COLUMNS and values[key] is not None:
        return str(int(values[key]))
    if key in COUNT_MEASURES and values[key] is not None:
        return format_count_measure(float(values[key]))
    return _format_number(values[key], digits)


def cell_text(row: Mapping[str, Any], key: str, digits: int) -> str:
    """A per-image cell as the tables print it: ``-`` when ``key`` is absent, ``nan`` for None or NaN, a count
    column as an integer, a count measure as :func:`format_count_measure` does, else the number with ``digits``
    decimals (a numpy scalar as the Python number it holds: ``np.int64(3)`` prints ``3``); a value that is not a
    number (proposals' list of best overlaps per object) as its ``str``.

    Example:
        >>> [cell_text({"mae": 0.25, "n": [1, 2]}, key, 3) for key in ("mae", "n", "absent")]
        ['0.250', '[1, 2]', '-']
    """
    if key not in row:
        return _table_cell(row, key, digits)
    value = row[key]
    if not is_value(value):
        return str(value)
    return _table_cell({key: value.item() if isinstance(value, np.generic) else value}, key, digits)


def is_value(value: Any) -> bool:
    """Whether ``value`` is what a table cell holds: None or a real number (not a bool), numpy's included."""
    return value is None or (not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)))


def format_table(
    rows: Mapping[str, Mapping[str, float]],
    columns: Sequence[str | tuple[str, str]] = SOD_COLUMNS,
    *,
    digits: int = 4,
    index_header: str = "method",
) -> str:
    """Format rows of scalars as an aligned plain-text table.

    Args:
        rows: ``{row name: {column key: value}}``; a key absent from a row prints as ``-``, NaN as ``nan``.
        columns: column keys, or ``(key, header)`` pairs (default: :data:`SOD_COLUMNS`).
        digits: decimals of every number (4).
        index_header: header of the first column (row names).

    Returns:
        The table: a header line, a rule, one line per row (names left-aligned, numbers right-aligned); no trailing
        newline.

    Example:
        >>> print(format_table({"a": {"mae": 0.5}}, [("mae", "MAE")]))
        method     MAE
        ------  ------
        a       0.5000
    """
    cols = [(c, c) if isinstance(c, str) else (c[0], c[1]) for c in columns]
    body = [[name] + [_table_cell(values, key, digits) for key, _ in cols] for name, values in rows.items()]
    header = [index_header] + [h for _, h in cols]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def render(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        return "  ".join([first] + [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]).rstrip()

    lines = [render(header), "  ".join("-" * w for w in widths)] + [render(line) for line in body]
    return "\n".join(lines)


def to_jsonable(results: Any) -> Any:
    """Convert a (nested) result to plain Python for ``json.dumps``: tensors/arrays to floats or (nested) lists.

    Args:
        results: dicts, lists, tuples, tensors (any device), numpy arrays/scalars, numbers, strings, paths, None.

    Returns:
        The same structure with dicts (string keys), lists, floats, ints, bools, strings and None. NaN becomes None
        and an infinity the string ``"inf"`` / ``"-inf"`` (strict JSON has neither; an infinite distance -- a missed
        structure -- must not read back as NaN); paths become strings.

    Raises:
        TypeError: an object of another type.
    """
    if isinstance(results, Mapping):
        return {str(k): to_jsonable(v) for k, v in results.items()}
    if isinstance(results, (list, tuple)):
        return [to_jsonable(v) for v in results]
    if _is_tensor(results):
        return to_jsonable(results.detach().cpu().tolist())
    if isinstance(results, np.ndarray):
        return to_jsonable(results.tolist())
    if isinstance(results, np.generic):
        return to_jsonable(results.item())
    if isinstance(results, float):
        if math.isnan(results):
            return None
        return results if math.isfinite(results) else ("inf" if results > 0 else "-inf")
    if results is None or isinstance(results, (bool, int, str)):
        return results
    if isinstance(results, Path):
        return str(results)
    raise TypeError(
        f"Expected `results` to hold tensors, arrays, numbers or strings, but got {type(results).__name__}."
    )


def write_json(path: str | Path, obj: Any) -> None:
    """Write ``to_jsonable(obj)`` as indented, strict JSON (no NaN) to ``path``."""

    text = json.dumps(to_jsonable(obj), indent=2, allow_nan=False)
    write_atomically(path, lambda p: p.write_text(text + "\n", encoding="utf-8"))


def write_csv(path: str | Path, rows: Mapping[str, Mapping[str, Any]], index_header: str = "method") -> None:
    """Write rows of scalars as CSV: one header line (``index_header`` then the union of keys), one line per row.

    Numbers are written with full precision (``str`` of a float round-trips), absent values as empty cells, NaN as
    ``nan``.
    """

    keys: list[str] = []
    for values in rows.values():
        keys.extend(k for k in values if k not in keys)

    def write(p: Path) -> None:
        with p.open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow([index_header, *keys])
            for name, values in rows.items():
                writer.writerow([name, *(str(values[k]) if k in values else "" for k in keys)])

    write_atomically(path, write)


def write_rows(path: str | Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """Write a list of flat rows as CSV (the union of their keys as the header; None as an empty cell)."""

    header = list(dict.fromkeys(k for row in rows for k in row))

    def write(p: Path) -> None:
        with p.open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            for row in rows:
                writer.writerow([_cell(row.get(k)) for k in header])

    write_atomically(path, write)


#: the first columns of each kind of CSV table the command writes: a file is merged into only if it starts so
CSV_KINDS = {
    "--csv": ("method", "dataset", "num_images"),
    "--per-image-csv": ("method", "dataset", "image"),
}


def _read_csv_table(path: Path, option: str) -> tuple[list[str], list[dict[str, str]]]:
    """The header and rows of an existing CSV table this command wrote (``([], [])`` for a missing or empty file).

    Raises:
        InputError: the file is not such a table (not UTF-8 text, not CSV, or another kind of table).
    """

    if not path.exists() or not path.stat().st_size:
        return [], []
    prefix = CSV_KINDS[option]
    expected = f"a CSV table this command wrote (columns {', '.join(prefix)}, ...)"
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = list(reader.fieldnames or [])
            if tuple(header[: len(prefix)]) != prefix:
                shown = ", ".join(header[:4]) + (" ..." if len(header) > 4 else "")
                raise InputError(
                    f"{option} {path} is not {expected} but holds columns {shown}; rows are added to such a table "
                    "only: give another file name"
                )
            repeated = [name for name, count in collections.Counter(header).items() if count > 1]
            if repeated:  # a dict row keeps one cell per name: the others would be dropped on the rewrite
                raise InputError(
                    f"{option} {path} is not {expected}: its column {repeated[0]!r} is repeated; rows are added to "
                    "a table of distinct columns only: give another file name"
                )
            rows = []
            for row in reader:
                # cells past the header's last column have no column to be written back in (empty ones, a
                # spreadsheet's trailing comma, lose nothing)
                if any(cell.strip() for cell in row.get(None) or ()):
                    raise InputError(
                        f"{option} {path} is not {expected}: line {reader.line_num} has more cells than the header "
                        f"has columns ({len(header)}); rows are added to such a table only: give another file name"
                    )
                rows.append({key: value for key, value in row.items() if key is not None})
    except UnicodeDecodeError as error:
        raise InputError(f"{option} {path} is not {expected}: byte {error.start} is not UTF-8 text") from None
    except csv.Error as error:
        raise InputError(f"{option} {path} is not {expected}: {error}") from None
    return header, rows


def check_csv_outputs(files: Mapping[str, Path | None]) -> None:
    """Before any measure runs: each table option of ``files`` (``option -> path``, :data:`CSV_KINDS`) names a new
    file or an existing table that the option can merge its rows into (a table read after an hour's work is lost)."""
    for option in CSV_KINDS:
        path = files.get(option)
        if path is not None:
            _read_csv_table(Path(path), option)


def upsert_csv(path: str | Path, rows: Sequence[Mapping[str, Any]], keys: Sequence[str], option: str) -> str:
    """Merge ``rows`` into the CSV file ``path``: a row whose ``keys`` columns equal an existing row's replaces it (a
    re-run of one method on one dataset), other rows are appended, so that one file collects several runs and never
    silently loses another run's rows. Runs with different measures share one file: the columns are the union, the
    file's own first, then the new ones in this run's order; a cell a run did not compute is empty (a replaced
    row's values there are dropped with a ``UserWarning`` naming the row and the columns). Returns "wrote" /
    "updated".

    Raises:
        InputError: the existing file is not a CSV table of ``option``'s kind (:data:`CSV_KINDS`): naming ``option``
            and the file.
    """
    return write_run_files(None, [(Path(path), rows, keys, option)])[0]


def merged_csv(
    path: str | Path, rows: Sequence[Mapping[str, Any]], keys: Sequence[str], option: str
) -> tuple[str, str]:
    """``(text, action)``: the CSV text of :func:`upsert_csv` (``rows`` merged into the file ``path``, not written)
    and ``"wrote"`` / ``"updated"``."""
    path = Path(path)
    old_header, old_rows = _read_csv_table(path, option)
    header = list(dict.fromkeys([*old_header, *(k for row in rows for k in row)]))
    new_rows = {tuple(str(row[k]) for k in keys): row for row in rows}
    kept = [row for row in old_rows if tuple(row.get(k, "") for k in keys) not in new_rows]
    _warn_emptied_cells(path, option, old_rows, new_rows, keys)
    out = io.StringIO()
    writer = csv.writer(out)  # "\r\n" line ends, as the csv module writes a file opened with newline=""
    writer.writerow(header)
    for old_row in kept:
        writer.writerow([old_row.get(k) or "" for k in header])
    for row in rows:
        writer.writerow([_cell(row.get(k)) for k in header])
    return out.getvalue(), "updated" if old_header else "wrote"


def _warn_emptied_cells(
    path: Path,
    option: str,
    old_rows: Sequence[Mapping[str, str]],
    new_rows: Mapping[tuple[str, ...], Mapping[str, Any]],
    keys: Sequence[str],
) -> None:
    """A replaced row loses the values of the columns this run did not compute (a run with fewer ``--measures``):
    say which, once per file, so that a re-run never empties cells silently."""
    emptied: dict[str, list[str]] = {}
    for old in old_rows:
        new = new_rows.get(tuple(old.get(k, "") for k in keys))
        if new is None:
            continue
        lost = [k for k, v in old.items() if k not in keys and v not in ("", None) and new.get(k) is None]
        if lost:
            emptied[" / ".join(old.get(k, "") for k in keys)] = lost
    if emptied:
        rows = "; ".join(f"row {name}: {', '.join(cols)}" for name, cols in emptied.items())
        warnings.warn(
            f"{option} {path}: this run replaces rows whose cells it did not compute, now empty ({rows}); evaluate "
            "every measure of a row in one run to keep them together",
            UserWarning,
            stacklevel=3,
        )


def _write_bytes(path: Path, data: bytes) -> None:
    path.write_bytes(data)


def per_image_rows(
    name: str, dataset: str, per_image: Mapping[str, Any], keys: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """The per-image rows of every evaluate command (``--per-image-csv``, the HTML report): one row per image of
    ``per_image`` (image -> its values): method, dataset, image, then the image's numbers: ``keys`` where given, else
    every number, a list of numbers -- the best J of each object, for proposals -- as its mean ``<key>_mean``.

    Example:
        >>> per_image_rows("ours", "DUTS", {"a": {"mae": 0.1, "j": [0.5, 1.0]}})
        [{'method': 'ours', 'dataset': 'DUTS', 'image': 'a', 'mae': 0.1, 'j_mean': 0.75}]
    """
    rows = []
    for stem, values in per_image.items():
        row: dict[str, Any] = {"method": name, "dataset": dataset, "image": stem}
        if keys is not None:
            row.update({k: values[k] for k in keys if k in values})
        else:
            for key, value in values.items():
                if value is None or isinstance(value, (int, float)):
                    row[key] = value
                elif isinstance(value, list) and all(isinstance(v, (int, float)) for v in value):
                    row[f"{key}_mean"] = sum(value) / len(value) if value else None
        rows.append(row)
    return rows


def run_file_outputs(
    json_file: tuple[Path, Any] | None = None,
    tables: Sequence[tuple[Path, Sequence[Mapping[str, Any]], Sequence[str], str]] = (),
    texts: Mapping[Path, str] | None = None,
) -> tuple[list[Output], list[str]]:
    """The files of one run as outputs of one set (:func:`~.files.write_together`, beside the run's other outputs:
    a figure, the HTML report, an appended line): ``json_file`` as ``(path, document)`` (the JSON text made now,
    so that a value JSON cannot hold fails before any file is touched), ``tables`` as ``(path, rows, key columns,
    option)`` merged as :func:`upsert_csv` does when the set is written (under the folder's lock: pass
    ``locked=True``; a table that cannot take the rows, :func:`merged_csv`, fails the set before any file is
    replaced) and ``texts`` as ``{path: text}`` (UTF-8: a benchmark's text files). Returns the outputs and the list
    that the set's write fills with what happened to the JSON file and each table, in order: ``"wrote"`` (a new file)
    or ``"updated"`` (rows merged into a table; the JSON file is always ``"wrote"``).

    Example:
        >>> import tempfile
        >>> from segmetrics_torch.reports.files import write_together
        >>> folder = Path(tempfile.mkdtemp())
        >>> rows = [{"method": "m", "dataset": "d", "num_images": 2, "mae": 0.1}]
        >>> outputs, actions = run_file_outputs(None, [(folder / "t.csv", rows, ("method", "dataset"), "--csv")])
        >>> write_together([*outputs, (folder / "note.txt", lambda p: p.write_text("x"))], locked=True)
        >>> actions, sorted(p.name for p in folder.iterdir())
        (['wrote'], ['note.txt', 't.csv'])
    """
    actions: list[str] = []
    outputs: list[Output] = []
    if json_file is not None:
        path, document = json_file
        text = json.dumps(to_jsonable(document), indent=2, allow_nan=False) + "\n"
        outputs.append((Path(path), functools.partial(_write_bytes, data=text.encode("utf-8"))))
        actions.append("wrote")
    for path, rows, keys, option in tables:
        merge = functools.partial(_write_merged, table=Path(path), rows=rows, keys=keys, option=option, actions=actions)
        outputs.append((Path(path), merge))
    outputs += [
        (Path(path), functools.partial(_write_bytes, data=text.encode("utf-8"))) for path, text in (texts or {}).items()
    ]
    return outputs, actions


def write_run_files(
    json_file: tuple[Path, Any] | None = None,
    tables: Sequence[tuple[Path, Sequence[Mapping[str, Any]], Sequence[str], str]] = (),
    files: Sequence[Output] = (),
    texts: Mapping[Path, str] | None = None,
) -> list[str]:
    """The files of one run (:func:`run_file_outputs`) and its other outputs ``files`` (``(path, write)``:
    ``write(temporary_path)``, a figure; or a :class:`~.files.StagedOutput`, the HTML report:
    :class:`~.html_report.HtmlReport`) written together (:func:`~.files.write_together`: an interruption leaves the
    old set or the new; each table read and merged under its folder's lock, so that a run merging into it at the same
    time waits and both runs' rows are kept). Returns what happened to the JSON file and each table, in order:
    ``"wrote"`` or ``"updated"``.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> rows = [{"method": "m", "dataset": "d", "num_images": 2, "mae": 0.1}]
        >>> table = (folder / "t.csv", rows, ("method", "dataset"), "--csv")
        >>> write_run_files((folder / "r.json", {"mae": 0.1}), [table])
        ['wrote', 'wrote']
        >>> write_run_files(None, [table])
        ['updated']
    """
    outputs, actions = run_file_outputs(json_file, tables, texts)
    write_together([*outputs, *files], locked=True)
    return actions


def _write_merged(
    temp: Path, *, table: Path, rows: Sequence[Mapping[str, Any]], keys: Sequence[str], option: str, actions: list[str]
) -> None:
    """Write into ``temp`` the table ``table`` with ``rows`` merged in (:func:`merged_csv`), noting what happened."""
    text, action = merged_csv(table, rows, keys, option)
    temp.write_bytes(text.encode("utf-8"))
    actions.append(action)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return str(value)


def _columns(columns: Sequence[str | tuple[str, str]]) -> list[tuple[str, str]]:
    return [(c, c) if isinstance(c, str) else (c[0], c[1]) for c in columns]


def best_rows(
    rows: Mapping[str, Mapping[str, float | None]],
    columns: Sequence[str | tuple[str, str]],
    *,
    lower_is_better: Sequence[str] = (),
    digits: int = 4,
) -> dict[str, set[str]]:
    """The rows holding the best value of each column, compared as printed (rounded to ``digits``), ties all best.

    Args:
        rows: ``{row name: {column key: value}}``; absent, None and NaN values never win.
        columns: column keys or ``(key, header)`` pairs.
        lower_is_better: keys where the smallest value is best (e.g. ``"mae"``, ``"voi"``); else the largest.
        digits: decimals shown; values equal at that precision tie.

    Returns:
        ``{column key: {row names}}`` (an empty set when no row has a number); no marks with fewer than two rows.
    """
    best: dict[str, set[str]] = {}
    for key, _ in _columns(columns):
        if key in COUNT_COLUMNS:
            best[key] = set()
            continue
        values: dict[str, float] = {}
        for name, v in rows.items():
            x = v.get(key)
            if x is not None and not math.isnan(float(x)):
                values[name] = round(float(x), digits)
        if len(rows) < 2 or not values:
            best[key] = set()
            continue
        target = min(values.values()) if key in lower_is_better else max(values.values())
        best[key] = {name for name, value in values.items() if value == target}
    return best


def format_markdown_table(
    rows: Mapping[str, Mapping[str, float | None]],
    columns: Sequence[str | tuple[str, str]],
    *,
    lower_is_better: Sequence[str] = (),
    digits: int = 4,
    index_header: str = "method",
) -> str:
    """A GitHub-flavoured Markdown table, rows x columns, the best value of each column in **bold**.

    Headers of lower-is-better columns get a down arrow (e.g. ``MAE ↓``), the others an up arrow. Absent values
    print as ``-``, NaN / None as ``nan``. See :func:`best_rows` for the ranking.
    """
    cols = _columns(columns)
    best = best_rows(rows, cols, lower_is_better=lower_is_better, digits=digits)
    arrow = {key: "" if key in COUNT_COLUMNS else " ↓" if key in lower_is_better else " ↑" for key, _ in cols}
    lines = [
        "| " + " | ".join([index_header, *(f"{h}{arrow[k]}" for k, h in cols)]) + " |",
        "|" + "---|" + "---:|" * len(cols),
    ]
    for name, values in rows.items():
        cells = []
        for key, _ in cols:
            text = _table_cell(values, key, digits)
            cells.append(f"**{text}**" if name in best[key] else text)
        lines.append("| " + " | ".join([name.replace("|", "\\|"), *cells]) + " |")
    return "\n".join(lines)


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def format_latex_table(
    rows: Mapping[str, Mapping[str, float | None]],
    columns: Sequence[str | tuple[str, str]],
    *,
    lower_is_better: Sequence[str] = (),
    digits: int = 3,
    caption: str | None = None,
    label: str | None = None,
    index_header: str = "Method",
) -> str:
    """A LaTeX ``table`` (booktabs rules), rows x columns, the best value of each column in ``\\textbf``.

    Needs ``\\usepackage{booktabs}``. Headers carry ``$\\downarrow$`` / ``$\\uparrow$``; names and headers are
    escaped; absent values print as ``-``, NaN / None as ``nan``. Published tables usually show 3 decimals (default).
    """
    cols = _columns(columns)
    best = best_rows(rows, cols, lower_is_better=lower_is_better, digits=digits)
    arrow = {
        key: "" if key in COUNT_COLUMNS else r"$\downarrow$" if key in lower_is_better else r"$\uparrow$"
        for key, _ in cols
    }
    header = " & ".join([_latex_escape(index_header), *(f"{_latex_escape(h)} {arrow[k]}" for k, h in cols)])
    lines = [r"\begin{table}[t]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{_latex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{l{'c' * len(cols)}}}", r"\toprule", header + r" \\", r"\midrule"]
    for name, values in rows.items():
        cells = []
        for key, _ in cols:
            text = _table_cell(values, key, digits)
            cells.append(rf"\textbf{{{text}}}" if name in best[key] else text)
        lines.append(" & ".join([_latex_escape(name), *cells]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines)


def measure_name(key: str) -> str:
    """Display name of a partition measure key, the registry's report header (``fop`` -> ``Fop``, ``voi`` ->
    ``VoI``, ``vd`` -> ``VD``); another key in capitals."""
    measure = MEASURES.get(key)
    return measure.report_header if measure is not None and measure.family == "partition" else key.upper()
