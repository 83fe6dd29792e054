"""The table papers print: every method in one row, every (dataset, measure) in a column, the top three marked.

One combined table per family over the datasets evaluated with it, written as Markdown, LaTeX (booktabs, the top
three of each column wrapped in ``\\first`` / ``\\second`` / ``\\third``, defined with ``\\providecommand`` as bold,
underline and italic so that a paper can redefine them, e.g. in colours), CSV and, with the optional ``xlsx`` extra,
an Excel workbook written by openpyxl (the maintained writer of .xlsx files; a dependency of nothing else here, so
it stays optional). Ranks compare values as printed, so equal printed values share a rank (dense ranking).

Also here: the grid figures (one subplot per dataset: PR curves, F-measure against the threshold) with a configurable
method order, colours and one highlighted method.
"""

from __future__ import annotations

import csv
import importlib.util
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from .figures import _paper_rc, _pyplot, _save_figure
from .tables import COUNT_MEASURES, format_count_measure

__all__ = [
    "Combined",
    "check_xlsx",
    "combine",
    "format_combined_latex",
    "format_combined_markdown",
    "plot_grid",
    "ranks",
    "write_combined_csv",
    "write_combined_xlsx",
]

Cell = tuple[str, str]  # (dataset, measure key)


class Combined:
    """Rows ``{method: {(dataset, key): value}}`` over ``datasets`` x ``columns`` (``(key, header)``)."""

    def __init__(
        self,
        family: str,
        datasets: list[str],
        columns: list[tuple[str, str]],
        rows: dict[str, dict[Cell, float]],
        lower: Sequence[str],
        digits: int = 3,
    ) -> None:
        self.family = family
        self.datasets = datasets
        self.columns = columns
        self.rows = rows
        self.lower = set(lower)
        self.digits = digits
        # image counts are shown, not ranked
        self.ranks = ranks(
            rows, [(d, k) for d in datasets for k, _ in columns if k != "num_images"], self.lower, digits
        )

    def cells(self) -> list[Cell]:
        return [(d, k) for d in self.datasets for k, _ in self.columns]

    def text(self, method: str, cell: Cell) -> str:
        value = self.rows[method].get(cell)
        if value is None:
            return "-"
        if cell[1] == "num_images":
            return str(int(value))
        if cell[1] in COUNT_MEASURES:
            return format_count_measure(value)
        return "nan" if math.isnan(value) else f"{value:.{self.digits}f}"


def combine(
    family: str,
    per_dataset: Mapping[str, tuple[list[tuple[str, str]], list[str], Mapping[str, Mapping[str, float]]]],
    method_order: Sequence[str] = (),
    digits: int = 3,
) -> Combined:
    """The combined table of one family from each dataset's ``(columns, lower_is_better, rows)``.

    Columns are the union of the datasets' columns in order; methods follow ``method_order`` first, then the order
    in which they appear. When the methods of a dataset were scored on different numbers of images, every dataset
    gets an ``images`` column (the rows' ``num_images``), as the per-dataset tables do. ``digits``: the decimals
    printed, and compared for the top-3 marks (the report's one precision setting).
    """
    columns: dict[str, str] = {}
    if any(len({values.get("num_images") for values in rows.values()}) > 1 for _, _, rows in per_dataset.values()):
        columns["num_images"] = "images"
    lower: set[str] = set()
    methods: list[str] = [m for m in method_order]
    for cols, low, rows in per_dataset.values():
        columns.update((key, header) for key, header in cols if key != "num_images")
        lower.update(low)
        methods += [m for m in rows if m not in methods]
    present = {m for _, _, rows in per_dataset.values() for m in rows}
    methods = [m for m in methods if m in present]
    table: dict[str, dict[Cell, float]] = {m: {} for m in methods}
    for dataset, (_, _, rows) in per_dataset.items():
        for method, values in rows.items():
            for key in columns:
                if key in values:
                    table[method][(dataset, key)] = values[key]
    return Combined(family, list(per_dataset), list(columns.items()), table, sorted(lower), digits=digits)


def ranks(
    rows: Mapping[str, Mapping[Cell, float]], cells: Sequence[Cell], lower: set[str], digits: int
) -> dict[Cell, dict[str, int]]:
    """``{cell: {method: rank}}`` for ranks 1..3, values compared as printed; NaN and absent values are not ranked."""
    out: dict[Cell, dict[str, int]] = {}
    for cell in cells:
        printed = {}
        for method, values in rows.items():
            value = values.get(cell)
            if value is not None and not math.isnan(value):
                printed[method] = round(value, digits)
        distinct = sorted(set(printed.values()), reverse=cell[1] not in lower)
        out[cell] = {m: distinct.index(v) + 1 for m, v in printed.items() if distinct.index(v) < 3}
    return out


