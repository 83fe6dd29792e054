"""The HTML error browser (segmetrics_torch.reports.html_report) and its overlays, without a browser: the files
written, escaping, no external URL, the overlays' colours per family, the output-safety refusal."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest
from PIL import Image

from segmetrics_torch.errors import InputError
from segmetrics_torch.reports import overlays
from segmetrics_torch.reports.html_report import ASSETS, K_MAX, MARKER, HtmlImage, write_html_report

from .html_run import HOSTILE_DATASET, HOSTILE_STEM, METHODS, SCRIPT_STEM, STEMS, write_run


class _Links(HTMLParser):
    """Every tag, every src / href, and the text of the JSON data block."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.urls: list[str] = []
        self._in_data = False
        self.data = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        self.urls += [v for k, v in attrs if k in ("src", "href") and v is not None]
        self._in_data = tag == "script" and attributes.get("id") == "report-data"

    def handle_endtag(self, tag: str) -> None:
        self._in_data = False

    def handle_data(self, data: str) -> None:
        if self._in_data:
            self.data += data


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _data_urls(value: object) -> list[str]:
    """Every ``src`` / ``*href`` string of the embedded data (what the script turns into src / href)."""
    if isinstance(value, dict):
        found = [
            v
            for k, v in value.items()
            if (isinstance(v, str) and k in ("src", "gt", "pred", "err")) or (isinstance(v, str) and k.endswith("href"))
        ]
        return found + [u for v in value.values() for u in _data_urls(v)]
    if isinstance(value, list):
        return [u for v in value for u in _data_urls(v)]
    return []


def test_files_written(tmp_path: Path) -> None:
    page = write_run(tmp_path)
    assert page == tmp_path / "html" / "index.html" and page.is_file()
    assets = tmp_path / "html" / ASSETS
    assert (assets / MARKER).is_file()
    data = json.loads(_parse(page).data)
    # 6 images: every one is in some worst set; per image a source, a ground truth, per method a prediction + overlay
    assert len(data["images"]) == len(STEMS)
    names = sorted(p.name for p in (assets / "thumbs").iterdir())
    assert len(names) == len(STEMS) * (2 + 2 * len(METHODS))
    for name in names:
        with Image.open(assets / "thumbs" / name) as thumb:
            assert max(thumb.size) <= 192
    assert len(list((assets / "hist").glob("*.png"))) == 2  # one per (dataset, measure)
    assert not list((tmp_path / "html").glob(".segmetrics-html-*"))  # the temporary folder is gone


def test_worst_orderings_and_values(tmp_path: Path) -> None:
    data = json.loads(_parse(write_run(tmp_path)).data)
    worst = data["worst"][HOSTILE_DATASET]
    stems = [image["image"] for image in data["images"]]
    # MAE grows with the index: the worst MAE (highest) is the last stem; the worst S-measure (lowest) likewise
    assert [stems[i] for i in worst["bad"]["mae"]] == list(reversed(STEMS))
    assert [stems[i] for i in worst["good"]["sm"]] == list(reversed(STEMS))
    first = data["images"][worst["bad"]["mae"][0]]
    assert first["preds"]["bad"]["values"]["mae"] == "0.360"  # 0.06 * 6, printed with digits=3
    assert data["kmax"] == K_MAX


def test_no_external_url(tmp_path: Path) -> None:
    page = write_run(tmp_path, figures=[])
    parsed = _parse(page)
    urls = parsed.urls + _data_urls(json.loads(parsed.data))
    assert len(urls) > 20
    for url in urls:
        parts = urlsplit(url)
        assert parts.scheme == "" and parts.netloc == "" and not url.startswith("//"), url
        assert (page.parent / unquote(parts.path)).exists(), url  # relative, and there
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"(?:https?|ftp):|//cdn", text.replace("http-equiv", ""))


