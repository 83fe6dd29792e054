"""The per-image error browser: one self-contained HTML page of a run's tables, per-image values and worst images.

:func:`write_html_report` writes ``out_dir/index.html`` and ``out_dir/assets/`` (thumbnails, histograms, the run's
figures). The page opens from disk (``file://``) in any browser, offline: no URL outside ``out_dir`` is fetched (the
script and the style are inlined; images are relative paths into ``assets/``; the original files are *linked* with
relative paths, never embedded or copied). It shows:

* the tables of every dataset, with the values and top-3 marks of the Markdown / LaTeX outputs
  (:func:`~segmetrics_torch.reports.combined.combine`: 1st bold, 2nd underlined, 3rd italic, compared as printed);
* the per-image table, sorted by a click on any header (again: reversed) and filtered by image name;
* the worst k images per measure and method (k set on the page, up to :data:`K_MAX`): image, ground truth,
  prediction and the family's error overlay (:mod:`.overlays`); the orderings are computed here, so thumbnails are
  made only for the union of the worst-:data:`K_MAX` sets (a 1,000-image run draws a few hundred at most);
* side by side: one of those images under every method of the run;
* distributions: a histogram per dataset, measure and method (matplotlib, the optional ``plot`` extra; without it
  the page says so), and the figures the run drew (PR / E curves), copied into ``assets/figures``.

Safety: every name from the file system is escaped (Jinja2's autoescape in the HTML; the data the script reads is
embedded with Jinja2's ``tojson``, which writes ``<``, ``>``, ``&`` and ``'`` as ``\\u`` escapes, and the script puts
names into the page with ``textContent`` only); thumbnails get names of their own (``i00012_m1_err.png``), so no
user's name is ever a URL of the page. Before anything is written, ``out_dir`` is checked with the output-safety
rule (:func:`~segmetrics_torch.reports.output_safety.check_outputs`): it must not be a folder the run reads, nor
hold one in ``assets/``; an ``assets/`` folder that this function did not write (no marker file) is refused rather
than replaced.

Example:
    >>> import tempfile, pathlib
    >>> from segmetrics_torch.synthetic import write_foreground_dataset
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = write_foreground_dataset(root, n=3, size=(32, 32), methods=["good"])
    >>> images = [HtmlImage("D", s, root / "gt" / f"{s}.png", {"good": root / "good" / f"{s}.png"})
    ...           for s in ("img_000", "img_001", "img_002")]
    >>> rows = [{"method": "good", "dataset": "D", "image": im.image, "mae": 0.1 * i} for i, im in enumerate(images)]
    >>> page = write_html_report(root / "html", family="foreground", title="demo", columns=[("mae", "MAE")],
    ...     higher_is_better={"mae": False}, tables={"D": {"good": {"mae": 0.1}}}, per_image=rows, images=images)
    >>> page.name, sorted(p.name for p in (root / "html" / "assets" / "thumbs").iterdir())[:2]
    ('index.html', ['i00000_gt.png', 'i00000_m0_err.png'])
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import shutil
import tempfile
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote

import jinja2
import numpy as np
from PIL import Image, ImageFilter

from ..io import open_image
from ..registry import Family, higher_is_better
from ._html_common import CHUNK, HtmlImage, Job
from .combined import TOP_THREE, combine
from .files import default_folder_mode, keep_mode, remove_stale_folders, remove_tree, signals_held, write_together
from .output_safety import FolderOutput, InputFolder, check_outputs
from .tables import cell_text, is_value

if TYPE_CHECKING:  # annotations only
    from ..datasets.folders import FolderDataset

__all__ = [
    "FAMILIES",
    "K_MAX",
    "THUMBNAIL_SIDE",
    "HtmlImage",
    "HtmlReport",
    "html_columns",
    "html_folder_output",
    "write_html_report",
]

#: the families the report draws overlays for ("proposals": no overlay, the page says so)
FAMILIES = ("foreground", "boundary", "partition", "surface", "proposals")
#: the largest k of the worst-k gallery: thumbnails are made for the union of the worst K_MAX images of every
#: (dataset, method, measure), at most measures x methods x K_MAX images per dataset whatever its size (12: the
#: worst case of the default foreground table, 11 measures x 2 methods of independent values, stays within the 5 s
#: of issue 45 for 1,000 images on 2 cores; benchmarks/bench_html_report.py)
K_MAX = 12
#: the longest side of a thumbnail, in pixels
THUMBNAIL_SIDE = 192
#: the page itself
PAGE = "index.html"
#: the report's own sub-folder (replaced on the next run) and the file that marks it as written here
ASSETS = "assets"
MARKER = ".segmetrics-html"
#: assets are written into a temporary folder of this prefix in ``out_dir``, then moved into place
TEMP_PREFIX = ".segmetrics-html-"
#: what the page says under the gallery, per family
OVERLAY_NOTES = {
    "foreground": (
        "The prediction binarised as the adaptive threshold of the F-measure does: the map min-max normalised, then "
        "p ≥ min(2 × mean(p), 1). White: true positive; red: false positive; blue: false negative."
    ),
    "boundary": (
        "The thinned machine boundaries at the image's best threshold, matched to each annotator within the run's "
        "max_dist by the BSDS correspondence. Green: matched prediction; red: unmatched prediction (false positive); "
        "blue: unmatched ground truth (missed); dark green: matched ground truth."
    ),
    "partition": (
        "Each ground-truth region (first annotator) coloured by 1 − its best Jaccard overlap with a predicted "
        "segment: green (well covered) to red (not covered); region borders white. For a ucm2 or a stack of "
        "segmentations: the level of the row's threshold when it has one, else the level that covers the first "
        "annotator best."
    ),
    "surface": (
        "Each surface voxel's distance to the other mask's surface, on the slice (last axis) of the largest "
        "distance: green (0) to red (the largest); dark blue: ground truth only, dark red: prediction only, grey: "
        "both. Label maps are compared as masks (labels > 0)."
    ),
    "proposals": "No error overlay exists for object proposals: the gallery shows the image and the values only.",
}


# ----------------------------------------------------------------------------------------------- columns


def html_columns(
    family: str, columns: Sequence[tuple[str, str]], rows: Sequence[Mapping[str, Any]]
) -> tuple[list[tuple[str, str]], dict[str, bool | None]]:
    """The columns of an HTML page (:func:`write_html_report`): the table's ``(key, header)``
    ``columns``, then every other key of the per-image ``rows`` (a boundary row's threshold, recall ...), and each
    one's direction from the registry (:func:`segmetrics_torch.registry.higher_is_better`; None: shown, never
    ranked).

    Example:
        >>> html_columns("boundary", [("ods/f", "ODS")], [{"method": "m", "image": "a", "threshold": 0.3, "f": 0.8}])
        ([('ods/f', 'ODS'), ('threshold', 'threshold'), ('f', 'f')], {'ods/f': True, 'threshold': None, 'f': True})
    """
    known = dict(columns)
    shown = [*columns, *((k, k) for k in dict.fromkeys(k for r in rows for k in r) if k not in known)]
    shown = [(k, label) for k, label in shown if k not in ("method", "dataset", "image")]
    return shown, {key: higher_is_better(cast(Family, family), key) for key, _ in shown}


# ------------------------------------------------------------------------------------------------ checks


def _check_arguments(
    family: str,
    columns: Sequence[tuple[str, str]],
    per_image: Sequence[Mapping[str, Any]],
    images: Sequence[HtmlImage],
    figures: Sequence[Path],
    digits: int,
) -> None:
    if family not in FAMILIES:
        raise ValueError(f"Expected `family` to be one of {', '.join(FAMILIES)}, but got {family!r}.")
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 12:
        raise ValueError(f"Expected `digits` to be an int in [0, 12], but got {digits!r}.")
    for column in columns:
        if not (isinstance(column, tuple) and len(column) == 2 and all(isinstance(c, str) for c in column)):
            raise TypeError(f"Expected `columns` to hold (key, label) pairs of strings, but got {column!r}.")
    for i, row in enumerate(per_image):
        missing = [k for k in ("method", "dataset", "image") if not isinstance(row.get(k), str)]
        if missing:
            raise ValueError(f"Expected `per_image[{i}]` to hold the strings {', '.join(missing)}, but got {row!r}.")
    seen: set[tuple[str, str]] = set()
    for image in images:
        if not isinstance(image, HtmlImage):
            raise TypeError(f"Expected `images` to hold HtmlImage, but got {type(image).__name__}.")
        if (image.dataset, image.image) in seen:
            raise ValueError(f"`images` names ({image.dataset!r}, {image.image!r}) twice.")
        seen.add((image.dataset, image.image))
    for figure in figures:
        if Path(figure).suffix.lower() not in (".png", ".svg", ".jpg", ".jpeg"):
            raise ValueError(f"Expected `figures` to be PNG, SVG or JPEG files, but got {figure}.")


def _input_folders(images: Sequence[HtmlImage], figures: Sequence[Path]) -> list[InputFolder]:
    """Every folder the report reads from, as the output-safety rule names it."""
    found: dict[Path, str] = {}
    for image in images:
        found.setdefault(Path(image.gt).parent, f"the ground-truth folder of {image.dataset}")
        for method, path in image.predictions.items():
            found.setdefault(Path(path).parent, f"the prediction folder of {method} on {image.dataset}")
        if image.source is not None:
            found.setdefault(Path(image.source).parent, f"the image folder of {image.dataset}")
    for figure in figures:
        found.setdefault(Path(figure).parent, "the folder of the run's figures")
    return [InputFolder(role, path) for path, role in found.items()]


def html_folder_output(out_dir: Path, option: str = "--html") -> FolderOutput:
    """The :class:`~segmetrics_torch.reports.output_safety.FolderOutput` of a report folder, for
    :func:`~segmetrics_torch.reports.output_safety.check_outputs` (a command calls it before the run,
    :class:`HtmlReport` again before writing): ``index.html``, the ``assets/`` folder and the temporary
    ``.segmetrics-html-*`` folders are the report's, and ``assets/.segmetrics-html`` marks them as written here, so
    that a file where the folder should be, a folder that cannot be made, or an ``index.html`` or ``assets/`` (or a
    link of either name) that this module did not write is refused (the report would replace the user's page or
    folder).

    Example:
        >>> import tempfile
        >>> from segmetrics_torch.reports.output_safety import check_outputs
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "index.html").write_text("<p>my page</p>")
        >>> check_outputs({}, folders=[html_folder_output(folder)])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        segmetrics_torch.errors.InputError: --html ...index.html exists and was not written by this report ...
    """
    owned = frozenset({PAGE}), frozenset({ASSETS})
    return FolderOutput(option, Path(out_dir), *owned, prefixes=(TEMP_PREFIX,), marker=f"{ASSETS}/{MARKER}")


def _check_out_dir(out_dir: Path, images: Sequence[HtmlImage], figures: Sequence[Path]) -> None:
    """The output-safety rule, an ``assets/`` folder of someone else's included: before anything is written."""
    inputs = _input_folders(images, figures)  # every folder the report reads from
    check_outputs({}, folders=[html_folder_output(out_dir)], inputs=inputs)


