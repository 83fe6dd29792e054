"""``segmetrics evaluate --config``: many methods x datasets against the library API, cache, bad input, outputs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import torch
from PIL import Image

from segmetrics_torch import ForegroundMeasures, HierarchyMeasures, PartitionMeasures
from segmetrics_torch.app import evaluation, report_run
from segmetrics_torch.app.cli import main
from segmetrics_torch.datasets.decoding import DecodeTask, decode_pairs
from segmetrics_torch.functional.boundary import boundary_pr_counts, summarize_counts
from segmetrics_torch.io import read_gray, read_gray_map, resize_linear
from segmetrics_torch.meta import grid_oversegmentation, quadtree_ucm, random_hierarchy_ucm
from segmetrics_torch.reports.tables import (
    SOD_COLUMNS,
    best_rows,
    format_latex_table,
    format_markdown_table,
    to_jsonable,
)
from segmetrics_torch.synthetic import make_boundary_dataset, write_foreground_dataset

METHODS = ("good", "noisy")


def _leaves(tree, prefix=""):
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from _leaves(value, f"{prefix}{key}/")
        else:
            yield f"{prefix}{key}", value


def _assert_equal_leaves(got: dict, expected: dict) -> None:
    if "per_image" in got and "per_image" not in expected:  # foreground records carry per-image scores (issue 14)
        got = {key: value for key, value in got.items() if key != "per_image"}
    got_leaves = dict(_leaves(got))
    expected_leaves = dict(_leaves(expected))
    assert set(got_leaves) == set(expected_leaves)
    for key, value in expected_leaves.items():
        g = np.asarray(got_leaves[key], dtype=np.float64)  # None (NaN in JSON) -> nan
        np.testing.assert_allclose(g, np.asarray(value, dtype=np.float64), rtol=0, atol=1e-12, err_msg=key)


@pytest.fixture(scope="module")
def sod_root(tmp_path_factory) -> Path:
    """Two synthetic foreground datasets (ECSSD-like names), two methods each."""
    root = tmp_path_factory.mktemp("sod")
    write_foreground_dataset(root / "DS-A", n=5, size=(48, 64), seed=1, methods=METHODS)
    write_foreground_dataset(root / "DS_B", n=4, size=(40, 56), seed=2, methods=METHODS)
    return root


def _sod_config(root: Path, **extra) -> Path:
    lines = [
        "output: report",
        "families: [sod]",
        "datasets:",
        "  DS-A: DS-A/gt",
        "  DS_B: {gt: DS_B/gt}",
        "methods:",
        "  Good Net: '{dataset}/good'",
        "  Noisy: {DS-A: DS-A/noisy, DS_B: DS_B/noisy}",
    ]
    lines += [f"{key}: {json.dumps(value)}" for key, value in extra.items()]
    path = root / "eval.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["evaluate", "--no-progress", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _error_line(err: str) -> str:
    """The error: one ``error:`` line, then (foreground pre-scan) the indented listing of every problem."""
    lines = err.strip().splitlines()
    assert lines[0].startswith("error: ") and sum(line.startswith("error:") for line in lines) == 1, err
    assert all(not line.startswith(("Traceback", "warning")) for line in lines[1:]), err
    return "\n".join(lines)


def _direct_sod(pred_dir: Path, gt_dir: Path) -> dict:
    stems = sorted(p.stem for p in gt_dir.glob("*.png"))
    metric = ForegroundMeasures()
    metric.update(
        [torch.from_numpy(read_gray(pred_dir / f"{s}.png")) for s in stems],
        [torch.from_numpy(read_gray(gt_dir / f"{s}.png")) for s in stems],
    )
    return to_jsonable(metric.compute())


# ---------------------------------------------------------------------------------------------- end to end


def test_two_methods_two_datasets_end_to_end(sod_root, tmp_path, capsys):
    root = tmp_path / "run"
    shutil.copytree(sod_root, root)
    status, out, err = _run(capsys, "--config", str(_sod_config(root)), "--workers", "2")
    assert status == 0, err
    report = json.loads((root / "report" / "results.json").read_text())
    assert list(report["results"]) == ["DS-A", "DS_B"]
    for dataset in ("DS-A", "DS_B"):
        records = report["results"][dataset]["foreground"]
        assert list(records) == ["Good Net", "Noisy"]
        for method, folder in (("Good Net", "good"), ("Noisy", "noisy")):
            record = records[method]
            assert record["num_images"] == (5 if dataset == "DS-A" else 4)
            _assert_equal_leaves(record["results"], _direct_sod(root / dataset / folder, root / dataset / "gt"))

    # tables: every method and measure; the best of each column marked (Good Net is better everywhere here)
    markdown = (root / "report" / "tables.md").read_text()
    latex = (root / "report" / "tables.tex").read_text()
    for _, header in SOD_COLUMNS:
        assert header in markdown and header in latex and header in out
    for text in (markdown, latex, out):
        assert text.count("Good Net") >= 2 and text.count("Noisy") >= 2
    assert markdown.count("| Good Net | **") == 2 and r"Good Net & \textbf{" in latex
    mae = report["results"]["DS-A"]["foreground"]["Good Net"]["results"]["mae"]
    assert f"**{mae:.3f}**" in markdown  # lower is better: the smaller MAE is the bold one (3 decimals: digits)
    csv_lines = (root / "report" / "csv" / "DS-A_foreground.csv").read_text().splitlines()
    assert csv_lines[0].startswith("method,num_images,mae,") and [line.split(",")[0] for line in csv_lines[1:]] == [
        "Good Net",
        "Noisy",
    ]
    assert float(csv_lines[1].split(",")[2]) == mae  # full precision

    # figures: non-empty PNG (decodable, of a plausible size) and PDF for each curve kind and dataset
    for dataset in ("DS-A", "DS_B"):
        for kind in ("pr", "fmeasure", "emeasure"):
            png = root / "report" / "figures" / f"{dataset}_foreground_{kind}.png"
            with Image.open(png) as image:
                assert image.format == "PNG" and image.width > 300 and image.height > 300
                assert np.asarray(image.convert("L")).std() > 10  # not a blank canvas
            pdf = png.with_suffix(".pdf")
            assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 5000
    assert "Evaluated 4 (dataset, family, method) combination(s)" in out and "4 computed" in out


def test_single_dataset_flags(sod_root, tmp_path, capsys):
    out_dir = tmp_path / "rep"
    data = sod_root / "DS_B"
    status, _out, err = _run(
        capsys,
        "--gt",
        str(data / "gt"),
        "--pred",
        f"A={data / 'good'}",
        "--pred",
        str(data / "noisy"),
        "--dataset",
        "B",
        "--output",
        str(out_dir),
        "--no-cache",
        "--figures",
        "none",
        "--workers",
        "0",
    )
    assert status == 0, err
    report = json.loads((out_dir / "results.json").read_text())
    assert list(report["results"]["B"]["foreground"]) == ["A", "noisy"]
    _assert_equal_leaves(report["results"]["B"]["foreground"]["A"]["results"], _direct_sod(data / "good", data / "gt"))
    assert not (out_dir / "figures").exists() and not (out_dir / "cache").exists()


@pytest.fixture(scope="module")
def bsds_root(tmp_path_factory) -> Path:
    """A BSDS-like dataset: groundTruth .mat (2 annotators), per method soft boundary PNGs and ucm2 .mat files."""
    root = tmp_path_factory.mktemp("bsds")
    data = make_boundary_dataset(n=3, size=(36, 52), n_annotators=2, seed=4)
    for folder in ("gt", "A/png", "A/ucm2", "B/png", "B/ucm2"):
        (root / folder).mkdir(parents=True)
    for i in range(3):
        stem = f"im{i}"
        cell = np.empty((1, 2), dtype=object)
        for a in range(2):
            cell[0, a] = {
                "Segmentation": data.segmentations[i, a].astype(np.uint16) + 1,
                "Boundaries": data.boundaries[i, a].astype(np.uint8),
            }
        scipy.io.savemat(root / "gt" / f"{stem}.mat", {"groundTruth": cell})
        soft = np.round(data.preds[i] * 255).astype(np.uint8)
        Image.fromarray(soft).save(root / "A" / "png" / f"{stem}.png")
        Image.fromarray(np.roll(soft, 2, axis=1)).save(root / "B" / "png" / f"{stem}.png")
        scipy.io.savemat(root / "A" / "ucm2" / f"{stem}.mat", {"ucm2": quadtree_ucm(36, 52).numpy()})
        ucm = random_hierarchy_ucm(grid_oversegmentation(36, 52, cells=6), seed=i).numpy()
        scipy.io.savemat(root / "B" / "ucm2" / f"{stem}.mat", {"ucm2": ucm})
    config = {
        "output": "report",
        "datasets": {"toy": {"gt": "gt", "families": ["boundary", "partition"]}},
        "methods": {m: {"toy": {"boundary": f"{m}/png", "partition": f"{m}/ucm2"}} for m in ("A", "B")},
        "options": {
            "boundary": {"thresholds": 9, "max_dist": 2},
            "partition": {"measures": ["fop", "voi"], "thresholds": 7},
        },
        "figures": ["png"],
    }
    (root / "eval.json").write_text(json.dumps(config))
    return root


def test_boundary_and_partition_families(bsds_root, tmp_path, capsys):
    root = tmp_path / "run"
    shutil.copytree(bsds_root, root)
    status, _out, err = _run(capsys, "--config", str(root / "eval.json"))
    assert status == 0, err
    report = json.loads((root / "report" / "results.json").read_text())["results"]["toy"]
    stems = ["im0", "im1", "im2"]
    from segmetrics_torch.io import read_bsds_ground_truth

    gts = [read_bsds_ground_truth(root / "gt" / f"{s}.mat") for s in stems]
    for method in ("A", "B"):
        preds = [torch.from_numpy(read_gray(root / method / "png" / f"{s}.png")) for s in stems]
        counts = boundary_pr_counts(preds, [torch.from_numpy(g.boundaries) for g in gts], thresholds=9, max_dist=2)
        expected = to_jsonable(summarize_counts(counts))
        got = report["boundary"][method]["results"]
        per_image = got.pop("per_image")
        assert list(per_image) == stems
        expected_per = expected.pop("per_image")
        _assert_equal_leaves(got, expected)
        assert [per_image[s]["f"] for s in stems] == pytest.approx(expected_per["f"], abs=1e-12)

        ucm2 = [torch.from_numpy(scipy.io.loadmat(root / method / "ucm2" / f"{s}.mat")["ucm2"]) for s in stems]
        metric = HierarchyMeasures(7, measures=["fop", "voi"])
        metric.update(ucm2, [torch.from_numpy(g.segmentations) for g in gts])
        _assert_equal_leaves(report["partition"][method]["results"], to_jsonable(metric.compute()))
    tables = (root / "report" / "tables.md").read_text()
    for header in ("ODS", "OIS", "AP", "R50", "Fop ODS", "Fop AP", "VoI ODS", "Cov Best"):
        assert header in tables
    for name in ("toy_boundary_pr", "toy_boundary_fmeasure", "toy_partition_fop_pr"):
        assert (root / "report" / "figures" / f"{name}.png").stat().st_size > 10_000
    assert not (root / "report" / "figures" / "toy_boundary_pr.pdf").exists()  # figures: [png]


def test_flat_partitions_and_label_gt(tmp_path, capsys):
    """Label-map predictions against label-image ground truth: the PartitionMeasures values, VoI lower is better."""
    rng = np.random.default_rng(0)
    for folder in ("gt", "m1", "m2"):
        (tmp_path / folder).mkdir()
    preds: dict[str, list] = {"m1": [], "m2": []}
    gts = []
    for i in range(3):
        gt = np.zeros((30, 40), np.uint8)
        gt[5 : 20 + i, 8:30] = 1
        gt[22:, :] = 2
        gts.append(gt)
        Image.fromarray(gt).save(tmp_path / "gt" / f"{i}.png")
        for m, shift in (("m1", 1), ("m2", 4)):
            pred = (np.roll(gt, shift, axis=1) * 10 + rng.integers(0, 2)).astype(np.uint8)
            preds[m].append(pred)
            Image.fromarray(pred).save(tmp_path / m / f"{i}.png")
    status, _out, err = _run(
        capsys,
        "--gt",
        str(tmp_path / "gt"),
        "--pred",
        str(tmp_path / "m1"),
        "--pred",
        str(tmp_path / "m2"),
        "--family",
        "partition",
        "--output",
        str(tmp_path / "rep"),
        "--figures",
        "none",
    )
    assert status == 0, err
    report = json.loads((tmp_path / "rep" / "results.json").read_text())["results"]
    (records,) = report.values()
    for m in ("m1", "m2"):
        metric = PartitionMeasures()
        metric.update(
            [torch.from_numpy(p.astype(np.int64)) for p in preds[m]],
            [torch.from_numpy(g.astype(np.int64))[None] for g in gts],
        )
        got = dict(records["partition"][m]["results"])
        assert set(got.pop("per_image")) == {"0", "1", "2"}
        _assert_equal_leaves(got, to_jsonable(metric.compute()))
    voi = {m: records["partition"][m]["results"]["voi"] for m in ("m1", "m2")}
    best = min(voi, key=voi.get)
    assert f"| {best} |" in (tmp_path / "rep" / "tables.md").read_text()
    row = next(
        line for line in (tmp_path / "rep" / "tables.md").read_text().splitlines() if line.startswith(f"| {best}")
    )
    assert f"**{voi[best]:.3f}**" in row


# ------------------------------------------------------------------------------------------------------ cache


def _without_timings(report: Path | bytes) -> dict:
    data = json.loads(report.read_bytes() if isinstance(report, Path) else report)
    for families in data["results"].values():
        for records in families.values():
            for record in records.values():
                record.pop("elapsed_s")
    return data


def test_rerun_uses_the_cache_and_rebuilds_corrupt_entries(sod_root, tmp_path, capsys, monkeypatch):
    root = tmp_path / "run"
    shutil.copytree(sod_root, root)
    config = str(_sod_config(root, figures=False))
    assert _run(capsys, "--config", config)[0] == 0
    first = (root / "report" / "results.json").read_bytes()

    calls = []
    real = evaluation.evaluate_foreground

    def counting(work):
        calls.append(len(work.pairs))
        return real(work)

    # the runner imports the family's evaluator by name when a job runs: the replacement is the one called
    monkeypatch.setattr(evaluation, "evaluate_foreground", counting)
    status, out, _ = _run(capsys, "--config", config)
    assert status == 0 and calls == [] and "0 computed (4 from the cache" in out
    assert (root / "report" / "results.json").read_bytes() == first  # same report from the cache

    entries = sorted((root / "report" / "cache").glob("*.json"))
    assert len(entries) == 4
    entries[0].write_bytes(entries[0].read_bytes()[:200])  # partial write
    record = json.loads(entries[1].read_text())
    record["record"]["results"]["mae"] += 0.01  # a changed number: the checksum no longer matches
    entries[1].write_text(json.dumps(record))
    status, out, err = _run(capsys, "--config", config)
    assert status == 0 and len(calls) == 2 and "2 computed" in out
    assert err.count("corrupt or partial") == 2 and "checksum" in err
    assert _without_timings(root / "report" / "results.json") == _without_timings(first)

    # a changed file or setting is new work, only for the combinations it concerns
    calls.clear()
    image = root / "DS_B" / "noisy" / "img_001.png"
    Image.fromarray(255 - read_gray(image)).save(image)
    assert _run(capsys, "--config", config)[0] == 0 and calls == [4]
    calls.clear()
    assert _run(capsys, "--config", config, "--cache-check", "content")[0] == 0 and len(calls) == 4
    calls.clear()
    assert _run(capsys, "--config", config, "--cache-check", "content", "--batch-size", "3")[0] == 0 and calls == []
    assert not list((root / "report" / "cache").glob(".*.tmp"))  # no temporary file left behind


# ------------------------------------------------------------------------------------------------- bad input


def _report_files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "cache" not in p.parts)


@pytest.mark.parametrize("problem", ["unreadable", "empty", "names", "size"])
def test_bad_input_one_message_nothing_written(sod_root, tmp_path, capsys, problem):
    root = tmp_path / "run"
    shutil.copytree(sod_root, root)
    noisy = root / "DS_B" / "noisy"
    if problem == "unreadable":
        (noisy / "img_002.png").write_bytes(b"\x89PNG not really")
        expected = ["img_002.png"]
    elif problem == "empty":
        shutil.rmtree(noisy)
        noisy.mkdir()
        expected = ["holds no image", "noisy"]
    elif problem == "names":
        (noisy / "img_001.png").rename(noisy / "other.png")
        expected = ["img_001", "other", "--allow-missing"]
    else:
        Image.fromarray(np.zeros((20, 30), np.uint8)).save(noisy / "img_003.png")
        expected = ["img_003", "30x20", "56x40", "--resize"]
    status, _out, err = _run(capsys, "--config", str(_sod_config(root)))
    line = _error_line(err)
    assert status == 2 and all(text in line for text in expected), line
    assert "DS_B / foreground / Noisy" in line or problem == "unreadable"
    assert _report_files(root / "report") == [] if (root / "report").exists() else True
    assert "Traceback" not in err


def test_skip_missing_and_resize(sod_root, tmp_path, capsys):
    root = tmp_path / "run"
    shutil.copytree(sod_root, root)
    noisy = root / "DS_B" / "noisy"
    (noisy / "img_001.png").unlink()
    shutil.rmtree(root / "DS-A" / "noisy")
    status, out, err = _run(capsys, "--config", str(_sod_config(root, figures=False)), "--skip-missing")
    assert status == 0, err
    assert "img_001" in err and "DS-A / foreground / Noisy" in err and "Not evaluated: DS-A / foreground / Noisy" in out
    report = json.loads((root / "report" / "results.json").read_text())["results"]
    assert list(report["DS-A"]["foreground"]) == ["Good Net"]
    assert report["DS_B"]["foreground"]["Noisy"]["num_images"] == 3
    assert report["DS_B"]["foreground"]["Noisy"]["missing_predictions"] == ["img_001"]
    # issue 14: by default the methods of a dataset are compared on the images they all have
    assert report["DS_B"]["foreground"]["Good Net"]["num_images"] == 3
    assert report["DS_B"]["foreground"]["Good Net"]["compared_on"] == "common"

    # --resize: a half-size prediction is resized as cv2.resize(INTER_LINEAR) before the measures
    good = root / "DS_B" / "good"
    small = read_gray(good / "img_000.png")[::2, ::2]
    Image.fromarray(small).save(good / "img_000.png")
    status, _, err = _run(
        capsys, "--config", str(_sod_config(root, figures=False)), "--resize", "--skip-missing", "--compare-on", "each"
    )
    assert status == 0, err
    got = json.loads((root / "report" / "results.json").read_text())["results"]["DS_B"]["foreground"]["Good Net"]
    stems = [f"img_{i:03d}" for i in range(4)]  # the Good Net folder is complete
    preds = [read_gray(good / f"{s}.png") for s in stems]
    gts = [read_gray(root / "DS_B" / "gt" / f"{s}.png") for s in stems]
    preds[0] = resize_linear(preds[0], gts[0].shape)
    metric = ForegroundMeasures()
    metric.update([torch.from_numpy(p) for p in preds], [torch.from_numpy(g) for g in gts])
    _assert_equal_leaves(got["results"], to_jsonable(metric.compute()))
    assert got["settings"]["resize"] is True


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("families: [sod, depth]\ndatasets: {A: a}\nmethods: {m: x}\n", "families: expected one or a list of"),
        ("families: sod\ndatasets: {A: a}\nmethods: {m: x}\nworkerz: 2\n", "unknown key(s) workerz"),
        ("families: sod\ndatasets: {A: {gt: a}}\nmethods: {m: {B: x}}\n", "methods.m.B: no dataset of that name"),
        (
            "families: sod\ndatasets: {A: a}\nmethods: {m: x}\noptions: {boundary: {thresholds: 0}}\n",
            "options.boundary.thresholds: expected an integer from 1 to 100000",
        ),
        ("datasets: [A\n", "not valid YAML"),
        ("families: sod\ndatasets: {A: missing}\nmethods: {m: x}\n", "ground-truth folder"),
    ],
)
def test_config_errors_name_the_entry(tmp_path, capsys, text, message):
    path = tmp_path / "eval.yaml"
    path.write_text(text)
    status, _, err = _run(capsys, "--config", str(path))
    assert status == 2 and message in _error_line(err)
    assert str(path) in err or "ground-truth" in message


def test_config_with_several_mistakes_names_them_all(tmp_path, capsys):
    path = tmp_path / "eval.yaml"
    path.write_text(
        "families: sod\ndatasets: {A: {gt: a, gt_labels: 3}, B: b}\nmethods: {m: x, n: {C: y}}\n"
        "options: {boundary: {thresholds: 0}, sod: {measures: [mae, nope]}}\nbatch_size: 0\nhighlight: q\n"
    )
    status, _, err = _run(capsys, "--config", str(path))
    assert status == 2 and "Traceback" not in err
    first = _error_line(err)
    assert "6 mistakes in" in first and str(path) in first
    for message in (
        "datasets.A.gt_labels: expected true or false",
        "methods.n.C: no dataset of that name",
        "options.boundary.thresholds: expected an integer from 1 to 100000",
        "options.foreground.measures",
        "batch_size: expected a positive integer",
        "highlight: expected a method name",
    ):
        assert message in err
    # every bad option of one family, the device, the pairing pattern and the colours too (these were found only
    # when used: a matplotlib traceback after the evaluation, or an error naming no entry)
    path.write_text(
        "families: sod\ndatasets: {A: a}\nmethods: {m: x}\noptions: {boundary: {thresholds: 0, thin: maybe}}\n"
        "device: tpu\npair_regex: '('\ncolors: {m: notacolour, z: red}\n"
    )
    status, _, err = _run(capsys, "--config", str(path))
    assert status == 2 and "Traceback" not in err
    assert "6 mistakes in" in _error_line(err), err
    for message in (
        "options.boundary.thresholds: expected an integer from 1 to 100000",
        "options.boundary.thin: expected true or false",
        "device: expected cpu, cuda, cuda:N or auto",
        "pair_regex: not a regular expression",
        "colors: no method named z",
        "colors: not a matplotlib colour: m: 'notacolour'",
    ):
        assert message in err, (message, err)
    path.write_text("families: sod\ndatasets: {A: a}\nmethods: {m: x}\ncolors: {m: notacolour}\n")
    status, _, err = _run(capsys, "--config", str(path))
    assert status == 2 and "colors: not a matplotlib colour: m: 'notacolour'" in _error_line(err), err
    # a `datasets` that is not a mapping no longer stops the listing; a method with a mistake is still a method
    path.write_text("families: sod\ndatasets: [a, b]\nmethods: {m: x}\nbatch_size: 0\ncolors: {m: notacolour}\n")
    status, _, err = _run(capsys, "--config", str(path))
    assert status == 2 and "3 mistakes in" in _error_line(err), err
    for message in (
        "datasets: expected a non-empty mapping of names",
        "batch_size: expected a positive integer",
        "colors: not a matplotlib colour: m: 'notacolour'",
    ):
        assert message in err, (message, err)
    # an RGB list is a colour; a number is not, and an unknown name beside it is a second mistake
    path.write_text("families: sod\ndatasets: {A: a}\nmethods: {m: x}\ncolors: {m: [1, 0, 0]}\nbatch_size: 0\n")
    status, _, err = _run(capsys, "--config", str(path))
    assert status == 2 and "mistakes" not in err and "batch_size" in _error_line(err), err
    path.write_text("families: sod\ndatasets: {A: a}\nmethods: {m: x}\ncolors: {m: 12, z: red}\n")
    status, _, err = _run(capsys, "--config", str(path))
    assert status == 2 and "2 mistakes in" in _error_line(err), err
    assert "colors: no method named z" in err and "colors: not a matplotlib colour: m: 12" in err, err
    path.write_text("families: sod\ndatasets: {A: a}\nmethods: {m: x, n: {C: y}}\ncolors: {n: red}\n")
    status, _, err = _run(capsys, "--config", str(path))
    assert status == 2 and "methods.n.C: no dataset of that name" in _error_line(err) and "no method" not in err
    # one mistake: one line, as before
    path.write_text("families: sod\ndatasets: {A: a}\nmethods: {m: x}\nbatch_size: 0\n")
    status, _, err = _run(capsys, "--config", str(path))
    assert status == 2 and "mistakes" not in err and "batch_size: expected a positive integer" in _error_line(err)


def test_usage(capsys, tmp_path):
    assert main(["evaluate"]) == 2
    assert "--config" in capsys.readouterr().err
    status, _, err = _run(capsys, "--config", "x.yaml", "--gt", str(tmp_path))
    assert status == 2 and "not both" in _error_line(err)
    status, _, err = _run(capsys, "--gt", str(tmp_path))
    assert status == 2 and "--pred" in _error_line(err)


# ------------------------------------------------------------------------------------------------- reading


def test_resize_linear_equals_opencv():
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(0)
    sizes = [
        ((40, 56), (80, 112)),
        ((80, 112), (40, 56)),
        ((37, 53), (64, 64)),
        ((1, 1), (5, 7)),
        ((9, 5), (1, 1)),
        ((321, 481), (160, 240)),
    ] + [(tuple(rng.integers(1, 120, 2)), tuple(rng.integers(1, 200, 2))) for _ in range(40)]
    for src, dst in sizes:
        image = rng.integers(0, 256, src, dtype=np.uint8)
        expected = cv2.resize(image, (int(dst[1]), int(dst[0])), interpolation=cv2.INTER_LINEAR)
        np.testing.assert_array_equal(resize_linear(image, tuple(map(int, dst))), expected, err_msg=f"{src}->{dst}")


def test_read_gray_map_16bit_as_opencv(tmp_path):
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(1)
    values = rng.integers(0, 65536, (12, 17), dtype=np.uint16)
    cv2.imwrite(str(tmp_path / "g16.png"), values)
    np.testing.assert_array_equal(read_gray_map(tmp_path / "g16.png"), cv2.imread(str(tmp_path / "g16.png"), 0))
    cv2.imwrite(str(tmp_path / "low.png"), (values % 2).astype(np.uint16))  # a 0/1 mask saved in 16 bits
    with pytest.raises(ValueError, match="below 256"):
        read_gray_map(tmp_path / "low.png")
    rgb = rng.integers(0, 256, (12, 17, 3), dtype=np.uint8)
    Image.fromarray(rgb).save(tmp_path / "rgb.png")  # colour masks: OpenCV's luma (documented in io)
    np.testing.assert_array_equal(read_gray_map(tmp_path / "rgb.png"), cv2.imread(str(tmp_path / "rgb.png"), 0))


def test_decode_pairs_workers_keep_order_and_report_errors(sod_root):
    folder = sod_root / "DS-A"
    names = sorted((folder / "good").glob("*.png"))
    tasks = [DecodeTask("foreground", p.stem, p, folder / "gt" / p.name) for p in names]
    tasks = tasks * 4  # 20 pairs: more than one chunk per worker
    serial = list(decode_pairs(tasks, 0))
    parallel = list(decode_pairs(tasks, 2, chunk=3))
    assert [s for s, _, _ in parallel] == [s for s, _, _ in serial]
    assert all((a[1] == b[1]).all() and (a[2] == b[2]).all() for a, b in zip(serial, parallel, strict=True))
    broken = [*tasks[:7], DecodeTask("foreground", "zzz", folder / "nope.png", folder / "gt" / "nope.png"), *tasks[7:]]
    with pytest.raises(Exception, match=r"nope\.png"):
        list(decode_pairs(broken, 2, chunk=3))


# --------------------------------------------------------------------------------------------------- tables


def test_best_marks_ties_lower_is_better_and_nan():
    rows = {"a|b": {"mae": 0.05, "s": 0.9, "v": float("nan")}, "c_d": {"mae": 0.04, "s": 0.90004}, "e": {"mae": 0.04}}
    columns = [("mae", "MAE"), ("s", "S"), ("v", "V")]
    assert best_rows(rows, columns, lower_is_better=["mae"]) == {"mae": {"c_d", "e"}, "s": {"a|b", "c_d"}, "v": set()}
    md = format_markdown_table(rows, columns, lower_is_better=["mae"])
    assert md.splitlines()[0] == "| method | MAE ↓ | S ↑ | V ↑ |"
    assert r"| a\|b | 0.0500 | **0.9000** | nan |" in md and "| e | **0.0400** | - | - |" in md
    tex = format_latex_table(rows, columns, lower_is_better=["mae"], caption="50% of DS_1")
    assert r"c\_d & \textbf{0.040} & \textbf{0.900} & - \\" in tex and r"\caption{50\% of DS\_1}" in tex
    assert best_rows({"only": {"mae": 1.0}}, ["mae"]) == {"mae": set()}


def test_sod_settings_constant_matches_the_metric():
    """Planning uses a constant (no torch import); it must be ForegroundMeasures' defaults."""
    metric = ForegroundMeasures()
    expected = {"normalize": metric.normalize, **metric.settings}
    assert {k: report_run.SOD_SETTINGS[k] for k in expected} == expected