def test_hostile_names_escaped(tmp_path: Path) -> None:
    page = write_run(tmp_path)
    text = page.read_text(encoding="utf-8")
    for name in (HOSTILE_STEM, HOSTILE_DATASET, SCRIPT_STEM):
        assert name not in text  # never raw, in the HTML or the JSON
    assert "&lt;img src=x onerror=window.__xss=1&gt;" in text  # the per-image table shows it as text
    parsed = _parse(page)
    assert [t for t, a in parsed.tags if t == "script"] == ["script", "script"]  # the data block and the script
    assert not [a for t, a in parsed.tags if t == "img" and a.get("src") == "x"]
    assert "<b>" not in text  # the title is escaped too
    data = json.loads(parsed.data)  # the JSON decodes back to the very names
    assert {HOSTILE_STEM, SCRIPT_STEM} <= {image["image"] for image in data["images"]}
    assert data["datasets"] == [HOSTILE_DATASET]


def test_tables_marks_as_markdown(tmp_path: Path) -> None:
    from segmetrics_torch.reports.combined import combine, format_combined_markdown

    rows = {"a": {"sm": 0.9, "mae": 0.1}, "b": {"sm": 0.8, "mae": 0.3}, "c": {"sm": 0.85, "mae": 0.2}, "d": {"sm": 0.1}}
    page = write_run(tmp_path, tables={"D": rows})
    text = page.read_text(encoding="utf-8")
    marks = re.findall(r'<td class="num (\w*)">([^<]*)</td>', text)
    # a: best of both; c: second; b: third; d: no MAE, last S-measure
    assert marks == [
        ("bold", "0.900"),
        ("bold", "0.100"),
        ("italic", "0.800"),
        ("italic", "0.300"),
        ("underline", "0.850"),
        ("underline", "0.200"),
        ("", "0.100"),
        ("", "-"),
    ]
    markdown = format_combined_markdown(combine("foreground", {"D": ([("sm", "S"), ("mae", "M")], ["mae"], rows)}))
    assert "**0.900**" in markdown and "<ins>0.850</ins>" in markdown and "_0.800_" in markdown


def test_out_dir_input_folder_refused(tmp_path: Path) -> None:
    write_run(tmp_path)  # files and a first report
    for folder in ("gt", "good", "rgb"):
        before = sorted(p.name for p in (tmp_path / folder).iterdir())
        with pytest.raises(InputError, match="--html"):
            write_run(tmp_path, out=tmp_path / folder)
        assert sorted(p.name for p in (tmp_path / folder).iterdir()) == before  # nothing written


def test_foreign_assets_folder_refused(tmp_path: Path) -> None:
    out = tmp_path / "html"
    (out / ASSETS).mkdir(parents=True)
    (out / ASSETS / "mine.txt").write_text("x")
    with pytest.raises(InputError, match="not written by this report"):
        write_run(tmp_path, out=out)
    assert sorted(p.name for p in out.iterdir()) == [ASSETS] and (out / ASSETS / "mine.txt").exists()


def test_rerun_replaces_its_assets(tmp_path: Path) -> None:
    write_run(tmp_path)
    stale = tmp_path / "html" / ASSETS / "thumbs" / "stale.png"
    stale.write_bytes(b"")
    write_run(tmp_path)
    assert not stale.exists()


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="family"):
        write_run(tmp_path, family="edges")
    with pytest.raises(ValueError, match=r"per_image\[0\]"):
        write_run(tmp_path, per_image=[{"method": "m", "image": "x"}])
    with pytest.raises(TypeError, match="images"):
        write_run(tmp_path, images=["x.png"])
    assert not (tmp_path / "html").exists()


