"""``segmetrics evaluate boundary``: against the functional benchmark, BSR output files, ucm2 / .mat inputs, errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import torch
from PIL import Image
from scipy.ndimage import gaussian_filter

from segmetrics_torch.app.cli import main
from segmetrics_torch.app.single_folder import BOUNDARY_COLUMNS
from segmetrics_torch.functional.boundary import annotator_boundaries, boundary_pr
from segmetrics_torch.io import read_bsds_ground_truth
from tests.conftest import shared_path

# two images of 40x50 and one of 36x44 (lists of mixed sizes reach the measure with --batch-size >= 2)
SIZES = {"img_a": (40, 50), "img_b": (40, 50), "img_c": (36, 44)}
SUMMARY_KEYS = (("ods", "threshold"), ("ods", "recall"), ("ods", "precision"), ("ods", "f"))
SUMMARY_KEYS += (("ois", "recall"), ("ois", "precision"), ("ois", "f"), ("ap",))


def _labels(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """A rectangle (1) and an overlapping lower-right block (2) on a background (0)."""
    labels = np.zeros((h, w), np.uint8)
    top, left = rng.integers(4, 9), rng.integers(4, 10)
    labels[top : h - rng.integers(6, 10), left : w - rng.integers(6, 12)] = 1
    labels[h // 2 + rng.integers(-3, 4) :, w // 2 + rng.integers(-3, 4) :] = 2
    return labels


def _boundaries(labels: np.ndarray) -> np.ndarray:
    """(A, H, W) bool: BSDS `Boundaries` of (A, H, W) or (H, W) label maps."""
    seg = torch.from_numpy(np.asarray(labels, np.int64))
    return annotator_boundaries(seg if seg.ndim == 3 else seg[None]).numpy()


def _soft(boundary: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """uint8 soft boundary map: the boundary shifted by a pixel, partly faint, blurred, noisy, a spurious segment."""
    x = np.roll(boundary.astype(np.float64), 1, axis=0)
    x[:, : x.shape[1] // 3] *= 0.3  # a faint part
    x[5, 3:25] = 0.8
    x = gaussian_filter(x, 0.8)
    x = x / x.max() + rng.uniform(0, 0.3, x.shape)
    return np.clip(np.round(255 * x / x.max()), 0, 255).astype(np.uint8)


@pytest.fixture(scope="module")
def data() -> dict[str, dict[str, np.ndarray]]:
    """Per stem: `labels` (H, W), `labels2` (a second annotator), `gt` (1, H, W) and `gt2` (2, H, W), `soft` uint8."""
    rng = np.random.default_rng(7)
    out = {}
    for stem, (h, w) in SIZES.items():
        labels = _labels(h, w, rng)
        labels2 = np.where(labels == 2, 1, labels).astype(np.uint8)  # the second annotator merges the regions
        gt = _boundaries(labels)
        out[stem] = {
            "labels": labels,
            "labels2": labels2,
            "gt": gt,
            "gt2": _boundaries(np.stack([labels, labels2])),
            "soft": _soft(gt[0], rng),
        }
    return out


def _write_png(folder: Path, arrays: dict[str, np.ndarray]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for stem, array in arrays.items():
        Image.fromarray(array).save(folder / f"{stem}.png")
    return folder


def _write_mat(folder: Path, variables: dict[str, dict[str, object]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for stem, mat in variables.items():
        scipy.io.savemat(folder / f"{stem}.mat", mat)
    return folder


def _ground_truth_mat(segmentations: list[np.ndarray]) -> dict[str, object]:
    """A BSDS groundTruth file: a 1xA cell of structs with `Segmentation` (uint16) and `Boundaries` (uint8)."""
    cell = np.empty((1, len(segmentations)), dtype=object)
    for i, seg in enumerate(segmentations):
        cell[0, i] = {"Segmentation": seg.astype(np.uint16), "Boundaries": _boundaries(seg)[0].astype(np.uint8)}
    return {"groundTruth": cell}


def _ucm2(soft: np.ndarray) -> np.ndarray:
    """A (2H+1, 2W+1) double-size map whose pixel grid ucm2[2::2, 2::2] is the soft map / 255."""
    h, w = soft.shape
    ucm2 = np.zeros((2 * h + 1, 2 * w + 1))
    ucm2[2::2, 2::2] = soft / 255
    ucm2[1::2, 2::2] = ucm2[2::2, 2::2] / 2  # something on the edge grid too, which the benchmark ignores
    return ucm2


def _pred_png(tmp_path: Path, data) -> Path:
    return _write_png(tmp_path / "pred", {stem: d["soft"] for stem, d in data.items()})


def _gt_png(tmp_path: Path, data) -> Path:
    return _write_png(tmp_path / "gt", {stem: d["gt"][0].astype(np.uint8) * 255 for stem, d in data.items()})


def _gt_mat(tmp_path: Path, data) -> Path:
    return _write_mat(tmp_path / "gt_mat", {s: _ground_truth_mat([d["labels"], d["labels2"]]) for s, d in data.items()})


def _expected(data, pred: str = "soft", gt: str = "gt", **options) -> dict:
    preds = [torch.from_numpy(data[stem][pred]) for stem in sorted(data)]
    target = [torch.from_numpy(data[stem][gt]) for stem in sorted(data)]
    return boundary_pr(preds, target, **options)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["evaluate", "boundary", "--no-progress", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _flat(summary) -> list[float]:
    return [float(summary[k[0]][k[1]]) if len(k) == 2 else float(summary[k[0]]) for k in SUMMARY_KEYS]


def _table_row(out: str) -> list[float]:
    lines = out.splitlines()
    assert lines[0].split() == ["method", *(header for _, header in BOUNDARY_COLUMNS)]
    return [float(v) for v in lines[2].split()[1:]]


# ---------------------------------------------------------------------------------------------------- results


def test_out_dir_and_json_are_one_set(tmp_path, capsys, data, monkeypatch):
    """A Ctrl-C while the outputs move into place leaves the old set or the new: the BSR files were moved in on
    their own first, and an interruption there left them new beside the previous run's JSON and table."""
    from tests.conftest import signal_at_first_replace

    pred, gt = _pred_png(tmp_path, data), _gt_png(tmp_path, data)
    out = tmp_path / "outputs"
    out.mkdir()
    argv = ["--pred", str(pred), "--gt", str(gt), "--thresholds", "5", "--out-dir", str(out / "bsr")]
    argv += ["--json", str(out / "r.json"), "--per-image-csv", str(out / "img.csv")]
    assert _run(capsys, *argv)[0] == 0
    written = sorted(p for p in out.rglob("*") if p.is_file())
    for path in written:
        if path.suffix != ".csv":  # (the table: rows are merged into it)
            path.write_text("the previous run's")
    signal_at_first_replace(monkeypatch)
    assert _run(capsys, *argv)[0] == 130
    assert sorted(p for p in out.rglob("*") if p.is_file()) == written  # no temporary file left
    assert not [p for p in written if p.read_text() == "the previous run's"]  # every file is the new run's


