"""The HTML error browser's cost (issue 45): seconds and megabytes of ``write_html_report`` for 1,000 images x 2
methods of foreground maps (320 x 320 8-bit PNGs written to a temporary folder first, not timed).

The per-image rows hold the 11 measures of the default foreground table (the registry's ``DEFAULT_FOREGROUND``).
Their values decide how many images need thumbnails (the union of the worst ``K_MAX`` of every measure and method),
so two cases are timed:

* ``correlated``: every measure a noisy function of the image's MAE (as real measures are: a bad map is bad on all of
  them), so the worst sets overlap;
* ``independent``: every value drawn independently: the worst case, nearly 11 x 2 x K_MAX distinct images.

The time is the whole call (checks, reading the union's files, overlays, thumbnails, histograms with matplotlib, the
page), i.e. what ``--html`` adds to a run: torch and the measures are imported before (a run has loaded them), while
matplotlib and Jinja2 are not, so the first call (``first``) includes their import, as ``--html`` does; ``best`` is
the best of ``--repeat`` calls. The size is every file under the report's folder. Run::

    python benchmarks/bench_html_report.py [--images 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

import segmetrics_torch.functional  # noqa: F401  (loaded by any run before its report: not timed)
from segmetrics_torch.registry import DEFAULT_FOREGROUND, MEASURES
from segmetrics_torch.reports.html_report import K_MAX, HtmlImage, write_html_report

METHODS = ("ours", "peer")


def write_inputs(root: Path, n: int, size: int = 320) -> list[HtmlImage]:
    """``n`` ground truths (an ellipse each) and two methods' soft maps (blurred, shifted, noisy) as PNGs."""
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[:size, :size]
    for folder in ("gt", *METHODS):
        (root / folder).mkdir(parents=True)
    images = []
    for i in range(n):
        cy, cx, ry, rx = rng.uniform(80, 240), rng.uniform(80, 240), rng.uniform(20, 80), rng.uniform(20, 80)
        gt = (((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1).astype(np.uint8) * 255
        stem = f"img_{i:04d}"
        Image.fromarray(gt).save(root / "gt" / f"{stem}.png")
        for m, method in enumerate(METHODS):
            shifted = np.roll(gt, int(rng.integers(0, 10 + 20 * m)), axis=1).astype(np.float64)
            noisy = np.clip(shifted * rng.uniform(0.5, 1) + rng.normal(0, 20, gt.shape), 0, 255).astype(np.uint8)
            Image.fromarray(noisy).save(root / method / f"{stem}.png")
        predictions = {method: root / method / f"{stem}.png" for method in METHODS}
        images.append(HtmlImage("synthetic", stem, root / "gt" / f"{stem}.png", predictions))
    return images


def rows(images: list[HtmlImage], correlated: bool) -> list[dict[str, object]]:
    rng = np.random.default_rng(1)
    out: list[dict[str, object]] = []
    for method in METHODS:
        for image in images:
            quality = rng.uniform(0, 1)
            row: dict[str, object] = {"method": method, "dataset": "synthetic", "image": image.image}
            for key in DEFAULT_FOREGROUND:
                value = quality + rng.normal(0, 0.05) if correlated else rng.uniform(0, 1)
                row[MEASURES[key].result] = value if MEASURES[key].higher_is_better else 1 - value
            out.append(row)
    return out


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    columns = [(MEASURES[k].result, MEASURES[k].header) for k in DEFAULT_FOREGROUND]
    higher = {MEASURES[k].result: MEASURES[k].higher_is_better for k in DEFAULT_FOREGROUND}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        images = write_inputs(root / "data", args.images)
        print(f"{args.images} images x {len(METHODS)} methods, 320x320 PNG, {len(columns)} measures, K_MAX {K_MAX}")
        for case in ("correlated", "independent"):
            per_image = rows(images, correlated=case == "correlated")
            tables = {"synthetic": {m: {k: 0.5 for k, _ in columns} for m in METHODS}}
            times = []
            for _ in range(args.repeat):
                out = root / "html"
                shutil.rmtree(out, ignore_errors=True)
                start = time.perf_counter()
                write_html_report(
                    out,
                    family="foreground",
                    title="bench",
                    columns=columns,
                    higher_is_better=higher,
                    tables=tables,
                    per_image=per_image,
                    images=images,
                )
                times.append(time.perf_counter() - start)
            thumbs = len(list((out / "assets" / "thumbs").iterdir()))
            size = folder_bytes(out) / 1e6
            page = (out / "index.html").stat().st_size / 1e6
            print(
                f"{case:12s} seconds first {times[0]:.2f} best {min(times):.2f} (of {args.repeat})  MB {size:.1f}  "
                f"thumbnails {thumbs}  page MB {page:.1f}"
            )
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), f"cores {os.cpu_count()}")


if __name__ == "__main__":
    main()
