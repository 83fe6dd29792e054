"""The ``segmetrics`` command line: demo, ``evaluate sod`` against direct computation and PySODMetrics, errors."""

from __future__ import annotations

import csv
import json
import math
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from segmetrics_torch import ForegroundMeasures, __version__
from segmetrics_torch.app.cli import main
from segmetrics_torch.reports.tables import SOD_COLUMNS, format_table, scalar_row, to_jsonable
from segmetrics_torch.synthetic import write_foreground_dataset

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("synthetic")
    data = write_foreground_dataset(root, n=6)
    return root, data


def _copy(dataset, tmp_path, method="good") -> tuple[Path, Path]:
    root, _ = dataset
    pred, gt = tmp_path / "pred", tmp_path / "gt"
    shutil.copytree(root / method, pred)
    shutil.copytree(root / "gt", gt)
    return pred, gt


def _direct(preds, gts) -> dict:
    metric = ForegroundMeasures()
    metric.update(preds, gts)
    return metric.compute()


def _leaves(tree, prefix=""):
    """(key, value) of every number or list in a nested dict."""
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from _leaves(value, f"{prefix}{key}/")
        else:
            yield f"{prefix}{key}", value


# ----------------------------------------------------------------------------------------------------------- demo


def test_demo_prints_table(capsys):
    assert main(["demo", "--n", "6"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["method", *(header for _, header in SOD_COLUMNS)]
    rows = {line.split()[0]: [float(v) for v in line.split()[1:]] for line in lines[2:5]}
    assert list(rows) == ["good", "blurry", "noisy"]
    assert all(len(v) == len(SOD_COLUMNS) and all(0 <= x <= 1 for x in v) for v in rows.values())
    # graded quality: MAE increases, S-measure decreases
    assert rows["good"][0] < rows["blurry"][0] < rows["noisy"][0]
    assert rows["good"][1] > rows["blurry"][1] > rows["noisy"][1]
    assert "synthetic" in out and "Evaluated 18 maps" in out


def test_demo_as_module_subprocess():
    result = subprocess.run(
        [sys.executable, "-m", "segmetrics_torch.app.cli", "demo", "--n", "4"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("method")
    assert "good" in result.stdout and "noisy" in result.stdout


def test_help_and_entry_point(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    assert "evaluate" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and __version__ in capsys.readouterr().out
    (script,) = entry_points(group="console_scripts", name="segmetrics")
    assert script.value == "segmetrics_torch.app.cli:main"
    assert script.load() is main


def test_usage_errors(capsys):
    assert main([]) == 2
    assert main(["evaluate"]) == 2
    with pytest.raises(SystemExit) as info:
        main(["evaluate", "sod", "--pred", "x"])  # --gt missing: argparse
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["demo", "--n", "0"])
    assert info.value.code == 2
    capsys.readouterr()
    assert main(["demo", "--n", "2", "--device", "nonsense"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown device 'nonsense'") and "Traceback" not in err


# ------------------------------------------------------------------------------------------------- evaluate sod


@pytest.mark.filterwarnings("ignore:This class will be removed:UserWarning")
def test_evaluate_json_csv_equal_direct_and_pysodmetrics(dataset, tmp_path, capsys):
    root, data = dataset
    out_json, out_csv = tmp_path / "r.json", tmp_path / "r.csv"
    argv = ["evaluate", "sod", "--pred", str(root / "blurry"), "--gt", str(root / "gt")]
    assert main([*argv, "--json", str(out_json), "--csv", str(out_csv), "--batch-size", "4", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[2].split()[0] == "blurry"

    report = json.loads(out_json.read_text())
    assert report["num_images"] == 6 and report["task"] == "foreground"
    assert report["segmetrics_version"] == __version__
    assert report["gt_dir"] == str((root / "gt").resolve())
    assert report["settings"]["batch_size"] == 4 and report["settings"]["device"] == "cpu"
    assert report["missing_predictions"] == [] and report["unmatched_predictions"] == []

    # every number (curves included) equals a direct ForegroundMeasures computation on the same arrays
    expected = to_jsonable(_direct(torch.from_numpy(data.preds["blurry"]), torch.from_numpy(data.gt)))
    got = dict(_leaves(report["results"]))
    for key, value in _leaves(expected):
        np.testing.assert_allclose(got[key], value, rtol=0, atol=1e-12, err_msg=key)
    assert len(got["f_measure/curve"]) == 256

    # ... and PySODMetrics 1.6.2 fed with cv2-read images
    sod = pytest.importorskip("py_sod_metrics")
    cv2 = pytest.importorskip("cv2")
    mae, sm, wfm, em, fm = sod.MAE(), sod.Smeasure(), sod.WeightedFmeasure(), sod.Emeasure(), sod.Fmeasure()
    for name in data.names:
        pred = cv2.imread(str(root / "blurry" / f"{name}.png"), cv2.IMREAD_GRAYSCALE)
        gt = cv2.imread(str(root / "gt" / f"{name}.png"), cv2.IMREAD_GRAYSCALE)
        for m in (mae, sm, wfm, em, fm):
            m.step(pred=pred, gt=gt)
    e, f = em.get_results()["em"], fm.get_results()["fm"]
    reference = {
        "mae": mae.get_results()["mae"],
        "s_measure": sm.get_results()["sm"],
        "weighted_f_measure": wfm.get_results()["wfm"],
        "e_measure/adaptive": e["adp"],
        "e_measure/mean": e["curve"].mean(),
        "e_measure/max": e["curve"].max(),
        "f_measure/adaptive": f["adp"],
        "f_measure/mean": f["curve"].mean(),
        "f_measure/max": f["curve"].max(),
    }
    for key, value in reference.items():
        assert got[key] == pytest.approx(float(value), abs=1e-6), key
    np.testing.assert_allclose(got["e_measure/curve"], e["curve"], atol=1e-6)

    with out_csv.open(newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["method"] == "blurry" and int(row["num_images"]) == 6
    assert float(row["f_measure/max"]) == got["f_measure/max"]  # full precision
    assert "f_measure/curve" not in row


def test_evaluate_mixed_sizes(dataset, tmp_path):
    """Images of different sizes: grouped by size into batches, results equal a direct computation on lists."""
    pred_dir, gt_dir = _copy(dataset, tmp_path)
    rng = np.random.default_rng(5)
    for i, (h, w) in enumerate([(50, 70), (50, 70), (33, 41)]):
        gt = np.zeros((h, w), np.uint8)
        gt[h // 4 : h // 2, w // 3 : w // 2 + i] = 255
        Image.fromarray(gt).save(gt_dir / f"z{i}.png")
        Image.fromarray(rng.integers(0, 256, (h, w), dtype=np.uint8)).save(pred_dir / f"z{i}.png")
    out_json = tmp_path / "r.json"
    argv = ["evaluate", "sod", "--pred", str(pred_dir), "--gt", str(gt_dir), "--json", str(out_json)]
    assert main([*argv, "--batch-size", "2", "--no-progress"]) == 0
    report = json.loads(out_json.read_text())
    assert report["num_images"] == 9
    from segmetrics_torch.io import pair_by_stem, read_gray

    pairs = pair_by_stem(pred_dir, gt_dir)
    preds = [torch.from_numpy(read_gray(p)) for _, p, _ in pairs]
    gts = [torch.from_numpy(read_gray(g)) for _, _, g in pairs]
    got = dict(_leaves(report["results"]))
    for key, value in _leaves(to_jsonable(_direct(preds, gts))):
        np.testing.assert_allclose(got[key], value, rtol=0, atol=1e-12, err_msg=key)


def test_evaluate_missing_prediction(dataset, tmp_path, capsys):
    pred_dir, gt_dir = _copy(dataset, tmp_path)
    (pred_dir / "img_003.png").unlink()
    argv = ["evaluate", "sod", "--pred", str(pred_dir), "--gt", str(gt_dir), "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "img_003" in err and "--allow-missing" in err
    # one error line, then the pre-scan's listing of every problem (issue 14)
    assert sum(line.startswith("error:") for line in err.splitlines()) == 1 and "Traceback" not in err

    out_json = tmp_path / "r.json"
    assert main([*argv, "--allow-missing", "--json", str(out_json)]) == 0
    captured = capsys.readouterr()
    assert "note:" in captured.err and "img_003" in captured.err
    report = json.loads(out_json.read_text())
    assert report["num_images"] == 5 and report["missing_predictions"] == ["img_003"]
    assert report["settings"]["allow_missing"] is True


def test_evaluate_size_mismatch(dataset, tmp_path, capsys):
    pred_dir, gt_dir = _copy(dataset, tmp_path)
    Image.fromarray(np.zeros((100, 120), np.uint8)).save(pred_dir / "img_002.png")
    assert main(["evaluate", "sod", "--pred", str(pred_dir), "--gt", str(gt_dir), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "img_002" in err and "120x100" in err and "320x240" in err and "--resize" in err


def test_evaluate_folder_errors(dataset, tmp_path, capsys):
    root, _ = dataset
    (tmp_path / "empty").mkdir()
    gt = str(root / "gt")
    assert main(["evaluate", "sod", "--pred", str(tmp_path / "empty"), "--gt", gt]) == 2
    assert "holds no image" in capsys.readouterr().err
    assert main(["evaluate", "sod", "--pred", str(tmp_path / "absent"), "--gt", gt]) == 2
    assert "does not exist" in capsys.readouterr().err
    bad_out = str(tmp_path / "no" / "such" / "dir" / "r.json")
    assert main(["evaluate", "sod", "--pred", str(root / "good"), "--gt", gt, "--json", bad_out]) == 2
    assert "--json" in capsys.readouterr().err


def test_evaluate_unreadable_image(dataset, tmp_path, capsys):
    pred_dir, gt_dir = _copy(dataset, tmp_path)
    (pred_dir / "img_001.png").write_bytes(b"garbage")
    assert main(["evaluate", "sod", "--pred", str(pred_dir), "--gt", str(gt_dir), "--no-progress"]) == 2
    assert "img_001.png" in capsys.readouterr().err


def test_evaluate_unexpected_error_exit_1(dataset, monkeypatch, capsys):
    root, _ = dataset

    def boom(self, preds, target):
        raise RuntimeError("boom")

    from segmetrics_torch.functional import ForegroundSums

    monkeypatch.setattr(ForegroundSums, "update", boom)
    assert main(["evaluate", "sod", "--pred", str(root / "good"), "--gt", str(root / "gt"), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "error: unexpected RuntimeError: boom" in err


# ------------------------------------------------------------------------------------------------------- report


def test_format_table_and_jsonable():
    table = format_table({"a": {"x": 0.5, "y": float("nan")}, "long-name": {"x": 1.0}}, ["x", ("y", "Y")], digits=2)
    assert table.splitlines() == [
        "method        x    Y",
        "---------  ----  ---",
        "a          0.50  nan",
        "long-name  1.00    -",
    ]
    value = to_jsonable({"s": torch.tensor(0.25, dtype=torch.float64), "c": torch.tensor([1.0, math.nan]), "n": 3})
    assert value == {"s": 0.25, "c": [1.0, None], "n": 3}
    json.dumps(value, allow_nan=False)
    assert scalar_row({"a": torch.tensor(1.0), "b": {"c": torch.zeros(3), "d": torch.tensor(2.0)}}) == {
        "a": 1.0,
        "b/d": 2.0,
    }
    with pytest.raises(TypeError):
        to_jsonable(object())


def test_python_m_segmetrics_torch_app_runs_the_command() -> None:
    """``python -m segmetrics_torch.app`` is the command (a new user tried it before ``...app.cli``)."""
    done = subprocess.run(
        [sys.executable, "-m", "segmetrics_torch.app", "--version"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.startswith("segmetrics "), done