def test_cli_imports_no_torch_before_planning():
    """The package imports its classes lazily: the command starts its decoding workers before torch is loaded."""
    import subprocess
    import sys

    code = "import sys, segmetrics_torch.app.cli, segmetrics_torch.app.report_run; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_building_the_parsers_imports_no_torch():
    import subprocess
    import sys

    # decoding workers start before torch loads only if building the parser does not load it
    code = (
        "import sys; from segmetrics_torch.app.cli_parser import build_parser; build_parser(); "
        "print('torch' in sys.modules, 'torchmetrics' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


def test_proposals_family(tmp_path, capsys):
    """Two proposal methods on one dataset: the JSON equals ProposalRecall, AR@100 in the table, the figure."""
    from segmetrics_torch import ProposalRecall
    from segmetrics_torch.io import read_objects, read_proposals

    rng = np.random.default_rng(7)
    yy, xx = np.mgrid[:40, :56]

    def discs(n):
        c, r = rng.integers(0, (40, 56), (n, 2)), rng.integers(3, 12, n)
        return np.stack([(yy - a) ** 2 + (xx - b) ** 2 <= q * q for (a, b), q in zip(c, r, strict=True)])

    for folder in ("gt", "cls", "m1", "m2"):
        (tmp_path / folder).mkdir()
    for i in range(3):
        inst, cls = np.zeros((40, 56), np.uint8), np.zeros((40, 56), np.uint8)
        for k, disc in enumerate(discs(3), start=1):
            inst[disc], cls[disc] = k, 1 + k % 2
        Image.fromarray(inst).save(tmp_path / "gt" / f"im{i}.png")
        Image.fromarray(cls).save(tmp_path / "cls" / f"im{i}.png")
        np.savez_compressed(tmp_path / "m1" / f"im{i}.npz", masks=discs(150))
        np.savez_compressed(tmp_path / "m2" / f"im{i}.npz", masks=discs(20))
    config = {
        "datasets": {"VOC-toy": {"gt": "gt", "gt_classes": "cls", "families": "proposals"}},
        "methods": {"M1": "m1", "M2": "m2"},
        "options": {"proposals": {"counts": [1, 10, 100, 1000], "num_classes": 3}},
        "output": "rep",
        "figures": ["png"],
    }
    (tmp_path / "eval.json").write_text(json.dumps(config))
    status, _out, err = _run(capsys, "--config", str(tmp_path / "eval.json"))
    assert status == 0, err
    records = json.loads((tmp_path / "rep" / "results.json").read_text())["results"]["VOC-toy"]["proposals"]
    for method in ("M1", "M2"):
        metric = ProposalRecall([1, 10, 100, 1000], num_classes=3)
        for i in range(3):
            pool = read_proposals(tmp_path / method.lower() / f"im{i}.npz")
            gt = read_objects(tmp_path / "gt" / f"im{i}.png", class_path=tmp_path / "cls" / f"im{i}.png")
            metric.update(
                *(None if x is None else torch.from_numpy(x) for x in (pool, gt.objects, gt.void, gt.classes))
            )
        got = dict(records[method]["results"])
        assert set(got.pop("per_image")) == {"im0", "im1", "im2"}
        _assert_equal_leaves(got, to_jsonable(metric.compute()))
    tables = (tmp_path / "rep" / "tables.md").read_text()
    assert "AR@100 ↑" in tables and "AR@1000 ↑" in tables and "J_c" in tables and "| M1 | **" in tables
    assert (tmp_path / "rep" / "figures" / "VOC-toy_proposals_recall.png").stat().st_size > 10_000


def test_example_configuration_parses():
    config = report_run.load_config(Path(__file__).resolve().parents[2] / "examples" / "eval.yaml")
    assert [d.name for d in config.datasets] == ["ECSSD", "DUTS-TE", "BSDS500", "VOC2012-val"]
    assert [m.name for m in config.methods] == ["MyNet", "U2Net", "gPb-owt-ucm", "MCG"]
    assert config.datasets[2].families == ("boundary", "partition") and config.workers == 3
    assert config.methods[2].folder("BSDS500", "partition").name == "ucm2"
    assert config.methods[2].folder("ECSSD", "foreground") is None
    assert config.options["partition"]["measures"] == ["fop", "fb", "voi", "pri", "ssc"]


def _marked(markdown: str, latex: str) -> tuple[list[list[str]], list[list[str]]]:
    """Per table row, the printed numbers that are bold: Markdown's ``**x**`` and LaTeX's ``\\textbf{x}``."""
    md = [re.findall(r"\*\*([0-9.]+)\*\*", line) for line in markdown.splitlines() if line.startswith("| ")]
    tex = [re.findall(r"\\textbf\{([0-9.]+)\}", line) for line in latex.splitlines() if " & " in line]
    return [m for m in md if m], [t for t in tex if t]


@pytest.mark.parametrize("digits", [None, 4])
def test_one_precision_for_every_table_and_its_marks(sod_root, tmp_path, capsys, digits):
    """Markdown and LaTeX print the same decimals (``digits``: 3 by default) and mark the same cells, compared as
    printed; ``--digits`` changes both (issue: 4 decimals in one, 3 in the other, marks that disagreed)."""
    root = tmp_path / "run"
    shutil.copytree(sod_root, root)
    extra = () if digits is None else ("--digits", str(digits))
    status, _, err = _run(capsys, "--config", str(_sod_config(root, figures=False)), *extra)
    assert status == 0, err
    markdown = (root / "report" / "tables.md").read_text()
    latex = (root / "report" / "tables.tex").read_text()
    md, tex = _marked(markdown, latex)
    assert md and md == tex
    decimals = {len(v.split(".")[1]) for row in md for v in row}
    assert decimals == {digits or 3}
    combined = (root / "report" / "combined.md").read_text()
    numbers = re.findall(r"\b0\.[0-9]+\b", combined)
    assert numbers and {len(v.split(".")[1]) for v in numbers} == {digits or 3}
