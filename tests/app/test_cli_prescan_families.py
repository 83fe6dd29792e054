"""Issue 14 for the boundary, partition and proposal commands: one run lists every problem of the inputs (missing,
extra, unreadable, size) before any measure runs; ``--skip-bad`` evaluates the rest and records what it left out;
the report form (``--config``) does the same for every family."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from segmetrics_torch.app.cli import main

H, W = 40, 48


def _png(path: Path, array: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array).save(path)


def _labels(rng, h: int = H, w: int = W) -> np.ndarray:
    """Four rectangles of labels 1..4 (a partition)."""
    labels = np.ones((h, w), np.uint8)
    labels[h // 2 :, : w // 2] = 2
    labels[: h // 2, w // 2 :] = 3
    labels[h // 2 :, w // 2 :] = 4
    return labels


def _bad_folders(root: Path, family: str) -> tuple[Path, Path]:
    """Six ground truths: a (good), b (good), c (no prediction), d (corrupt prediction), e (prediction of another
    size), f (corrupt ground truth); plus a prediction z without a ground truth."""
    rng = np.random.default_rng(0)
    pred, gt = root / family / "pred", root / family / "gt"
    for stem in "abcdef":
        labels = _labels(rng)
        if family == "boundary":
            edges = np.zeros((H, W), np.uint8)
            edges[H // 2, :] = edges[:, W // 2] = 255
            _png(gt / f"{stem}.png", edges)
            soft = np.clip(edges * 0.8 + rng.integers(0, 40, (H, W)), 0, 255).astype(np.uint8)
            size = (H, W - 4) if stem == "e" else (H, W)
            _png(pred / f"{stem}.png", soft[: size[0], : size[1]])
        elif family == "partition":
            _png(gt / f"{stem}.png", labels)
            _png(pred / f"{stem}.png", labels if stem != "e" else labels[:, :-4])
        else:
            objects = np.stack([labels == k for k in (1, 4)])
            np.savez(gt / f"{stem}.npz" if gt.exists() else _mkdir(gt) / f"{stem}.npz", objects=objects)
            masks = np.stack([labels == k for k in (1, 2, 3, 4)])
            np.savez(_mkdir(pred) / f"{stem}.npz", masks=masks if stem != "e" else masks[:, :, :-4])
    ext = "npz" if family == "proposals" else "png"
    (pred / f"c.{ext}").unlink()
    (pred / f"d.{ext}").write_bytes(b"corrupt")
    (gt / f"f.{ext}").write_bytes(b"corrupt too")
    (pred / f"z.{ext}").write_bytes((pred / f"a.{ext}").read_bytes())
    return pred, gt


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _args(family: str, pred: Path, gt: Path) -> list[str]:
    extra = {"boundary": ["--thresholds", "5"], "proposals": ["--counts", "1,2,4"]}.get(family, [])
    return ["evaluate", family, "--pred", str(pred), "--gt", str(gt), "--no-progress", *extra]


@pytest.mark.parametrize("family", ["boundary", "partition", "proposals"])
def test_every_problem_in_one_error_then_skip_bad(tmp_path, capsys, family):
    pred, gt = _bad_folders(tmp_path, family)
    assert main(_args(family, pred, gt)) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert captured.out == "" and err.startswith("error: 5 problem(s) in the inputs, found before evaluating")
    assert "ground truth without a prediction: 1: c" in err
    assert "prediction without a ground truth: 1: z" in err
    assert "unreadable or corrupt file: 2: d (" in err and ", f (" in err
    size_label = (
        "prediction size differs from its ground truth"
        if family == "boundary"
        else ("prediction size does not fit its ground truth")
    )
    assert f"{size_label}: 1: e (prediction 44x40, ground truth 48x40 (WxH))" in err
    assert "Traceback" not in err

    out_json = tmp_path / f"{family}.json"
    assert main([*_args(family, pred, gt), "--skip-bad", "--json", str(out_json)]) == 0
    err = capsys.readouterr().err
    assert "skipped: unreadable or corrupt file: 2: d" in err
    report = json.loads(out_json.read_text())
    assert report["num_images"] == 2
    assert {(p["image"], p["problem"]) for p in report["skipped"]} == {
        ("c", "missing"),  # every image left out, the ground truth without a prediction included
        ("d", "unreadable"),
        ("f", "unreadable"),
        ("e", "size" if family == "boundary" else "shape"),
    }
    assert {p["image"] for p in report["problems"]} == {"c", "d", "e", "f", "z"}


def test_problems_the_user_allowed_are_listed_as_allowed(tmp_path, capsys):
    """--allow-missing given and other problems left: the unpaired names are listed as allowed, not as errors, and
    no name-mapping hint is given for them."""
    pred, gt = _bad_folders(tmp_path, "partition")
    assert main([*_args("partition", pred, gt), "--allow-missing"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: 3 problem(s) in the inputs"), err
    assert "ground truth without a prediction: 1 (allowed by --allow-missing, not an error): c" in err
    assert "prediction without a ground truth: 1 (allowed by --allow-missing, not an error): z" in err
    assert "unreadable or corrupt file: 2: d (" in err and "map them with" not in err


def test_boundary_resize_fixes_the_size_problem(tmp_path, capsys):
    pred, gt = _bad_folders(tmp_path, "boundary")
    out_json = tmp_path / "r.json"
    assert main([*_args("boundary", pred, gt), "--skip-bad", "--resize", "--json", str(out_json)]) == 0
    report = json.loads(out_json.read_text())
    assert report["num_images"] == 3 and report["settings"]["resize"] is True
    assert sorted(report["results"]["per_image"]) == ["a", "b", "e"]
    capsys.readouterr()


def test_report_form_scans_every_family(tmp_path, capsys):
    pred, gt = _bad_folders(tmp_path, "partition")
    config = tmp_path / "eval.yaml"
    config.write_text(
        f"families: [partition]\ndatasets:\n  D: {{gt: {gt}}}\nmethods:\n  M: {{D: {pred}}}\n"
        f"output: {tmp_path / 'report'}\nfigures: false\n"
    )
    assert main(["evaluate", "--config", str(config), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "D / partition / M" in err
    assert "unreadable or corrupt file: 2: d" in err and "prediction size does not fit its ground truth: 1: e" in err
    assert not (tmp_path / "report").exists()

    assert main(["evaluate", "--config", str(config), "--no-progress", "--skip-bad"]) == 0
    capsys.readouterr()
    record = json.loads((tmp_path / "report" / "results.json").read_text())["results"]["D"]["partition"]["M"]
    assert record["num_images"] == 2 and {p["image"] for p in record["skipped"]} == {"c", "d", "e", "f"}


def _ucm2(path: Path, split: float = 0.6) -> None:
    """A (2H+1, 2W+1) ucm2 whose middle row of edges has strength ``split``: two regions below it, one above."""
    import scipy.io

    ucm2 = np.zeros((2 * H + 1, 2 * W + 1))
    ucm2[H, :] = split
    path.parent.mkdir(parents=True, exist_ok=True)
    scipy.io.savemat(path, {"ucm2": ucm2})


def test_report_with_label_maps_and_ucm2_methods(tmp_path, capsys):
    """A label-map method and a ucm2 method of one partition dataset in one report, with figures and the family's
    thresholds (they pick the ucm2's levels; the label maps are evaluated as they are)."""
    rng = np.random.default_rng(0)
    for stem in "ab":
        _png(tmp_path / "gt" / f"{stem}.png", _labels(rng))
        _png(tmp_path / "labels" / f"{stem}.png", _labels(rng))
        _ucm2(tmp_path / "ucm" / f"{stem}.mat")
    _ucm2(tmp_path / "ucm" / "c.mat")
    (tmp_path / "ucm" / "c.mat").write_bytes((tmp_path / "ucm" / "a.mat").read_bytes()[:300])  # truncated
    _png(tmp_path / "gt" / "c.png", _labels(rng))
    _png(tmp_path / "labels" / "c.png", _labels(rng))
    config = tmp_path / "eval.yaml"
    config.write_text(
        f"families: [partition]\ndatasets:\n  D: {{gt: {tmp_path / 'gt'}}}\n"
        f"methods:\n  Flat: {{D: {tmp_path / 'labels'}}}\n  Tree: {{D: {tmp_path / 'ucm'}}}\n"
        f"options: {{partition: {{thresholds: [0.3, 0.8], measures: [fop, voi]}}}}\n"
        f"output: {tmp_path / 'report'}\nfigures: [png]\n"
    )
    # the truncated ucm2 is found by the pre-scan (its .mat header alone looks sound)
    assert main(["evaluate", "--config", str(config), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: D / partition / Tree: c: unreadable or corrupt file") and "Traceback" not in err

    assert main(["evaluate", "--config", str(config), "--no-progress", "--skip-bad"]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    records = json.loads((tmp_path / "report" / "results.json").read_text())["results"]["D"]["partition"]
    assert records["Flat"]["num_images"] == 2 and records["Tree"]["num_images"] == 2  # compared on a, b
    assert records["Tree"]["settings"]["thresholds"] == [0.3, 0.8]
    assert records["Flat"]["settings"]["thresholds"] is None
    figures = sorted(p.name for p in (tmp_path / "report" / "figures").glob("*.png"))
    assert figures == ["D_partition_fop_pr.png"]  # the PR curve of the hierarchy; a label map has none


def test_count_column_is_an_integer_never_marked_best(tmp_path):
    from segmetrics_torch.reports.tables import format_latex_table, format_markdown_table, format_table

    rows = {"A": {"num_images": 2, "s": 0.5}, "B": {"num_images": 5, "s": 0.6}}
    columns = [("num_images", "images"), ("s", "S")]
    markdown = format_markdown_table(rows, columns)
    assert "| method | images | S ↑ |" in markdown and "| B | 5 | **0.6000** |" in markdown
    latex = format_latex_table(rows, columns)
    assert "images $" not in latex and r"\textbf{5}" not in latex
    assert format_table(rows, columns).splitlines()[2].split() == ["A", "2", "0.5000"]


def test_every_missing_prediction_folder_in_one_error(tmp_path, capsys):
    _, gt = _bad_folders(tmp_path, "partition")
    config = tmp_path / "eval.yaml"
    config.write_text(
        f"families: [partition]\ndatasets:\n  D: {{gt: {gt}}}\n  E: {{gt: {gt}}}\n"
        f"methods:\n  M: '{tmp_path}/nope/{{dataset}}'\noutput: {tmp_path / 'report'}\n"
    )
    assert main(["evaluate", "--config", str(config), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: 2 folder(s) do not exist; use --allow-missing")
    assert "D / partition / M: the prediction folder" in err and "E / partition / M: the prediction folder" in err


def test_unpaired_names_say_why_under_name_mapping(tmp_path, capsys):
    """A prediction without the suffix the other names carry: the listing says so instead of naming it on both
    sides without a reason."""
    mask = np.zeros((H, W), np.uint8)
    mask[10:30, 10:30] = 255
    for stem in ("a", "b"):
        _png(tmp_path / "gt" / f"{stem}.png", mask)
    _png(tmp_path / "pred" / "a_sal.png", mask)
    _png(tmp_path / "pred" / "b.png", mask)
    args = ["evaluate", "foreground", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt"), "--no-progress"]
    assert main([*args, "--pred-suffix", "_sal"]) == 2
    err = capsys.readouterr().err
    assert "prediction without a ground truth: 1: b (its name does not end in '_sal')" in err
    # the hint's pattern pairs both names (a new user set the suffix for the one file that carried it)
    hint = next(line for line in err.splitlines() if line.startswith("hint:"))
    assert "if only some names end in '_sal'" in hint
    pattern = hint.split("--pair-regex '")[1].split("'")[0]
    assert main([*args, "--pair-regex", pattern, "--json", str(tmp_path / "r.json")]) == 0
    assert "Evaluated 2 image(s)" in capsys.readouterr().out
    assert main([*args, "--pair-regex", "^a"]) == 2
    err = capsys.readouterr().err
    assert "ground truth without a prediction: 1: b (its name does not match the pairing pattern '^a')" in err


def test_method_names_skip_format_folders():
    from segmetrics_torch.datasets.prescan import method_name

    gt = "/data/BSR/BSDS500/data/groundTruth/test"
    assert method_name("/data/results/gPb/ucm2", "BSDS500", gt) == "gPb"
    assert method_name("/data/results/HED/edges", "BSDS500", gt) == "HED"
    assert method_name("/data/results/MCG/segs", "BSDS500", gt) == "MCG"


def test_a_mapping_that_leaves_out_every_file_says_so(tmp_path, capsys):
    """No name ends in the suffix given: the error said the same names were unmatched on both sides and suggested
    --pred-suffix, the flag that caused it."""
    mask = np.zeros((H, W), np.uint8)
    mask[10:30, 10:30] = 255
    for stem in ("a", "b"):
        _png(tmp_path / "gt" / f"{stem}.png", mask)
        _png(tmp_path / "pred" / f"{stem}.png", mask)
    args = ["evaluate", "foreground", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt"), "--no-progress"]
    assert main([*args, "--pred-suffix", "_sal"]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "the name mapping left out 2 prediction(s) and 0 ground truth(s)" in err
    assert "the prediction a: its name does not end in '_sal'" in err and "map the names" not in err


def test_an_unavailable_device_is_refused_before_the_pre_scan(tmp_path, capsys):
    """--device cuda on a machine without CUDA: one error line, before the pre-scan's notes (a 0/1 mask's here)."""
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    mask = np.zeros((H, W), np.uint8)
    mask[10:30, 10:30] = 1  # a 0/1 mask: the pre-scan notes it
    _png(tmp_path / "gt" / "a.png", mask)
    _png(tmp_path / "pred" / "a.png", mask * 255)
    args = ["evaluate", "foreground", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt"), "--no-progress"]
    assert main([*args, "--device", "cuda"]) == 2
    captured = capsys.readouterr()
    lines = [line for line in (captured.out + captured.err).splitlines() if line.strip()]
    assert lines == ["error: device 'cuda' requested but CUDA is not available (use --device cpu)"], lines


def test_soft_maps_given_as_the_ground_truth_are_noted(tmp_path, capsys):
    """--pred and --gt swapped ran silently (a soft map binarised at > 128 as a mask); a note names the files. A mask
    with a few grey labels or anti-aliased edges is no soft map (PySODMetrics' test mask 19: 7 levels on 15 %)."""
    yy, xx = np.mgrid[:H, :W]
    soft = (255 * np.exp(-((yy - H / 2) ** 2 + (xx - W / 2) ** 2) / (2 * (W / 4) ** 2))).astype(np.uint8)
    mask = np.zeros((H, W), np.uint8)
    mask[10:30, 10:30] = 255
    labels = mask.copy()
    labels[12:20, 12:20] = 85  # a few grey labels on a large part: a mask still
    for stem, gt in (("a", mask), ("b", labels)):
        _png(tmp_path / "gt" / f"{stem}.png", gt)
        _png(tmp_path / "pred" / f"{stem}.png", soft)
    note = "ground truth with many grey levels"
    right = ["evaluate", "foreground", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt")]
    assert main([*right, "--no-progress"]) == 0
    assert note not in capsys.readouterr().err
    swapped = ["evaluate", "foreground", "--pred", str(tmp_path / "gt"), "--gt", str(tmp_path / "pred")]
    assert main([*swapped, "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"note: {note}" in err and "--pred and --gt swapped?): 2: a, b" in err, err