def test_unreadable_prediction_is_shown_not_fatal(tmp_path: Path) -> None:
    images = [HtmlImage("D", "x", tmp_path / "gt.png", {"m": tmp_path / "missing.png"})]
    Image.fromarray(np.zeros((8, 8), np.uint8)).save(tmp_path / "gt.png")
    page = write_html_report(
        tmp_path / "html",
        family="foreground",
        title="t",
        columns=[("mae", "MAE")],
        higher_is_better={"mae": False},
        tables={},
        per_image=[{"method": "m", "dataset": "D", "image": "x", "mae": 0.5}],
        images=images,
    )
    data = json.loads(_parse(page).data)
    assert data["images"][0]["preds"]["m"]["note"].startswith("not drawn:")


def test_proposals_say_no_overlay(tmp_path: Path) -> None:
    page = write_run(tmp_path, family="proposals")
    assert "No error overlay exists for object proposals" in page.read_text(encoding="utf-8")
    data = json.loads(_parse(page).data)
    assert all("err" not in p for image in data["images"] for p in image["preds"].values())


# ------------------------------------------------------------------------------ overlays: hand-made cases


def test_foreground_overlay_colours() -> None:
    # mean of the normalised map = 4/16 -> threshold 0.5: the 255 pixels are predicted, the 100 one is not
    pred = np.zeros((4, 4), np.uint8)
    pred[0, 0] = pred[0, 1] = pred[1, 0] = pred[1, 1] = 255
    pred[3, 3] = 100
    gt = np.zeros((4, 4), np.uint8)
    gt[0, 0] = gt[3, 3] = gt[2, 2] = 255
    rgb = overlays.foreground_overlay(pred, gt)
    assert tuple(rgb[0, 0]) == overlays.TP_COLOUR
    assert tuple(rgb[0, 1]) == tuple(rgb[1, 1]) == overlays.FP_COLOUR
    assert tuple(rgb[3, 3]) == tuple(rgb[2, 2]) == overlays.FN_COLOUR
    assert tuple(rgb[3, 0]) == overlays.TN_COLOUR


def test_boundary_overlay_colours() -> None:
    gt = np.zeros((2, 40, 40), bool)
    gt[0, 20, 5:35] = True  # annotator 1: matched by the prediction one pixel below
    gt[1, 35, 5:35] = True  # annotator 2: nothing near it -> missed
    pb = np.zeros((40, 40))
    pb[21, 5:35] = 0.8
    pb[5, 5:15] = 0.6  # far from every annotator: false positive
    drawn = overlays.boundary_overlay(pb, gt, threshold=0.5, max_dist=2.0)
    assert drawn.threshold == 0.5
    assert tuple(drawn.rgb[21, 10]) == overlays.MATCHED_PRED_COLOUR
    assert tuple(drawn.rgb[5, 10]) == overlays.FP_COLOUR
    assert tuple(drawn.rgb[35, 10]) == overlays.FN_COLOUR
    assert tuple(drawn.rgb[20, 10]) == overlays.MATCHED_GT_COLOUR
    # above 0.8 no machine pixel is left: every annotator pixel unmatched
    high = overlays.boundary_overlay(pb, gt, threshold=0.9, max_dist=2.0)
    assert tuple(high.rgb[20, 10]) == overlays.FN_COLOUR and tuple(high.rgb[21, 10]) == overlays.TN_COLOUR
    # no threshold given: the image's own best one keeps the matched line (F at 0.5 beats F at 0.7)
    assert overlays.boundary_overlay(pb, gt, max_dist=2.0).threshold <= 0.8


def test_partition_overlay_colours() -> None:
    gt = np.zeros((10, 10), np.int64)
    gt[:, 5:] = 1
    pred = gt.copy()
    pred[:, 8:] = 2  # GT region 1 split: best overlap 3/5 of it
    rgb = overlays.partition_overlay(pred, gt)
    np.testing.assert_array_equal(rgb[5, 1], overlays.error_colour(np.float64(0.0)))  # region 0: perfect
    np.testing.assert_array_equal(rgb[5, 6], overlays.error_colour(np.float64(1 - 30 / 50)))
    assert tuple(rgb[5, 4]) == overlays.BORDER_COLOUR  # seg2bmap's border pixel
    # no predicted segment fits: one segment over everything -> J = 50/100 for both regions
    whole = overlays.partition_overlay(np.zeros_like(gt), gt)
    np.testing.assert_array_equal(whole[5, 1], overlays.error_colour(np.float64(0.5)))


