"""``segmetrics evaluate foreground --protocol``: the MATLAB evaluation toolbox's numbers (issue 49), its mean
sensitivity and specificity columns, and the errors of an unknown protocol or a measure the protocol lacks."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from segmetrics_torch.app.cli import main
from segmetrics_torch.io import read_gray
from segmetrics_torch.metrics.matlab_toolbox import MatlabToolboxMeasures
from segmetrics_torch.synthetic import write_foreground_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("protocol")
    write_foreground_dataset(root, n=5)
    return root / "blurry", root / "gt"


def _argv(dataset: tuple[Path, Path], *extra: str) -> list[str]:
    pred, gt = dataset
    return ["evaluate", "foreground", "--pred", str(pred), "--gt", str(gt), "--no-progress", *extra]


def _direct(dataset: tuple[Path, Path], protocol: str) -> dict:
    """The Metric on the same files, read as the command reads them."""
    pred, gt = dataset
    stems = sorted(p.stem for p in gt.iterdir())
    preds = [torch.from_numpy(read_gray(next(pred.glob(f"{s}.*")))) for s in stems]
    gts = [torch.from_numpy(read_gray(next(gt.glob(f"{s}.*")))) for s in stems]
    metric = MatlabToolboxMeasures(protocol=protocol, weighted_f=True)
    metric.update(preds, gts)
    return metric.compute()


@pytest.mark.parametrize("protocol", ["matlab-toolbox", "matlab-toolbox-2020-11"])
def test_a_toolbox_protocol_reports_the_toolbox_s_numbers(dataset, tmp_path, capsys, protocol) -> None:
    out = tmp_path / "r.json"
    measures = "meanDic,meanSen,meanSpe,Sm,meanEm,MAE,maxEm,wFm,adpSen,maxSpe"
    assert main(_argv(dataset, "--protocol", protocol, "--measures", measures, "--json", str(out))) == 0
    header = capsys.readouterr().out.splitlines()[0].split()
    expected = ["method", "meanDice", "meanSen", "meanSpe", "S-measure", "meanE", "MAE", "maxE", "wF", "adpSen"]
    assert header == [*expected, "maxSpe"]
    report = json.loads(out.read_text())
    assert report["settings"]["protocol"] == protocol and report["settings"]["normalize"] is True
    assert "mapminmax" in report["curve_convention"]
    results, expected = report["results"], _direct(dataset, protocol)
    for family in ("dice", "sensitivity", "specificity", "e_measure", "f_measure", "iou", "precision"):
        for key in ("adaptive", "mean", "max"):
            assert math.isclose(results[family][key], float(expected[family][key]), abs_tol=1e-12), (family, key)
        assert len(results[family]["curve"]) == 256
    for key in ("mae", "s_measure", "weighted_f_measure"):
        assert math.isclose(results[key], float(expected[key]), abs_tol=1e-12), key
    row = next(iter(results["per_image"].values()))
    assert {"sensitivity/mean", "specificity/mean", "dice/mean"} <= set(row)


def test_the_default_protocol_is_recorded_and_offers_sensitivity_and_specificity(dataset, tmp_path, capsys) -> None:
    out = tmp_path / "r.json"
    assert main(_argv(dataset, "--measures", "meanSen,meanSpe,mae", "--json", str(out))) == 0
    assert capsys.readouterr().out.splitlines()[0].split() == ["method", "meanSen", "meanSpe", "MAE"]
    report = json.loads(out.read_text())
    assert report["settings"]["protocol"] == "pysodmetrics"
    # PySODMetrics' convention: ThresholdMeasures' recall and specificity
    assert 0 < report["results"]["threshold_measures"]["recall"]["mean"] <= 1
    assert 0 < report["results"]["threshold_measures"]["specificity"]["mean"] <= 1


def _one_error_line(err: str, *fragments: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def test_an_unknown_protocol_is_one_error_line(dataset, tmp_path, capsys) -> None:
    out = tmp_path / "r.json"
    assert main(_argv(dataset, "--protocol", "matlab", "--json", str(out))) == 2
    _one_error_line(capsys.readouterr().err, "--protocol", "'matlab'", "matlab-toolbox-2020-11")
    assert not out.exists()


def test_a_measure_outside_the_protocol_is_one_error_line(dataset, tmp_path, capsys) -> None:
    out = tmp_path / "r.json"
    assert main(_argv(dataset, "--protocol", "matlab-toolbox", "--measures", "meanSen,hce", "--json", str(out))) == 2
    captured = capsys.readouterr()
    _one_error_line(captured.err, "--measures", "hce", "matlab-toolbox")
    assert not out.exists() and not captured.out


def test_a_protocol_with_the_report_form_is_one_error_line(dataset, tmp_path, capsys) -> None:
    assert main(_argv(dataset, "--protocol", "matlab-toolbox", "--output", str(tmp_path / "report"))) == 2
    _one_error_line(capsys.readouterr().err, "--protocol", "--output")
    assert not (tmp_path / "report").exists()


def test_toolbox_lines_append_the_toolbox_s_result_line(dataset, tmp_path, capsys) -> None:
    from segmetrics_torch.functional import format_toolbox_line

    lines = tmp_path / "Kvasir_result.txt"
    lines.write_text("(Dataset:Kvasir; Model:Other) meanDic:0.500.\n", encoding="utf-8")  # an earlier run's line
    common = ["--protocol", "matlab-toolbox", "--dataset", "Kvasir", "--name", "PraNet", "--toolbox-lines", str(lines)]
    assert main(_argv(dataset, *common, "--measures", "meanDic")) == 0
    assert main(_argv(dataset, *common, "--toolbox-layout", "inf-net")) == 0
    capsys.readouterr()
    expected = _direct(dataset, "matlab-toolbox")
    assert lines.read_text(encoding="utf-8").splitlines() == [
        "(Dataset:Kvasir; Model:Other) meanDic:0.500.",
        format_toolbox_line(expected, "Kvasir", "PraNet", "pranet"),  # its wFm computed though the table lacks it
        format_toolbox_line(expected, "Kvasir", "PraNet", "inf-net"),
    ]


@pytest.mark.parametrize(
    ("extra", "fragments"),
    [
        (["--toolbox-layout", "pra"], ["--toolbox-layout", "'pra'", "inf-net"]),
        ([], ["--toolbox-lines", "--protocol"]),  # the line is the toolbox's: the default protocol has none
    ],
)
def test_toolbox_lines_errors_are_one_error_line(dataset, tmp_path, capsys, extra, fragments) -> None:
    lines = tmp_path / "lines.txt"
    assert main(_argv(dataset, "--toolbox-lines", str(lines), *extra)) == 2
    _one_error_line(capsys.readouterr().err, *fragments)
    assert not lines.exists()


def test_the_toolbox_line_is_added_with_the_run_s_other_files(dataset, tmp_path, capsys, monkeypatch) -> None:
    """The line was appended after the run's --json and tables had been moved into place: a Ctrl-C landing in their
    renames (held until they are done) ended the run there, with this run's JSON and without its line. Now the file
    is written with the set: the new set whole, line included."""
    from tests.conftest import signal_at_first_replace

    lines, json_path = tmp_path / "Kvasir_result.txt", tmp_path / "r.json"
    lines.write_text("(Dataset:Kvasir; Model:Other) meanDic:0.500.\n", encoding="utf-8")
    json_path.write_text("the previous run's\n")
    argv = _argv(dataset, "--protocol", "matlab-toolbox", "--toolbox-lines", str(lines), "--json", str(json_path))
    with monkeypatch.context() as patched:
        moved = signal_at_first_replace(patched)
        assert main(argv) == 130
    assert moved and json_path.read_text() != "the previous run's\n"
    assert len(lines.read_text(encoding="utf-8").splitlines()) == 2  # the earlier line and this run's
    assert main(argv) == 0
    assert "Added the pranet result line to" in capsys.readouterr().out
    assert len(lines.read_text(encoding="utf-8").splitlines()) == 3


@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_the_toolbox_line_is_appended_through_a_link(dataset, tmp_path, capsys, link: str) -> None:
    """The file is appended to, never rewritten (a review of the first set version, which wrote it again whole): a
    linked results file keeps its link and every name sees the line, as with the toolbox's fopen(..., 'a')."""
    import os

    shared = tmp_path / "shared" / "Kvasir_result.txt"
    shared.parent.mkdir()
    shared.write_text("(Dataset:Kvasir; Model:Other) meanDic:0.500.", encoding="utf-8")  # no final newline
    lines = tmp_path / "Kvasir_result.txt"
    (lines.symlink_to if link == "symbolic" else lines.hardlink_to)(shared)
    before = os.stat(shared)
    argv = _argv(dataset, "--protocol", "matlab-toolbox", "--toolbox-lines", str(lines), "--json", str(tmp_path / "r"))
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1] == f"Added the pranet result line to {lines}"  # the last line, as before
    assert lines.is_symlink() == (link == "symbolic")
    assert shared.read_text(encoding="utf-8").splitlines()[0] == "(Dataset:Kvasir; Model:Other) meanDic:0.500."
    assert len(shared.read_text(encoding="utf-8").splitlines()) == 2
    after = os.stat(shared)
    assert (after.st_ino, after.st_nlink, after.st_uid, after.st_mode) == (
        before.st_ino,
        before.st_nlink,
        before.st_uid,
        before.st_mode,
    )
