"""What a new user saw in the first hour (issue 28, item 9): counts printed as counts, the dataset's notes once,
paths as the user would write them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from segmetrics_torch.app.cli import main
from segmetrics_torch.reports.combined import Combined
from segmetrics_torch.reports.tables import format_count_measure, format_table


def test_hce_is_printed_as_a_count() -> None:
    assert format_count_measure(24.0) == "24" and format_count_measure(24.5) == "24.5"
    assert format_count_measure(float("nan")) == "nan"
    columns = [("mae", "MAE"), ("human_correction_effort", "HCE")]
    table = format_table({"M": {"human_correction_effort": 24.0, "mae": 0.5}}, columns)
    assert table.splitlines()[-1].split() == ["M", "0.5000", "24"]
    combined = Combined(
        "foreground",
        ["D"],
        [("human_correction_effort", "HCE")],
        {"M": {("D", "human_correction_effort"): 24.0}},
        lower=["human_correction_effort"],
    )
    assert combined.text("M", ("D", "human_correction_effort")) == "24"


def _dataset(root: Path) -> None:
    rng = np.random.default_rng(0)
    for i in range(2):
        gt = np.zeros((16, 20, 3), np.uint8)
        gt[4:12, 5:15] = 255
        (root / "gt").mkdir(parents=True, exist_ok=True)
        Image.fromarray(gt).save(root / "gt" / f"im{i}.png")  # an RGB mask: a note of the dataset's
        for method in ("A", "B"):
            (root / method).mkdir(exist_ok=True)
            Image.fromarray(rng.integers(0, 256, (16, 20), dtype=np.uint8)).save(root / method / f"im{i}.png")


def test_a_colour_ground_truth_is_noted_once_per_dataset(tmp_path: Path, capsys) -> None:
    _dataset(tmp_path)
    assert (
        main(
            [
                "evaluate",
                "--gt",
                str(tmp_path / "gt"),
                "--pred",
                f"A={tmp_path / 'A'}",
                "--pred",
                f"B={tmp_path / 'B'}",
                "--family",
                "foreground",
                "--output",
                str(tmp_path / "out"),
                "--figures",
                "none",
                "--no-progress",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    colour = [line for line in err.splitlines() if "colour" in line and "ground truth" in line]
    assert len(colour) == 1 and colour[0].startswith("note: dataset "), err


def test_paths_are_printed_normalised(tmp_path: Path, capsys, monkeypatch) -> None:
    _dataset(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["evaluate", "foreground", "--pred", "./A/", "--gt", "gt//", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "of A against gt (" in out, out