def test_surface_overlay_slice_and_colours() -> None:
    gt = np.zeros((20, 20, 6), np.int64)
    gt[5:15, 5:15, :] = 1
    pred = gt.copy()
    pred[5:15, 15:19, 4] = 2  # slice 4 sticks out by 4 voxels (a class label: compared as labels > 0)
    drawn = overlays.surface_overlay(pred, gt, (1.0, 1.0, 1.0))
    assert drawn.slice_index == 4 and drawn.max_distance == pytest.approx(4.0)
    np.testing.assert_array_equal(drawn.rgb[10, 18], overlays.error_colour(np.float64(1.0)))  # the farthest
    np.testing.assert_array_equal(drawn.rgb[5, 10], overlays.error_colour(np.float64(0.0)))  # shared surface
    # every voxel of the one-slice slab is on the surface (slices 3 and 5 lack it): 2 from the GT's surface
    np.testing.assert_array_equal(drawn.rgb[10, 16], overlays.error_colour(np.float64(2 / 4)))
    spaced = overlays.surface_overlay(pred, gt, (1.0, 2.0, 1.0))
    assert spaced.max_distance == pytest.approx(8.0)  # the error runs along the second axis
    flat = overlays.surface_overlay(pred[..., 4], gt[..., 4])
    assert flat.slice_index is None and flat.max_distance == pytest.approx(4.0)
    assert tuple(flat.rgb[10, 16]) == (110, 30, 30)  # in 2-D it is inside the prediction only, off both surfaces


# ------------------------------------------------------------------ every family end to end, from files on disk


def _one_image_report(tmp_path: Path, family: str, gt: Path, pred: Path, row: dict, options: dict) -> dict:
    page = write_html_report(
        tmp_path / "html",
        family=family,
        title=family,
        columns=[("f", "F")],
        higher_is_better={"f": True},
        tables={"D": {"m": {"f": 0.5}}},
        per_image=[{"method": "m", "dataset": "D", "image": "x", "f": 0.5, **row}],
        images=[HtmlImage("D", "x", gt, {"m": pred})],
        options=options,
    )
    data = json.loads(_parse(page).data)
    entry = data["images"][0]["preds"]["m"]
    assert "note" not in entry, entry
    return entry


def _thumb(tmp_path: Path, entry: dict, part: str) -> np.ndarray:
    with Image.open(tmp_path / "html" / entry[part]) as thumb:  # small images are not downscaled: exact colours
        return np.asarray(thumb.convert("RGB"))


def test_boundary_report_from_files(tmp_path: Path) -> None:
    gt = np.zeros((40, 40), np.uint8)
    gt[20, 5:35] = 255
    pred = np.zeros((40, 40), np.uint8)
    pred[21, 5:35] = 200
    pred[5, 5:15] = 150
    Image.fromarray(gt).save(tmp_path / "gt.png")
    Image.fromarray(pred).save(tmp_path / "pred.png")
    entry = _one_image_report(
        tmp_path, "boundary", tmp_path / "gt.png", tmp_path / "pred.png", {"threshold": 0.7}, {"max_dist": 2.0}
    )
    assert entry["caption"] == "threshold 0.7, R 1.000, P 1.000"
    rgb = _thumb(tmp_path, entry, "err")
    assert tuple(rgb[21, 10]) == overlays.MATCHED_PRED_COLOUR and tuple(rgb[5, 10]) == overlays.TN_COLOUR
    # the row's threshold below 150/255: the far line is kept, a false positive
    entry = _one_image_report(
        tmp_path, "boundary", tmp_path / "gt.png", tmp_path / "pred.png", {"threshold": 0.3}, {"max_dist": 2.0}
    )
    assert tuple(_thumb(tmp_path, entry, "err")[5, 10]) == overlays.FP_COLOUR
    # no threshold in the row: the image's best (F = 1 between 150/255 and 200/255, the far line dropped)
    entry = _one_image_report(tmp_path, "boundary", tmp_path / "gt.png", tmp_path / "pred.png", {}, {"max_dist": 2.0})
    assert 150 / 255 < float(entry["caption"].split()[1].rstrip(",")) <= 200 / 255
    rgb = _thumb(tmp_path, entry, "err")
    assert tuple(rgb[5, 10]) == overlays.TN_COLOUR and tuple(rgb[21, 10]) == overlays.MATCHED_PRED_COLOUR


