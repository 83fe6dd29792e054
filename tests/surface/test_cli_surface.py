"""``segmetrics evaluate surface``: folders of masks / label maps (PNG) and NIfTI volumes (header spacing), the numbers
of the functions, per-image CSV and JSON, and bad folders as one ``error:`` line with exit 2."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from segmetrics_torch.app.cli import main
from segmetrics_torch.functional import surface_distance_measures


def _masks(root: Path, n: int = 3, labels: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    (root / "gt").mkdir(parents=True)
    (root / "pred").mkdir()
    out = []
    for i in range(n):
        g = np.zeros((30, 34), np.uint8)
        g[6:18, 8:24] = 1
        if labels:
            g[21:27, 20:30] = 2
        p = np.roll(g, (i, 1 + i), (0, 1))
        Image.fromarray(g if labels else g * 255).save(root / "gt" / f"im{i}.png")
        Image.fromarray(p if labels else p * 255).save(root / "pred" / f"im{i}.png")
        out.append((p, g))
    return out


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_masks_give_the_functions_numbers(tmp_path: Path, capsys) -> None:
    data = _masks(tmp_path)
    args = [
        "evaluate",
        "surface",
        "--pred",
        str(tmp_path / "pred"),
        "--gt",
        str(tmp_path / "gt"),
        "--no-progress",
        "--per-image-csv",
        str(tmp_path / "per.csv"),
        "--json",
        str(tmp_path / "r.json"),
    ]
    assert main(args) == 0, capsys.readouterr().err
    rows = {r["image"]: r for r in _rows(tmp_path / "per.csv")}
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    for i, (p, g) in enumerate(data):
        expected = surface_distance_measures(torch.from_numpy(p != 0)[None], torch.from_numpy(g != 0)[None])
        for key, value in expected.items():
            assert float(rows[f"im{i}"][key]) == pytest.approx(float(value[0]), abs=1e-12), key
            assert report["results"]["per_image"][f"im{i}"][key] == pytest.approx(float(value[0]), abs=1e-12)
    assert report["results"]["hausdorff"] == pytest.approx(
        np.mean([float(rows[f"im{i}"]["hausdorff"]) for i in range(3)]), abs=1e-12
    )


def test_label_maps_give_a_row_per_class(tmp_path: Path, capsys) -> None:
    _masks(tmp_path, labels=True)
    args = [
        "evaluate",
        "surface",
        "--pred",
        str(tmp_path / "pred"),
        "--gt",
        str(tmp_path / "gt"),
        "--no-progress",
        "--num-classes",
        "3",
        "--convention",
        "deepmind",
        "--tolerance",
        "1,2",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "class 1" in out and "class 2" in out and "deepmind" in out


def test_nifti_volumes_take_the_header_spacing(tmp_path: Path, capsys) -> None:
    nibabel = pytest.importorskip("nibabel")
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    v = np.zeros((16, 18, 12), np.uint8)
    v[4:12, 5:14, 3:9] = 1
    w = np.roll(v, (1, 2, 1), (0, 1, 2))
    affine = np.diag([0.7, 0.9, 2.5, 1.0])
    nibabel.save(nibabel.Nifti1Image(v, affine), str(tmp_path / "gt" / "case1.nii.gz"))
    nibabel.save(nibabel.Nifti1Image(w, affine), str(tmp_path / "pred" / "case1.nii.gz"))
    args = [
        "evaluate",
        "surface",
        "--pred",
        str(tmp_path / "pred"),
        "--gt",
        str(tmp_path / "gt"),
        "--no-progress",
        "--tolerance",
        "1",
        "--json",
        str(tmp_path / "r.json"),
    ]
    assert main(args) == 0, capsys.readouterr().err
    spacing = [float(np.float32(s)) for s in (0.7, 0.9, 2.5)]  # the header stores float32
    expected = surface_distance_measures(
        torch.from_numpy(w != 0)[None], torch.from_numpy(v != 0)[None], spacing=spacing, tolerance=1.0
    )
    got = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["results"]["per_image"]["case1"]
    assert got["hausdorff"] == pytest.approx(float(expected["hausdorff"][0]), abs=1e-12)
    assert got["nsd"] == pytest.approx(float(expected["nsd"][0]), abs=1e-12)


@pytest.mark.parametrize("fault", ["shape", "label", "unpaired", "spacing"])
def test_bad_folders_are_one_error_line(tmp_path: Path, capsys, fault: str) -> None:
    _masks(tmp_path, labels=True)
    extra: list[str] = ["--num-classes", "3"]
    if fault == "shape":
        Image.fromarray(np.zeros((10, 10), np.uint8)).save(tmp_path / "pred" / "im1.png")
    elif fault == "label":
        Image.fromarray(np.full((30, 34), 7, np.uint8)).save(tmp_path / "pred" / "im2.png")
    elif fault == "unpaired":
        (tmp_path / "pred" / "im0.png").unlink()
    else:
        extra += ["--spacing", "1,2,3"]
    args = [
        "evaluate",
        "surface",
        "--pred",
        str(tmp_path / "pred"),
        "--gt",
        str(tmp_path / "gt"),
        "--no-progress",
        *extra,
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in err, err
    expected = {"shape": "im1", "label": "im2", "unpaired": "im0", "spacing": "--spacing"}[fault]
    assert expected in err


def test_skip_empty_gt_spacing_override_and_device(tmp_path: Path, capsys) -> None:
    _masks(tmp_path)
    Image.fromarray(np.zeros((30, 34), np.uint8)).save(tmp_path / "gt" / "im2.png")  # an empty ground truth
    base = ["evaluate", "surface", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt"), "--no-progress"]
    base += ["--tolerance", "1"]
    assert main([*base, "--skip-empty-gt", "--json", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "Evaluated 2 pair(s) (1 left out: empty ground truth)" in out
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    # every left-out image in one place, the top-level "skipped", as the other families' --skip-empty-gt
    assert [(s["image"], s["problem"]) for s in report["skipped"]] == [("im2", "empty")]
    assert "skipped_empty_gt" not in report["results"] and "im2" not in report["results"]["per_image"]
    assert main(base) == 0  # without the option the empty ground truth is evaluated: a hallucinated structure
    captured = capsys.readouterr()
    assert "warning: im2:" in captured.err and "inf" in captured.out
    # the warning says what each measure returned for the empty side (a new user read "empty" and a NaN in the table)
    line = next(x for x in captured.err.splitlines() if x.startswith("warning: im2:"))
    assert "ground truth is empty (no foreground): hausdorff_distance inf" in line, line
    assert "hausdorff_distance (percentile 95) nan" in line and "normalized_surface_distance" in line, line
    if not torch.cuda.is_available():
        assert main([*base, "--device", "cuda"]) == 2
        # refused before the pre-scan prints its notes (the empty ground truth's): the one error line alone
        err = capsys.readouterr().err
        assert [line for line in err.splitlines() if line.strip()] == [
            "error: device 'cuda' requested but CUDA is not available (use --device cpu)"
        ], err


def test_every_file_with_an_empty_structure_is_named(tmp_path: Path, capsys) -> None:
    # the Metric warns of its first batch's empty pairs only (a training loop is not flooded); the command reads
    # every update's pairs from `last_empty` and names each file and class (it named the first file only, then
    # printed the Metric's "further pairs" note as a broken "the  empty" line)
    _masks(tmp_path, n=4, labels=True)
    for name, label in (("im1", 2), ("im2", 1), ("im3", 2)):
        p = np.array(Image.open(tmp_path / "pred" / f"{name}.png"))
        p[p == label] = 0
        Image.fromarray(p).save(tmp_path / "pred" / f"{name}.png")
    base = ["evaluate", "surface", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt"), "--no-progress"]
    assert main([*base, "--num-classes", "3"]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("warning:")]
    named = [x.split(":")[1:3] for x in lines]
    assert named == [[" im1", " class 2"], [" im2", " class 1"], [" im3", " class 2"]], lines
    assert all("the prediction is empty (no foreground): hausdorff_distance inf" in x for x in lines), lines


def test_spacing_replaces_headers_that_disagree(tmp_path: Path, capsys) -> None:
    nibabel = pytest.importorskip("nibabel")
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    v = np.zeros((10, 12, 8), np.uint8)
    v[3:7, 4:9, 2:6] = 1
    nibabel.save(nibabel.Nifti1Image(v, np.diag([0.8, 0.8, 2.5, 1.0])), str(tmp_path / "gt" / "a.nii.gz"))
    nibabel.save(nibabel.Nifti1Image(np.roll(v, 1, 0), np.eye(4)), str(tmp_path / "pred" / "a.nii.gz"))
    base = ["evaluate", "surface", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt"), "--no-progress"]
    assert main(base) == 2
    assert "--spacing" in capsys.readouterr().err  # the headers disagree: the error says how to decide
    assert main([*base, "--spacing", "0.8,0.8,2.5"]) == 0


def test_medpy_names_the_empty_side_once(tmp_path: Path, capsys) -> None:
    """MedPy's convention refuses an empty mask: the command names the file and the side, in its words only (it said
    "the prediction (the prediction) is empty" once)."""
    _masks(tmp_path)
    Image.fromarray(np.zeros((30, 34), np.uint8)).save(tmp_path / "pred" / "im1.png")
    args = [
        "evaluate",
        "surface",
        "--pred",
        str(tmp_path / "pred"),
        "--gt",
        str(tmp_path / "gt"),
        "--no-progress",
        "--convention",
        "medpy",
    ]
    assert main(args) == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error:")]
    assert "im1.png" in line and "the prediction is empty" in line and "(the prediction)" not in line, line


def test_measures_chooses_the_columns_and_others_are_their_metrics(tmp_path: Path, capsys) -> None:
    """``--measures``: the one pass's measures asked for, and any other registered boundary-distance measure computed
    by its own Metric (Boundary IoU here), per image and per class, in the registry's column order."""
    from segmetrics_torch.functional import boundary_iou

    data = _masks(tmp_path, labels=True)
    args = [
        "evaluate",
        "surface",
        "--pred",
        str(tmp_path / "pred"),
        "--gt",
        str(tmp_path / "gt"),
        "--no-progress",
        "--num-classes",
        "3",
        "--measures",
        "boundaryiou,HD",
        "--json",
        str(tmp_path / "r.json"),
    ]
    assert main(args) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["method", "HD", "Boundary", "IoU"]
    results = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["results"]
    assert set(results) >= {"hausdorff", "boundary_iou"} and "nsd" not in results and "asd" not in results
    values = [
        boundary_iou(torch.from_numpy(p)[None].long(), torch.from_numpy(g)[None].long(), num_classes=3)[0]
        for p, g in data
    ]
    assert results["boundary_iou"] == pytest.approx(torch.stack(values).mean(0).tolist(), abs=1e-12)
    assert results["per_image"]["im1"]["boundary_iou"] == pytest.approx(values[1].tolist(), abs=1e-12)