def test_an_out_dir_made_for_a_set_that_fails_is_not_left_behind(tmp_path, capsys, data, monkeypatch):
    """--out-dir's folder was made before the run's files were written: a set that failed (here the --json, as on a
    full disk) left it behind, empty."""
    from segmetrics_torch.reports import files

    pred, gt = _pred_png(tmp_path, data), _gt_png(tmp_path, data)
    stage = files._StagedFile.stage

    def full_for_the_json(self):
        if self.target.suffix == ".json":
            raise OSError(28, "No space left on device", str(self.target))
        stage(self)

    monkeypatch.setattr(files._StagedFile, "stage", full_for_the_json)
    argv = ["--pred", str(pred), "--gt", str(gt), "--thresholds", "5", "--out-dir", str(tmp_path / "bsr")]
    status, _, err = _run(capsys, *argv, "--json", str(tmp_path / "r.json"))
    assert status == 2 and "No space left" in err
    assert not (tmp_path / "bsr").exists() and not (tmp_path / "r.json").exists()


def test_soft_png_equals_functional_and_writes_bsr_files(tmp_path, capsys, data):
    pred, gt = _pred_png(tmp_path, data), _gt_png(tmp_path, data)
    json_path, out_dir = tmp_path / "res.json", tmp_path / "bsr"
    status, out, err = _run(
        capsys,
        "--pred",
        str(pred),
        "--gt",
        str(gt),
        "--thresholds",
        "9",
        "--max-dist",
        "2",
        "--batch-size",
        "2",
        "--json",
        str(json_path),
        "--out-dir",
        str(out_dir),
        "--per-image-csv",
        str(tmp_path / "img.csv"),
    )
    assert status == 0, err
    expected = _expected(data, thresholds=9, max_dist=2)
    # the per-image CSV holds the JSON's per-image bests, one row per image
    with (tmp_path / "img.csv").open() as f:
        csv_rows = list(csv.DictReader(f))
    json_per_image = json.loads(json_path.read_text())["results"]["per_image"]
    assert [r["image"] for r in csv_rows] == list(json_per_image)
    for r in csv_rows:
        for key, value in json_per_image[r["image"]].items():
            assert float(r[key]) == value, (r["image"], key)
    assert 0.2 < float(expected["ods"]["f"]) < 0.95  # a non-trivial case

    row = _table_row(out)
    np.testing.assert_allclose(row[:8], _flat(expected), atol=5e-5)
    assert row[8] == pytest.approx(float(expected["r50"]), abs=5e-5)
    assert "Evaluated 3 image(s)" in out and "9 thresholds" in out

    report = json.loads(json_path.read_text())
    res = report["results"]
    assert res["ods"]["f"] == pytest.approx(float(expected["ods"]["f"]), abs=1e-12)
    np.testing.assert_allclose(_flat(res), _flat(expected), rtol=0, atol=1e-12)
    assert res["r50"] == pytest.approx(float(expected["r50"]), abs=1e-12)
    for key in ("thresholds", "recall", "precision", "f"):
        np.testing.assert_allclose(res[key], expected[key].numpy(), rtol=0, atol=1e-12)
    assert list(res["per_image"]) == sorted(SIZES)
    for i, stem in enumerate(sorted(SIZES)):
        for key in ("threshold", "recall", "precision", "f"):
            assert res["per_image"][stem][key] == pytest.approx(float(expected["per_image"][key][i]), abs=1e-12)
    assert report["task"] == "boundary" and report["num_images"] == 3
    settings = report["settings"]
    assert settings["thresholds"] == 9 and settings["max_dist"] == 2 and settings["thin"] is True
    assert settings["input_format"] == "soft" and settings["gt_format"] == "boundaries"

    # BSR files: MATLAB's fprintf('%10g %10g ...\n'), read back to the same numbers within %10g's 6 digits
    summary_line = (out_dir / "eval_bdry.txt").read_text()
    assert summary_line == " ".join("%10g" % v for v in _flat(expected)) + "\n"  # noqa: UP031
    np.testing.assert_allclose(np.loadtxt(out_dir / "eval_bdry.txt"), _flat(expected), rtol=1e-5, atol=1e-6)
    thr = np.loadtxt(out_dir / "eval_bdry_thr.txt")
    curves = np.stack([expected[k].numpy() for k in ("thresholds", "recall", "precision", "f")], axis=1)
    assert thr.shape == (9, 4)
    np.testing.assert_allclose(thr, curves, rtol=1e-5, atol=1e-6)
    img = np.loadtxt(out_dir / "eval_bdry_img.txt")
    per = np.stack([expected["per_image"][k].numpy() for k in ("threshold", "recall", "precision", "f")], axis=1)
    assert img.shape == (3, 5)
    np.testing.assert_array_equal(img[:, 0], [1, 2, 3])
    np.testing.assert_allclose(img[:, 1:], per, rtol=1e-5, atol=1e-6)
    for name in ("eval_bdry_img.txt", "eval_bdry_thr.txt"):  # fields of width 10, one space between them
        for line in (out_dir / name).read_text().splitlines():
            assert line == " ".join(f"{field:>10}" for field in line.split())


