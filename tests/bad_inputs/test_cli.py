"""Bad-input matrix of the command line (issue 20): each case runs ``segmetrics`` in-process on real files written
here and asserts the exit status (2: one ``error:`` line naming the file or flag; 0 where the input is valid), and
that no traceback reaches the user."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import torch
from PIL import Image

from segmetrics_torch.app.cli import main

from .folders import H, W, png, write_families


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """Valid folders: ``sod/{pred,gt}`` (3 pairs), ``bdry/{pred,gt}`` (2 soft maps + BSDS .mat), ``part/{pred,gt}``."""
    base = tmp_path_factory.mktemp("cli_bad")
    write_families(base)
    (base / "a_file.txt").write_text("not a folder")
    (base / "empty").mkdir()
    return base


def _variant(root: Path, tmp_path: Path, family: str, edit: Callable[[Path], None]) -> Path:
    """A copy of ``root/family`` changed by ``edit`` (called with the copy's folder)."""
    import shutil

    dst = tmp_path / family
    shutil.copytree(root / family, dst, symlinks=True)
    edit(dst)
    return dst


@dataclass(frozen=True)
class CliCase:
    id: str
    argv: Callable[[Path, Path], list[str]]  # (root, tmp_path) -> arguments
    status: int
    match: str  # regex the stderr must match (an `error:` line naming the file/flag), or the stdout for status 0

    def param(self):
        return pytest.param(self, id=self.id)


def _sod(pred: str | Path, gt: str | Path, *extra: str) -> list[str]:
    return ["evaluate", "sod", "--pred", str(pred), "--gt", str(gt), "--no-progress", *extra]


def _sod_edit(edit: Callable[[Path], None], *extra: str):
    def argv(root: Path, tmp: Path) -> list[str]:
        d = _variant(root, tmp, "sod", edit)
        return _sod(d / "pred", d / "gt", *extra)

    return argv


def _bdry_edit(edit: Callable[[Path], None], *extra: str):
    def argv(root: Path, tmp: Path) -> list[str]:
        d = _variant(root, tmp, "bdry", edit)
        return ["evaluate", "boundary", "--pred", str(d / "pred"), "--gt", str(d / "gt"), "--no-progress", *extra]

    return argv


def _config(text: str, suffix: str = ".yaml"):
    def argv(root: Path, tmp: Path) -> list[str]:
        path = tmp / f"eval{suffix}"
        path.write_text(text.replace("ROOT", str(root)))
        return ["evaluate", "--config", str(path), "--output", str(tmp / "report"), "--no-progress"]

    return argv


def _write(name: str, data: bytes):
    return lambda d: (d / name).write_bytes(data)


def _png_16bit(d: Path) -> None:
    # a 0/255 mask saved in 16 bits: OpenCV's 8-bit reading (the high byte) would make it empty
    mask = np.zeros((H, W), np.uint16)
    mask[3:9, 4:12] = 255
    Image.fromarray(mask).save(d / "gt" / "im0.png")


def _png_16bit_pred(d: Path) -> None:
    # a prediction saved in 16 bits with values below 256: found by the pre-scan (listed, skippable), not mid-run
    soft = np.zeros((H, W), np.uint16)
    soft[3:9, 4:12] = 200
    Image.fromarray(soft).save(d / "pred" / "im0.png")


def _rgb_size(d: Path) -> None:
    png(d / "pred" / "im1.png", np.zeros((H + 3, W), np.uint8))


def _broken_link(d: Path) -> None:
    os.symlink(d / "nowhere.png", d / "pred" / "im9.png")


def _bad_mat_gt(data: bytes):
    return lambda d: (d / "gt" / "b0.mat").write_bytes(data)


def _truncated_mat(d: Path) -> None:
    path = d / "gt" / "b0.mat"
    path.write_bytes(path.read_bytes()[:200])


def _mat_without_gt(d: Path) -> None:
    scipy.io.savemat(d / "gt" / "b0.mat", {"something": np.zeros(3)})


DUP_YAML = """families: [sod]
datasets:
  D: {gt: ROOT/sod/gt}
methods:
  M: {D: ROOT/sod/pred}
methods:
  N: {D: ROOT/sod/pred}
"""

CASES = [
    # ---- single-folder foreground form
    CliCase("pred-missing", lambda r, t: _sod(r / "nope", r / "sod/gt"), 2, r"error: .*nope.* does not exist"),
    CliCase("gt-is-a-file", lambda r, t: _sod(r / "sod/pred", r / "a_file.txt"), 2, r"error: .*a_file\.txt.*not a dir"),
    CliCase("pred-empty", lambda r, t: _sod(r / "empty", r / "sod/gt"), 2, r"error: .*empty.* holds no image"),
    CliCase("no-common-stem", lambda r, t: _sod(r / "bdry/pred", r / "sod/gt"), 2, r"error: .*(match|stem)"),
    CliCase(
        "json-is-a-folder",
        lambda r, t: _sod(r / "sod/pred", r / "sod/gt", "--json", str(t)),
        2,
        r"error: --json .* is a directory",
    ),
    CliCase(
        "json-folder-missing",
        lambda r, t: _sod(r / "sod/pred", r / "sod/gt", "--json", str(t / "no/x.json")),
        2,
        r"error: --json .*does not exist",
    ),
    CliCase(
        "json-folder-is-a-file",
        lambda r, t: _sod(r / "sod/pred", r / "sod/gt", "--json", str(r / "a_file.txt" / "x.json")),
        2,
        r"error: --json .*is not a folder",
    ),
    CliCase(
        "csv-folder-missing",
        lambda r, t: _sod(r / "sod/pred", r / "sod/gt", "--csv", str(t / "no/x.csv")),
        2,
        r"error: --csv .*does not exist",
    ),
    CliCase("broken-symlink", _sod_edit(_broken_link), 2, r"error: .*broken symbolic link.*im9\.png"),
    CliCase("corrupt-png", _sod_edit(_write("pred/im1.png", b"\x89PNG\r\n\x1a\n garbage")), 2, r"error: .*im1\.png"),
    CliCase("zero-byte-png", _sod_edit(_write("gt/im2.png", b"")), 2, r"error: .*im2\.png"),
    CliCase("text-file-as-png", _sod_edit(_write("pred/im0.png", b"hello")), 2, r"error: .*im0\.png"),
    CliCase("16-bit-gt", _sod_edit(_png_16bit), 2, r"error: .*im0\.png.*16-bit"),
    CliCase("16-bit-pred", _sod_edit(_png_16bit_pred), 2, r"error: im0: unreadable .*im0\.png: a 16-bit .*--skip-bad"),
    CliCase("16-bit-pred-skipped", _sod_edit(_png_16bit_pred, "--skip-bad"), 0, r"Evaluated 2 image\(s\) \(of 3"),
    CliCase("size-mismatch", _sod_edit(_rgb_size), 2, r"error: .*im1.*(size|shape)"),
    CliCase("two-files-one-stem", _sod_edit(_write("pred/im0.jpg", b"x")), 2, r"error: .*several images with one stem"),
    CliCase(
        "batch-size-zero",
        lambda r, t: _sod(r / "sod/pred", r / "sod/gt", "--batch-size", "0"),
        2,
        r"error: .*--batch-size",
    ),
    CliCase(
        "workers-negative", lambda r, t: _sod(r / "sod/pred", r / "sod/gt", "--workers", "-1"), 2, r"error: .*--workers"
    ),
    CliCase(
        "device-bogus",
        lambda r, t: _sod(r / "sod/pred", r / "sod/gt", "--device", "tpu9"),
        2,
        r"error: .*(device|tpu9)",
    ),
    CliCase(
        "unknown-flag", lambda r, t: _sod(r / "sod/pred", r / "sod/gt", "--frobnicate"), 2, r"error: .*--frobnicate"
    ),
    CliCase(
        "missing-prediction-allowed",
        _sod_edit(lambda d: (d / "pred/im2.png").unlink(), "--allow-missing"),
        0,
        r"Evaluated 2 image",
    ),
    # ---- report form (configuration files)
    CliCase(
        "config-missing",
        lambda r, t: ["evaluate", "--config", str(t / "none.yaml")],
        2,
        r"error: .*none\.yaml does not exist",
    ),
    CliCase("config-not-yaml", _config("datasets: [unclosed"), 2, r"error: .*eval\.yaml: not valid YAML"),
    CliCase(
        "config-duplicate-key-yaml",
        _config(DUP_YAML),
        2,
        r"error: .*eval\.yaml: the key 'methods' appears twice .*lines 4 and 6",
    ),
    CliCase(
        "config-duplicate-key-json",
        _config('{"datasets": {"D": {"gt": "ROOT/sod/gt"}},\n"methods": {},\n"methods": {}}', ".json"),
        2,
        r"error: .*eval\.json: the key 'methods' appears twice .*lines 2 and 3",
    ),
    CliCase("config-not-json", _config("{oops", ".json"), 2, r"error: .*eval\.json: not valid JSON"),
    CliCase("config-a-list", _config("- a\n- b\n"), 2, r"error: .*eval\.yaml"),
    CliCase(
        "config-unknown-family",
        _config(DUP_YAML.split("methods:\n  N")[0].replace("[sod]", "[nonsense]")),
        2,
        r"error: .*(famil|nonsense)",
    ),
    CliCase(
        "config-missing-gt-folder",
        _config("families: [sod]\ndatasets:\n  D: {gt: ROOT/nope}\nmethods:\n  M: {D: ROOT/sod/pred}\n"),
        2,
        r"error: .*nope",
    ),
    # ---- boundary family
    CliCase("zero-byte-mat", _bdry_edit(_bad_mat_gt(b"")), 2, r"error: .*b0\.mat"),
    CliCase("truncated-mat", _bdry_edit(_truncated_mat), 2, r"error: .*b0\.mat"),
    CliCase("mat-without-groundTruth", _bdry_edit(_mat_without_gt), 2, r"error: .*b0\.mat.*groundTruth"),
    CliCase("max-dist-zero", _bdry_edit(lambda d: None, "--max-dist", "0"), 2, r"error: .*--max-dist"),
    # a tolerance beyond the image diagonal reaches what the diagonal reaches: capped there (documented), not an error
    CliCase("max-dist-huge", _bdry_edit(lambda d: None, "--max-dist", "1e6"), 0, r"max_dist 1e\+06"),
    CliCase("thresholds-zero", _bdry_edit(lambda d: None, "--thresholds", "0"), 2, r"error: .*--thresholds"),
    CliCase(
        "out-dir-is-a-file",
        lambda r, t: [
            "evaluate",
            "boundary",
            "--pred",
            str(r / "bdry/pred"),
            "--gt",
            str(r / "bdry/gt"),
            "--out-dir",
            str(r / "a_file.txt"),
        ],
        2,
        r"error: .*a_file\.txt",
    ),
    # ---- partition family
    CliCase(
        "partition-zero-byte-mat",
        lambda r, t: [
            "evaluate",
            "partition",
            "--pred",
            str(r / "part/pred"),
            "--gt",
            str(_variant(r, t, "part", _bad_mat_gt(b"\x00" * 10)) / "gt"),
        ],
        2,
        r"error: .*b0\.mat",
    ),
    # ---- meta-measures
    CliCase(
        "meta-json-is-a-folder",
        lambda r, t: ["meta", "foreground", "--demo", "--json", str(t)],
        2,
        r"error: --json .* is a directory",
    ),
]


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_cli_bad_input(case: CliCase, root: Path, tmp_path: Path, capsys) -> None:
    argv = case.argv(root, tmp_path)
    try:
        status = main(argv)
    except SystemExit as exit_:  # argparse's own usage errors
        status = exit_.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    assert status == case.status, (status, err[-2000:])
    if case.status == 0:
        assert re.search(case.match, out), out
    else:
        errors = [line for line in err.splitlines() if line.startswith("error:") or ": error:" in line]
        assert len(errors) == 1, err
        assert re.search(case.match, errors[0]), errors[0]


def test_matrix_size() -> None:
    assert len({c.id for c in CASES}) == len(CASES) >= 30


def test_nothing_written_when_an_output_is_not_writable(root: Path, tmp_path: Path, capsys) -> None:
    # --json is fine but --csv is not: the run stops before computing and writes neither
    json_path = tmp_path / "out.json"
    status = main(
        _sod(root / "sod/pred", root / "sod/gt", "--json", str(json_path), "--csv", str(tmp_path / "no" / "x.csv"))
    )
    assert status == 2
    assert not json_path.exists()
    assert [p.name for p in tmp_path.iterdir()] == []
    capsys.readouterr()


def test_outputs_are_written_whole(root: Path, tmp_path: Path, capsys) -> None:
    json_path, csv_path = tmp_path / "r.json", tmp_path / "r.csv"
    assert main(_sod(root / "sod/pred", root / "sod/gt", "--json", str(json_path), "--csv", str(csv_path))) == 0
    assert json.loads(json_path.read_text())["num_images"] == 3
    assert csv_path.read_text().count("\n") == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.json"]  # no temporary file left
    capsys.readouterr()


def test_ctrl_c_inside_a_compiled_kernel_is_exit_130(monkeypatch, capsys) -> None:
    # a SIGINT that lands while a numba kernel runs surfaces as SystemError with the KeyboardInterrupt as context
    from segmetrics_torch.app import cli, demo_command

    def interrupted_kernel(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise SystemError("<CPUDispatcher(foreground_kernel)> returned a result with an exception set") from None

    monkeypatch.setattr(demo_command, "run_demo", interrupted_kernel)  # the parser imports the handler when it runs
    assert cli.main(["demo"]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "error: interrupted"


def test_os_errors_on_named_files_are_input_errors(monkeypatch, capsys) -> None:
    from segmetrics_torch.app import cli, demo_command

    def denied(args):
        raise PermissionError(13, "Permission denied", "/data/preds/a.png")

    monkeypatch.setattr(demo_command, "run_demo", denied)
    assert cli.main(["demo"]) == 2
    assert capsys.readouterr().err.strip() == "error: cannot access /data/preds/a.png: Permission denied"


def test_stale_report_folders_of_killed_runs_are_removed(root: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "report"
    (out / ".segmetrics-report-abc123").mkdir(parents=True)
    (out / ".segmetrics-report-abc123" / "tables.md").write_text("half")
    config = tmp_path / "eval.yaml"
    config.write_text(
        f"families: [sod]\ndatasets:\n  D: {{gt: {root}/sod/gt}}\nmethods:\n  M: {{D: {root}/sod/pred}}\n"
    )
    assert main(["evaluate", "--config", str(config), "--output", str(out), "--no-progress", "--figures", "none"]) == 0
    assert not list(out.glob(".segmetrics-report-*"))
    capsys.readouterr()


def test_readers_name_unreadable_numpy_archives(tmp_path: Path) -> None:
    from segmetrics_torch.io import read_proposals

    for name, data in (("zero.npz", b""), ("junk.npz", b"PK\x03\x04junk")):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ValueError, match=rf"{name}: cannot read it as a numpy \.npz archive"):
            read_proposals(tmp_path / name)
    assert torch.__version__  # torch stays importable after the failures (no global state broken)


def test_a_nan_is_announced_with_the_images(root: Path, tmp_path: Path, capsys) -> None:
    # a ground truth whose centroid is the last pixel leaves empty S-measure quadrants: the documented NaN, named
    def corner(d: Path) -> None:
        gt = np.zeros((H, W), np.uint8)
        gt[H - 1, W - 1] = 255
        png(d / "gt" / "im1.png", gt)

    argv = _sod_edit(corner)(root, tmp_path)
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    warning = [line for line in err.splitlines() if line.startswith("warning: S-measure is NaN")]
    assert len(warning) == 1 and "1 of 3 image(s) (im1)" in warning[0], err
    assert "nan" in out.lower()