# --------------------------------------------------------------------------------------------- orderings


def _number(value: Any) -> float | None:
    """A finite float, or None (absent, None, NaN, infinite, not a number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    x = float(value)
    return x if math.isfinite(x) else None


def _worst(
    per_image: Sequence[Mapping[str, Any]], keys: Sequence[str], higher: Mapping[str, bool | None]
) -> dict[str, dict[str, dict[str, list[str]]]]:
    """``{dataset: {method: {key: [image, ...]}}}``: the worst :data:`K_MAX` images first (lowest value when higher
    is better, else highest; ties by image name); images without a finite value are left out."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in per_image:
        groups.setdefault((row["dataset"], row["method"]), []).append(row)
    out: dict[str, dict[str, dict[str, list[str]]]] = {}
    for (dataset, method), rows in groups.items():
        for key in keys:
            direction = higher.get(key)
            if direction is None:
                continue
            valued = [(v, row["image"]) for row in rows if (v := _number(row.get(key))) is not None]
            valued.sort(key=lambda item: (item[0] if direction else -item[0], item[1]))
            out.setdefault(dataset, {}).setdefault(method, {})[key] = [name for _, name in valued[:K_MAX]]
    return out


# ---------------------------------------------------------------------------------------------- pictures


def _save_thumbnail(array: np.ndarray, path: Path, *, thin: bool = False) -> None:
    """Save an (H, W) or (H, W, 3) uint8 array as a PNG whose longest side is at most :data:`THUMBNAIL_SIDE`.

    ``thin``: one-pixel lines (boundaries) are widened by a maximum filter before the area downscale, so they stay
    visible."""
    picture = Image.fromarray(np.ascontiguousarray(array))
    factor = max(picture.size) / THUMBNAIL_SIDE
    if factor > 1:
        if thin and factor >= 2:
            picture = picture.filter(ImageFilter.MaxFilter(min(2 * int(factor) - 1, 9)))
        size = (max(1, round(picture.width / factor)), max(1, round(picture.height / factor)))
        picture = picture.resize(size, Image.Resampling.BOX)
    picture.save(path, format="PNG", compress_level=1)  # fast; thumbnails are small anyway