def _header(combined: Combined, key: str, header: str) -> str:
    if key == "num_images":
        return header
    return f"{header} {'↓' if key in combined.lower else '↑'}"


#: the one top-three convention of every format (Markdown, LaTeX, Excel): 1st bold, 2nd underlined, 3rd italic
TOP_THREE = {1: "bold", 2: "underline", 3: "italic"}


def format_combined_markdown(combined: Combined) -> str:
    """A Markdown table: one header row of ``dataset measure`` columns; the top three as in every format
    (:data:`TOP_THREE`): 1st **bold**, 2nd <ins>underlined</ins>, 3rd _italic_."""
    marks = {1: "**{}**", 2: "<ins>{}</ins>", 3: "_{}_"}
    head = ["Method"] + [f"{d} {_header(combined, k, h)}" for d in combined.datasets for k, h in combined.columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for method in combined.rows:
        cells = []
        for cell in combined.cells():
            rank = combined.ranks.get(cell, {}).get(method)
            text = combined.text(method, cell)
            cells.append(marks[rank].format(text) if rank else text)
        lines.append("| " + " | ".join([method.replace("|", "\\|"), *cells]) + " |")
    return "\n".join(lines)


def _latex(text: str) -> str:
    for a, b in (
        ("\\", r"\textbackslash{}"),
        ("&", r"\&"),
        ("%", r"\%"),
        ("$", r"\$"),
        ("#", r"\#"),
        ("_", r"\_"),
        ("{", r"\{"),
        ("}", r"\}"),
        ("~", r"\textasciitilde{}"),
        ("^", r"\^{}"),
    ):
        text = text.replace(a, b) if a != "\\" else text.replace(a, "\0")
    return text.replace("\0", r"\textbackslash{}")


LATEX_MACROS = (
    "\\providecommand{\\first}[1]{\\textbf{#1}}\n"
    "\\providecommand{\\second}[1]{\\underline{#1}}\n"
    "\\providecommand{\\third}[1]{\\textit{#1}}\n"
)


def format_combined_latex(combined: Combined, caption: str, label: str) -> str:
    """A ``table*`` (booktabs): a dataset row with ``\\multicolumn`` over its measures, then the measures; the top
    three of each column in ``\\first`` / ``\\second`` / ``\\third``."""
    k = len(combined.columns)
    macro = {1: "\\first", 2: "\\second", 3: "\\third"}
    lines = [
        "\\begin{table*}[t]",
        "\\centering",
        f"\\caption{{{_latex(caption)}}}",
        f"\\label{{{label}}}",
        "\\resizebox{\\textwidth}{!}{%",
        f"\\begin{{tabular}}{{l{('c' * k + '|') * len(combined.datasets)}}}".replace("|}", "}"),
        "\\toprule",
    ]
    lines.append(" & ".join(["", *(f"\\multicolumn{{{k}}}{{c}}{{{_latex(d)}}}" for d in combined.datasets)]) + " \\\\")
    rules = " ".join(f"\\cmidrule(lr){{{2 + i * k}-{1 + (i + 1) * k}}}" for i in range(len(combined.datasets)))
    lines.append(rules)
    down, up = "$\\downarrow$", "$\\uparrow$"
    arrows = [
        _latex(h) if key == "num_images" else f"{_latex(h)} {down if key in combined.lower else up}"
        for _ in combined.datasets
        for key, h in combined.columns
    ]
    lines.append(" & ".join(["Method", *arrows]) + " \\\\")
    lines.append("\\midrule")
    for method in combined.rows:
        cells = []
        for cell in combined.cells():
            rank = combined.ranks.get(cell, {}).get(method)
            text = combined.text(method, cell)
            cells.append(f"{macro[rank]}{{{text}}}" if rank else text)
        lines.append(" & ".join([_latex(method), *cells]) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}}", "\\end{table*}"]
    return "\n".join(lines)