def test_partition_report_from_files(tmp_path: Path) -> None:
    gt = np.zeros((10, 10), np.uint8)
    gt[:, 5:] = 1
    Image.fromarray(gt).save(tmp_path / "gt.png")
    Image.fromarray(np.zeros_like(gt)).save(tmp_path / "pred.png")
    entry = _one_image_report(tmp_path, "partition", tmp_path / "gt.png", tmp_path / "pred.png", {}, {})
    np.testing.assert_array_equal(_thumb(tmp_path, entry, "err")[5, 1], overlays.error_colour(np.float64(0.5)))


def test_surface_report_from_nifti(tmp_path: Path) -> None:
    nibabel = pytest.importorskip("nibabel")
    gt = np.zeros((20, 20, 6), np.int16)
    gt[5:15, 5:15, :] = 1
    pred = gt.copy()
    pred[5:15, 15:19, 4] = 1
    for name, volume in (("gt", gt), ("pred", pred)):
        nibabel.save(nibabel.Nifti1Image(volume, np.eye(4)), tmp_path / f"{name}.nii.gz")
    entry = _one_image_report(tmp_path, "surface", tmp_path / "gt.nii.gz", tmp_path / "pred.nii.gz", {}, {})
    assert entry["caption"] == "slice 4, largest 4"
    np.testing.assert_array_equal(_thumb(tmp_path, entry, "err")[10, 18], overlays.error_colour(np.float64(1.0)))


def _covering_reference(seg: np.ndarray, gt: np.ndarray) -> float:
    """Plain loops: sum over GT regions of |G| * max over segments of |G & S| / |G | S|, over the pixel count."""
    total = 0.0
    for g in np.unique(gt):
        region = gt == g
        best = max((region & (seg == s)).sum() / (region | (seg == s)).sum() for s in np.unique(seg))
        total += region.sum() * best
    return total / gt.size


def test_covering_per_level_matches_loops() -> None:
    rng = np.random.default_rng(3)
    gt = rng.integers(0, 4, (12, 9))
    levels = np.stack([rng.integers(0, k, (12, 9)) for k in (1, 3, 6)] + [gt * 7 + 1])
    np.testing.assert_allclose(
        overlays.covering_per_level(levels, gt), [_covering_reference(level, gt) for level in levels], rtol=1e-12
    )
    best = overlays.hierarchy_overlay(levels, gt)
    assert best.level == 3 and best.covering == pytest.approx(1.0)  # the relabelled ground truth itself


def test_partition_ucm2_report_picks_a_level(tmp_path: Path) -> None:
    scipy_io = pytest.importorskip("scipy.io")
    # a 2 x 4 image whose ucm2 has one vertical wall (strength 0.6) between columns 1 and 2
    ucm2 = np.zeros((5, 9))
    ucm2[:, 4] = 0.6
    scipy_io.savemat(tmp_path / "pred.mat", {"ucm2": ucm2})
    gt = np.array([[1, 1, 2, 2], [1, 1, 2, 2]], np.uint8)
    Image.fromarray(gt).save(tmp_path / "gt.png")
    entry = _one_image_report(
        tmp_path, "partition", tmp_path / "gt.png", tmp_path / "pred.mat", {}, {"input_format": "ucm2"}
    )
    assert entry["caption"].endswith("covering 1.000")  # below 0.6 the wall splits the image as the annotation does
    np.testing.assert_array_equal(_thumb(tmp_path, entry, "err")[0, 0], overlays.error_colour(0.0))