def _save_source(path: Path, target: Path) -> None:
    """A JPEG thumbnail of the RGB image ``path`` (read by :func:`segmetrics_torch.io.open_image`)."""
    with open_image(path) as image:
        image.draft("RGB", (THUMBNAIL_SIDE, THUMBNAIL_SIDE))  # a JPEG decodes at a reduced scale: faster
        picture = image.convert("RGB")
        picture.thumbnail((THUMBNAIL_SIDE, THUMBNAIL_SIDE))
        picture.save(target, format="JPEG", quality=85)


def _thumbnails(
    family: str, gallery: list[dict[str, Any]], jobs: Sequence[Job], options: Mapping[str, Any]
) -> Iterator[tuple[np.ndarray, str]]:
    """Draw every job and yield ``(array, thumbnail name)`` to save, recording the names (or the reason nothing was
    drawn) in the gallery's entries."""
    # torch, the library's ops and the overlays load here, when a report draws (the command imports this module at
    # its start, before torch: see docs/design/README.md, "Imports")
    from ._html_drawing import drawings

    for job, drawn in drawings(family, jobs, options):
        entry, pred = gallery[job.index], gallery[job.index]["preds"][job.method]
        if isinstance(drawn, str):
            pred["note"] = drawn
            continue
        if drawn.gt is not None and "gt" not in entry:
            entry["gt"] = f"{ASSETS}/thumbs/i{job.index:05d}_gt.png"
            yield drawn.gt, f"i{job.index:05d}_gt.png"
        for part, array in (("pred", drawn.pred), ("err", drawn.overlay)):
            if array is not None:
                name = f"i{job.index:05d}_m{job.slot}_{part}.png"
                pred[part] = f"{ASSETS}/thumbs/{name}"
                yield array, name
        pred["caption"] = drawn.caption