def test_options_reach_the_measure(tmp_path, capsys, data):
    pred, gt = _pred_png(tmp_path, data), _gt_png(tmp_path, data)
    json_path = tmp_path / "res.json"
    status, _, err = _run(
        capsys, "--pred", str(pred), "--gt", str(gt), "--thresholds", "4", "--no-thin", "--json", str(json_path)
    )
    assert status == 0, err
    expected = _expected(data, thresholds=4, thin=False)
    res = json.loads(json_path.read_text())["results"]
    np.testing.assert_allclose(_flat(res), _flat(expected), rtol=0, atol=1e-12)
    assert len(res["thresholds"]) == 4
    assert json.loads(json_path.read_text())["settings"]["thin"] is False


def test_bsds_mat_ground_truth(tmp_path, capsys, data):
    gt = _gt_mat(tmp_path, data)
    for stem, d in data.items():  # what was written reads back as BSDS ground truth
        read = read_bsds_ground_truth(gt / f"{stem}.mat")
        np.testing.assert_array_equal(read.segmentations, np.stack([d["labels"], d["labels2"]]))
        np.testing.assert_array_equal(read.boundaries, d["gt2"])
    pred = _pred_png(tmp_path, data)
    json_path = tmp_path / "res.json"
    status, out, err = _run(
        capsys,
        "--pred",
        str(pred),
        "--gt",
        str(gt),
        "--thresholds",
        "9",
        "--max-dist",
        "0.05",
        "--json",
        str(json_path),
    )
    assert status == 0, err
    expected = _expected(data, gt="gt2", thresholds=9, max_dist=0.05)
    report = json.loads(json_path.read_text())
    assert report["results"]["ods"]["f"] == pytest.approx(float(expected["ods"]["f"]), abs=1e-12)
    np.testing.assert_allclose(_flat(report["results"]), _flat(expected), rtol=0, atol=1e-12)
    assert report["settings"]["gt_format"] == "mat"
    assert _table_row(out)[3] == pytest.approx(float(expected["ods"]["f"]), abs=5e-5)