def test_boundary_overlay_counts_equal_the_benchmark_counts() -> None:
    """One annotator: the overlay's matched machine pixels are BSR's cntP, its annotator pixels cntR / sumR - cntR,
    as :func:`boundary_pr_counts` counts them at the same threshold (one matcher, one rule)."""
    import torch

    from segmetrics_torch.functional.boundary.bsds import boundary_pr_counts

    rng = np.random.default_rng(5)
    gt = np.zeros((1, 60, 80), bool)
    gt[0, 20, 5:75] = gt[0, 10:50, 40] = True
    pb = np.clip(rng.normal(0, 0.2, (60, 80)), 0, 1)
    pb[21, 5:60] = 0.9
    pb[10:45, 42] = 0.7
    for threshold in (0.3, 0.5, 0.8):
        counts = boundary_pr_counts(torch.from_numpy(pb)[None], torch.from_numpy(gt)[None], thresholds=[threshold])
        drawn = overlays.boundary_overlay(pb, gt, threshold=threshold)
        rgb = drawn.rgb

        def count(colour: tuple[int, int, int], rgb: np.ndarray = rgb) -> int:
            return int((rgb == colour).all(axis=-1).sum())

        assert count(overlays.MATCHED_PRED_COLOUR) == int(counts.cnt_p[0, 0])
        assert count(overlays.MATCHED_PRED_COLOUR) + count(overlays.FP_COLOUR) == int(counts.sum_p[0, 0])
        assert drawn.counts == tuple(int(c[0, 0]) for c in counts[:4])  # cntR, sumR, cntP, sumP


def test_boundary_overlay_counts_two_annotators() -> None:
    import torch

    from segmetrics_torch.functional.boundary.bsds import boundary_pr_counts

    gt = np.zeros((2, 40, 40), bool)
    gt[0, 20, 5:35] = gt[1, 22, 5:30] = gt[1, 5, 5:35] = True
    pb = np.zeros((40, 40))
    pb[21, 5:35] = 0.8
    counts = boundary_pr_counts(torch.from_numpy(pb)[None], torch.from_numpy(gt)[None], thresholds=[0.5], max_dist=2.0)
    drawn = overlays.boundary_overlay(pb, gt, threshold=0.5, max_dist=2.0)
    assert drawn.counts == tuple(int(c[0, 0]) for c in counts[:4]) == (55, 85, 30, 30)


@pytest.mark.shared
def test_boundary_overlay_reproduces_bsr_per_image_numbers() -> None:
    """The overlay of each BSDS500 sample image at its own best threshold (none given: searched as OIS does) has
    BSR's published ``eval_bdry_img.txt`` threshold, recall and precision (MATLAB, gPb-owt-ucm), up to the official
    matcher's randomness (it is 0-6 pixels short of the maximum matching ours finds: a few thousandths)."""
    from segmetrics_torch.io import read_bsds_ground_truth, read_mat_array

    from ..conftest import shared_path

    root = shared_path("bsds_sample", "BSDS500")
    published = np.loadtxt(root / "ucm2" / "test_eval" / "eval_bdry_img.txt")
    stems = sorted(p.stem for p in (root / "ucm2" / "test").glob("*.mat"))[:3]
    for stem, (_, threshold, recall, precision, _) in zip(stems, published, strict=False):
        pb = read_mat_array(root / "ucm2" / "test" / f"{stem}.mat", "ucm2")[2::2, 2::2]
        gt = read_bsds_ground_truth(root / "data" / "groundTruth" / "test" / f"{stem}.mat").boundaries
        drawn = overlays.boundary_overlay(pb, gt)
        cnt_r, sum_r, cnt_p, sum_p = drawn.counts
        assert drawn.threshold == pytest.approx(threshold, abs=1e-9)
        assert cnt_r / sum_r == pytest.approx(recall, abs=5e-3)
        assert cnt_p / sum_p == pytest.approx(precision, abs=5e-3)


