"""The files of an evaluation report (``segmetrics evaluate --config``): which columns and curves each family shows.

Given the records of a run (``records[dataset][family][method]``, plain JSON-ready results as cached), this module
decides the table columns (and which are lower-is-better) and the curves of each family, and returns one writer per
output file; :mod:`segmetrics_torch.app.report_run` runs them into a temporary folder and moves the files into place.
Formatting is :mod:`segmetrics_torch.reports.tables`, figures :mod:`segmetrics_torch.reports.figures`.

Tables (methods x measures, one per dataset and family):

* foreground: MAE, S-measure, weighted F, adaptive / mean / max F, adaptive / mean / max E, mean IoU, mean Dice (MAE
  lower is better);
* boundary: ODS, OIS (F), AP, R50 of the BSDS benchmark;
* partition: flat partitions one column per measure; hierarchies ODS / OIS (and AP for Fb, Fop, Fr) per measure and
  the BSR covering ODS / OIS / Best (VoI lower is better).
* proposals: AR at N = 100 and 1000 (when evaluated), then at the largest N the mean best J per object (J_i), the
  class-averaged J_c (with class images), recall at J > 0.5 and 0.7, and AR.

Figures (one line per method, legend sorted best first with the summary value): foreground PR curves (max F), F- and
E-measure against the threshold 0..255 (max F, max E); boundary PR curves with iso-F contours and the ODS point,
F against the threshold (ODS); hierarchies the PR curves of Fb / Fop / Fr (ODS); proposals recall and AR against
the number of proposals (:func:`segmetrics_torch.reports.figures.plot_proposal_recall`).
"""

from __future__ import annotations

import functools
import json
import math
import os
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from ..errors import InputError
from ..registry import PR_MEASURES, foreground_columns, lower_is_better, report_columns
from . import figures as plots
from .combined import (
    LATEX_MACROS,
    _line_style,
    combine,
    format_combined_latex,
    format_combined_markdown,
    plot_grid,
    write_combined_csv,
    write_combined_xlsx,
)
from .figures import plot_proposal_recall
from .files import keep_mode, remove_stale_folders, remove_tree, write_atomically, write_together
from .html_report import HtmlImage, HtmlReport, html_columns
from .output_safety import REPORT_FILES, report_owns
from .tables import (
    SOD_COLUMNS,
    SURFACE_COLUMNS,
    format_latex_table,
    format_markdown_table,
    format_table,
    measure_name,
    per_image_rows,
    slug,
    write_csv,
    write_json,
    write_rows,
)

__all__ = [
    "MANIFEST",
    "ReportFolder",
    "check_report_folder",
    "foreign_report_files",
    "html_page_folders",
    "records_html",
    "render_report",
    "replace_manifest",
    "table_columns",
    "table_row",
    "write_records_html",
    "write_report_folder",
]

#: the BSDS table's columns (result key, header), the registry's
BOUNDARY_SUMMARY_COLUMNS: tuple[tuple[str, str], ...] = report_columns("boundary")
_PR_MEASURES = PR_MEASURES
#: proposal columns: (result key, header) read at the largest N (AR also at N = 100 and 1000 when evaluated)
PROPOSAL_SUMMARY_COLUMNS: tuple[tuple[str, str], ...] = report_columns("proposals")
_FAMILY_TITLES = {
    "foreground": "foreground maps",
    "boundary": "boundaries (BSDS benchmark)",
    "partition": "partitions (SEISM measures)",
    "proposals": "object proposals (MCG protocol)",
    "surface": "boundary distances",
}


#: infinities as :func:`~.tables.to_jsonable` writes them
_INFINITE = ("inf", "-inf")


def flat_scalars(results: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """``{"f_measure/max": 0.91, ...}``: every number of a plain result, None (JSON's NaN) as NaN and ``"inf"`` /
    ``"-inf"`` (JSON's infinities, :func:`~.tables.to_jsonable`) as infinities; lists (curves) and ``per_image`` left
    out."""
    out: dict[str, float] = {}
    for key, value in results.items():
        name = f"{prefix}{key}"
        if key == "per_image" or isinstance(value, list):
            continue
        if isinstance(value, Mapping):
            out.update(flat_scalars(value, f"{name}/"))
        elif value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)) or value in _INFINITE:
            out[name] = math.nan if value is None else float(value)
    return out


