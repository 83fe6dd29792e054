"""A small foreground run written to disk, and its HTML report: shared by the unit and the browser tests; and the
smallest report (:func:`two_image_report`) for the tests of how a report is written.

Two methods on six 48 x 64 images, one of them named with markup (``HOSTILE_STEM``: a POSIX file name cannot hold
``/``, so ``<script>...</script>`` itself cannot be a file; this name runs script as an ``<img onerror>`` if it is
ever parsed as HTML, and the dataset is called ``<script>...</script>`` for the same check on a name that does not
come from the file system).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from segmetrics_torch.reports.files import write_together
from segmetrics_torch.reports.html_report import HtmlImage, HtmlReport, write_html_report

HOSTILE_STEM = "<img src=x onerror=window.__xss=1>"
HOSTILE_DATASET = "<script>window.__xss=2</script>"
#: an image name as a caller may give it (a stem from a nested folder may hold "/"): its files are named otherwise
SCRIPT_STEM = "<script>window.__xss=3</script>"
METHODS = ("good", "bad")
STEMS = ("a_000", "a_001", "a_002", "a_003", SCRIPT_STEM, HOSTILE_STEM)
FILE_STEMS = {SCRIPT_STEM: "script_stem"}


def foreground_files(root: Path) -> list[HtmlImage]:
    """Ground truths, two methods' maps and RGB images under ``root`` (one folder each)."""
    rng = np.random.default_rng(0)
    for folder in ("gt", "rgb", *METHODS):
        (root / folder).mkdir(parents=True, exist_ok=True)
    images = []
    for i, image_name in enumerate(STEMS):
        stem = FILE_STEMS.get(image_name, image_name)
        gt = np.zeros((48, 64), np.uint8)
        gt[10 : 30 + i, 12 : 40 + i] = 255
        good = np.clip(gt * 0.9 + rng.normal(0, 10, gt.shape), 0, 255).astype(np.uint8)
        bad = np.roll(gt, 6 + i, axis=1)
        Image.fromarray(gt).save(root / "gt" / f"{stem}.png")
        Image.fromarray(good).save(root / "good" / f"{stem}.png")
        Image.fromarray(bad).save(root / "bad" / f"{stem}.png")
        Image.fromarray(rng.integers(0, 255, (48, 64, 3), dtype=np.uint8)).save(root / "rgb" / f"{stem}.jpg")
        predictions = {m: root / m / f"{stem}.png" for m in METHODS}
        images.append(
            HtmlImage(
                HOSTILE_DATASET, image_name, root / "gt" / f"{stem}.png", predictions, root / "rgb" / f"{stem}.jpg"
            )
        )
    return images


def per_image_rows() -> list[dict[str, object]]:
    """MAE grows with the image index for "bad" (so its worst is the last image, the hostile one), S-measure falls."""
    rows: list[dict[str, object]] = []
    for m, method in enumerate(METHODS):
        for i, stem in enumerate(STEMS):
            mae = 0.01 * (i + 1) * (1 + 5 * m)
            rows.append({"method": method, "dataset": HOSTILE_DATASET, "image": stem, "mae": mae, "sm": 1 - mae})
    return rows


COLUMNS = [("sm", "S-measure"), ("mae", "MAE")]
HIGHER = {"sm": True, "mae": False}


def write_run(root: Path, out: Path | None = None, **overrides: object) -> Path:
    """The report of the run under ``root`` (files written there first) into ``out`` (default ``root / "html"``)."""
    images = foreground_files(root)
    tables = {HOSTILE_DATASET: {"good": {"sm": 0.95, "mae": 0.035}, "bad": {"sm": 0.79, "mae": 0.21}}}
    arguments: dict[str, object] = {
        "family": "foreground",
        "title": "foreground <b>run</b>",
        "columns": COLUMNS,
        "higher_is_better": HIGHER,
        "tables": tables,
        "per_image": per_image_rows(),
        "images": images,
    }
    arguments.update(overrides)
    return write_html_report(out if out is not None else root / "html", **arguments)  # type: ignore[arg-type]


def two_image_html(root: Path, out: Path, value: float = 0.1) -> HtmlReport:
    """The report (titled ``run <value>``) of the first two images of ``write_foreground_dataset(root, n=2,
    methods=["good"])``, one method, MAE only, to be written into ``out`` (an output of a set)."""
    stems = ("img_000", "img_001")
    images = [HtmlImage("D", s, root / "gt" / f"{s}.png", {"good": root / "good" / f"{s}.png"}) for s in stems]
    rows = [{"method": "good", "dataset": "D", "image": s, "mae": value + 0.1 * i} for i, s in enumerate(stems)]
    return HtmlReport(
        out,
        family="foreground",
        title=f"run {value}",
        columns=[("mae", "MAE")],
        higher_is_better={"mae": False},
        tables={"D": {"good": {"mae": value}}},
        per_image=rows,
        images=images,
    )


def two_image_report(root: Path, out: Path, value: float = 0.1) -> Path:
    """:func:`two_image_html` written into ``out`` on its own."""
    report = two_image_html(root, out, value)
    write_together([report], locked=True)
    return report.target