# ------------------------------------------------------------------------------------------- histograms


def _histograms(
    assets: Path,
    per_image: Sequence[Mapping[str, Any]],
    keys: Sequence[tuple[str, str]],
    methods: Sequence[str],
    datasets: Sequence[str],
) -> list[dict[str, str]]:
    """One PNG per (dataset, measure), one panel per method; [] when matplotlib is absent."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    folder = assets / "hist"
    folder.mkdir()
    values: dict[tuple[str, str, str], list[float]] = {}
    for row in per_image:
        for key, _ in keys:
            if (v := _number(row.get(key))) is not None:
                values.setdefault((row["dataset"], row["method"], key), []).append(v)
    out: list[dict[str, str]] = []
    for dataset in datasets:
        for key, label in keys:
            present = [m for m in methods if (dataset, m, key) in values]
            if not present:
                continue
            # no layout engine and few ticks: a tight layout costs more than the drawing (timed: 0.2 s a figure)
            fig = Figure(figsize=(2.2 * len(present), 1.8), dpi=72)
            FigureCanvasAgg(fig)
            fig.subplots_adjust(left=0.12 / len(present) + 0.04, right=0.98, bottom=0.16, top=0.86, wspace=0.15)
            everything = np.array([v for m in present for v in values[(dataset, m, key)]])
            low, high = float(everything.min()), float(everything.max())
            edges = np.linspace(low, high if high > low else low + 1.0, 21)
            axes = fig.subplots(1, len(present), squeeze=False, sharey=True)[0]
            for ax, method in zip(axes, present, strict=True):
                counts, _ = np.histogram(values[(dataset, method, key)], bins=edges)
                ax.stairs(counts, edges, fill=True, color="#4477aa")  # one artist, not 20 bars
                ax.set_title(method, fontsize=8, parse_math=False)  # a name may hold "$"
                ax.xaxis.set_major_locator(MaxNLocator(3))
                ax.yaxis.set_major_locator(MaxNLocator(3, integer=True))
                ax.tick_params(labelsize=7)
            name = f"h{len(out):04d}.png"
            fig.savefig(folder / name)
            out.append({"src": f"{ASSETS}/hist/{name}", "caption": f"{dataset}: {label}"})
    return out


# -------------------------------------------------------------------------------------------------- page


def _relative_url(path: Path, out_dir: Path) -> str:
    """A relative URL from the page to ``path``, every part percent-encoded (no scheme can appear: ``:`` is
    encoded)."""
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(out_dir))
    return "/".join(quote(part, safe="") for part in Path(relative).parts)


def _tables(
    family: str,
    tables: Mapping[str, Mapping[str, Mapping[str, float | None]]],
    columns: Sequence[tuple[str, str]],
    lower: list[str],
    digits: int,
    unranked: frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """Each dataset's table as the template draws it: the texts and top-3 ranks of the Markdown output; the keys of
    ``unranked`` (no direction: a threshold) get neither an arrow nor a mark."""
    out = []
    for dataset, rows in tables.items():
        # a column no method of this table has (a per-image key such as a boundary row's recall) is not printed
        shown = [(k, h) for k, h in columns if any(vals.get(k) is not None for vals in rows.values())]
        clean = {m: {k: (math.nan if v is None else float(v)) for k, v in vals.items()} for m, vals in rows.items()}
        combined = combine(family, {dataset: (shown, lower, clean)}, digits=digits)
        headers = [
            h if k == "num_images" or k in unranked else f"{h} {'↓' if k in combined.lower else '↑'}"
            for k, h in combined.columns
        ]
        body = []
        for method in combined.rows:
            cells = []
            for cell in combined.cells():
                rank = None if cell[1] in unranked else combined.ranks.get(cell, {}).get(method)
                cells.append({"text": combined.text(method, cell), "mark": TOP_THREE.get(rank or 0, "")})
            body.append({"method": method, "cells": cells})
        out.append({"dataset": dataset, "headers": headers, "rows": body})
    return out


def _gallery(
    chosen: Sequence[tuple[str, str]],
    images: Sequence[HtmlImage],
    per_image: Sequence[Mapping[str, Any]],
    methods: Sequence[str],
    image_columns: Sequence[tuple[str, str]],
    family: str,
    options: Mapping[str, Any],
    out_dir: Path,
    thumbs: Path,
    digits: int,
) -> tuple[list[dict[str, Any]], list[Job]]:
    """The gallery's entries of the ``chosen`` (dataset, image) pairs, in order: each method's values and links, the
    source image's thumbnail saved into ``thumbs`` (or why it could not be read), and the drawing jobs of the
    overlays (none for proposals)."""
    by_key = {(im.dataset, im.image): im for im in images}
    rows_by = {(r["dataset"], r["method"], r["image"]): r for r in per_image}
    gallery: list[dict[str, Any]] = []
    jobs: list[Job] = []
    for index, (dataset, name) in enumerate(chosen):
        entry: dict[str, Any] = {"dataset": dataset, "image": name, "preds": {}, "note": ""}
        image = by_key.get((dataset, name))
        if image is None:
            entry["note"] = "no files were given for this image"
        else:
            entry["gt_href"] = _relative_url(image.gt, out_dir)
            if image.source is not None:
                entry["src_href"] = _relative_url(image.source, out_dir)
                try:
                    _save_source(Path(image.source), thumbs / f"i{index:05d}_src.jpg")
                    entry["src"] = f"{ASSETS}/thumbs/i{index:05d}_src.jpg"
                except (OSError, ValueError) as error:
                    entry["note"] = f"image not readable: {error}"
        for slot, method in enumerate(methods):
            row = rows_by.get((dataset, method, name), {})
            pred: dict[str, Any] = {"values": {k: cell_text(row, k, digits) for k, _ in image_columns}}
            if image is not None and method in image.predictions:
                pred["href"] = _relative_url(image.predictions[method], out_dir)
                if family != "proposals":
                    threshold = _number(row.get(options.get("threshold_key", "threshold")))
                    jobs.append(Job(index, slot, method, image, row, threshold))
            if row or "href" in pred:
                entry["preds"][method] = pred
        gallery.append(entry)
    return gallery, jobs


def _save_thumbnails(
    family: str, gallery: list[dict[str, Any]], jobs: Sequence[Job], options: Mapping[str, Any], thumbs: Path
) -> None:
    """Draw every job and save its thumbnails into ``thumbs`` (the gallery's entries name them)."""
    thin = family == "boundary"  # one-pixel lines: widened before the downscale
    # Pillow releases the GIL while it resizes and encodes: the thumbnails are saved by a few threads while the
    # next chunk is read and drawn (the arrays are kept only until their thumbnail is written)
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        pending: deque[Future[None]] = deque()
        for array, name in _thumbnails(family, gallery, jobs, options):
            pending.append(pool.submit(_save_thumbnail, array, thumbs / name, thin=thin))
            while len(pending) > 4 * CHUNK:  # bounded: a slow disk never holds every drawing in memory
                pending.popleft().result()
        for future in pending:
            future.result()  # a failure to write is an error of the report, raised here


def _histograms_or_why(
    temp: Path,
    per_image: Sequence[Mapping[str, Any]],
    keys: Sequence[tuple[str, str]],
    methods: Sequence[str],
    datasets: Sequence[str],
) -> tuple[list[dict[str, str]], str]:
    """``(histograms, note)``: the histograms (:func:`_histograms`), or none and why (no matplotlib)."""
    plots_note = ""
    histograms: list[dict[str, str]] = []
    if importlib.util.find_spec("matplotlib") is None:
        plots_note = "matplotlib is not installed: no histograms (pip install 'segmetrics-torch[plot]')."
    else:
        histograms = _histograms(temp, per_image, keys, methods, datasets)
    return histograms, plots_note


def _copy_figures(temp: Path, figures: Sequence[Path]) -> list[dict[str, str]]:
    """The run's figures copied into ``temp/figures``: their page entries (source, caption)."""
    copied = []
    if figures:
        (temp / "figures").mkdir()
        for i, figure in enumerate(figures):
            name = f"f{i:03d}{figure.suffix.lower()}"
            shutil.copyfile(figure, temp / "figures" / name)
            copied.append({"src": f"{ASSETS}/figures/{name}", "caption": figure.name})
    return copied


class HtmlReport:
    """The error browser of a run, ``out_dir/index.html`` and ``out_dir/assets/`` (see the module doc), as one output
    of the run's set: :func:`~segmetrics_torch.reports.files.write_together` (or
    :func:`~segmetrics_torch.reports.tables.write_run_files`' ``files``) draws it beside the other files and moves it
    into place with them, so that an interruption or a failure while the page is drawn leaves the previous run's
    set, page and tables together (:func:`write_html_report` writes a report on its own).

    Args:
        out_dir: the report's folder (created; not an input folder: checked when the report is written,
            :meth:`check`, before anything is made).
        family: "foreground", "boundary", "partition", "surface" or "proposals" (the overlay drawn).
        title: the page's title.
        columns: ``(key, label)`` of the measures shown, in order (tables, per-image table, worst-k, histograms).
        higher_is_better: key -> direction (:mod:`segmetrics_torch.registry`); None: no worst-k for that key.
        tables: dataset -> method -> key -> value, the run's tables (None / NaN print as ``nan``).
        per_image: rows ``{"method", "dataset", "image", key: value, ...}``; keys beyond ``columns`` (a boundary
            row's ``threshold``) are shown too.
        images: the files of each (dataset, image); an image of the rows without an entry shows its values only.
        figures: PNG / SVG / JPEG figures of the run (PR, E curves), copied into ``assets/figures``.
        options: how the run read and measured: ``input_format``, ``gt_format``, ``resize`` (as the command's
            readers take them); boundary ``max_dist`` (0.0075), ``thin`` (True), ``nms`` (False); boundary and
            partition ucm2 ``thresholds`` (99: the levels searched when a row has no ``threshold``) and
            ``threshold_key`` ("threshold"); partition ``rule`` ("seism"); surface ``spacing`` (else the ground
            truth's header).
        digits: the decimals printed, and compared for the top-3 marks.

    Raises:
        ValueError / TypeError: a malformed argument, naming it.
        InputError: when the report is written (:meth:`check`), ``out_dir`` is an input folder, or holds one in
            ``assets/``, or its ``assets/`` was not written here (nothing is written then).

    An image whose files cannot be read (or whose overlay fails) shows the reason in its gallery card; the rest of
    the report is written.
    """

    def __init__(
        self,
        out_dir: Path,
        *,
        family: str,
        title: str,
        columns: Sequence[tuple[str, str]],
        higher_is_better: Mapping[str, bool | None],
        tables: Mapping[str, Mapping[str, Mapping[str, float | None]]],
        per_image: Sequence[Mapping[str, Any]],
        images: Sequence[HtmlImage],
        figures: Sequence[Path] = (),
        options: Mapping[str, Any] | None = None,
        digits: int = 3,
    ) -> None:
        self.out_dir, self.figures = Path(out_dir), [Path(f) for f in figures]
        _check_arguments(family, columns, per_image, images, self.figures, digits)
        self.family, self.title, self.columns, self.higher_is_better = family, title, columns, higher_is_better
        self.tables, self.per_image, self.images = tables, per_image, images
        self.options, self.digits = dict(options or {}), digits
        self._temp: Path | None = None  # the report drawn, waiting to be moved into place

    @classmethod
    def of_dataset(
        cls,
        out_dir: Path,
        dataset: FolderDataset,
        *,
        family: str,
        per_image: Sequence[Mapping[str, Any]],
        table: Mapping[str, Any],
        columns: Sequence[tuple[str, str]] = (),
        options: Mapping[str, Any] | None = None,
    ) -> HtmlReport:
        """The report of one method on one folder pair, as a single-folder ``segmetrics evaluate --html`` writes it:
        ``dataset`` (:func:`~segmetrics_torch.datasets.folders.open_folders`) names the method and the dataset (the
        title, the table's row) and gives each evaluated image's files; ``per_image``: the rows of
        :func:`~segmetrics_torch.reports.tables.per_image_rows`; ``table``: the run's scalar results
        (:func:`~segmetrics_torch.reports.tables.scalar_row`); ``columns``: the table's ``(key, header)``, followed
        by every other number of the rows (:func:`html_columns`, directions from the registry); ``options`` as
        :class:`HtmlReport` takes them.

        Example:
            >>> import tempfile, numpy as np
            >>> from PIL import Image
            >>> from segmetrics_torch.datasets.folders import open_folders
            >>> from segmetrics_torch.reports.tables import per_image_rows
            >>> root = Path(tempfile.mkdtemp())
            >>> for folder in ("MyNet", "GT"):
            ...     (root / folder).mkdir()
            ...     Image.fromarray(np.full((4, 4), 255, np.uint8)).save(root / folder / "a.png")
            >>> dataset = open_folders(root / "MyNet", root / "GT", "foreground", dataset="D")
            >>> rows = per_image_rows(dataset.method_name, "D", {"a": {"mae": 0.0, "s_measure": 1.0}})
            >>> columns = [("mae", "MAE")]
            >>> report = HtmlReport.of_dataset(
            ...     root / "html", dataset, family="foreground", per_image=rows, table={"mae": 0.0}, columns=columns
            ... )
            >>> report.title, report.columns, [image.image for image in report.images]
            ('MyNet on D', [('mae', 'MAE'), ('s_measure', 's_measure')], ['a'])
        """
        name, where = dataset.method_name, dataset.dataset_name
        shown, directions = html_columns(family, columns, per_image)
        evaluated = {str(row["image"]) for row in per_image}
        return cls(
            Path(out_dir),
            family=family,
            title=f"{name} on {where}",
            columns=shown,
            higher_is_better=directions,
            tables={where: {name: {key: table.get(key) for key, _ in shown}}},
            per_image=per_image,
            images=[HtmlImage(where, s, gt, {name: pred}) for s, pred, gt in dataset.pairing.pairs if s in evaluated],
            options=options,
        )

    #: a rename that fails while the report moves in puts the previous page and assets back (:func:`_replace_report`)
    rolls_back = True

    @property
    def target(self) -> Path:
        """The page, ``out_dir/index.html``."""
        return self.out_dir / PAGE

    def check(self) -> None:
        """The folder's rule (:func:`html_folder_output`: never an input folder, nor one in ``assets/``; no page or
        ``assets/`` of someone else's), as it is when the report is written: called by
        :func:`~segmetrics_torch.reports.files.write_together` before anything is made, and again just before the
        moves."""
        _check_out_dir(self.out_dir, self.images, self.figures)

    def stage(self) -> None:
        """Draw the report into a temporary folder in ``out_dir`` (the folder's lock held by the caller: the clean-up
        takes every temporary folder there for a killed run's)."""
        out_dir, per_image, columns = self.out_dir, self.per_image, self.columns
        higher_is_better, family, options, digits = self.higher_is_better, self.family, self.options, self.digits
        keys = [k for k, _ in columns]
        present = {k for row in per_image for k in row}
        # further numeric keys of the rows (a boundary row's threshold); lists (proposals' best J per object) are left
        # out
        extra = [
            k
            for k in dict.fromkeys(k for row in per_image for k in row)
            if k not in ("method", "dataset", "image") and all(is_value(row.get(k)) for row in per_image)
        ]
        image_columns = [(k, label) for k, label in columns if k in present] + [(k, k) for k in extra if k not in keys]
        measure_columns = [(k, label) for k, label in columns if k in present]
        methods = list(
            dict.fromkeys([*(m for rows in self.tables.values() for m in rows), *(r["method"] for r in per_image)])
        )
        datasets = list(dict.fromkeys([*self.tables, *(r["dataset"] for r in per_image)]))
        worst = _worst(per_image, [k for k, _ in measure_columns], higher_is_better)
        chosen = sorted(
            {
                (d, name)
                for d, by_method in worst.items()
                for lists in by_method.values()
                for x in lists.values()
                for name in x
            }
        )

        # (out_dir, the target's folder, was made and locked by write_together)
        remove_stale_folders(out_dir, TEMP_PREFIX)  # a killed run's temporary folders
        self._temp = temp = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=out_dir))
        os.chmod(temp, default_folder_mode())  # mkdtemp's 0700 -> what a plain mkdir makes under the umask
        (temp / MARKER).write_text("written by segmetrics_torch.reports.html_report\n", encoding="utf-8")
        thumbs = temp / "thumbs"
        thumbs.mkdir()
        gallery, jobs = _gallery(
            chosen, self.images, per_image, methods, image_columns, family, options, out_dir, thumbs, digits
        )
        _save_thumbnails(family, gallery, jobs, options, thumbs)

        histograms, plots_note = _histograms_or_why(temp, per_image, measure_columns, methods, datasets)
        copied = _copy_figures(temp, self.figures)

        index_of = {key: i for i, key in enumerate(chosen)}
        data = {
            "kmax": K_MAX,
            "methods": methods,
            "datasets": datasets,
            "measures": [{"key": k, "label": label, "higher": higher_is_better.get(k)} for k, label in measure_columns],
            "columns": [{"key": k, "label": label} for k, label in image_columns],
            "worst": {
                d: {m: {k: [index_of[(d, n)] for n in names] for k, names in by.items()} for m, by in bm.items()}
                for d, bm in worst.items()
            },
            "images": gallery,
        }
        lower = [k for k in keys if higher_is_better.get(k) is False]
        unranked = frozenset(k for k in keys if higher_is_better.get(k) is None)
        page = _render(
            title=self.title,
            family=family,
            note=OVERLAY_NOTES[family],
            tables=_tables(family, self.tables, columns, lower, digits, unranked),
            image_columns=image_columns,
            per_image=[
                {
                    "method": r["method"],
                    "dataset": r["dataset"],
                    "image": r["image"],
                    "cells": [(cell_text(r, k, digits), _sort_value(r.get(k))) for k, _ in image_columns],
                }
                for r in sorted(per_image, key=lambda r: (r["dataset"], r["method"], r["image"]))
            ],
            histograms=histograms,
            plots_note=plots_note,
            figures=copied,
            kmax=K_MAX,
            data=data,
        )
        # the page waits in the temporary folder too: a run killed before the end leaves nothing the next run's
        # clean-up of TEMP_PREFIX does not remove
        (temp / PAGE).write_text(page, encoding="utf-8")

    def commit(self) -> None:
        """Move the drawn report into place (:func:`_replace_report`)."""
        if self._temp is not None:
            _replace_report(self.out_dir, self._temp)
            self._temp = None

    def discard(self) -> None:
        """Remove the temporary folder of a report that is not moved into place."""
        if self._temp is not None:
            remove_tree(self._temp)
            self._temp = None


