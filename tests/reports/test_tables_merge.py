"""The CSV merge rule of every evaluate form (reports.tables.merged_csv): rows replaced by key, columns the union, and
a replaced row's cells that the new run did not compute emptied only with a warning naming them."""

from __future__ import annotations

import csv
import warnings
from pathlib import Path

import pytest

from segmetrics_torch.app.cli import main
from segmetrics_torch.reports.tables import upsert_csv, write_run_files

KEYS = ("method", "dataset")


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_a_rerun_with_fewer_measures_names_the_cells_it_empties(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    upsert_csv(table, [{"method": "m", "dataset": "d", "num_images": 3, "mae": 0.1, "sm": 0.9}], KEYS, "--csv")
    upsert_csv(table, [{"method": "other", "dataset": "d", "num_images": 3, "sm": 0.5}], KEYS, "--csv")
    with pytest.warns(UserWarning, match=r"row m / d: sm") as caught:
        upsert_csv(table, [{"method": "m", "dataset": "d", "num_images": 3, "mae": 0.2}], KEYS, "--csv")
    assert len(caught) == 1 and "mae" not in str(caught[0].message).split("row m / d:")[1]
    rows = {r["method"]: r for r in _rows(table)}
    assert rows["m"]["mae"] == "0.2" and rows["m"]["sm"] == ""
    assert rows["other"]["sm"] == "0.5"  # another run's row: kept whole


def test_no_warning_when_nothing_is_emptied(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    row = {"method": "m", "dataset": "d", "num_images": 3, "mae": 0.1}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_run_files(None, [(table, [row], KEYS, "--csv")])
        write_run_files(None, [(table, [row | {"mae": 0.3, "sm": 0.7}], KEYS, "--csv")])  # more measures
        write_run_files(None, [(table, [row | {"method": "n"}], KEYS, "--csv")])  # a new row
    assert [r["mae"] for r in _rows(table)] == ["0.3", "0.1"]


def test_the_command_prints_one_warning_line(tmp_path: Path, capsys) -> None:
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    for folder in ("pred", "gt"):
        (tmp_path / folder).mkdir()
    for i in range(2):
        gt = np.zeros((24, 24), np.uint8)
        gt[4:14, 6:18] = 255
        Image.fromarray(gt).save(tmp_path / "gt" / f"im{i}.png")
        Image.fromarray(rng.integers(0, 256, (24, 24), dtype=np.uint8)).save(tmp_path / "pred" / f"im{i}.png")
    table = tmp_path / "t.csv"
    base = ["evaluate", "foreground", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt"), "--no-progress"]
    assert main([*base, "--measures", "mae,sm", "--csv", str(table)]) == 0
    capsys.readouterr()
    assert main([*base, "--measures", "mae", "--csv", str(table)]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(lines) == 1 and "row pred / " in lines[0] and "s_measure" in lines[0], err
    assert _rows(table)[0]["s_measure"] == ""