def test_cells_of_every_kind(tmp_path: Path) -> None:
    """Per-image cells as the tables print them: NaN / None ``nan``, an int as an int, a numpy float, a list (a
    proposal row's best J per object) shown as text and left out of the extra columns."""
    rows = [
        {"method": "m", "dataset": "D", "image": "a", "mae": np.float32(0.25), "n": 3, "best_j": [0.5, 0.7]},
        {"method": "m", "dataset": "D", "image": "b", "mae": float("nan"), "n": None, "best_j": [0.1]},
    ]
    page = write_run(tmp_path, per_image=rows, columns=[("mae", "MAE"), ("best_j", "J")], images=[])
    text = page.read_text(encoding="utf-8")
    assert '<td class="num" data-v="0.25">0.250</td><td class="num" data-v="">[0.5, 0.7]</td>' in text
    assert '<td class="num" data-v="3.0">3</td>' in text  # the extra numeric column n
    assert '<td class="num" data-v="">nan</td>' in text


def test_without_matplotlib_the_page_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from segmetrics_torch.reports import html_report

    real = importlib.util.find_spec
    monkeypatch.setattr(
        html_report.importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a)
    )
    page = write_run(tmp_path)
    assert "matplotlib is not installed: no histograms" in page.read_text(encoding="utf-8")
    assert not (tmp_path / "html" / ASSETS / "hist").exists()


def test_the_command_s_checks_before_a_run(tmp_path: Path) -> None:
    """What a command checks before its run: the folder output (refused as an input folder, or holding one in
    assets/), and the folder itself (a file, a foreign assets/)."""
    from segmetrics_torch.reports.html_report import html_folder_output
    from segmetrics_torch.reports.output_safety import InputFolder, check_outputs

    (tmp_path / "gt").mkdir()
    with pytest.raises(InputError, match="--html"):
        check_outputs({}, folders=[html_folder_output(tmp_path / "gt")], inputs=[InputFolder("gt", tmp_path / "gt")])
    (tmp_path / "out" / ASSETS / "gt").mkdir(parents=True)
    with pytest.raises(InputError, match="assets"):
        check_outputs(
            {}, folders=[html_folder_output(tmp_path / "out")], inputs=[InputFolder("gt", tmp_path / "out/assets/gt")]
        )
    with pytest.raises(InputError, match="not written by this report"):
        check_outputs({}, folders=[html_folder_output(tmp_path / "out")])
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match="is a file"):
        check_outputs({}, folders=[html_folder_output(tmp_path / "file")])
    check_outputs({}, folders=[html_folder_output(tmp_path / "new")])  # a folder that does not exist yet is fine


def test_threshold_values_as_the_command_gives_them(tmp_path: Path) -> None:
    """``thresholds`` as a list of values (``--thresholds 0.3 0.7``) or a tensor, not only a count."""
    import torch

    gt = np.zeros((40, 40), np.uint8)
    gt[20, 5:35] = 255
    pred = np.zeros((40, 40), np.uint8)
    pred[21, 5:35] = 200
    Image.fromarray(gt).save(tmp_path / "gt.png")
    Image.fromarray(pred).save(tmp_path / "pred.png")
    for values in ([0.3, 0.7], torch.tensor([0.3, 0.7], dtype=torch.float64)):
        entry = _one_image_report(
            tmp_path,
            "boundary",
            tmp_path / "gt.png",
            tmp_path / "pred.png",
            {},
            {"max_dist": 2.0, "thresholds": values},
        )
        assert entry["caption"].endswith("R 1.000, P 1.000")