def table_columns(family: str, records: Mapping[str, Mapping[str, Any]]) -> tuple[list[tuple[str, str]], list[str]]:
    """``(columns, lower_is_better)`` of a family's table over the methods' records (union, in order)."""

    if family == "foreground":
        names = next((r["settings"].get("measures") for r in records.values() if r["settings"].get("measures")), None)
        if names is None:
            return list(SOD_COLUMNS), [key for key, _ in SOD_COLUMNS if lower_is_better("foreground", key)]
        fg_columns, fg_lower, _ = foreground_columns(names)
        return fg_columns, fg_lower
    if family == "boundary":
        return list(BOUNDARY_SUMMARY_COLUMNS), []
    if family == "surface":
        return _surface_columns(records)
    if family == "proposals":
        counts = {n for record in records.values() for n in record["results"]["counts"]}
        proposal_columns = [(f"average_recall@{n}", f"AR@{n}") for n in (100, 1000) if n in counts]
        with_classes = any("jaccard_class" in record["results"] for record in records.values())
        proposal_columns += [(k, h) for k, h in PROPOSAL_SUMMARY_COLUMNS if k != "jaccard_class" or with_classes]
        return proposal_columns, []
    columns: dict[str, str] = {}
    for record in records.values():
        settings = record["settings"]
        for m in settings["measures"]:
            if settings["input_format"] == "labels":
                columns[m] = measure_name(m)
            else:
                for part in ("ods", "ois", "ap") if m in _PR_MEASURES else ("ods", "ois"):
                    columns[f"{m}/{part}"] = f"{measure_name(m)} {part.upper()}"
        if settings["input_format"] != "labels":
            for part in ("ods", "ois", "best"):
                columns[f"region_benchmark/covering/{part}"] = f"Cov {part.upper() if part != 'best' else 'Best'}"
    return list(columns.items()), [key for key in columns if lower_is_better("partition", key)]


def _surface_columns(records: Mapping[str, Mapping[str, Any]]) -> tuple[list[tuple[str, str]], list[str]]:
    """The boundary-distance table: HD, HD<q>, ASD, ASSD, NSD where computed, one column per class for label maps."""
    columns: dict[str, str] = {}
    for record in records.values():
        res, q = record["results"], f"{float(record['settings'].get('percentile', 95.0)):g}"
        for key, template in SURFACE_COLUMNS:
            header = template.format(q=q)
            if key not in res:
                continue
            if isinstance(res[key], list):  # label maps: a column per class, headed by its name where one is given
                names = res.get("class_names") or []  # one per entry of "classes"
                for i, c in enumerate(res.get("classes", [])):
                    columns[f"{key}/{c}"] = f"{header} {names[i] if i < len(names) else f'c{c}'}"
            else:
                columns[key] = header
    return list(columns.items()), [key for key in columns if lower_is_better("surface", key)]


def table_row(family: str, results: Mapping[str, Any]) -> dict[str, float]:
    """The numbers of one method's table row: every scalar, and for proposals the curves' values at the largest N
    (``average_recall@N`` at N = 100 and 1000); for label maps' boundary distances one entry per class."""
    if family == "surface":
        row = flat_scalars(results)
        for key, value in results.items():
            if isinstance(value, list) and key not in ("classes", "skipped_empty_gt"):
                for c, v in zip(results.get("classes", []), value, strict=False):
                    row[f"{key}/{c}"] = math.nan if v is None else float(v)
        return row
    if family != "proposals":
        return flat_scalars(results)
    row = {}
    for key, _ in PROPOSAL_SUMMARY_COLUMNS:
        if key in results:
            row[key] = math.nan if results[key][-1] is None else float(results[key][-1])
    for i, n in enumerate(results["counts"]):
        if n in (100, 1000):
            value = results["average_recall"][i]
            row[f"average_recall@{n}"] = math.nan if value is None else float(value)
    return row


def _pr_curves(records: Mapping[str, Mapping[str, Any]], family: str, measure: str | None = None) -> dict[str, Any]:
    curves = {}
    for method, record in records.items():
        res = record["results"]
        if family == "foreground":
            f = res["f_measure"]
            curves[method] = {"recall": f["recall"], "precision": f["precision"], "value": f["max"]}
        elif family == "boundary":
            ods = res["ods"]
            # thresholds with (almost) no detection are left out, as BSR's plots do (R >= 0.01), not drawn as a
            # fall of the curve to (0, 0)
            recall, precision = np.asarray(res["recall"], dtype=float), np.asarray(res["precision"], dtype=float)
            kept = recall >= 0.01
            curves[method] = {
                "recall": recall[kept],
                "precision": precision[kept],
                "value": ods["f"],
                "point": (ods["recall"], ods["precision"]),
            }
        elif isinstance(res.get(measure), Mapping) and "recall" in res[measure]:
            # hierarchies have a PR curve per measure; a flat label map has one value per measure and no curve
            m = res[measure]
            curves[method] = {
                "recall": m["recall"],
                "precision": m["precision"],
                "value": m["ods"],
                "point": (m["ods_recall"], m["ods_precision"]),
            }
    return curves


