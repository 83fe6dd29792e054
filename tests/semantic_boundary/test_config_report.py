"""``segmetrics evaluate semantic-boundary --config``: a report of 2 methods x 2 datasets (SBD- and Cityscapes-layout)
whose numbers equal the single-folder form's, the report folder's files, bad configurations (every mistake named at
once, with the key's path) and an output inside an input refused with nothing written."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segmetrics_torch.app.cli import main
from segmetrics_torch.errors import InputError
from segmetrics_torch.reports.protocol_report import load_protocol_config, protocol_config_from_mapping

from . import synthetic_data


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``sbd/`` and ``cityscapes/`` (each gt and the predictions of method A) and method B's predictions (A's maps,
    degraded: every other row blanked) as ``B/SBD-val`` and ``B/Cityscapes`` (the datasets' names)."""
    root = tmp_path_factory.mktemp("grid")
    synthetic_data.make_sbd(root / "sbd", n_images=2, shape=(36, 48), classes=(3, 15))
    synthetic_data.make_cityscapes(root / "cityscapes", n_images=2, shape=(48, 96))
    for name, dataset in (("sbd", "SBD-val"), ("cityscapes", "Cityscapes")):
        shutil.copytree(root / name / "pred", root / "B" / dataset)
        for png in (root / "B" / dataset).rglob("*.png"):
            pixels = np.array(Image.open(png))
            pixels[::2] = 0
            Image.fromarray(pixels).save(png)
    (root / "val.txt").write_text("2008_000000\n2008_000001\n")
    return root


CONFIG = """\
output: report
figures: [png]
datasets:
  SBD-val: {gt: sbd/gt, dataset: sbd, preset: matlab, ids: val.txt, classes: [3, person]}
  Cityscapes: {gt: cityscapes/gtFine, dataset: cityscapes, preset: post-seal, thin: false, thresholds: 15,
               classes: [1, 2, 3, 12, 14, 19]}
methods:
  A: {SBD-val: sbd/pred, Cityscapes: cityscapes/pred}
  B: B/{dataset}
"""


def _config(root: Path, text: str = CONFIG, name: str = "eval.yaml") -> Path:
    path = root / name
    path.write_text(text, encoding="utf-8")
    return path


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    status = main(["evaluate", "semantic-boundary", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_report_equals_the_single_folder_form(grid: Path, tmp_path: Path, capsys) -> None:
    work = tmp_path / "work"
    shutil.copytree(grid, work)
    config = _config(work)
    before = _snapshot(work)
    status, out, err = _run(capsys, "--config", config)
    assert status == 0, err
    report = work / "report"
    assert {k: v for k, v in _snapshot(work).items() if not k.startswith(str(report))} == before

    results = json.loads((report / "results.json").read_text())["results"]
    singles = {
        "SBD-val": ["--dataset", "sbd", "--preset", "matlab", "--ids", work / "val.txt", "--classes", "3,person"],
        "Cityscapes": ["--dataset", "cityscapes", "--preset", "post-seal", "--raw", "--thresholds", "15",
                       "--classes", "1,2,3,12,14,19"],
    }  # fmt: skip
    gts = {"SBD-val": work / "sbd/gt", "Cityscapes": work / "cityscapes/gtFine"}
    preds = {
        ("A", "SBD-val"): work / "sbd/pred",
        ("A", "Cityscapes"): work / "cityscapes/pred",
        ("B", "SBD-val"): work / "B/SBD-val",
        ("B", "Cityscapes"): work / "B/Cityscapes",
    }
    for (method, dataset), pred in preds.items():
        single = tmp_path / f"{method}-{dataset}.json"
        status, _, err = _run(capsys, "--pred", pred, "--gt", gts[dataset], *singles[dataset], "--json", single)
        assert status == 0, err
        want = json.loads(single.read_text())
        got = results[dataset][method]
        assert got["results"] == want["results"]  # every number, curve and per-image best, bit for bit
        assert got["protocol"] == want["protocol"] and got["ids"] == want["ids"]
        assert got["classes"] == want["classes"]
        rows = {r["class"]: r for r in csv.DictReader((report / "csv" / f"{dataset}__{method}_classes.csv").open())}
        assert float(rows["mean"]["ap"]) == want["results"]["mean"]["ap"]
        assert (report / "figures" / f"{dataset}__{method}_pr.png").stat().st_size > 0

    combined = list(csv.DictReader((report / "csv" / "combined_semantic-boundary.csv").open()))
    by_cell = {(r["method"], r["dataset"], r["measure"]): float(r["value"]) for r in combined}
    assert len(by_cell) == 2 * 2 * 3
    for (method, dataset), _ in preds.items():
        mean = results[dataset][method]["results"]["mean"]
        for key in ("ods_f", "ois_f", "ap"):
            assert by_cell[(method, dataset, f"mean/{key}")] == mean[key]
    markdown = (report / "combined.md").read_text()
    assert "SBD-val mF (ODS) ↑" in markdown and "Cityscapes mAP ↑" in markdown
    assert markdown.count("**") >= 2 * 6  # a 1st-place mark in each of the six columns
    assert "\\first{" in (report / "combined.tex").read_text()
    for name in ("tables.md", "tables.tex", "csv/SBD-val_semantic-boundary.csv", "csv/SBD-val__A_per_image.csv"):
        assert (report / name).is_file()
    assert "SBD-val: semantic boundaries" in out and "Wrote" in out


def test_figures_off_and_a_second_run_removes_the_stale_files(grid: Path, tmp_path: Path, capsys) -> None:
    text = CONFIG.replace("figures: [png]", "figures: false").replace("classes: [3, person]", "classes: [3]")
    config = _config(grid, text, "second.yaml")
    shutil.rmtree(grid / "report", ignore_errors=True)
    status, _, err = _run(capsys, "--config", config)
    assert status == 0, err
    assert not (grid / "report" / "figures").exists()
    one = _config(grid, text.replace("  B: B/{dataset}\n", ""), "third.yaml")
    status, _, err = _run(capsys, "--config", one)
    assert status == 0, err
    assert not (grid / "report" / "csv" / "SBD-val__B_classes.csv").exists()  # the previous report's, not rewritten
    assert (grid / "report" / "csv" / "SBD-val__A_classes.csv").is_file()
    shutil.rmtree(grid / "report")


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        (
            CONFIG.replace("preset: matlab", "preset: nope").replace("thresholds: 15", "thresholds: 0")
            .replace("B: B/{dataset}", "B: {Nowhere: x}").replace("output: report", "output: report\ncolour: red"),
            ["4 mistakes", "datasets.SBD-val.preset: expected matlab, pre-seal or post-seal, got 'nope'",
             "datasets.Cityscapes.thresholds: expected a positive integer, got 0",
             "methods.B: no dataset named Nowhere",
             "unknown key(s) colour"],
        ),
        (CONFIG.replace("dataset: cityscapes, preset: post-seal", "dataset: cityscapes, preset: matlab"),
         ["datasets.Cityscapes: preset matlab on cityscapes"]),
        (CONFIG.replace("classes: [3, person]", "classes: [unicorn]"), ["datasets.SBD-val.classes"]),
        (CONFIG.replace("  SBD-val: {gt: sbd/gt,", "  SBD-val: {gt: sbd/gt, gt: sbd/gt,"), ["appears twice"]),
        (CONFIG.replace("ids: val.txt", "ids: missing.txt"), ["missing.txt does not exist"]),
        (CONFIG + "  b: other\n", ["'B' and 'b' would write their files under one name"]),
    ],
    ids=["four-mistakes", "matlab-on-cityscapes", "unknown-class", "duplicate-key", "missing-ids", "one-file-name"],
)  # fmt: skip
def test_bad_configurations(grid: Path, tmp_path: Path, capsys, text: str, needles: list[str]) -> None:
    text = text.replace("sbd/", f"{grid}/sbd/").replace("cityscapes/", f"{grid}/cityscapes/")
    config = _config(tmp_path, text.replace("ids: val.txt", f"ids: {grid}/val.txt"))
    status, _, err = _run(capsys, "--config", config)
    assert status == 2
    assert err.startswith("error: ") and err.count("error:") == 1
    for needle in needles:
        assert needle in err
    assert not (tmp_path / "report").exists()


