"""Figures in the style of published evaluations (matplotlib, the optional extra ``plot``).

Every function takes results as returned by the metrics' ``compute()`` (tensors or plain lists), one entry per method,
draws one line per method and writes the figure to ``path`` (the suffix picks the format: ``.png``, ``.pdf``, ``.svg``).
matplotlib is imported lazily with the non-interactive Agg backend, so nothing here needs a display.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .files import write_atomically

__all__ = ["plot_pr_curves", "plot_proposal_recall", "plot_threshold_curves"]

#: the panels of :func:`plot_proposal_recall`: (result key without prefix, y label)
PROPOSAL_PANELS: tuple[tuple[str, str], ...] = (
    ("recall_50", "recall at {v} > 0.5"),
    ("recall_70", "recall at {v} > 0.7"),
    ("average_recall", "average recall ({v} 0.5:0.05:0.95)"),
    ("{value}_object", "mean best {v} per object"),
)


def _pyplot() -> Any:  # matplotlib.pyplot, imported on first use
    try:
        import matplotlib
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError("Figures need matplotlib: pip install 'segmetrics-torch[plot]'.") from error
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _array(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def _save(fig: Any, path: str | Path) -> Path:
    path = Path(path)
    write_atomically(path, lambda t: fig.savefig(t, dpi=150, bbox_inches="tight"))
    return path


def plot_proposal_recall(
    results: Mapping[str, Mapping[str, Any]],
    path: str | Path,
    *,
    boundary: bool | None = None,
    title: str | None = None,
) -> Path:
    """Object-proposal curves vs the number of proposals (log axis), as in the MCG / SEISM papers.

    Panels: recall at J > 0.5 and J > 0.7, average recall over 0.5:0.05:0.95, and the mean best J per object (with
    J_c dashed when present); a second row with the morphological boundary F when the results hold it. The x value
    of each point is the mean number of proposals per image (``num_proposals``), so pools smaller than N flatten the
    curve where they run out, as in the MCG plots. The legend gives each method's average recall at its largest N.

    Args:
        results: ``{method: ProposalRecall.compute() result}`` (tensors or lists).
        path: output file; the suffix picks the format.
        boundary: draw the boundary-F row (default: when every result has ``boundary_f_object``).
        title: figure title.

    Returns:
        The written path.
    """
    if not results:
        raise ValueError("Expected at least one method in `results`, but got none.")
    if boundary is None:
        boundary = all("boundary_f_object" in r for r in results.values())
    rows = [("", "jaccard", "J")] + ([("boundary_", "f", "F")] if boundary else [])
    plt = _pyplot()
    fig, axes = plt.subplots(
        len(rows), len(PROPOSAL_PANELS), figsize=(4.2 * len(PROPOSAL_PANELS), 3.6 * len(rows)), squeeze=False
    )
    for r, (prefix, value, symbol) in enumerate(rows):
        for c, (key, label) in enumerate(PROPOSAL_PANELS):
            ax = axes[r, c]
            full = prefix + key.format(value=value)
            for i, (method, res) in enumerate(results.items()):
                if full not in res:
                    raise ValueError(f"Expected key {full!r} in the results of {method!r}.")
                x, y = _array(res["num_proposals"]), _array(res[full])
                colour = f"C{i % 10}"
                ar = _array(res[f"{prefix}average_recall"])[-1]
                ax.plot(x, y, color=colour, lw=1.6, label=f"{method} (AR {ar:.3f})")
                class_key = f"{prefix}{value}_class"
                if key == "{value}_object" and class_key in res:
                    ax.plot(x, _array(res[class_key]), color=colour, lw=1.2, ls="--")
            ax.set_xscale("log")
            ax.set_xlabel("number of proposals")
            ax.set_ylabel(label.format(v=symbol))
            ax.set_ylim(0, 1)
            ax.grid(True, which="both", alpha=0.3)
            if key == "{value}_object" and any(f"{prefix}{value}_class" in res for res in results.values()):
                ax.set_title(f"solid: per object, dashed: class-averaged {symbol}_c", fontsize=8)
    axes[0, 0].legend(fontsize=8, loc="lower right")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out = _save(fig, path)
    plt.close(fig)
    return out


#: the iso-F contours' colour: a light grey that no method's line takes (the default cycle's grey is #7f7f7f)
ISO_F_COLOUR = "#c4c4c4"

#: line styles after the 10 colours of the default cycle, so up to 40 methods stay distinguishable
_STYLES = ("-", "--", "-.", ":")


def _style(i: int) -> dict[str, Any]:
    return {"color": f"C{i % 10}", "ls": _STYLES[(i // 10) % len(_STYLES)], "lw": 1.5}


def _paper_rc() -> dict[str, Any]:
    # serif text at the size of a two-column paper's figure; light grid as PySODEvalToolkit and the BSDS plots
    return {
        "font.family": "serif",
        "font.size": 9,
        "legend.fontsize": 7.5,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "pdf.fonttype": 42,
        # method and dataset names are the user's text: "net_$alpha" is a name, not mathtext (which would fail)
        "text.parse_math": False,
    }


def _save_figure(fig: Any, path: str | Path | Sequence[str | Path]) -> Path | list[Path]:
    """Save to one path, or to several (one drawing, e.g. PNG and PDF); returns what it was given, as paths."""
    paths = [Path(path)] if isinstance(path, (str, Path)) else [Path(p) for p in path]
    for p in paths:
        # no creation date in PDFs: the same results give the same bytes
        metadata = {"CreationDate": None} if p.suffix.lower() == ".pdf" else None
        write_atomically(p, functools.partial(fig.savefig, dpi=200, bbox_inches="tight", metadata=metadata))
    return paths[0] if isinstance(path, (str, Path)) else paths


def _ordered(
    curves: Mapping[str, Mapping[str, Any]], legend_order: Sequence[str] | None = None
) -> list[tuple[int, str, Mapping[str, Any]]]:
    """Methods with their colour index (order of ``curves``), listed in ``legend_order`` when given (the
    configuration's ``method_order``), else best summary value first as in papers."""
    items = [(i, name, c) for i, (name, c) in enumerate(curves.items())]
    if legend_order:
        rank = {name: k for k, name in enumerate(legend_order)}
        return sorted(items, key=lambda item: (rank.get(item[1], len(rank)), item[0]))
    return sorted(items, key=lambda item: -np.nan_to_num(float(item[2]["value"]), nan=-np.inf))


def plot_pr_curves(
    curves: Mapping[str, Mapping[str, Any]],
    path: str | Path | Sequence[str | Path],
    *,
    summary: str = "maxF",
    title: str | None = None,
    line_style: Callable[[int, str], dict[str, Any]] | None = None,
    legend_order: Sequence[str] | None = None,
    iso_f: bool = False,
) -> Path | list[Path]:
    """Precision-recall curves, one line per method, the summary value (ODS / max F) in the legend.

    Args:
        curves: ``{method: {"recall": (K,), "precision": (K,), "value": float}}`` (tensors, arrays or lists), with
            an optional ``"point": (recall, precision)`` drawn as a dot on the line (the BSDS ODS point).
        path: output file, or several (the figure is drawn once); the suffix picks the format (``.png``, ``.pdf``,
            ``.svg``).
        summary: the name of ``value`` in the legend (``"maxF"``, ``"ODS"``).
        title: axes title.
        iso_f: draw the iso-F contours F = 0.1 .. 0.9 as the BSDS benchmark's plots do (in :data:`ISO_F_COLOUR`).
        line_style: ``(colour index, method) -> matplotlib line keywords`` (the report's colours, order and
            highlight); default: the default colour cycle.
        legend_order: the legend's order (the report's ``method_order``); default: best ``value`` first.

    Returns:
        The written path(s). Legend entries follow ``legend_order``, else ``value``, best first (NaN last).
    """

    def iso_f_lines(ax: Any) -> None:
        r = np.linspace(0.01, 1, 200)
        for f in np.arange(0.1, 1.0, 0.1):
            p = f * r / (2 * r - f)
            ok = (p > 0) & (p <= 1)
            ax.plot(r[ok], p[ok], color=ISO_F_COLOUR, lw=0.6, ls=":", zorder=0)
            ax.annotate(
                f"{f:.1f}",
                (r[ok][-1], p[ok][-1]),
                fontsize=6,
                color=ISO_F_COLOUR,
                xytext=(1, -6),
                textcoords="offset points",
            )

    return _unit_square_curves(
        curves,
        path,
        ("recall", "precision"),
        ("Recall", "Precision"),
        summary=summary,
        title=title,
        line_style=line_style,
        legend_order=legend_order,
        legend_loc="lower left",
        background=iso_f_lines if iso_f else None,
    )


def _unit_square_curves(
    curves: Mapping[str, Mapping[str, Any]],
    path: str | Path | Sequence[str | Path],
    keys: tuple[str, str],
    labels: tuple[str, str],
    *,
    summary: str,
    title: str | None,
    line_style: Callable[[int, str], dict[str, Any]] | None,
    legend_order: Sequence[str] | None,
    legend_loc: str,
    background: Callable[[Any], None] | None = None,
) -> Path | list[Path]:
    """One curve per method on [0, 1]^2 (``curves[method][keys[0]]`` against ``[keys[1]]``, an optional ``"point"``
    as a dot), ``value`` in the legend as ``summary``, ``background(ax)`` drawn first: the PR and ROC figures."""
    if not curves:
        raise ValueError("Expected at least one method in `curves`, but got none.")
    plt = _pyplot()
    with plt.rc_context(_paper_rc()):
        fig, ax = plt.subplots(figsize=(3.6, 3.4))
        if background is not None:
            background(ax)
        for i, name, c in _ordered(curves, legend_order):
            x, y = _array(c[keys[0]]), _array(c[keys[1]])
            if x.shape != y.shape:
                raise ValueError(f"{name}: `{keys[0]}` {x.shape} and `{keys[1]}` {y.shape} differ in shape.")
            style = line_style(i, name) if line_style is not None else _style(i)
            ax.plot(x, y, label=f"{name} [{summary}={float(c['value']):.3f}]", **style)
            if c.get("point") is not None:
                ax.plot(*(float(v) for v in c["point"]), "o", color=style["color"], ms=4)
        ax.set(xlim=(0, 1), ylim=(0, 1), xlabel=labels[0], ylabel=labels[1], aspect="equal")
        if title:
            ax.set_title(title)
        ax.legend(loc=legend_loc)
        out = _save_figure(fig, path)
        plt.close(fig)
    return out


def plot_roc_curves(
    curves: Mapping[str, Mapping[str, Any]],
    path: str | Path | Sequence[str | Path],
    *,
    summary: str = "AUC-ROC",
    title: str | None = None,
    line_style: Callable[[int, str], dict[str, Any]] | None = None,
    legend_order: Sequence[str] | None = None,
) -> Path | list[Path]:
    """ROC curves (true-positive rate against false-positive rate), one line per method, with the chance diagonal.

    Args:
        curves: ``{method: {"fpr": (K,), "tpr": (K,), "value": float}}`` (tensors, arrays or lists); ``value``
            (an area under the ROC curve) goes in the legend.
        path: output file(s), as :func:`plot_pr_curves`.
        summary: the name of ``value`` in the legend (the report: ``"siAUC-ROC"``, PySODMetrics' recorder's
            ``si_sample_auc_roc``, the mean over images of the targets' areas, not the area under the drawn mean).
        title, line_style, legend_order: as :func:`plot_pr_curves`.

    Returns:
        The written path(s).
    """

    def chance(ax: Any) -> None:
        ax.plot([0, 1], [0, 1], color=ISO_F_COLOUR, lw=0.6, ls=":", zorder=0)

    return _unit_square_curves(
        curves,
        path,
        ("fpr", "tpr"),
        ("False-positive rate", "True-positive rate"),
        summary=summary,
        title=title,
        line_style=line_style,
        legend_order=legend_order,
        legend_loc="lower right",
        background=chance,
    )


def plot_threshold_curves(
    curves: Mapping[str, Mapping[str, Any]],
    path: str | Path | Sequence[str | Path],
    *,
    ylabel: str,
    summary: str = "max",
    xlabel: str = "Threshold",
    xlim: tuple[float, float] | None = None,
    title: str | None = None,
    line_style: Callable[[int, str], dict[str, Any]] | None = None,
    legend_order: Sequence[str] | None = None,
) -> Path | list[Path]:
    """A measure against the binarisation threshold (F- or E-measure curves), one line per method.

    Args:
        curves: ``{method: {"thresholds": (K,), "values": (K,), "value": float}}``; ``value`` (e.g. max F) goes in
            the legend.
        path: output file(s), as :func:`plot_pr_curves`.
        ylabel: the measure's name on the y axis.
        summary: the name of ``value`` in the legend.
        xlabel, xlim: the x axis (default limits: the thresholds' range).
        title: axes title.
        line_style: as :func:`plot_pr_curves`.

    Returns:
        The written path(s).
    """
    if not curves:
        raise ValueError("Expected at least one method in `curves`, but got none.")
    plt = _pyplot()
    with plt.rc_context(_paper_rc()):
        fig, ax = plt.subplots(figsize=(3.8, 3.0))
        low, high = np.inf, -np.inf
        for i, name, c in _ordered(curves, legend_order):
            x, y = _array(c["thresholds"]), _array(c["values"])
            if x.shape != y.shape:
                raise ValueError(f"{name}: `thresholds` {x.shape} and `values` {y.shape} differ in shape.")
            low, high = min(low, float(x.min())), max(high, float(x.max()))
            style = line_style(i, name) if line_style is not None else _style(i)
            ax.plot(x, y, label=f"{name} [{summary}={float(c['value']):.3f}]", **style)
        ax.set(xlim=xlim or (low, high), xlabel=xlabel, ylabel=ylabel)
        if title:
            ax.set_title(title)
        ax.legend(loc="lower center")
        out = _save_figure(fig, path)
        plt.close(fig)
    return out


def plot_surface_distributions(
    per_image: Mapping[str, Mapping[str, Mapping[str, Any]]],
    path: str | Path | Sequence[str | Path],
    *,
    measures: Sequence[tuple[str, str]],
    classes: Sequence[int] | None = None,
    title: str | None = None,
    line_style: Callable[[int, str], dict[str, Any]] | None = None,
    legend_order: Sequence[str] | None = None,
    class_names: Sequence[str] | None = None,
) -> Path | list[Path]:
    """Per-image distributions of the boundary-distance measures: one panel per measure, one box per method (and
    class, for label maps), as medical-segmentation papers show HD95 or NSD.

    Args:
        per_image: ``{method: {image: {measure: value, or a list of one value per class}}}`` (the records'
            ``per_image``).
        path: output file(s), as :func:`plot_pr_curves`.
        measures: ``(key, axis label)`` of the panels (e.g. ``("hausdorff_percentile", "HD95")``).
        classes: the classes of label maps (the lists' order); None for masks.
        title: the figure's title.
        line_style: the report's colours, as :func:`plot_pr_curves` (only the colour is used).
        legend_order: the order of the methods (the report's ``method_order``); default: as given.
        class_names: the names of ``classes`` (same order), shown under the boxes; default "class <label>".

    An image whose value is infinite (a structure one side misses) or NaN (nothing to compare, or MONAI's percentile
    HD of a missed structure) cannot sit on a box: the boxes hold the finite values, and the others are counted above
    each box ("+k inf", "k nan").

    Returns:
        The written path(s).
    """
    if not per_image:
        raise ValueError("Expected at least one method in `per_image`, but got none.")
    methods = list(per_image)
    if legend_order:
        rank = {name: k for k, name in enumerate(legend_order)}
        methods.sort(key=lambda m: (rank.get(m, len(rank)), list(per_image).index(m)))
    groups = list(classes) if classes is not None else [None]
    if class_names is not None and (classes is None or len(class_names) != len(groups)):
        raise ValueError(
            f"Expected one name per class in `class_names` ({len(groups) if classes is not None else 0}), but got "
            f"{len(class_names)}."
        )
    ticks = ["" if c is None else f"class {c}" for c in groups] if class_names is None else list(class_names)

    def colour(method: str) -> Any:  # the method's colour in the report's style (by its place in `per_image`)
        index = list(per_image).index(method)
        return (line_style(index, method) if line_style is not None else _style(index)).get("color", "C0")

    plt = _pyplot()
    with plt.rc_context(_paper_rc()):
        fig, axes = plt.subplots(1, len(measures), figsize=(2.6 * len(measures) + 0.6, 3.0), squeeze=False)
        width = 0.8 / len(methods)
        for ax, (key, label) in zip(axes[0], measures, strict=True):
            for k, method in enumerate(methods):
                for g, cls in enumerate(groups):
                    values = [v[key] if cls is None else v[key][g] for v in per_image[method].values() if key in v]
                    data = np.asarray([np.nan if v is None else v for v in values], dtype=np.float64)
                    finite = data[np.isfinite(data)]
                    x = g + (k - (len(methods) - 1) / 2) * width
                    if finite.size:
                        box = ax.boxplot(
                            finite,
                            positions=[x],
                            widths=width * 0.85,
                            patch_artist=True,
                            showfliers=True,
                            manage_ticks=False,
                        )
                        for patch in box["boxes"]:
                            patch.set(facecolor=colour(method), alpha=0.55)
                        for part in ("medians", "whiskers", "caps"):
                            for line in box[part]:
                                line.set(color="black", lw=0.8)
                    n_inf, n_nan = int(np.isinf(data).sum()), int(np.isnan(data).sum())
                    note = "\n".join(([f"+{n_inf} inf"] if n_inf else []) + ([f"{n_nan} nan"] if n_nan else []))
                    if note:
                        ax.annotate(
                            note, (x, 1.0), xycoords=("data", "axes fraction"), ha="center", va="bottom", fontsize=6
                        )
            ax.set_xticks(range(len(groups)), ticks)
            ax.set_ylabel(label)
        handles = [plt.Rectangle((0, 0), 1, 1, alpha=0.55, facecolor=colour(m)) for m in methods]
        fig.legend(handles, methods, loc="lower center", ncol=min(len(methods), 4), bbox_to_anchor=(0.5, -0.02))
        if title:
            fig.suptitle(title)
        fig.tight_layout(rect=(0, 0.08, 1, 1))
        out = _save_figure(fig, path)
        plt.close(fig)
    return out