def test_ucm2_predictions(tmp_path, capsys, data):
    pred = _write_mat(tmp_path / "ucm2", {stem: {"ucm2": _ucm2(d["soft"])} for stem, d in data.items()})
    gt = _gt_mat(tmp_path, data)
    json_path = tmp_path / "res.json"
    status, _, err = _run(
        capsys,
        "--pred",
        str(pred),
        "--gt",
        str(gt),
        "--thresholds",
        "9",
        "--max-dist",
        "0.05",
        "--json",
        str(json_path),
    )
    assert status == 0, err
    report = json.loads(json_path.read_text())
    assert report["settings"]["input_format"] == "ucm2"
    ucm2 = [torch.from_numpy(_ucm2(data[stem]["soft"])) for stem in sorted(data)]
    target = [torch.from_numpy(data[stem]["gt2"]) for stem in sorted(data)]
    expected = boundary_pr(ucm2, target, thresholds=9, max_dist=0.05, input_format="ucm2")
    np.testing.assert_allclose(_flat(report["results"]), _flat(expected), rtol=0, atol=1e-12)
    # the pixel grid of the ucm2 is the soft map / 255: the same numbers as the PNG maps
    soft = _expected(data, gt="gt2", thresholds=9, max_dist=0.05)
    np.testing.assert_allclose(_flat(report["results"]), _flat(soft), rtol=0, atol=1e-12)