def write_combined_csv(combined: Combined, path: Path) -> None:
    """CSV, full precision, in long form: one header row ``method,dataset,measure,value`` and one row per (method,
    dataset, measure) that has a value, so that pandas (``pd.read_csv``) and spreadsheets read it as it is
    (``df.pivot_table(index="method", columns=["dataset", "measure"], values="value")`` gives the wide table)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["method", "dataset", "measure", "value"])
        for method, values in combined.rows.items():
            for dataset, key in combined.cells():
                if values.get((dataset, key)) is not None:
                    writer.writerow([method, dataset, key, str(values[(dataset, key)])])


def check_xlsx() -> None:
    """Raise :class:`InputError` when openpyxl, the .xlsx writer, is not installed (before anything is computed)."""

    if importlib.util.find_spec("openpyxl") is None:
        raise InputError("--xlsx needs openpyxl: pip install 'segmetrics-torch[xlsx]' (or leave out --xlsx / xlsx)")


def write_combined_xlsx(tables: Sequence[Combined], path: Path) -> None:
    """One worksheet per family: datasets merged over their measures, the measures, then one row per method with
    the numbers (full precision, shown with 3 decimals); the top three of each column bold / underlined / italic."""
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font

    fonts = {1: Font(bold=True), 2: Font(underline="single"), 3: Font(italic=True)}
    book = Workbook()
    book.remove(book.active)
    for combined in tables:
        sheet = book.create_sheet(title=_sheet_name(combined.family))
        k = len(combined.columns)
        sheet.cell(row=1, column=1, value="dataset")
        sheet.cell(row=2, column=1, value="method")
        for i, dataset in enumerate(combined.datasets):
            first = 2 + i * k
            sheet.cell(row=1, column=first, value=dataset).alignment = Alignment(horizontal="center")
            if k > 1:
                sheet.merge_cells(start_row=1, start_column=first, end_row=1, end_column=first + k - 1)
            for j, (key, header) in enumerate(combined.columns):
                sheet.cell(row=2, column=first + j, value=_header(combined, key, header))
        for r, (method, values) in enumerate(combined.rows.items(), start=3):
            sheet.cell(row=r, column=1, value=method)
            for c, cell in enumerate(combined.cells(), start=2):
                value = values.get(cell)
                if value is None:
                    continue
                target = sheet.cell(row=r, column=c, value="nan" if math.isnan(value) else value)
                target.number_format = "0.000"
                if cell[1] == "num_images":
                    target.number_format = "0"
                rank = combined.ranks.get(cell, {}).get(method)
                if rank:
                    target.font = fonts[rank]
        sheet.freeze_panes = "B3"
    book.save(path)


def _sheet_name(family: str) -> str:
    return family[:31]


# ----------------------------------------------------------------------------------------------------- figures


def _line_style(i: int, method: str, colors: Mapping[str, Any], highlight: str | None) -> dict[str, Any]:
    styles = ("-", "--", "-.", ":")
    style = {"color": colors.get(method, f"C{i % 10}"), "ls": styles[(i // 10) % 4], "lw": 1.2, "zorder": 2}
    if highlight is not None and method == highlight:
        style.update(lw=2.4, ls="-", zorder=5, color=colors.get(method, "red"))
    return style


def plot_grid(
    panels: Mapping[str, Mapping[str, Mapping[str, Any]]],
    paths: Sequence[Path],
    *,
    kind: str,
    method_order: Sequence[str] = (),
    colors: Mapping[str, Any] | None = None,
    highlight: str | None = None,
    style: str | None = None,
    ylabel: str = "F-measure",
    summary: str = "",
) -> None:
    """One subplot per dataset: ``kind`` "pr" (``{"recall", "precision", "value"}`` per method) or "threshold"
    (``{"thresholds", "values", "value"}``), methods in ``method_order`` then as given, each in its colour from
    ``colors`` (else the default cycle), ``highlight`` drawn thick on top; ``style`` a matplotlib style name."""

    plt = _pyplot()
    colors = dict(colors or {})
    methods: list[str] = [m for m in method_order]
    for curves in panels.values():
        methods += [m for m in curves if m not in methods]
    n = len(panels)
    cols = min(n, 4)
    rows = -(-n // cols)
    context = plt.style.context(style) if style else plt.rc_context(_paper_rc())
    with context, plt.rc_context({"text.parse_math": False}):  # names are the user's text, never mathtext
        fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 3.1 * rows + 0.6), squeeze=False)
        handles: dict[str, Any] = {}
        for ax, (dataset, curves) in zip(axes.flat, panels.items(), strict=False):
            for i, method in enumerate(methods):
                if method not in curves:
                    continue
                c = curves[method]
                x_key, y_key = ("recall", "precision") if kind == "pr" else ("thresholds", "values")
                x, y = np.asarray(c[x_key], dtype=float), np.asarray(c[y_key], dtype=float)
                (line,) = ax.plot(x, y, **_line_style(i, method, colors, highlight))
                handles.setdefault(method, line)
            if kind == "pr":
                ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="Recall", ylabel="Precision")
            else:
                ax.set(xlabel="Threshold", ylabel=ylabel)
            ax.set_title(dataset)
            ax.grid(True, alpha=0.3)
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
        fig.legend(
            list(handles.values()),
            list(handles),
            loc="lower center",
            ncol=min(len(handles), 6),
            frameon=False,
            bbox_to_anchor=(0.5, 0.0),
        )
        fig.tight_layout(rect=(0, 0.04 + 0.02 * (len(handles) // 6), 1, 1))
        _save_figure(fig, list(paths))
        plt.close(fig)