def test_measures_in_a_configuration_and_unknown_names(tmp_path: Path, capsys) -> None:
    _masks(tmp_path)
    config = tmp_path / "eval.yaml"
    config.write_text(
        f"output: {tmp_path / 'out'}\ndatasets:\n  D: {{gt: {tmp_path / 'gt'}, families: [surface]}}\n"
        f"methods:\n  M: {tmp_path / 'pred'}\noptions:\n  surface: {{measures: [biou, nsd], tolerance: 1}}\n",
        encoding="utf-8",
    )
    assert main(["evaluate", "--config", str(config), "--figures", "none", "--no-progress"]) == 0, capsys.readouterr()
    record = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    results = record["results"]["D"]["surface"]["M"]["results"]
    assert {"boundary_iou", "nsd"} <= set(results) and "hausdorff" not in results
    config.write_text(config.read_text(encoding="utf-8").replace("biou", "hd99"), encoding="utf-8")
    assert main(["evaluate", "--config", str(config), "--figures", "none", "--no-progress"]) == 2
    assert "options.surface.measures" in capsys.readouterr().err


def test_volumes_without_nibabel_are_one_error_naming_the_extra(tmp_path: Path, capsys, monkeypatch) -> None:
    """A missing package is the run's problem, not each file's: it was listed as "unreadable or corrupt file" for
    every volume, with --skip-bad suggested (which would leave out all of them)."""
    nibabel = pytest.importorskip("nibabel")
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    v = np.zeros((6, 7, 5), np.uint8)
    v[2:4, 2:5, 1:4] = 1
    for side in ("gt", "pred"):
        nibabel.save(nibabel.Nifti1Image(v, np.eye(4)), str(tmp_path / side / "a.nii.gz"))
    monkeypatch.setitem(sys.modules, "nibabel", None)  # import nibabel now raises ImportError
    args = ["evaluate", "surface", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt"), "--no-progress"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.strip() == "error: NIfTI volumes need nibabel: pip install 'segmetrics-torch[nifti]'", err


def test_a_label_map_without_num_classes_is_noted(tmp_path: Path, capsys) -> None:
    """Without --num-classes every nonzero label is one mask (MedPy's reading): a label map's classes merged
    silently (a new user forgot the flag). One note names the first such file; a 0/255 mask gets none."""
    _masks(tmp_path, labels=True)
    base = ["evaluate", "surface", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt"), "--no-progress"]
    assert main(base) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "im0.png holds labels 1 and 2" in notes[0] and "--num-classes" in notes[0], notes
    assert main([*base, "--num-classes", "3"]) == 0
    assert "note:" not in capsys.readouterr().err
    _masks(tmp_path / "masks")  # 0/255 masks
    base = ["evaluate", "surface", "--pred", str(tmp_path / "masks/pred"), "--gt", str(tmp_path / "masks/gt")]
    assert main([*base, "--no-progress"]) == 0
    assert "note:" not in capsys.readouterr().err
