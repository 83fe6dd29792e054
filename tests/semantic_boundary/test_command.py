"""``segmetrics evaluate semantic-boundary``: the numbers, the table and every output equal the library call's, on
synthetic SBD- and Cityscapes-layout folders; bad input is exit 2 with one ``error:`` line and nothing written."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.io
from PIL import Image

from segmetrics_torch.app.cli import main
from segmetrics_torch.functional.semantic_boundary import (
    SUMMARY_COLUMNS,
    bsr_files,
    class_numbers,
    class_pr_curves,
    evaluate_semantic_boundary_folders,
    per_image_rows,
    semantic_boundary_protocol,
    summary_rows,
)
from segmetrics_torch.reports.tables import format_table
from tests.conftest import REQUIRED, SHARED, interrupted

from . import synthetic_data

SBD_CLASSES = (3, 7, 15)


@pytest.fixture(scope="module")
def sbd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sbd")
    synthetic_data.make_sbd(root, n_images=3, shape=(40, 52), classes=SBD_CLASSES)
    return root


@pytest.fixture(scope="module")
def cityscapes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cityscapes")
    synthetic_data.make_cityscapes(root, n_images=2, shape=(64, 128))
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    status = main(["evaluate", "semantic-boundary", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def _close(a: float | None, b: float) -> bool:
    return (a is None and math.isnan(b)) or (a is not None and math.isclose(a, b, rel_tol=0, abs_tol=1e-12))


@pytest.mark.parametrize(
    ("options", "protocol"),
    [
        (["--preset", "matlab"], semantic_boundary_protocol("matlab", "sbd")),
        (["--preset", "matlab", "--instance-sensitive"], semantic_boundary_protocol("matlab", instance_sensitive=True)),
        (
            ["--preset", "pre-seal", "--raw", "--thresholds", "25", "--max-dist", "0.01", "--no-kill-internal"],
            semantic_boundary_protocol(
                "pre-seal", "sbd", thin=False, thresholds=25, max_dist=0.01, kill_internal=False
            ),
        ),
        (["--preset", "post-seal", "--ignore-border", "2"], semantic_boundary_protocol("post-seal", ignore_border=2)),
    ],
    ids=["matlab", "matlab-is", "pre-seal-raw-overrides", "post-seal"],
)
def test_sbd_equals_the_library(sbd: Path, tmp_path: Path, capsys, options: list[str], protocol) -> None:
    before = _snapshot(sbd)
    out = tmp_path / "out"
    status, stdout, err = _run(
        capsys,
        "--pred", sbd / "pred", "--gt", sbd / "gt", "--dataset", "sbd", *options, "--classes", "3,car,Person",
        "--json", tmp_path / "r.json", "--per-image-csv", tmp_path / "pi.csv", "--out-dir", out, "--name", "Net",
    )  # fmt: skip
    assert status == 0, err
    expected = evaluate_semantic_boundary_folders(sbd / "pred", sbd / "gt", protocol, classes=list(SBD_CLASSES))
    assert format_table(summary_rows(expected), SUMMARY_COLUMNS, index_header="class") in stdout
    assert protocol.name in stdout

    report = json.loads((tmp_path / "r.json").read_text())
    assert report["protocol"]["name"] == protocol.name and report["protocol"]["max_dist"] == protocol.max_dist
    assert report["ids"] == expected.ids and report["classes"] == list(SBD_CLASSES)
    res = report["results"]
    for key in ("ods_f", "ois_f", "ap"):
        assert all(map(_close, res[key], expected.summary[key].tolist()))
        assert _close(res["mean"][key], float(expected.summary["mean"][key]))
    for got, want in zip(res["classes"], expected.summary["classes"], strict=True):
        assert all(map(_close, got["precision"], want["precision"].tolist()))
        assert all(map(_close, got["per_image"]["f"], want["per_image"]["f"].tolist()))

    with (tmp_path / "pi.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    want_rows = per_image_rows(expected)
    assert len(rows) == len(want_rows) == 3 * len(SBD_CLASSES)
    for got, want in zip(rows, want_rows, strict=True):
        assert (got["method"], got["dataset"], got["image"], got["class"]) == (
            "Net",
            "sbd",
            want["image"],
            want["class"],
        )
        assert float(got["f"]) == want["f"] and int(got["gt_edge_pixels"]) == want["gt_edge_pixels"]

    for k, c in enumerate(SBD_CLASSES):
        texts = bsr_files(expected, k)
        folder = out / f"class_{c:03d}"
        assert sorted(p.name for p in folder.iterdir()) == sorted(texts)
        assert all((folder / name).read_text() == text for name, text in texts.items())
    assert _snapshot(sbd) == before  # the inputs are untouched


def test_cityscapes_with_ids_and_names(cityscapes: Path, tmp_path: Path, capsys) -> None:
    ids_file = tmp_path / "val.txt"
    first = sorted(p.name.removesuffix("_gtFine_labelIds.png") for p in cityscapes.rglob("*_labelIds.png"))[0]
    ids_file.write_text(f"\n{first}\n\n")
    status, stdout, err = _run(
        capsys,
        "--pred", cityscapes / "pred", "--gt", cityscapes / "gtFine", "--dataset", "cityscapes",
        "--preset", "post-seal", "--classes", "road,building,car,bicycle", "--ids", ids_file,
        "--json", tmp_path / "r.json",
    )  # fmt: skip
    assert status == 0, err
    protocol = semantic_boundary_protocol("post-seal", "cityscapes")
    classes = class_numbers(["road", "building", "car", "bicycle"], "cityscapes")
    assert classes == [1, 3, 14, 19]
    expected = evaluate_semantic_boundary_folders(
        cityscapes / "pred", cityscapes / "gtFine", protocol, classes=classes, ids=[first]
    )
    assert format_table(summary_rows(expected), SUMMARY_COLUMNS, index_header="class") in stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["ids"] == [first] and report["class_names"] == ["road", "building", "car", "bicycle"]
    assert all(map(_close, report["results"]["ap"], expected.summary["ap"].tolist()))


def test_cityscapes_raw_every_class_present(cityscapes: Path, capsys) -> None:
    """All six classes the synthetic data has, raw maps: the mean row is the mean of the classes' rows."""
    status, stdout, err = _run(
        capsys, "--pred", cityscapes / "pred", "--gt", cityscapes / "gtFine", "--dataset", "cityscapes", "--raw",
        "--classes", "1,2,3,12,14,19",
    )  # fmt: skip
    assert status == 0, err
    expected = evaluate_semantic_boundary_folders(
        cityscapes / "pred",
        cityscapes / "gtFine",
        semantic_boundary_protocol("post-seal", "cityscapes", thin=False),
        classes=[1, 2, 3, 12, 14, 19],
    )
    rows = summary_rows(expected)
    assert format_table(rows, SUMMARY_COLUMNS, index_header="class") in stdout
    assert rows["mean"]["ods/f"] == pytest.approx(np.mean([r["ods/f"] for n, r in rows.items() if n != "mean"]))