def write_html_report(
    out_dir: Path,
    *,
    family: str,
    title: str,
    columns: Sequence[tuple[str, str]],
    higher_is_better: Mapping[str, bool | None],
    tables: Mapping[str, Mapping[str, Mapping[str, float | None]]],
    per_image: Sequence[Mapping[str, Any]],
    images: Sequence[HtmlImage],
    figures: Sequence[Path] = (),
    options: Mapping[str, Any] | None = None,
    digits: int = 3,
) -> Path:
    """Write the error browser of a run on its own (:class:`HtmlReport`, whose arguments these are): drawn into a
    temporary folder in ``out_dir``, then moved into place; one report at a time in a folder (a second run waits for
    the folder's lock). Returns ``out_dir / "index.html"``; raises what :class:`HtmlReport` raises."""
    report = HtmlReport(
        out_dir,
        family=family,
        title=title,
        columns=columns,
        higher_is_better=higher_is_better,
        tables=tables,
        per_image=per_image,
        images=images,
        figures=figures,
        options=options,
        digits=digits,
    )
    write_together([report], locked=True)
    return report.target


def _replace_report(out_dir: Path, temp: Path) -> None:
    """Move the new report (``temp``: the assets and the page) into place in ``out_dir``: the previous ``assets/``
    (ours: it holds the marker, checked before anything was written) and page are moved aside and removed only once
    the new report is in place, and Ctrl-C or ``SIGTERM`` waits for the renames (:func:`~.files.signals_held`), so
    that an interruption leaves the previous report or the new one, never a page without its thumbnails or beside
    another run's; a rename that fails (an ``OSError``) puts the previous page and assets back."""
    page, assets = out_dir / PAGE, out_dir / ASSETS
    # names of TEMP_PREFIX beside them (never inside the previous assets/, which may be read-only): a killed run's go
    # with the next run's clean-up
    aside, page_aside = temp.with_name(temp.name + "-previous"), temp.with_name(temp.name + "-previous.html")
    keep_mode(temp / PAGE, page)  # a page the user made private stays private
    done: list[str] = []
    try:
        with signals_held():
            if assets.exists():
                os.replace(assets, aside)
                done.append("assets aside")
            if page.exists():
                os.replace(page, page_aside)
                done.append("page aside")
            os.replace(temp / PAGE, page)
            done.append("page")
            os.replace(temp, assets)
            done.append("assets")
            keep_mode(assets, aside)  # the folder's mode once the page is out of it (a 0555 one would keep it in)
    finally:  # also when the held signal is raised, once the renames are done
        with signals_held():  # the clean-up is not cut short by a Ctrl-C either
            if "assets" not in done:  # a rename failed: the previous report goes back
                with contextlib.suppress(OSError):
                    if "page aside" in done:
                        os.replace(page_aside, page)
                    elif "page" in done:
                        os.unlink(page)  # no previous page: the new one goes, its assets never came
                with contextlib.suppress(OSError):
                    if "assets aside" in done:
                        os.replace(aside, assets)
            with contextlib.suppress(OSError):
                os.unlink(page_aside)
            remove_tree(aside)


def _sort_value(value: Any) -> str:
    """The ``data-v`` of a per-image cell: the number as ``repr`` (exact), empty when there is none."""
    x = _number(value)
    return "" if x is None else repr(x)


def _render(**context: Any) -> str:
    """The page: ``templates/report.html.j2`` with the style and the script inlined, autoescaped (the package's own
    files, read by Jinja2's package loader)."""
    loader = jinja2.PackageLoader("segmetrics_torch.reports", "templates")
    environment = jinja2.Environment(
        loader=loader, autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True
    )
    style, script = (loader.get_source(environment, name)[0] for name in ("report.css", "report.js"))
    if "</" in script or "</" in style:  # would end the inlined element early (a test keeps the files clean)
        raise AssertionError("report.js / report.css must not contain '</'")
    return environment.get_template("report.html.j2").render(style=style, script=script, **context)