def test_gt_labels(tmp_path, capsys, data):
    pred = _pred_png(tmp_path, data)
    labels = _write_png(tmp_path / "labels", {stem: d["labels"] for stem, d in data.items()})
    json_path = tmp_path / "res.json"
    status, _, err = _run(
        capsys,
        "--pred",
        str(pred),
        "--gt",
        str(labels),
        "--gt-labels",
        "--thresholds",
        "9",
        "--max-dist",
        "2",
        "--json",
        str(json_path),
    )
    assert status == 0, err
    preds = [torch.from_numpy(data[stem]["soft"]) for stem in sorted(data)]
    labels_t = [torch.from_numpy(data[stem]["labels"].astype(np.int64)) for stem in sorted(data)]
    target = [annotator_boundaries(t[None]) for t in labels_t]
    expected = boundary_pr(preds, target, thresholds=9, max_dist=2)
    report = json.loads(json_path.read_text())
    assert report["settings"]["gt_format"] == "labels"
    np.testing.assert_allclose(_flat(report["results"]), _flat(expected), rtol=0, atol=1e-12)
    # without --gt-labels the label values 1 and 2 would all be "boundary": a different result
    status, out, err = _run(capsys, "--pred", str(pred), "--gt", str(labels), "--thresholds", "9", "--max-dist", "2")
    assert status == 0, err
    assert _table_row(out)[3] != pytest.approx(float(expected["ods"]["f"]), abs=1e-3)


def test_allow_missing(tmp_path, capsys, data):
    pred = _pred_png(tmp_path, data)
    (pred / "img_c.png").unlink()
    gt = _gt_png(tmp_path, data)
    status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(gt), "--thresholds", "5")
    assert status == 2 and err.startswith("error: img_c: ground truth without a prediction")
    assert "--allow-missing" in err
    json_path = tmp_path / "res.json"
    status, out, err = _run(
        capsys, "--pred", str(pred), "--gt", str(gt), "--thresholds", "5", "--allow-missing", "--json", str(json_path)
    )
    assert status == 0 and "note: ground truth without a prediction: 1: img_c" in err
    report = json.loads(json_path.read_text())
    assert report["num_images"] == 2 and report["missing_predictions"] == ["img_c"]
    assert list(report["results"]["per_image"]) == ["img_a", "img_b"]
    assert "Evaluated 2 image(s)" in out


# ----------------------------------------------------------------------------------------------------- errors


def _error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def test_error_missing_folder(tmp_path, capsys, data):
    gt = _gt_png(tmp_path, data)
    status, out, err = _run(capsys, "--pred", str(tmp_path / "nope"), "--gt", str(gt))
    assert status == 2 and out == ""
    assert "nope" in _error_line(err) and "does not exist" in err


def test_error_size_mismatch(tmp_path, capsys, data):
    pred = _pred_png(tmp_path, data)
    Image.fromarray(data["img_b"]["soft"][:, :48]).save(pred / "img_b.png")
    status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(_gt_png(tmp_path, data)), "--thresholds", "5")
    assert status == 2 and "img_b" in _error_line(err) and "48x40" in err


def test_error_ucm2_size_mismatch(tmp_path, capsys, data):
    ucm2 = {stem: {"ucm2": _ucm2(d["soft"])} for stem, d in data.items()}
    ucm2["img_a"] = {"ucm2": _ucm2(data["img_a"]["soft"])[:-2]}
    pred = _write_mat(tmp_path / "ucm2", ucm2)
    status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(_gt_png(tmp_path, data)), "--thresholds", "5")
    assert status == 2 and "img_a" in _error_line(err) and "ucm2" in err


def test_error_from_the_measure_names_the_stem(tmp_path, capsys, data):
    ucm2 = {stem: {"ucm2": _ucm2(d["soft"])} for stem, d in data.items()}
    ucm2["img_b"]["ucm2"][4, 4] = 1.5  # out of [0, 1]: boundary_pr_counts raises, the batch holds three images
    pred = _write_mat(tmp_path / "ucm2", ucm2)
    status, _, err = _run(
        capsys, "--pred", str(pred), "--gt", str(_gt_png(tmp_path, data)), "--thresholds", "5", "--batch-size", "3"
    )
    line = _error_line(err)
    assert status == 2 and line.startswith("error: img_b: ")