def test_figures(sbd: Path, tmp_path: Path, capsys) -> None:
    pytest.importorskip("matplotlib")
    status, _, err = _run(
        capsys, "--pred", sbd / "pred", "--gt", sbd / "gt", "--dataset", "sbd", "--classes", "3,7",
        "--plot", tmp_path / "pr.png", "--out-dir", tmp_path / "out", "--figures", "png,svg",
    )  # fmt: skip
    assert status == 0, err
    assert (tmp_path / "pr.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for c in (3, 7):
        assert (tmp_path / "out" / f"class_{c:03d}" / "pr_curve.png").stat().st_size > 0
        assert (tmp_path / "out" / f"class_{c:03d}" / "pr_curve.svg").stat().st_size > 0
    expected = evaluate_semantic_boundary_folders(
        sbd / "pred", sbd / "gt", semantic_boundary_protocol("post-seal"), classes=[3, 7]
    )
    curves = class_pr_curves(expected)
    assert list(curves) == ["bird", "car"] and len(curves["car"]["recall"]) == 99


def test_the_outputs_are_written_together(sbd: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    """An interruption while the files are written leaves the previous run's set whole: the class folders' files
    were moved in one by one before the figure, the JSON and the table were written."""
    pytest.importorskip("matplotlib")
    from segmetrics_torch.app import semantic_boundary_command

    out = tmp_path / "outputs"
    out.mkdir()
    argv = ["--pred", sbd / "pred", "--gt", sbd / "gt", "--dataset", "sbd", "--classes", "3,7"]
    argv += ["--plot", out / "pr.png", "--out-dir", out / "bench", "--json", out / "r.json"]
    argv += ["--per-image-csv", out / "pi.csv"]
    assert _run(capsys, *argv)[0] == 0
    for path in out.rglob("*"):
        if path.is_file() and path.suffix != ".csv":  # (the table: rows are merged into it, kept as it is)
            path.write_bytes(b"the previous run's " + path.name.encode())
    before = _snapshot(out)

    monkeypatch.setattr(semantic_boundary_command, "plot_pr_curves", interrupted)
    assert _run(capsys, *argv)[0] == 130
    assert _snapshot(out) == before  # (hidden files too: no temporary file is left)


# ------------------------------------------------------------------------------------------------------ bad input


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def _break_gtcls(root: Path) -> str:
    scipy.io.savemat(root / "gt/cls/2008_000001.mat", {"something": np.zeros((3, 3))})
    return "GTcls"


def _drop_class_folder(root: Path) -> str:
    import shutil

    shutil.rmtree(root / "pred/class_007")
    return "class_007"


def _wrong_size(root: Path) -> str:
    Image.fromarray(np.zeros((30, 30), np.uint8)).save(root / "pred/class_003/2008_000002.png")
    return "size"


def _not_a_png(root: Path) -> str:
    (root / "pred/class_015/notes.txt").write_text("hello")
    return "notes.txt"


def _drop_inst(root: Path) -> str:
    (root / "gt/inst/2008_000002.mat").unlink()
    return "inst/2008_000002.mat"


@pytest.mark.parametrize(
    "damage",
    [_break_gtcls, _drop_class_folder, _wrong_size, _not_a_png, _drop_inst],
    ids=["no-GTcls", "no-class", "size", "txt", "no-inst"],
)
def test_bad_input_writes_nothing(sbd: Path, tmp_path: Path, capsys, damage) -> None:
    root = _copy(sbd, tmp_path / "data")
    needle = damage(root)
    json_path, csv_path = tmp_path / "r.json", tmp_path / "pi.csv"
    json_path.write_text("old")
    before = _snapshot(root)
    status, stdout, err = _run(
        capsys, "--pred", root / "pred", "--gt", root / "gt", "--dataset", "sbd", "--preset", "matlab",
        "--instance-sensitive", "--classes", "3,7,15", "--json", json_path, "--per-image-csv", csv_path,
        "--out-dir", tmp_path / "out",
    )  # fmt: skip
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], err
    assert json_path.read_text() == "old" and not csv_path.exists() and not (tmp_path / "out").exists()
    assert _snapshot(root) == before and stdout == ""


@pytest.mark.parametrize(
    ("option", "where", "needle"),
    [
        ("--json", "pred/results.json", "inside the prediction folder"),
        ("--per-image-csv", "pred/class_003/rows.csv", "inside the prediction folder"),
        ("--out-dir", "gt/bsr", "inside the ground-truth folder"),
        ("--out-dir", "pred", "is the prediction folder"),
        ("--out-dir", ".", "holds the prediction folder"),
        ("--plot", "gt/cls/pr.png", "inside the ground-truth folder"),
        ("--json", "val.txt", "--ids"),  # the file read by name
        ("--json", "out/class_003/r.json", "which --out-dir writes"),
        ("--per-image-csv", "out/class_007", "which --out-dir writes"),  # a file where a class folder goes
    ],
)
def test_an_output_inside_an_input(sbd: Path, tmp_path: Path, capsys, option: str, where: str, needle: str) -> None:
    root = _copy(sbd, tmp_path / "data")
    (root / "val.txt").write_text("2008_000000\n")
    (root / "out/class_003").mkdir(parents=True)
    before = _snapshot(root)
    extra = [] if option == "--out-dir" else ["--out-dir", root / "out"]
    status, _, err = _run(
        capsys, "--pred", root / "pred", "--gt", root / "gt", "--dataset", "sbd", "--classes", "3", "--ids",
        root / "val.txt", option, root / where, *extra,
    )  # fmt: skip
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], err
    assert _snapshot(root) == before


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--dataset", "cityscapes", "--preset", "matlab"], "preset"),
        (["--dataset", "sbd", "--preset", "pre-seal", "--instance-sensitive"], "instance-sensitive"),
        (["--dataset", "sbd", "--classes", "3,unicorn"], "unicorn"),
        (["--dataset", "sbd", "--classes", "21"], "--classes"),
        (["--dataset", "sbd", "--figures", "png"], "--out-dir"),
        (["--dataset", "sbd", "--plot", "pr.gif"], ".png"),
        (["--dataset", "sbd", "--ids", "missing.txt"], "missing.txt"),
    ],
)
def test_bad_options(sbd: Path, tmp_path: Path, capsys, monkeypatch, argv: list[str], needle: str) -> None:
    monkeypatch.chdir(tmp_path)
    status, _, err = _run(capsys, "--pred", sbd / "pred", "--gt", sbd / "gt", *argv)
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], err
    assert list(tmp_path.iterdir()) == []


