"""Per-method and per-dataset name mappings, PySODEvalToolkit's JSON configurations and measure spellings
(issue 28, item 6)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segmetrics_torch.app.cli import main
from segmetrics_torch.registry import canonical_list, measure_error


def _write(root: Path) -> None:
    rng = np.random.default_rng(0)
    for i in range(3):
        gt = np.zeros((16, 20), np.uint8)
        gt[3:11, 4:15] = 255
        for folder, name in (
            ("DS/GT", f"im{i}_mask"),
            ("preds/A/DS", f"im{i}_sal"),
            ("preds/B/DS", f"im{i}"),
            ("preds/C", f"ds_im{i}_fused"),
        ):
            (root / folder).mkdir(parents=True, exist_ok=True)
            image = gt if folder == "DS/GT" else rng.integers(0, 256, gt.shape, dtype=np.uint8)
            Image.fromarray(image).save(root / folder / f"{name}.png")


def _results(root: Path) -> dict:
    return json.loads((root / "report" / "results.json").read_text())


def test_each_method_and_dataset_has_its_own_name_mapping(tmp_path: Path, capsys) -> None:
    _write(tmp_path)
    (tmp_path / "eval.yaml").write_text(
        "output: report\nfigures: false\nfamilies: [foreground]\n"
        "datasets:\n  DS: {gt: DS/GT, gt_suffix: _mask}\n"
        "methods:\n"
        "  A: {path: 'preds/A/{dataset}', pred_suffix: _sal}\n"
        "  B: 'preds/B/{dataset}'\n"
        "  C: {DS: {path: preds/C, pred_prefix: ds_, pred_suffix: _fused}}\n",
        encoding="utf-8",
    )
    assert main(["evaluate", "--config", str(tmp_path / "eval.yaml"), "--no-progress"]) == 0, capsys.readouterr().err
    records = _results(tmp_path)
    counts = {m: rec["num_images"] for m, rec in records["results"]["DS"]["foreground"].items()}
    assert counts == {"A": 3, "B": 3, "C": 3}


def test_a_method_entry_with_an_unknown_key_is_named(tmp_path: Path, capsys) -> None:
    _write(tmp_path)
    (tmp_path / "eval.yaml").write_text(
        "output: report\ndatasets:\n  DS: {gt: DS/GT, gt_suffix: _mask}\n"
        "methods:\n  A: {path: 'preds/A/{dataset}', pred_sufix: _sal}\n",
        encoding="utf-8",
    )
    assert main(["evaluate", "--config", str(tmp_path / "eval.yaml")]) == 2
    assert "methods.A: unknown key(s) pred_sufix" in capsys.readouterr().err


def test_pysodevaltoolkit_json_configurations_as_they_are(tmp_path: Path, capsys) -> None:
    _write(tmp_path)
    datasets = {
        "DS": {"image": {"path": "images", "suffix": ".jpg"}, "mask": {"path": "DS/GT", "suffix": "_mask.png"}},
        "Unused": {"image": {"path": "x", "suffix": ".jpg"}, "mask": {"path": "nowhere", "suffix": ".png"}},
    }
    methods = {
        "A": {"DS": {"path": "preds/A/DS", "suffix": "_sal.png"}},
        "C": {"DS": {"path": "preds/C", "prefix": "ds_", "suffix": "_fused.png"}, "Other": {"path": "x"}},
    }
    (tmp_path / "d.json").write_text(json.dumps(datasets), encoding="utf-8")
    (tmp_path / "m.json").write_text(json.dumps(methods), encoding="utf-8")
    argv = [
        "evaluate",
        "--datasets-json",
        str(tmp_path / "d.json"),
        "--methods-json",
        str(tmp_path / "m.json"),
        "--output",
        str(tmp_path / "report"),
        "--figures",
        "none",
        "--no-progress",
        "--measures",
        "maxEm,Smeasure,wFmeasure,MAE,adpFm",
    ]
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "maxE" in out and "S-measure" in out and "adpF" in out
    records = _results(tmp_path)["results"]
    assert set(records) == {"DS"} and {m: r["num_images"] for m, r in records["DS"]["foreground"].items()} == {
        "A": 3,
        "C": 3,
    }


def test_only_one_of_the_two_toolkit_files_is_an_error(tmp_path: Path, capsys) -> None:
    (tmp_path / "d.json").write_text("{}", encoding="utf-8")
    assert main(["evaluate", "--datasets-json", str(tmp_path / "d.json")]) == 2
    assert "give --datasets-json and --methods-json" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        ("maxEm,Smeasure,wFmeasure,MAE,adpFm", ["maxe", "s", "wf", "mae", "adpf"]),
        (["avgF", "meanEm", "max_f", "SM"], ["meanf", "meane", "maxf", "s"]),
        ("mae,MAE", ["mae"]),
    ],
)
def test_pysodevaltoolkit_spellings(names, expected) -> None:
    assert canonical_list(names, "foreground") == expected


def test_an_unknown_measure_is_named_with_its_nearest(capsys) -> None:
    assert "unknown measure 'mxae'; did you mean 'mae'" in (measure_error("mae,mxae", "foreground") or "")
    assert main(["evaluate", "foreground", "--pred", "p", "--gt", "g", "--measures", "maxEm,smesure"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --measures: unknown measure 'smesure'; did you mean") and len(err.splitlines()) == 1


def test_a_measure_without_its_optional_packages_is_an_input_error(tmp_path: Path, capsys, monkeypatch) -> None:
    """HCE runs OpenCV: without it, one error line before any image is read (was: exit 1 and a traceback after
    the decoding)."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "cv2" else real(name, *a))
    _write(tmp_path)
    argv = [
        "evaluate",
        "foreground",
        "--pred",
        str(tmp_path / "preds/B/DS"),
        "--gt",
        str(tmp_path / "DS/GT"),
        "--gt-suffix",
        "_mask",
        "--measures",
        "s,hce",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("error: --measures: the measure 'hce' needs OpenCV: pip install 'segmetrics-torch[opencv]'")
