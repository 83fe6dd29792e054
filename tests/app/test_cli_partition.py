"""``segmetrics evaluate partition``: label maps against PartitionMeasures, hierarchies against HierarchyMeasures and
BSR's region benchmark outputs, errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.ndimage
import torch
from PIL import Image

from segmetrics_torch import HierarchyMeasures, PartitionMeasures
from segmetrics_torch.app.cli import main
from segmetrics_torch.functional import partition_measures
from segmetrics_torch.io import read_labels
from tests.conftest import shared_path

# two images of 40x50 and one of 36x44 (a batch of 2 or more mixes sizes)
SIZES = {"img_a": (40, 50), "img_b": (40, 50), "img_c": (36, 44)}


def _annotation(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """A rectangle (1) and an overlapping lower-right block (2) on a background (0)."""
    labels = np.zeros((h, w), np.uint8)
    labels[rng.integers(4, 9) : h - rng.integers(6, 10), rng.integers(4, 10) : w - rng.integers(6, 12)] = 1
    labels[h // 2 + rng.integers(-3, 4) :, w // 2 + rng.integers(-3, 4) :] = 2
    return labels


@pytest.fixture(scope="module")
def data() -> dict[str, dict[str, np.ndarray]]:
    """Per stem: `gt` (2, H, W) uint8 annotations, `pred` (H, W) uint16 labels (values > 255), `ucm2` double-size."""
    rng = np.random.default_rng(3)
    out = {}
    for stem, (h, w) in SIZES.items():
        first = _annotation(h, w, rng)
        gt = np.stack([first, np.where(first == 2, 1, first)]).astype(np.uint8)  # the second merges two regions
        pred = np.roll(first, 2, axis=1).astype(np.uint16) * 300 + 7
        pred[: h // 3, : w // 4] = 1000  # a spurious region
        ucm2 = np.zeros((2 * h + 1, 2 * w + 1))
        ucm2[2 * (h // 2), :] = 0.3  # a closed horizontal cut, then a vertical one in the lower half
        ucm2[2 * (h // 2) :, 2 * (w // 3)] = 0.7
        out[stem] = {"gt": gt, "pred": pred, "ucm2": ucm2}
    return out


def _write(folder: Path, arrays: dict[str, np.ndarray], ext: str = "png") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for stem, array in arrays.items():
        if ext == "mat":
            scipy.io.savemat(folder / f"{stem}.mat", array)
        else:
            Image.fromarray(array).save(folder / f"{stem}.{ext}")
    return folder


def _ground_truth_mat(annotations: np.ndarray) -> dict[str, object]:
    cell = np.empty((1, len(annotations)), dtype=object)
    for i, seg in enumerate(annotations):
        cell[0, i] = {"Segmentation": seg.astype(np.uint16), "Boundaries": np.zeros(seg.shape, np.uint8)}
    return {"groundTruth": cell}


def _gt_png(tmp_path: Path, data) -> Path:
    return _write(tmp_path / "gt", {stem: d["gt"][0] for stem, d in data.items()})


def _gt_mat(tmp_path: Path, data) -> Path:
    return _write(tmp_path / "gt_mat", {stem: _ground_truth_mat(d["gt"]) for stem, d in data.items()}, "mat")


def _run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["evaluate", "partition", "--no-progress", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


# ------------------------------------------------------------------------------------------------ label maps


@pytest.mark.parametrize("gt_kind", ["png", "mat"])
def test_label_maps_equal_partition_measures(tmp_path, capsys, data, gt_kind):
    pred = _write(tmp_path / "pred", {stem: d["pred"] for stem, d in data.items()})
    assert read_labels(pred / "img_a.png").max() == 1000  # 16-bit labels kept
    gt = _gt_png(tmp_path, data) if gt_kind == "png" else _gt_mat(tmp_path, data)
    json_path = tmp_path / "res.json"
    status, out, err = _run(
        capsys,
        "--pred",
        str(pred),
        "--gt",
        str(gt),
        "--batch-size",
        "2",
        "--max-dist",
        "2",
        "--json",
        str(json_path),
        "--per-image-csv",
        str(tmp_path / "img.csv"),
    )
    assert status == 0, err
    preds = [torch.from_numpy(data[stem]["pred"].astype(np.int64)) for stem in sorted(data)]
    target = [
        torch.from_numpy(data[stem]["gt"][: 1 if gt_kind == "png" else 2].astype(np.int64)) for stem in sorted(data)
    ]
    metric = PartitionMeasures(max_dist=2)
    metric.update(preds, target)
    expected = metric.compute()
    assert len(metric.measures) == 15 and 0.3 < float(expected["fop"]) < 0.95  # every measure, a non-trivial case

    report = json.loads(json_path.read_text())
    assert report["task"] == "partition" and report["num_images"] == 3
    assert report["settings"]["input_format"] == "labels" and report["settings"]["gt_format"] == (
        "labels" if gt_kind == "png" else "mat"
    )
    res = report["results"]
    for key, value in expected.items():
        assert res[key] == pytest.approx(float(value), abs=1e-12), key
    per_image = partition_measures(preds, target, max_dist=2)
    assert list(res["per_image"]) == sorted(SIZES)
    for i, stem in enumerate(sorted(SIZES)):
        for key, values in per_image.items():
            assert res["per_image"][stem][key] == pytest.approx(float(values[i]), abs=1e-12), (stem, key)
    with (tmp_path / "img.csv").open() as f:
        csv_rows = {r["image"]: r for r in csv.DictReader(f)}
    assert list(csv_rows) == sorted(SIZES)
    for stem, values in res["per_image"].items():
        assert {k: float(csv_rows[stem][k]) for k in values} == values
    header, _, row = out.splitlines()[:3]
    assert header.split()[:4] == ["method", "Fb", "Fop", "Fr"] and row.split()[0] == "pred"
    np.testing.assert_allclose(
        [float(v) for v in row.split()[1:]], [float(expected[m]) for m in metric.measures], atol=5e-5
    )


def test_label_maps_measures_option(tmp_path, capsys, data):
    pred = _write(tmp_path / "pred", {stem: d["pred"] for stem, d in data.items()})
    json_path = tmp_path / "res.json"
    status, out, err = _run(
        capsys,
        "--pred",
        str(pred),
        "--gt",
        str(_gt_mat(tmp_path, data)),
        "--measures",
        "fop, voi",
        "--gamma-obj",
        "0.95",
        "--json",
        str(json_path),
    )
    assert status == 0, err
    metric = PartitionMeasures(["fop", "voi"], gamma_obj=0.95)
    metric.update(
        [torch.from_numpy(data[s]["pred"].astype(np.int64)) for s in sorted(data)],
        [torch.from_numpy(data[s]["gt"].astype(np.int64)) for s in sorted(data)],
    )
    res = json.loads(json_path.read_text())["results"]
    assert set(res) == {"fop", "fop_precision", "fop_recall", "voi", "per_image"}
    for key, value in metric.compute().items():
        assert res[key] == pytest.approx(float(value), abs=1e-12), key
    assert out.splitlines()[0].split() == ["method", "Fop", "VoI"]


# ------------------------------------------------------------------------------------------------ hierarchies


def test_ucm2_equals_hierarchy_measures(tmp_path, capsys, data):
    pred = _write(tmp_path / "ucm2", {stem: {"ucm2": d["ucm2"]} for stem, d in data.items()}, "mat")
    json_path = tmp_path / "res.json"
    status, out, err = _run(
        capsys,
        "--pred",
        str(pred),
        "--gt",
        str(_gt_mat(tmp_path, data)),
        "--num-regions",
        "1,2,3",
        "--measures",
        "fop,pri,voi",
        "--json",
        str(json_path),
    )
    assert status == 0, err
    metric = HierarchyMeasures(num_regions=[1, 2, 3], measures=["fop", "pri", "voi"])
    metric.update(
        [torch.from_numpy(data[s]["ucm2"]) for s in sorted(data)],
        [torch.from_numpy(data[s]["gt"].astype(np.int64)) for s in sorted(data)],
    )
    expected = metric.compute()
    res = json.loads(json_path.read_text())["results"]
    for m in ("fop", "pri", "voi"):
        for key in ("ods", "ois", "ods_parameter", *(("ap",) if m == "fop" else ())):
            assert res[m][key] == pytest.approx(float(expected[m][key]), abs=1e-12), (m, key)
    cover = expected["region_benchmark"]["covering"]
    for key in ("ods", "ois", "best"):
        assert res["region_benchmark"]["covering"][key] == pytest.approx(float(cover[key]), abs=1e-12)
    assert res["parameters"] == [1, 2, 3] and "3 region counts" in out
    assert [line.split()[0] for line in out.splitlines()[2:5]] == ["Fop", "PRI", "VoI"]


@pytest.mark.parametrize(("source", "reference"), [("ucm2", "test_1"), ("segs", "test_5")])
def test_bsds_sample_matches_bsr_region_benchmark(tmp_path, capsys, source, reference):
    """BSR's test_benchs.m outputs (5 thresholds of the ucm2, or the 5 levels of segs): eval_cover.txt (threshold,
    covering ODS, OIS, Best) and eval_RI_VOI.txt (threshold, PRI ODS, OIS, threshold, VoI ODS, OIS), printed %10g."""
    data_dir = shared_path("bsds_sample", "bench", "data")
    json_path = tmp_path / "res.json"
    levels = ["--thresholds", "5", "--rule", "bsr"] if source == "ucm2" else []
    status, out, err = _run(
        capsys,
        "--pred",
        str(data_dir / source),
        "--gt",
        str(data_dir / "groundTruth"),
        *levels,
        "--measures",
        "pri,voi",
        "--json",
        str(json_path),
    )
    assert status == 0, err
    assert "Evaluated 5 image(s)" in out
    reg = json.loads(json_path.read_text())["results"]["region_benchmark"]
    cover, ri_voi = (np.loadtxt(data_dir / reference / f"{name}.txt") for name in ("eval_cover", "eval_RI_VOI"))
    c, p, v = reg["covering"], reg["pri"], reg["voi"]
    ours_cover = [c["ods_parameter"], c["ods"], c["ois"], c["best"]]
    ours_ri_voi = [p["ods_parameter"], p["ods"], p["ois"], v["ods_parameter"], v["ods"], v["ois"]]
    np.testing.assert_allclose(ours_cover, cover, rtol=1e-5)
    np.testing.assert_allclose(ours_ri_voi, ri_voi, rtol=1e-5)
    np.testing.assert_allclose(ours_cover[1:], [0.654023, 0.725074, 0.749811], rtol=1e-5)
    np.testing.assert_allclose(ours_ri_voi[1:3] + ours_ri_voi[4:], [0.826926, 0.898299, 1.36877, 1.11563], rtol=1e-5)


# ----------------------------------------------------------------------------------------------------- errors


def test_error_size_mismatch(tmp_path, capsys, data):
    pred = _write(tmp_path / "pred", {stem: d["pred"] for stem, d in data.items()})
    Image.fromarray(data["img_b"]["pred"][:, :48]).save(pred / "img_b.png")
    status, out, err = _run(capsys, "--pred", str(pred), "--gt", str(_gt_png(tmp_path, data)))
    assert status == 2 and out == ""
    assert "img_b: prediction size does not fit" in _error_line(err) and "prediction 48x40" in err


def test_error_ucm2_not_double_size(tmp_path, capsys, data):
    ucm2 = {stem: {"ucm2": d["ucm2"]} for stem, d in data.items()}
    ucm2["img_c"] = {"ucm2": data["img_c"]["ucm2"][:-2]}
    pred = _write(tmp_path / "ucm2", ucm2, "mat")
    status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(_gt_mat(tmp_path, data)))
    assert status == 2 and "img_c: prediction size" in _error_line(err) and "double-size ucm2" in err


def test_error_fractional_labels(tmp_path, capsys, data):
    pred = _write(tmp_path / "pred", {stem: d["pred"].astype(np.float32) for stem, d in data.items()}, "tiff")
    gt = _gt_png(tmp_path, data)
    status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(gt), "--measures", "pri")
    assert status == 0, err  # integer-valued float labels are fine
    Image.fromarray(data["img_b"]["pred"].astype(np.float32) + 0.5).save(pred / "img_b.tiff")
    status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(gt))
    assert status == 2 and "img_b.tiff" in _error_line(err) and "must be integers" in err


def test_error_unreadable_and_bad_mat(tmp_path, capsys, data):
    pred = _write(tmp_path / "pred", {stem: d["pred"] for stem, d in data.items()})
    (pred / "img_a.png").write_bytes(b"not a png")
    status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(_gt_png(tmp_path, data)))
    assert status == 2 and "img_a.png" in _error_line(err)
    mats = _write(tmp_path / "mats", {stem: {"labels": d["pred"]} for stem, d in data.items()}, "mat")
    status, _, err = _run(capsys, "--pred", str(mats), "--gt", str(_gt_mat(tmp_path, data)))
    assert status == 2 and "img_a.mat" in _error_line(err) and "`ucm2`" in err and "`segs`" in err


def test_error_segs_depth_differs(tmp_path, capsys, data):
    def segs(d, depth):
        cell = np.empty((1, depth), dtype=object)
        for k in range(depth):
            cell[0, k] = (d["gt"][0] + k).astype(np.uint16)
        return {"segs": cell}

    pred = _write(tmp_path / "segs", {stem: segs(d, 2 if stem == "img_b" else 3) for stem, d in data.items()}, "mat")
    gt = _gt_mat(tmp_path, data)
    status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(gt))
    assert status == 2 and "img_b.mat" in _error_line(err) and "2 levels" in err and "img_a.mat" in err
    status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(gt), "--thresholds", "3")
    assert status == 2 and "--thresholds applies to ucm2" in _error_line(err)


def test_error_empty_folder_and_label_map_options(tmp_path, capsys, data):
    (tmp_path / "empty").mkdir()
    gt = _gt_png(tmp_path, data)
    status, _, err = _run(capsys, "--pred", str(tmp_path / "empty"), "--gt", str(gt))
    assert status == 2 and "empty" in _error_line(err) and "holds no image" in err
    pred = _write(tmp_path / "pred", {stem: d["pred"] for stem, d in data.items()})
    status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(gt), "--num-regions", "2,4")
    assert status == 2 and "--num-regions applies to ucm2" in _error_line(err)


def test_bad_option_values_are_usage_errors(capsys):
    for args in (
        ["--measures", "pri,xyz"],
        ["--thresholds", "0"],
        ["--thresholds", "0.1,nan"],
        ["--num-regions", "3,0"],
        ["--gamma-obj", "1.5"],
        ["--rule", "other"],
        ["--thresholds", "5", "--num-regions", "3"],
    ):
        with pytest.raises(SystemExit) as exc:
            main(["evaluate", "partition", "--pred", "p", "--gt", "g", *args])
        assert exc.value.code == 2, args
    capsys.readouterr()


def test_error_from_the_measure_names_the_image(tmp_path, capsys, data):
    ucm2 = {stem: {"ucm2": d["ucm2"].copy()} for stem, d in data.items()}
    ucm2["img_b"]["ucm2"][3, 3] = np.nan  # HierarchyMeasures raises; the batch holds the three images
    pred = _write(tmp_path / "ucm2", ucm2, "mat")
    status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(_gt_mat(tmp_path, data)), "--batch-size", "3")
    assert status == 2 and _error_line(err).startswith("error: img_b: ") and "NaN" in err


# ------------------------------------------------------------------------------------------- soft maps as labels


def test_soft_maps_given_as_label_maps_warn_once(tmp_path, capsys, data):
    """Edge-strength PNGs (many gray levels in thin runs) read as partitions: a warning, the run goes on; real label
    maps (the test's, and 8-bit ones with few solid regions) do not warn."""
    rng = np.random.default_rng(0)
    soft = {}
    for stem, (h, w) in SIZES.items():
        ridge = np.exp(-((np.arange(h)[:, None] - h / 2) ** 2 + (np.arange(w)[None] - w / 3) ** 2 * 0.1) / 40)
        soft[stem] = np.clip(ridge * 255 + rng.normal(0, 20, (h, w)), 0, 255).astype(np.uint8)
    gt = _gt_png(tmp_path, data)
    status, _, err = _run(capsys, "--pred", str(_write(tmp_path / "soft", soft)), "--gt", str(gt), "--max-dist", "2")
    assert status == 0, err
    lines = [line for line in err.splitlines() if "look like soft maps" in line]
    assert len(lines) == 1 and "evaluate boundary" in lines[0] and "gray levels" in lines[0], err
    labels8 = {stem: d["gt"][0] * 40 for stem, d in data.items()}  # 8-bit, 3 solid regions
    for pred in (
        _write(tmp_path / "labels16", {stem: d["pred"] for stem, d in data.items()}),
        _write(tmp_path / "labels8", labels8),
    ):
        status, _, err = _run(capsys, "--pred", str(pred), "--gt", str(gt), "--max-dist", "2")
        assert status == 0 and "soft maps" not in err, err


def test_soft_map_reason_on_the_bsds_sample():
    """Annotations and superpixel-like partitions are label maps; a ucm2 saved as an 8-bit PNG is a soft map."""
    from segmetrics_torch.datasets.label_maps import soft_map_reason
    from segmetrics_torch.io import read_bsds_ground_truth, read_mat_array

    root = shared_path("bsds_sample") / "BSDS500"
    for mat in sorted((root / "ucm2" / "test").glob("*.mat"))[:5]:
        ucm2 = read_mat_array(mat, "ucm2")
        assert soft_map_reason(np.round(ucm2[2::2, 2::2] * 255).astype(np.int64)) is not None, mat.stem
        for seg in read_bsds_ground_truth(root / "data" / "groundTruth" / "test" / mat.name).segmentations:
            assert soft_map_reason(seg) is None, mat.stem
        fine = scipy.ndimage.label(ucm2[2::2, 2::2] <= 0.05)[0] % 256  # a fine partition in 8 bits (labels reused)
        assert np.unique(fine).size >= 32 and soft_map_reason(fine) is None, mat.stem


def test_soft_map_reason_on_16_bit_maps():
    """Soft maps and a ucm2 saved as 16-bit are soft maps; superpixel partitions of thousands of regions (even a
    degenerate one, a few pixels per region) are not."""
    from PIL import Image
    from skimage.segmentation import felzenszwalb, slic

    from segmetrics_torch.datasets.label_maps import soft_map_reason
    from segmetrics_torch.io import read_mat_array

    root = shared_path("bsds_sample") / "BSDS500"
    for mat in sorted((root / "ucm2" / "test").glob("*.mat"))[:3]:
        ucm2 = read_mat_array(mat, "ucm2")[2::2, 2::2]
        blurred = scipy.ndimage.gaussian_filter(ucm2, 1.5)
        blurred = np.clip(blurred / np.quantile(blurred, 0.99), 0, 1)
        for soft in (ucm2, blurred):
            reason = soft_map_reason(np.round(soft * 65535).astype(np.int64))
            assert reason is not None and "separate runs" in reason, mat.stem
        image = np.asarray(Image.open(root / "data" / "images" / "test" / f"{mat.stem}.jpg"))
        superpixels = slic(image, n_segments=10000, start_label=0)
        degenerate = felzenszwalb(image, scale=1, sigma=0.3, min_size=2)  # 40,000-45,000 regions of 3-4 pixels
        for labels in (superpixels, degenerate):
            assert labels.max() > 255 and soft_map_reason(labels) is None, mat.stem