def test_an_empty_ids_file(sbd: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "val.txt").write_text("\n\n")
    status, _, err = _run(
        capsys, "--pred", sbd / "pred", "--gt", sbd / "gt", "--dataset", "sbd", "--ids", tmp_path / "val.txt"
    )
    assert status == 2 and "lists no image id" in err


BENCH = SHARED / "sbd_bench"


@pytest.mark.skipif(not (BENCH / "outdir").is_dir() and not REQUIRED, reason="../shared/sbd_bench is not available")
def test_the_matlab_benchmark_s_own_output_from_the_command(tmp_path: Path, capsys) -> None:
    """The SBD MATLAB benchmark's output on two images (class 15), reproduced by the command with --preset matlab and
    its own val.txt: eval_bdry.txt within 1e-3 (its matcher is randomised), eval_bdry_img.txt byte for byte."""
    status, stdout, err = _run(
        capsys, "--pred", BENCH / "indir", "--gt", BENCH / "datadir", "--dataset", "sbd", "--preset", "matlab",
        "--classes", "person", "--ids", BENCH / "datadir/val.txt", "--out-dir", tmp_path / "out",
    )  # fmt: skip
    assert status == 0, err
    ours, ref = tmp_path / "out/class_015", BENCH / "outdir"
    np.testing.assert_allclose(np.loadtxt(ours / "eval_bdry.txt"), np.loadtxt(ref / "eval_bdry.txt"), atol=1e-3)
    assert (ours / "eval_bdry_img.txt").read_text() == (ref / "eval_bdry_img.txt").read_text()
    assert sorted(p.name for p in ours.iterdir()) == sorted(p.name for p in ref.iterdir())
    assert "person  0.4668  0.7004  0.5937  0.6426" in stdout  # ODS T, R, P, F of the MATLAB file (%10g: 0.466768 ...)