def _threshold_curves(records: Mapping[str, Mapping[str, Any]], family: str, key: str) -> dict[str, Any]:
    curves = {}
    for method, record in records.items():
        res = record["results"]
        if family == "foreground":  # entry i binarises at trunc(255 p) >= 255 - i
            values = res[key]["curve"]
            curves[method] = {"thresholds": 255 - np.arange(len(values)), "values": values, "value": res[key]["max"]}
        else:
            curves[method] = {"thresholds": res["thresholds"], "values": res["f"], "value": res["ods"]["f"]}
    return curves


def _roc_curves(records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The mean dynamic ROC curve (recall against fpr over the 256 thresholds) of each method whose results have
    the size-invariant measures' ``auc_roc`` (``--measures siaucroc``), with that area as the legend's value."""
    curves = {}
    for method, record in records.items():
        si = record["results"].get("size_invariant_f_measure")
        if isinstance(si, Mapping) and "auc_roc" in si and "dynamic" in si.get("fpr", {}):
            curves[method] = {"fpr": si["fpr"]["dynamic"], "tpr": si["recall"]["dynamic"], "value": si["auc_roc"]}
    return curves


def _figures(
    dataset: str, family: str, records: Mapping[str, Mapping[str, Any]], config: Any = None
) -> dict[str, Callable[[list[Path]], Any]]:
    """``{file stem: draw(paths)}`` of one dataset and family (one drawing saved to every path); each method in
    the configuration's colour (``colors``), by its place in ``method_order``, ``highlight`` drawn thick on top, as
    in the grids."""

    colors = dict(getattr(config, "colors", {}) or {})
    highlight = getattr(config, "highlight", None)
    line_style = functools.partial(_line_style, colors=colors, highlight=highlight)
    order = list(getattr(config, "method_order", ()) or ()) or None
    plot_pr_curves = functools.partial(plots.plot_pr_curves, line_style=line_style, legend_order=order)
    plot_threshold_curves = functools.partial(plots.plot_threshold_curves, line_style=line_style, legend_order=order)

    stem = f"{slug(dataset)}_{family}"
    figures: dict[str, Callable[[list[Path]], Any]] = {}
    if family == "foreground":
        pr = _pr_curves(records, family)
        figures[f"{stem}_pr"] = lambda p: plot_pr_curves(pr, p, summary="maxF", title=f"{dataset}: PR curves")
        for key, label, short in (("f_measure", "F-measure", "maxF"), ("e_measure", "E-measure", "maxE")):
            curves = _threshold_curves(records, family, key)
            figures[f"{stem}_{key.split('_')[0]}measure"] = functools.partial(
                plot_threshold_curves,
                curves,
                ylabel=label,
                summary=short,
                xlim=(0, 255),
                title=f"{dataset}: {label} curves",
            )
        roc = _roc_curves(records)
        if roc:
            figures[f"{stem}_roc"] = lambda p: plots.plot_roc_curves(
                roc, p, summary="siAUC-ROC", title=f"{dataset}: ROC curves", line_style=line_style, legend_order=order
            )
    elif family == "boundary":
        pr = _pr_curves(records, family)
        f = _threshold_curves(records, family, "f")
        figures[f"{stem}_pr"] = lambda p: plot_pr_curves(
            pr, p, summary="ODS", iso_f=True, title=f"{dataset}: boundaries"
        )
        figures[f"{stem}_fmeasure"] = lambda p: plot_threshold_curves(
            f, p, ylabel="F-measure", summary="ODS", title=f"{dataset}: boundary F"
        )
    elif family == "proposals":
        results = {method: record["results"] for method, record in records.items()}

        def draw(paths: list[Path]) -> None:
            for p in paths:  # plot_proposal_recall takes one path
                plot_proposal_recall(results, p, title=f"{dataset}: object proposals")

        figures[f"{stem}_recall"] = draw
    elif family == "surface":
        figure = _surface_figure(dataset, records, line_style, order)
        if figure is not None:
            figures[f"{stem}_distributions"] = figure
    else:
        for m in _PR_MEASURES:
            curves = _pr_curves(records, family, m)
            if curves:
                figures[f"{stem}_{m}_pr"] = functools.partial(
                    plot_pr_curves, curves, summary="ODS", iso_f=True, title=f"{dataset}: {measure_name(m)}"
                )
    return figures


def _surface_figure(
    dataset: str, records: Mapping[str, Mapping[str, Any]], line_style: Any, order: list[str] | None
) -> Callable[[list[Path]], Any] | None:
    """The boundary-distance family's figure: per-image distributions of HD<q>, ASSD and NSD (those computed) per
    method and class (:func:`~.figures.plot_surface_distributions`); None when no record has per-image values."""

    per_image = {m: r["results"].get("per_image") or {} for m, r in records.items()}
    if not any(per_image.values()):
        return None
    first = next(iter(records.values()))
    q = f"{float(first['settings'].get('percentile', 95.0)):g}"
    labels = {"hausdorff_percentile": f"HD{q}", "assd": "ASSD", "nsd": "NSD"}
    measures = [(k, label) for k, label in labels.items() if any(k in r["results"] for r in records.values())]
    if not measures:
        return None
    classes = first["results"].get("classes")
    return functools.partial(
        plots.plot_surface_distributions,
        per_image,
        measures=measures,
        classes=classes,
        class_names=first["results"].get("class_names"),
        title=f"{dataset}: per-image boundary distances",
        line_style=line_style,
        legend_order=order,
    )


def _swap(write: Callable[[Any, Path], Any], what: Any, path: Path) -> None:
    write(what, path)


def _write_text(text: str, path: Path) -> None:
    path.write_text(text, encoding="utf-8")


def _nothing(path: Path) -> None:
    """The other formats of a figure: already saved by the first format's writer."""


def _draw_formats(draw: Callable[[list[Path]], Any], formats: list[str], path: Path) -> None:
    """Draw once, saved as ``path`` in every format."""
    draw([path.with_suffix(f".{fmt}") for fmt in formats])


def _per_image_rows(by_method: Mapping[str, Mapping[str, Any]], keys: list[str]) -> list[dict[str, Any]]:
    """One row per (method, image) of the records that carry per-image scalars: the table's measures where the
    per-image values are named like the table's columns (foreground), else every per-image number (the boundary
    family's best threshold / recall / precision / F, the partition measures of label maps)."""
    rows = []
    for method, record in by_method.items():
        per_image = record["results"].get("per_image")
        if not isinstance(per_image, Mapping):
            continue
        for image, values in per_image.items():
            if isinstance(values, Mapping) and all(isinstance(v, (int, float)) or v is None for v in values.values()):
                picked = {k: values.get(k) for k in keys if k in values} or dict(values)
                rows.append({"method": method, "image": image, **picked})
    return rows


def _total(record: Mapping[str, Any]) -> int:
    return record.get("num_ground_truths") or record["num_images"] + len(record.get("missing_predictions", []))


def _subsets_differ(by_method: Mapping[str, Mapping[str, Any]]) -> bool:
    return len({record["num_images"] for record in by_method.values()}) > 1


def _images_header(by_method: Mapping[str, Mapping[str, Any]]) -> str:
    """How many images the table's numbers average over, and which: all, the common subset, or per method."""
    counts = sorted({record["num_images"] for record in by_method.values()})
    total = max(_total(record) for record in by_method.values())
    if len(counts) > 1:
        return f"each method on its own images ({' / '.join(map(str, counts))} of {total}; see the images column)"
    if counts[0] < total:
        common = any(record.get("compared_on") == "common" for record in by_method.values())
        which = f"the ones all {len(by_method)} methods have" if common and len(by_method) > 1 else "the evaluated ones"
        return f"{counts[0]} of {total} image(s), {which}"
    return f"{counts[0]} image(s)"


def _combined_files(
    files: dict[str, Callable[[Path], Any]],
    per_family: Mapping[str, Mapping[str, Any]],
    curves: Mapping[str, Mapping[str, Any]],
    config: Any,
    markdown: list[str],
) -> None:
    """The combined tables (``combined.md``, ``combined.tex``, ``csv/combined_<family>.csv``, ``combined.xlsx``) and
    the grid figures (``figures/grid_<family>_<kind>``), one subplot per dataset."""

    order = list(getattr(config, "method_order", ()) or ())
    digits = getattr(config, "digits", 3)
    tables = [combine(family, datasets, order, digits) for family, datasets in per_family.items()]
    legend = (
        "Methods as rows, every dataset's measures as columns; per column 1st **bold**, 2nd "
        "<ins>underlined</ins>, 3rd _italic_ (compared as printed, 3 decimals); ↑ higher is better, ↓ lower is "
        "better."
    )
    md = ["# Combined tables", "", legend, ""]
    tex = ["% needs \\usepackage{booktabs} and \\usepackage{graphicx}; generated by segmetrics evaluate", LATEX_MACROS]
    for table in tables:
        title = f"{_FAMILY_TITLES[table.family]}: {', '.join(table.datasets)}"
        md += [f"## {title}", "", format_combined_markdown(table), ""]
        tex.append(format_combined_latex(table, title, f"tab:combined-{table.family}"))
        files[f"csv/combined_{table.family}.csv"] = functools.partial(_swap, write_combined_csv, table)
    files["combined.md"] = functools.partial(_write_text, "\n".join(md))
    files["combined.tex"] = functools.partial(_write_text, "\n\n".join(tex) + "\n")
    if getattr(config, "xlsx", False):
        files["combined.xlsx"] = functools.partial(_swap, write_combined_xlsx, tables)
    markdown[2:2] = ["All datasets in one table: [combined.md](combined.md).", ""]
    if not config.figures:
        return
    formats = list(config.figures)
    for name, panels in curves.items():
        kind = "pr" if name.endswith("_pr") else "threshold"
        stem = f"figures/grid_{name}"
        ylabel = "E-measure" if name.endswith("_emeasure") else "F-measure"
        draw = functools.partial(
            plot_grid,
            panels,
            kind=kind,
            method_order=order,
            colors=getattr(config, "colors", {}) or {},
            highlight=getattr(config, "highlight", None),
            style=getattr(config, "style", None),
            ylabel=ylabel,
        )
        files[f"{stem}.{formats[0]}"] = functools.partial(_draw_formats, draw, formats)
        for fmt in formats[1:]:
            files[f"{stem}.{fmt}"] = _nothing


def _results_document(records: Mapping[str, Any], config: Any) -> dict[str, Any]:
    """``results.json``: the version, the configuration that made the run (folders resolved) and every record."""

    return {
        "segmetrics_version": __version__,
        "generated_by": "segmetrics evaluate",
        "config": {
            "source": config.source,
            "datasets": {
                d.name: {"gt": str(d.gt.resolve()), "families": list(d.families), "gt_labels": d.gt_labels}
                for d in config.datasets
            },
            "methods": {m.name: m.preds for m in config.methods},
            "options": config.options,
            "resize": config.resize,
            "allow_missing": config.allow_missing,
            "skip_bad": config.skip_bad,
            "compare_on": config.compare_on,
            "pairing": config.pairing,
            "cache_check": config.cache_check,
        },
        "results": records,
    }


def _add_curves(curves: dict[str, dict[str, Any]], dataset: str, family: str, by_method: Mapping[str, Any]) -> None:
    """The curves of the combined figures: PR and F against the threshold (foreground, boundary), E against the
    threshold (foreground), as ``curves[figure][dataset]``."""
    if family in ("foreground", "boundary"):
        curves.setdefault(f"{family}_pr", {})[dataset] = _pr_curves(by_method, family)
        key = "f_measure" if family == "foreground" else "f"
        curves.setdefault(f"{family}_fmeasure", {})[dataset] = _threshold_curves(by_method, family, key)
        if family == "foreground":
            curves.setdefault("foreground_emeasure", {})[dataset] = _threshold_curves(by_method, family, "e_measure")


def render_report(
    records: Mapping[str, Mapping[str, Mapping[str, Mapping[str, Any]]]], config: Any
) -> tuple[dict[str, Callable[[Path], None]], str]:
    """``({relative path: write(path)}, terminal tables)`` of a run's records."""

    files: dict[str, Callable[[Path], Any]] = {}
    terminal, markdown, latex = [], ["# Evaluation report", ""], []
    order = list(getattr(config, "method_order", ()) or ())
    per_family: dict[str, dict[str, Any]] = {}
    curves: dict[str, dict[str, dict[str, Any]]] = {}
    for dataset, families in records.items():
        for family, by_method in families.items():
            by_method = {m: by_method[m] for m in [*order, *by_method] if m in by_method}
            columns, lower = table_columns(family, by_method)
            rows = {method: table_row(family, record["results"]) for method, record in by_method.items()}
            counted = {m: {"num_images": float(by_method[m]["num_images"]), **values} for m, values in rows.items()}
            per_family.setdefault(family, {})[dataset] = (columns, lower, counted)
            _add_curves(curves, dataset, family, by_method)
            title = f"{dataset}: {_FAMILY_TITLES[family]}, {_images_header(by_method)}"
            if _subsets_differ(by_method):
                # methods scored on different images: every table says how many each was scored on
                columns = [("num_images", "images"), *columns]
                for method, record in by_method.items():
                    rows[method]["num_images"] = int(record["num_images"])
            terminal.append(f"{title}\n{format_table(rows, columns)}")
            figures = _figures(dataset, family, by_method, config) if config.figures else {}
            markdown += [
                f"## {title}",
                "",
                format_markdown_table(rows, columns, lower_is_better=lower, digits=config.digits),
                "",
                "Best value of each column in bold; ↑ higher is better, ↓ lower is better.",
                "",
            ]
            if "png" in config.figures:
                markdown += [f"![{name}](figures/{name}.png)" for name in figures] + [""]
            latex.append(
                format_latex_table(
                    rows,
                    columns,
                    lower_is_better=lower,
                    digits=config.digits,
                    caption=title,
                    label=f"tab:{slug(dataset)}-{family}",
                )
            )
            csv_rows = {m: {"num_images": by_method[m]["num_images"], **values} for m, values in rows.items()}
            files[f"csv/{slug(dataset)}_{family}.csv"] = functools.partial(write_csv, rows=csv_rows)
            per_image = _per_image_rows(by_method, [key for key, _ in columns if key != "num_images"])
            if per_image:
                files[f"csv/{slug(dataset)}_{family}_per_image.csv"] = functools.partial(write_rows, rows=per_image)
            for name, draw in figures.items():
                # drawn once: the first format's writer saves every format; the others are then already there
                formats = list(config.figures)
                files[f"figures/{name}.{formats[0]}"] = functools.partial(_draw_formats, draw, formats)
                for fmt in formats[1:]:
                    files[f"figures/{name}.{fmt}"] = lambda p: None
    _combined_files(files, per_family, curves, config, markdown)
    report = _results_document(records, config)
    files["results.json"] = lambda p: write_json(p, report)
    files["tables.md"] = lambda p: p.write_text("\n".join(markdown), encoding="utf-8")
    preamble = "% needs \\usepackage{booktabs}; generated by segmetrics evaluate\n"
    files["tables.tex"] = lambda p: p.write_text(preamble + "\n\n".join(latex) + "\n", encoding="utf-8")
    return files, "\n\n".join(terminal)


def html_page_folders(out_dir: Path, families: Sequence[str]) -> dict[str, Path]:
    """Where :func:`write_records_html` writes the page of each of ``families`` (a report's configured families):
    ``out_dir`` itself for one family, ``out_dir/<family>`` for several. The one place of that layout: a command
    checks these folders before the run (``html_report.html_folder_output``, output safety) and writes them after.

    Example:
        >>> html_page_folders(Path("html"), ["foreground", "boundary"])["boundary"]
        PosixPath('html/boundary')
    """
    unique = list(dict.fromkeys(families))
    return {family: Path(out_dir) if len(unique) == 1 else Path(out_dir) / family for family in unique}


def records_html(
    out_dir: Path,
    records: Mapping[str, Mapping[str, Mapping[str, Mapping[str, Any]]]],
    pairs: Mapping[tuple[str, str, str], Sequence[tuple[str, Path, Path]]],
    *,
    families: Sequence[str] | None = None,
    figures: Sequence[Path] = (),
    digits: int = 3,
) -> list[HtmlReport]:
    """The HTML error browser (:class:`~.html_report.HtmlReport`) of a report's records
    (``records[dataset][family][method]``), to be written with the report's folder (:class:`ReportFolder`, one set:
    :func:`~.files.write_together`): one page per family, in the folders of :func:`html_page_folders` of the
    report's ``families`` (default: those of the records). ``pairs``: the ``(image, prediction, ground truth)``
    files of each ``(dataset, family, method)``, for the thumbnails and overlays; ``figures``: the report's figures
    (those whose file name names a family go to its page; :meth:`ReportFolder.staged` while the report is written).
    Each page shows the family's table columns, then every other number of the per-image rows; directions are the
    registry's.
    """
    present = list(dict.fromkeys(f for by_family in records.values() for f in by_family))
    folders = html_page_folders(out_dir, families if families is not None else present)
    pages: list[HtmlReport] = []
    for family in present:
        by_dataset = {d: by_family[family] for d, by_family in records.items() if family in by_family}
        every = {f"{d}/{m}": r for d, by_method in by_dataset.items() for m, r in by_method.items()}
        columns, _ = table_columns(family, every)
        rows = [
            row
            for d, by_method in by_dataset.items()
            for m, r in by_method.items()
            for row in per_image_rows(m, d, r["results"].get("per_image") or {})
        ]
        shown, directions = html_columns(family, columns, rows)
        tables = {
            d: {m: {k: table_row(family, r["results"]).get(k) for k, _ in shown} for m, r in by_method.items()}
            for d, by_method in by_dataset.items()
        }
        predictions: dict[tuple[str, str], dict[str, Path]] = {}
        truths: dict[tuple[str, str], Path] = {}
        for (d, f, m), files in pairs.items():
            if f == family and m in by_dataset.get(d, {}):
                for stem, pred, gt in files:
                    predictions.setdefault((d, stem), {})[m] = pred
                    truths[(d, stem)] = gt
        settings = next(iter(every.values())).get("settings", {})
        pages.append(
            HtmlReport(
                folders[family],
                family=family,
                title=f"{_FAMILY_TITLES.get(family, family)}: {', '.join(by_dataset)}",
                columns=shown,
                higher_is_better=directions,
                tables=tables,
                per_image=rows,
                images=[HtmlImage(d, stem, truths[d, stem], by) for (d, stem), by in predictions.items()],
                figures=[p for p in figures if family in p.name],
                options=settings,
                digits=digits,
            )
        )
    return pages


def write_records_html(
    out_dir: Path,
    records: Mapping[str, Mapping[str, Mapping[str, Mapping[str, Any]]]],
    pairs: Mapping[tuple[str, str, str], Sequence[tuple[str, Path, Path]]],
    *,
    families: Sequence[str] | None = None,
    figures: Sequence[Path] = (),
    digits: int = 3,
) -> list[Path]:
    """The pages of :func:`records_html` written on their own, all together; returns the pages written."""
    pages = records_html(out_dir, records, pairs, families=families, figures=figures, digits=digits)
    write_together(pages, locked=True)
    return [page.target for page in pages]


#: the list of files a report wrote, in its folder: the next report removes those it does not write again
MANIFEST = ".segmetrics-manifest.json"
#: the prefix of a report's temporary folder inside its output folder
_TEMP_PREFIX = ".segmetrics-report-"


def _manifest_files(folder: Path) -> list[str] | None:
    """The files the manifest of ``folder`` lists; None without a readable manifest."""
    try:
        files = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("files", [])
    except (OSError, ValueError, AttributeError, RecursionError):
        return None
    return [f for f in files if isinstance(f, str)] if isinstance(files, list) else None


def _write_manifest(folder: Path, relatives: Sequence[str]) -> None:
    text = json.dumps({"format": "segmetrics-report-manifest/1", "files": list(relatives)}, indent=1)
    write_atomically(folder / MANIFEST, lambda path: path.write_text(text + "\n", encoding="utf-8"))


def foreign_report_files(folder: str | Path, relatives: Iterable[str] | None = None) -> list[str]:
    """The files a report would replace in ``folder`` that no report wrote: of ``relatives`` (the report's files;
    default: the top-level files every report writes, :data:`~.output_safety.REPORT_FILES`), those that exist and
    that the folder's manifest (:data:`MANIFEST`) does not list. A folder without a manifest whose ``results.json`` is
    a report's (its ``generated_by`` and ``config``: a report of a version before the manifest) counts as a report's
    own."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    if relatives is None:
        relatives = sorted(REPORT_FILES - {MANIFEST, ".segmetrics-lock"})
    manifest = _manifest_files(folder)
    if manifest is None:
        try:
            earlier = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            earlier = None
        # a report's own document (report.py, protocol_report.py), not a single run's --json, which has the
        # version too: "generated_by" names a report, and the configuration that made it is recorded
        made_by = earlier.get("generated_by", "") if isinstance(earlier, dict) else ""
        if isinstance(made_by, str) and made_by.startswith("segmetrics evaluate") and "config" in earlier:
            return []
    listed = set(manifest or ())
    return [r for r in relatives if r not in listed and ((folder / r).exists() or (folder / r).is_symlink())]


def check_report_folder(
    folder: str | Path, relatives: Iterable[str] | None = None, option: str = "the output folder"
) -> None:
    """Raise :class:`InputError` when the report would replace files of ``folder`` that no report wrote
    (:func:`foreign_report_files`): checked before a run with the top-level names and again, with every file's
    name, before anything is written."""
    foreign = foreign_report_files(folder, relatives)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" ... and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise InputError(
            f"{option} {folder} holds {shown}, which the report would replace but no report wrote (they are not in "
            f"its {MANIFEST}): move them or choose another output folder"
        )


class ReportFolder:
    """A report's files (``relative path -> write(path)``) in ``folder``, as one output of a set
    (:class:`~.files.StagedOutput`: :func:`~.files.write_together` writes it with the report's HTML pages, so that
    an interruption or a failure leaves the previous report and pages or the new ones). Checked when written
    (``check``, before anything is made): a user's own ``results.json``, tables or ``csv/`` files are never replaced
    (:func:`check_report_folder`). ``stage`` renders every file into a temporary folder inside ``folder``;
    ``commit`` records them in the manifest (which lists a file before it is moved in, so that an interruption
    leaves nothing the next run would take for the user's own), moves them into place (``os.replace``, atomic per
    file, a replaced file's mode kept), then removes the files the previous report listed and this one does not
    write (:func:`replace_manifest`): no table or figure is left that the new tables do not describe; files a report
    never wrote are not touched. ``written``: the paths written, once committed.
    """

    def __init__(self, folder: str | Path, files: Mapping[str, Callable[[Path], Any]]) -> None:
        self.folder, self.files = Path(folder), dict(files)
        # named now, made by stage (after a killed run's temporary folders are removed): the report's HTML pages are
        # given the figures' paths in it before the set is written (:meth:`staged`)
        self._temp = self.folder / f"{_TEMP_PREFIX}{secrets.token_hex(8)}"
        self.written: list[Path] = []

    @property
    def target(self) -> Path:
        """The manifest (its folder is the report's)."""
        return self.folder / MANIFEST

    def check(self) -> None:
        """No file of the user's at a name the report writes (:func:`check_report_folder`), as the folder is now."""
        check_report_folder(self.folder, self.files)

    def staged(self, relative: str) -> Path:
        """Where ``relative`` is rendered before the set moves in: for an output of the same set drawn from it (the
        HTML pages copy the report's figures)."""
        return self._temp / relative

    def stage(self) -> None:
        # (the folder, the target's, was made by write_together) a run killed (SIGKILL, power loss) while writing
        # leaves its temporary folder behind: the next run into the same output removes it (under the folder's lock,
        # or one run per output folder, as documented)
        remove_stale_folders(self.folder, _TEMP_PREFIX)
        self._temp.mkdir()
        for relative, write in self.files.items():
            self.staged(relative).parent.mkdir(parents=True, exist_ok=True)
            write(self.staged(relative))

    def commit(self) -> None:
        # the manifest lists every file before it is moved in (signals are held: only a SIGKILL can stop the moves,
        # and then no report file is left that the next run would take for the user's own); written here, not when
        # staged, so that a set that fails leaves the previous manifest (a wider one would let the next report
        # remove a user's file at a name this one never wrote)
        _write_manifest(self.folder, sorted(set(_manifest_files(self.folder) or ()) | set(self.files)))
        for relative in self.files:
            final = self.folder / relative
            final.parent.mkdir(parents=True, exist_ok=True)
            keep_mode(self.staged(relative), final)  # a file the user made private stays private
            os.replace(self.staged(relative), final)
            self.written.append(final)
        remove_tree(self._temp)
        replace_manifest(self.folder, sorted(self.files))

    def discard(self) -> None:
        # (a report folder this set made is removed by write_together, and only when it is empty: another run's
        # report or a user's file put there meanwhile stays)
        remove_tree(self._temp)


def write_report_folder(folder: str | Path, files: Mapping[str, Callable[[Path], Any]]) -> list[Path]:
    """Write a report's files (``relative path -> write(path)``) into ``folder`` on their own (:class:`ReportFolder`:
    rendered into a temporary folder inside it, then moved into place while Ctrl-C and ``SIGTERM`` wait; a failure
    while rendering writes nothing, and a folder this call created is removed again; then the files the previous
    report listed and this one does not write are removed). Every report of the command is written so (``evaluate
    --config`` with its HTML pages, the protocol reports).

    Returns:
        The paths written.
    """
    report = ReportFolder(folder, files)
    write_together([report], locked=True)
    return report.written


def replace_manifest(folder: Path, relatives: list[str]) -> list[str]:
    """Remove the files the previous report of ``folder`` listed in its manifest (:data:`MANIFEST`) and
    ``relatives`` does not name (only names a report owns: :func:`~.output_safety.report_owns`, inside the folder;
    emptied sub-folders go too), then record ``relatives``; the paths removed."""
    removed = []
    # no manifest (first report, or one of an older version): nothing is known to be stale
    previous = _manifest_files(folder) or []
    keep = set(relatives)
    root = folder.resolve()
    for relative in previous:
        if not isinstance(relative, str) or relative in keep or not report_owns(relative):
            continue  # a manifest names only files a report writes: anything else there is not removed
        path = folder / relative
        # only a file at its own name inside the folder: a link at that name or along the way is not the report's
        # file (it was replaced by the user's link: removing through it deleted the file the link points to)
        if path.is_symlink() or not path.is_file() or path.resolve() != root / relative:
            continue
        path.unlink()
        removed.append(relative)
        parent = path.parent
        while parent != root and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    _write_manifest(folder, relatives)
    return removed
