"""``segmetrics evaluate`` as a SOD/COD user meets it (issue 14): 0/1 masks, one vocabulary, pairing by mapped names,
every problem in one pre-scan, names from folder layouts, a report written as a set, common subsets, per-image
scores. The CLI runs as a subprocess on small PNG files written here."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from segmetrics_torch.datasets.prescan import dataset_name, method_name

ROOT = Path(__file__).resolve().parents[2]
H, W = 24, 32


#: the one-time line of a cold numba cache (the first command of a fresh clone prints it before anything else; its
#: own tests are in tests/ops/test_compile_log.py): left out of ``stderr`` so that the tests read the command's lines
COMPILE_NOTE = "note: compiling segmetrics-torch's CPU kernels"


def _cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-m", "segmetrics_torch.app.cli", "evaluate", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )
    run.stderr = "".join(line for line in run.stderr.splitlines(keepends=True) if not line.startswith(COMPILE_NOTE))
    return run


def _mask(i: int) -> np.ndarray:
    m = np.zeros((H, W), np.uint8)
    m[3 + i : 12 + i, 4 + 2 * i : 18 + i] = 255
    return m


def _pred(i: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed * 100 + i)
    noisy = _mask(i).astype(np.float64) * 0.7 + rng.uniform(0, 90, (H, W))
    return noisy.clip(0, 255).astype(np.uint8)


def _write(folder: Path, images: dict[str, np.ndarray]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, array in images.items():
        Image.fromarray(array).save(folder / f"{name}.png")
    return folder


def _error_lines(err: str) -> list[str]:
    lines = err.strip().splitlines()
    assert lines[0].startswith("error: ") and sum(line.startswith("error:") for line in lines) == 1, err
    assert "Traceback" not in err
    return lines


# ----------------------------------------------------------------------------------------------- 1. 0/1 masks


def test_zero_one_masks_read_as_binary_and_noted_once(tmp_path):
    gt = _write(tmp_path / "gt01", {f"im{i}": _mask(i) // 255 for i in range(3)})
    pred = _write(tmp_path / "pred", {f"im{i}": _mask(i) for i in range(3)})
    out = tmp_path / "r.json"
    run = _cli("foreground", "--pred", pred, "--gt", gt, "--json", out, "--workers", "0")
    assert run.returncode == 0, run.stderr
    notes = [line for line in run.stderr.splitlines() if "0/1" in line]
    assert len(notes) == 1 and notes[0].startswith("note:") and "3" in notes[0]
    results = json.loads(out.read_text())["results"]
    assert results["s_measure"] == pytest.approx(1.0) and results["mae"] == 0.0
    assert results["f_measure"]["max"] == pytest.approx(1.0)


def test_api_rejects_uint8_zero_one_target():
    from segmetrics_torch import ForegroundMeasures
    from segmetrics_torch.functional import mae, s_measure

    target = torch.from_numpy(np.stack([_mask(0) // 255]))
    preds = target * 255
    with pytest.raises(ValueError, match=r"bool.*0/255"):
        s_measure(preds, target)
    with pytest.raises(ValueError, match="only 0 and 1"):
        ForegroundMeasures().update(preds, target)
    # what the message says to do gives the right answer
    assert float(s_measure(preds, target.bool())[0]) == pytest.approx(1.0)
    assert float(mae(preds, target * 255)[0]) == 0.0
    # empty uint8 masks and 0/255 masks are fine; validate_args=False does not look at values
    s_measure(preds, torch.zeros_like(target))
    s_measure(preds, target, validate_args=False)


# -------------------------------------------------------------------- 2-4. vocabulary, pairing, pre-scan


def test_suffix_pairing_and_an_error_that_shows_names(tmp_path):
    gt = _write(tmp_path / "gt", {f"img_{i:04d}": _mask(i) for i in range(3)})
    pred = _write(tmp_path / "pred", {f"img_{i:04d}_sal": _pred(i) for i in range(3)})
    run = _cli("sod", "--pred", pred, "--gt", gt, "--workers", "0")
    assert run.returncode == 2
    (line,) = _error_lines(run.stderr)
    assert "img_0000_sal" in line and "img_0000" in line and "--pred-suffix" in line and "--pair-regex" in line
    per_image = tmp_path / "per_image.csv"
    run = _cli(
        "foreground",
        "--pred",
        pred,
        "--gt",
        gt,
        "--pred-suffix",
        "_sal",
        "--per-image-csv",
        per_image,
        "--workers",
        "0",
    )
    assert run.returncode == 0, run.stderr
    rows = list(csv.DictReader(per_image.open()))
    assert [row["image"] for row in rows] == ["img_0000", "img_0001", "img_0002"]


def test_one_run_lists_every_problem_then_skip_bad(tmp_path):
    n = 6
    gt = _write(tmp_path / "DS" / "GT", {f"im{i}": _mask(i) for i in range(n)})
    preds = {f"im{i}": _pred(i) for i in range(n)}
    del preds["im0"]  # missing
    preds["im2"] = np.zeros((H // 2, W // 2), np.uint8)  # another size
    pred = _write(tmp_path / "preds" / "Net" / "DS", preds)
    Image.fromarray(np.stack([_pred(3)] * 3, axis=-1)).save(pred / "im3.png")  # RGB
    (pred / "im4.png").write_bytes((pred / "im4.png").read_bytes()[:60])  # truncated: corrupt
    run = _cli("foreground", "--pred", pred, "--gt", gt, "--workers", "0")
    assert run.returncode == 2
    lines = _error_lines(run.stderr)
    text = "\n".join(lines)
    assert "--skip-bad" in lines[0] and "--allow-missing" in lines[0] and "--resize" in lines[0]
    for expected in (
        "without a prediction: 1",
        "im0",
        "corrupt file: 1",
        "im4",
        "size differs",
        "im2",
        "16x12",
        "32x24",
        "colour image",
        "im3",
    ):
        assert expected in text, text

    out = tmp_path / "r.json"
    run = _cli("foreground", "--pred", pred, "--gt", gt, "--skip-bad", "--json", out, "--workers", "0")
    assert run.returncode == 0, run.stderr
    report = json.loads(out.read_text())
    assert report["num_images"] == 3 and report["name"] == "Net" and report["dataset"] == "DS"
    # the missing prediction is left out as well: every left-out image is in "skipped" (docs/evaluate.md)
    assert {(s["image"], s["problem"]) for s in report["skipped"]} == {
        ("im4", "unreadable"),
        ("im2", "size"),
        ("im0", "missing"),
    }
    assert sorted(report["results"]["per_image"]) == ["im1", "im3", "im5"]
    assert report["missing_predictions"] == ["im0"]


def test_same_flags_in_both_forms_and_a_config_without_families(tmp_path):
    gt = _write(tmp_path / "ECSSD" / "GT", {f"im{i}": _mask(i) for i in range(3)})
    preds = {f"im{i}": _pred(i) for i in range(3)}
    preds["im1"] = np.asarray(Image.fromarray(preds["im1"]).resize((W // 2, H // 2)))
    pred = _write(tmp_path / "res" / "Net" / "ECSSD", preds)
    single = _cli("foreground", "--pred", pred, "--gt", gt, "--resize", "--skip-missing", "--workers", "0")
    assert single.returncode == 0, single.stderr
    config = tmp_path / "eval.yaml"
    config.write_text(
        "datasets: {ECSSD: ECSSD/GT}\nmethods: {Net: 'res/Net/{dataset}'}\nresize: true\nfigures: false\n"
    )
    report = _cli("--config", config, "--allow-missing", "--no-progress")
    assert report.returncode == 0, report.stderr
    out = tmp_path / "segmetrics-report" / "results.json"
    data = json.loads(out.read_text())
    assert list(data["results"]["ECSSD"]) == ["foreground"]  # foreground by default, stored under its key `sod`
    # --family foreground is the family's name in the single-dataset report form
    run = _cli(
        "--gt",
        gt,
        "--pred",
        pred,
        "--family",
        "foreground",
        "--resize",
        "--output",
        tmp_path / "o",
        "--figures",
        "none",
        "--no-progress",
    )
    assert run.returncode == 0, run.stderr
    data = json.loads((tmp_path / "o" / "results.json").read_text())
    assert list(data["results"]) == ["ECSSD"] and list(data["results"]["ECSSD"]["foreground"]) == ["Net"]


# ------------------------------------------------------------------------------------------------ 5. names


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("data/COD10K-v3/Test/GT_Object", "COD10K"),
        ("data/DUTS-TE/DUTS-TE-Mask", "DUTS-TE"),
        ("data/ECSSD/GT", "ECSSD"),
        ("BSR/BSDS500/data/groundTruth/test", "BSDS500"),
        ("groundTruth/test", "BSDS500"),
    ],
)
def test_dataset_names_from_layouts(tmp_path, path, name):
    assert dataset_name(tmp_path / "x" / path if not path.startswith("groundTruth") else Path("/") / path) == name


def test_method_names_from_layouts(tmp_path):
    assert method_name(tmp_path / "preds" / "MyNet" / "DUTS-TE", "DUTS-TE") == "MyNet"
    assert method_name(tmp_path / "results" / "MyNet" / "COD10K" / "Test", "COD10K") == "MyNet"
    assert method_name(tmp_path / "MyNet", "ECSSD") == "MyNet"


# ---------------------------------------------------------------------------------- 6-8. reports, per image


def _two_dataset_config(root: Path, datasets: list[str], figures: str) -> Path:
    for d, dataset in enumerate(("DS-A", "DS-B")):
        _write(root / dataset / "GT", {f"im{i}": _mask(i) for i in range(4)})
        for m, method in enumerate(("Net1", "Net2")):
            preds = {f"im{i}": _pred(i, seed=m + 2 * d) for i in range(4)}
            if (dataset, method) == ("DS-B", "Net2"):
                del preds["im3"]
            _write(root / "preds" / method / dataset, preds)
    config = root / "eval.yaml"
    config.write_text(
        "datasets: {" + ", ".join(f"{d}: {d}/GT" for d in datasets) + "}\n"
        "methods: {Net1: 'preds/Net1/{dataset}', Net2: 'preds/Net2/{dataset}'}\n"
        f"figures: {figures}\nallow_missing: true\n"
    )
    return config


def test_report_is_a_set_and_subsets_are_said(tmp_path):
    config = _two_dataset_config(tmp_path, ["DS-A", "DS-B"], "[png]")
    run = _cli("--config", config, "--no-progress")
    assert run.returncode == 0, run.stderr
    report = tmp_path / "segmetrics-report"
    assert "DS-B: foreground maps, 3 of 4 image(s), the ones all 2 methods have" in run.stdout
    assert (report / "csv" / "DS-B_foreground.csv").is_file() and list((report / "figures").glob("DS-B_*.png"))
    per_image = list(csv.DictReader((report / "csv" / "DS-B_foreground_per_image.csv").open()))
    assert {row["image"] for row in per_image} == {"im0", "im1", "im2"}

    # each method on its own images: an images column in every table
    run = _cli("--config", config, "--no-progress", "--compare-on", "each", "--figures", "none")
    assert run.returncode == 0, run.stderr
    assert "each method on its own images (3 / 4 of 4" in run.stdout and "images" in run.stdout
    assert "| images" in (report / "tables.md").read_text()
    assert not (report / "figures").exists()  # --figures none removed the previous report's figures

    # a dataset dropped from the configuration: its files go too
    config = _two_dataset_config(tmp_path, ["DS-A"], "false")
    run = _cli("--config", config, "--no-progress")
    assert run.returncode == 0, run.stderr
    assert not (report / "csv" / "DS-B_foreground.csv").exists() and (report / "csv" / "DS-A_foreground.csv").is_file()
    assert "DS-B" not in (report / "tables.md").read_text()

    # a report of the earlier naming (family key `sod` in file names): its files are replaced, not left beside
    manifest = report / ".segmetrics-manifest.json"
    listed = json.loads(manifest.read_text())
    (report / "csv" / "DS-A_foreground.csv").rename(report / "csv" / "DS-A_sod.csv")
    listed["files"] = [f.replace("DS-A_foreground.csv", "DS-A_sod.csv") for f in listed["files"]]
    manifest.write_text(json.dumps(listed))
    run = _cli("--config", config, "--no-progress")
    assert run.returncode == 0, run.stderr
    assert not (report / "csv" / "DS-A_sod.csv").exists() and (report / "csv" / "DS-A_foreground.csv").is_file()


def test_per_image_csv_rows_equal_the_functional_values(tmp_path):
    from segmetrics_torch.functional import (
        e_measure,
        f_measure,
        mae,
        s_measure,
        weighted_f_measure,
    )

    gt = _write(tmp_path / "DS" / "GT", {f"im{i}": _mask(i) for i in range(4)})
    pred = _write(tmp_path / "Net" / "DS", {f"im{i}": _pred(i) for i in range(4)})
    per_image, summary = tmp_path / "img.csv", tmp_path / "sum.csv"
    run = _cli(
        "foreground",
        "--pred",
        pred,
        "--gt",
        gt,
        "--per-image-csv",
        per_image,
        "--csv",
        summary,
        "--batch-size",
        "3",
        "--workers",
        "0",
    )
    assert run.returncode == 0, run.stderr
    rows = list(csv.DictReader(per_image.open()))
    assert len(rows) == 4 and all(row["method"] == "Net" and row["dataset"] == "DS" for row in rows)
    for row in rows:
        i = int(row["image"][2:])
        p = torch.from_numpy(_pred(i))[None]
        g = torch.from_numpy(_mask(i))[None]
        expected = {
            "mae": mae(p, g),
            "s_measure": s_measure(p, g),
            "weighted_f_measure": weighted_f_measure(p, g),
            "f_measure/max": f_measure(p, g)["curve"].max(),
            "f_measure/adaptive": f_measure(p, g)["adaptive"],
            "e_measure/mean": e_measure(p, g)["curve"].mean(),
        }
        for key, value in expected.items():
            assert float(row[key]) == pytest.approx(float(value), abs=1e-12), key
    # --csv: a second run of another method adds a row, a re-run of the same method replaces its row
    other = _write(tmp_path / "Other" / "DS", {f"im{i}": _pred(i, seed=5) for i in range(4)})
    assert _cli("foreground", "--pred", other, "--gt", gt, "--csv", summary, "--workers", "0").returncode == 0
    assert _cli("foreground", "--pred", pred, "--gt", gt, "--csv", summary, "--workers", "0").returncode == 0
    assert [row["method"] for row in csv.DictReader(summary.open())] == ["Other", "Net"]


# ------------------------------------------------------------------------------------------- 9. combined table


def test_combined_table_xlsx_latex_and_grid_figure(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    config = _two_dataset_config(tmp_path, ["DS-A", "DS-B"], "[png]")
    with config.open("a") as f:
        f.write("method_order: [Net2, Net1]\ncolors: {Net1: black}\nhighlight: Net1\ncompare_on: each\n")
    run = _cli("--config", config, "--no-progress", "--xlsx")
    assert run.returncode == 0, run.stderr
    report = tmp_path / "segmetrics-report"
    results = json.loads((report / "results.json").read_text())["results"]

    book = openpyxl.load_workbook(report / "combined.xlsx")
    sheet = book["foreground"]
    # compare_on: each, and Net2 lacks an image of DS-B: every dataset gets an images column
    assert sheet.cell(row=1, column=2).value == "DS-A" and sheet.cell(row=2, column=2).value == "images"
    assert sheet.cell(row=2, column=3).value == "MAE ↓"
    assert [sheet.cell(row=r, column=1).value for r in (3, 4)] == ["Net2", "Net1"]  # method_order
    headers = [sheet.cell(row=2, column=c).value for c in range(2, sheet.max_column + 1)]
    datasets = [sheet.cell(row=1, column=c).value for c in range(2, sheet.max_column + 1)]
    k = headers.index("S-measure ↑")
    assert datasets.count("DS-B") == 1 and headers.count("S-measure ↑") == 2  # dataset headers are merged cells
    for r, method in ((3, "Net2"), (4, "Net1")):
        assert sheet.cell(row=r, column=2 + k).value == pytest.approx(
            results["DS-A"]["foreground"][method]["results"]["s_measure"]
        )
        mae_b = results["DS-B"]["foreground"][method]["results"]["mae"]
        assert sheet.cell(row=r, column=3 + len(headers) // 2).value == pytest.approx(mae_b)
        count_b = results["DS-B"]["foreground"][method]["num_images"]
        assert sheet.cell(row=r, column=2 + len(headers) // 2).value == count_b

    latex = (report / "combined.tex").read_text()
    assert "\\multicolumn{12}{c}{DS-A}" in latex and "\\first{" in latex and "\\second{" in latex
    assert "\\providecommand{\\first}" in latex
    markdown = (report / "combined.md").read_text()
    assert markdown.count("| Net2 |") == 1 and "**" in markdown
    rows = list(csv.reader((report / "csv" / "combined_foreground.csv").open()))
    assert rows[0] == ["method", "dataset", "measure", "value"]  # one header row: pandas reads it as it is
    assert rows[1][:3] == ["Net2", "DS-A", "num_images"] and rows[2][:3] == ["Net2", "DS-A", "mae"]
    assert list(dict.fromkeys(r[0] for r in rows[1:])) == ["Net2", "Net1"]
    mae_a = results["DS-A"]["foreground"]["Net2"]["results"]["mae"]
    assert float(rows[2][3]) == pytest.approx(mae_a, rel=1e-15)
    with Image.open(report / "figures" / "grid_foreground_pr.png") as image:
        assert image.width > 1.5 * image.height  # two panels side by side
    assert (report / "figures" / "grid_foreground_fmeasure.png").is_file()


def test_xlsx_without_openpyxl_is_a_friendly_error(tmp_path):
    config = _two_dataset_config(tmp_path, ["DS-A"], "false")
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "openpyxl.py").write_text("raise ImportError('blocked for the test')\n")
    env_path = f"{blocker}{os.pathsep}{ROOT}"
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import importlib.util, sys; sys.modules['openpyxl'] = None; "
            "import importlib.util as u; "
            "u.find_spec = (lambda f: (lambda n, *a: None if n == 'openpyxl' else f(n, *a)))"
            "(u.find_spec); from segmetrics_torch.app.cli import main; "
            f"sys.exit(main(['evaluate', '--config', {str(config)!r}, '--xlsx', '--no-progress']))",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": env_path},
        timeout=300,
    )
    assert run.returncode == 2, run.stderr
    assert "error: --xlsx needs openpyxl: pip install 'segmetrics-torch[xlsx]'" in run.stderr


# ------------------------------------------------------------------------------------------------ 11. measures


def test_measures_choose_the_columns_in_both_forms(tmp_path):
    from segmetrics_torch import ForegroundMeasures

    gt = _write(tmp_path / "DS" / "GT", {f"im{i}": _mask(i) for i in range(3)})
    pred = _write(tmp_path / "Net" / "DS", {f"im{i}": _pred(i) for i in range(3)})
    out = tmp_path / "r.json"
    run = _cli(
        "foreground", "--pred", pred, "--gt", gt, "--measures", "s,MAE,simae,hce", "--json", out, "--workers", "0"
    )
    assert run.returncode == 0, run.stderr
    header = run.stdout.splitlines()[0].split()
    assert header == ["method", "S-measure", "MAE", "siMAE", "HCE"]
    results = json.loads(out.read_text())["results"]
    metric = ForegroundMeasures(include=["size_invariant_mae", "human_correction_effort"])
    metric.update(
        torch.from_numpy(np.stack([_pred(i) for i in range(3)])),
        torch.from_numpy(np.stack([_mask(i) for i in range(3)])),
    )
    expected = metric.compute()
    for key in ("size_invariant_mae", "human_correction_effort", "s_measure"):
        assert results[key] == pytest.approx(float(expected[key]), abs=1e-12)
    # the measures with one value per image are in the per-image rows too
    from segmetrics_torch.functional import human_correction_effort, size_invariant_mae

    preds3 = torch.from_numpy(np.stack([_pred(i) for i in range(3)]))
    masks3 = torch.from_numpy(np.stack([_mask(i) for i in range(3)]))
    for key, fn in (("size_invariant_mae", size_invariant_mae), ("human_correction_effort", human_correction_effort)):
        per = [results["per_image"][f"im{i}"][key] for i in range(3)]
        np.testing.assert_allclose(per, fn(preds3, masks3).numpy(), rtol=0, atol=1e-12)
    bad = _cli("foreground", "--pred", pred, "--gt", gt, "--measures", "s,nope")
    assert bad.returncode == 2 and "--measures" in bad.stderr and "simae" in bad.stderr
    # an image a measure has no value for (the context measure of a GT on one slanted line; PySOD: LinAlgError): one
    # error naming the image, no traceback (it was exit 1 with a traceback), in both forms
    line = np.zeros(_pred(0).shape, np.uint8)
    line[np.arange(3, 20), np.arange(3, 20)] = 255
    _write(tmp_path / "DS" / "GT", {"im9": line})
    _write(tmp_path / "Net" / "DS", {"im9": _pred(0)})
    for args in (
        ("foreground", "--pred", pred, "--gt", gt, "--measures", "mae,cm", "--workers", "0"),
        (
            "--gt",
            gt,
            "--pred",
            f"Net={pred}",
            "--measures",
            "mae,cm",
            "--figures",
            "none",
            "--output",
            tmp_path / "rep",
            "--no-progress",
        ),
    ):
        bad = _cli(*args)
        assert bad.returncode == 2 and "Traceback" not in bad.stderr, bad.stderr
        assert bad.stderr.startswith("error: ") and "im9" in bad.stderr and "slanted line" in bad.stderr, bad.stderr
    for stem in ("im9",):
        (tmp_path / "DS" / "GT" / f"{stem}.png").unlink()
        (tmp_path / "Net" / "DS" / f"{stem}.png").unlink()

    config = tmp_path / "eval.yaml"
    config.write_text(
        "datasets: {DS: DS/GT}\nmethods: {Net: 'Net/{dataset}'}\nfigures: false\n"
        "options: {foreground: {measures: [maxf, simaxf, mae]}}\n"
    )
    run = _cli("--config", config, "--no-progress")
    assert run.returncode == 0, run.stderr
    table = (tmp_path / "segmetrics-report" / "tables.md").read_text()
    assert "maxF ↑ | siMaxF ↑ | MAE ↓" in table and "S-measure" not in table

    # PySODEvalToolkit's spellings in the file name the same measures (the report ran the raw names and failed with
    # a KeyError once)
    for name, measures in (("canonical", "[maxe, s, mae, simaxf]"), ("pysod", "[maxEm, Smeasure, MAE, siMaxF]")):
        config.write_text(
            f"datasets: {{DS: DS/GT}}\nmethods: {{Net: 'Net/{{dataset}}'}}\nfigures: false\n"
            f"output: {name}\noptions: {{foreground: {{measures: {measures}}}}}\n"
        )
        run = _cli("--config", config, "--no-progress")
        assert run.returncode == 0, run.stderr
    assert (tmp_path / "pysod" / "tables.md").read_text() == (tmp_path / "canonical" / "tables.md").read_text()


def test_report_form_json_and_csv_flags_mean_what_they_mean_in_the_single_form(tmp_path):
    gt = _write(tmp_path / "DS" / "GT", {f"im{i}": _mask(i) for i in range(3)})
    pred = _write(tmp_path / "Net" / "DS", {f"im{i}": _pred(i) for i in range(3)})
    single, report = tmp_path / "single.csv", tmp_path / "report.csv"
    assert _cli("foreground", "--pred", pred, "--gt", gt, "--csv", single, "--workers", "0").returncode == 0
    run = _cli(
        "--gt",
        gt,
        "--pred",
        pred,
        "--csv",
        report,
        "--json",
        tmp_path / "r.json",
        "--figures",
        "none",
        "--output",
        tmp_path / "out",
        "--no-progress",
    )
    assert run.returncode == 0, run.stderr
    assert single.read_text() == report.read_text()
    assert "DS" in json.loads((tmp_path / "r.json").read_text())["results"]


def test_method_name_stays_below_the_shared_folder(tmp_path):
    # exp/pred beside exp/gt: nothing above `exp` names the method; the folder's own name does
    assert method_name(tmp_path / "exp" / "pred", "exp", tmp_path / "exp" / "gt") == "pred"
    assert method_name(tmp_path / "preds" / "MyNet" / "DUTS-TE", "DUTS-TE", tmp_path / "DUTS-TE" / "GT") == "MyNet"


def test_pair_regex_and_prefixes(tmp_path):
    gt = _write(tmp_path / "gt", {f"gt_{i:04d}": _mask(i) for i in range(3)})
    pred = _write(tmp_path / "pred", {f"MyNet_{i:04d}_sal": _pred(i) for i in range(3)})
    out = tmp_path / "r.json"
    run = _cli(
        "foreground", "--pred", pred, "--gt", gt, "--pair-regex", r"(?P<id>\d{4})", "--json", out, "--workers", "0"
    )
    assert run.returncode == 0, run.stderr
    assert sorted(json.loads(out.read_text())["results"]["per_image"]) == ["gt_0000", "gt_0001", "gt_0002"]
    run = _cli(
        "foreground",
        "--pred",
        pred,
        "--gt",
        gt,
        "--pred-prefix",
        "MyNet_",
        "--pred-suffix",
        "_sal",
        "--gt-prefix",
        "gt_",
        "--workers",
        "0",
    )
    assert run.returncode == 0, run.stderr
    bad = _cli("foreground", "--pred", pred, "--gt", gt, "--pair-regex", "(")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --pair-regex:")
