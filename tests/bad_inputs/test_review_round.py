"""What a review of the day's change found: an append-only output given another file, a file output naming the
output folder, and the single-process forms under torchrun. Each: exit 2, one ``error:`` line, nothing written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segmetrics_torch.app import cli
from segmetrics_torch.app.cli import main

from ..semantic_boundary import synthetic_data
from ..video.layout import moving_objects, write_davis


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


@pytest.fixture
def davis(tmp_path: Path) -> Path:
    gt = moving_objects(np.random.default_rng(0), 4, 20, 24, 2)
    write_davis(tmp_path / "davis", tmp_path / "res", {"s": (gt, gt)})
    return tmp_path


def test_toolbox_lines_never_append_to_another_file(tmp_path: Path, capsys) -> None:
    for side in ("pred", "gt"):
        (tmp_path / side).mkdir()
    mask = np.zeros((12, 16), np.uint8)
    mask[3:9, 4:12] = 255
    Image.fromarray(mask).save(tmp_path / "gt" / "a.png")
    Image.fromarray(mask // 2).save(tmp_path / "pred" / "a.png")
    table = tmp_path / "runs.csv"
    table.write_text("method,dataset,mae\nA,DS,0.1\n", encoding="utf-8")
    argv = ["evaluate", "foreground", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt"), "--no-progress"]
    argv += ["--protocol", "matlab-toolbox", "--toolbox-lines"]
    before = _tree(tmp_path)
    assert main([*argv, str(table)]) == 2
    assert "--toolbox-lines" in _error(capsys) and _tree(tmp_path) == before
    lines = tmp_path / "lines.txt"
    assert main([*argv, str(lines)]) == 0 and main([*argv, str(lines)]) == 0  # a file of such lines: appended
    assert [line[:9] for line in lines.read_text(encoding="utf-8").splitlines()] == ["(Dataset:"] * 2


def test_json_naming_the_output_folder_is_refused_before_anything_is_written(davis: Path, tmp_path: Path, capsys):
    before = _tree(tmp_path)
    out = tmp_path / "dj"
    argv = ["evaluate", "davis", "--davis-root", str(davis / "davis"), "--results", str(davis / "res")]
    assert main([*argv, "--task", "semi-supervised", "--out", str(out), "--json", str(out)]) == 2
    assert "is the folder --out writes into" in _error(capsys)
    assert _tree(tmp_path) == before and not out.exists()

    root = tmp_path / "sbd"
    synthetic_data.make_sbd(root, n_images=1, shape=(32, 40), classes=(3,))
    before = _tree(tmp_path)
    od = tmp_path / "od"
    argv = ["evaluate", "semantic-boundary", "--pred", str(root / "pred"), "--gt", str(root / "gt"), "--dataset", "sbd"]
    assert main([*argv, "--out-dir", str(od), "--json", str(od)]) == 2
    assert "is the folder --out-dir writes into" in _error(capsys)
    assert _tree(tmp_path) == before and not od.exists()


@pytest.mark.parametrize("form", ["davis", "semantic-boundary", "meta"])
def test_the_single_process_forms_refuse_torchrun(form: str, davis: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(cli, "launched", lambda: True)  # the command entry's view of the environment (one rule there)
    if form == "davis":
        argv = ["evaluate", "davis", "--davis-root", str(davis / "davis"), "--results", str(davis / "res")]
        argv += ["--task", "semi-supervised", "--out", str(davis / "out")]
    elif form == "semantic-boundary":
        argv = ["evaluate", form, "--pred", str(davis / "res"), "--gt", str(davis / "davis"), "--dataset", "sbd"]
    else:
        argv = ["meta", "foreground", "--demo", "--json", str(davis / "m.json")]
    assert main(argv) == 2
    assert "runs in one process: run it without torchrun" in _error(capsys)
    assert not (davis / "out").exists() and not (davis / "m.json").exists()