def test_json_configuration_with_a_repeated_key(tmp_path: Path) -> None:
    path = tmp_path / "eval.json"
    path.write_text('{"datasets": {"a": {"gt": "g", "dataset": "sbd"}},\n "datasets": {}, "methods": {"m": "p"}}')
    with pytest.raises(InputError, match=r"the key 'datasets' appears twice in one object \(lines 1 and 2\)"):
        load_protocol_config(path, "semantic-boundary")


@pytest.mark.parametrize(
    ("output", "needle"),
    [("sbd/gt/report", "is inside the ground-truth folder of SBD-val"), ("sbd/pred", "is the folder of A on SBD-val"),
     ("B/Cityscapes/out", "is inside the folder of B on Cityscapes")],
)  # fmt: skip
def test_an_output_inside_an_input_is_refused_with_nothing_written(
    grid: Path, capsys, output: str, needle: str
) -> None:
    config = _config(grid, CONFIG.replace("output: report", f"output: {output}"), "inside.yaml")
    before = _snapshot(grid)
    status, _, err = _run(capsys, "--config", config)
    assert status == 2 and needle in err and err.count("error:") == 1
    assert _snapshot(grid) == before


def test_config_and_the_single_form_options_do_not_mix(grid: Path, capsys) -> None:
    status, _, err = _run(capsys, "--config", _config(grid), "--pred", grid / "sbd/pred", "--max-dist", "0.01")
    assert status == 2 and "drop --pred, --max-dist" in err
    status, _, err = _run(capsys, "--pred", grid / "sbd/pred")
    assert status == 2 and "required: --gt, --dataset (or --config FILE)" in err


def test_a_script_gets_the_same_configuration() -> None:
    config = protocol_config_from_mapping(
        {"datasets": {"S": {"gt": "g", "dataset": "sbd", "preset": "pre-seal", "max_dist": 0.01}},
         "methods": {"m": "p/{dataset}"}},
        "semantic-boundary",
        "/base",
    )  # fmt: skip
    (dataset, _, folder), *_ = config.pairs()
    assert dataset.settings["protocol"].max_dist == 0.01 and dataset.settings["protocol"].name == "pre-seal+thin+nonis"
    assert folder == Path("/base/p/S") and config.output == Path("/base/segmetrics-report")