def test_error_mixed_prediction_folder(tmp_path, capsys, data):
    pred = _pred_png(tmp_path, data)
    (pred / "img_c.png").unlink()
    _write_mat(pred, {"img_c": {"ucm2": _ucm2(data["img_c"]["soft"])}})
    status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(_gt_png(tmp_path, data)))
    assert status == 2 and "mixes .mat files (img_c.mat) and images" in _error_line(err)


@pytest.mark.parametrize("side", ["pred", "gt"])
def test_error_mat_without_variable(tmp_path, capsys, data, side):
    if side == "pred":
        pred = _write_mat(tmp_path / "ucm2", {stem: {"ucm": _ucm2(d["soft"])} for stem, d in data.items()})
        gt = _gt_png(tmp_path, data)
    else:
        pred = _pred_png(tmp_path, data)
        gt = _write_mat(tmp_path / "gt_mat", {stem: {"gt": d["labels"]} for stem, d in data.items()})
    status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(gt), "--thresholds", "5")
    # one error listing every file, found before any measure runs
    assert status == 2 and err.startswith("error: 3 problem(s) in the inputs, found before evaluating")
    assert "unreadable or corrupt file: 3: img_a" in err
    assert err.count("`ucm2`" if side == "pred" else "`groundTruth`") == 3


def test_error_gt_labels_with_mat_and_no_pairs(tmp_path, capsys, data):
    pred = _pred_png(tmp_path, data)
    status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(_gt_mat(tmp_path, data)), "--gt-labels")
    assert status == 2 and "--gt-labels" in _error_line(err)
    other = _write_png(tmp_path / "other", {"zzz": data["img_a"]["gt"][0].astype(np.uint8)})
    status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(other))
    assert status == 2 and "no prediction" in _error_line(err)


def test_bad_option_values_are_usage_errors(capsys):
    for args in (["--thresholds", "0"], ["--max-dist", "-1"], ["--max-dist", "nan"]):
        with pytest.raises(SystemExit) as exc:
            main(["evaluate", "boundary", "--pred", "p", "--gt", "g", *args])
        assert exc.value.code == 2
    assert "expected a positive" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------- BSR reference data


@pytest.mark.parametrize(("pred_dir", "reference"), [("png", "test_2"), ("ucm2", "test_1")])
def test_bsds_sample_matches_bsr(tmp_path, capsys, pred_dir, reference):
    """BSR's test_benchs.m outputs (nthresh 5): the matching differs (BSR's CSA solver is randomised), by < 1e-3."""
    data_dir = shared_path("bsds_sample", "bench", "data")
    bsr = np.loadtxt(data_dir / reference / "eval_bdry.txt")
    out_dir = tmp_path / "out"
    status, out, err = _run(
        capsys,
        "--pred",
        str(data_dir / pred_dir),
        "--gt",
        str(data_dir / "groundTruth"),
        "--thresholds",
        "5",
        "--out-dir",
        str(out_dir),
    )
    assert status == 0, err
    assert "Evaluated 5 image(s)" in out
    ours = np.loadtxt(out_dir / "eval_bdry.txt")
    np.testing.assert_allclose(ours, bsr, rtol=0, atol=1e-3)
    np.testing.assert_allclose(_table_row(out)[:8], bsr, rtol=0, atol=1e-3 + 5e-5)
    ours_thr, bsr_thr = (np.loadtxt(d / "eval_bdry_thr.txt") for d in (out_dir, data_dir / reference))
    np.testing.assert_allclose(ours_thr, bsr_thr, rtol=0, atol=1e-3)
    ours_img, bsr_img = (np.loadtxt(d / "eval_bdry_img.txt") for d in (out_dir, data_dir / reference))
    np.testing.assert_array_equal(ours_img[:, :2], bsr_img[:, :2])
    np.testing.assert_allclose(ours_img[:, 2:], bsr_img[:, 2:], rtol=0, atol=2e-3)
