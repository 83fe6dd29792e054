"""The boundary-distance family in reports (``segmetrics evaluate --config``): the table holds the dataset means the
single-folder command gives, one column per class for label maps, a re-run reads the cache, bad options are named."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

from segmetrics_torch.app.cli import main


def _data(root: Path) -> None:
    for name in ("gt", "A", "L_gt", "L_A"):
        (root / name).mkdir(parents=True)
    for i in range(3):
        g = np.zeros((30, 34), np.uint8)
        g[6:18, 8:24] = 255
        Image.fromarray(g).save(root / "gt" / f"im{i}.png")
        Image.fromarray(np.roll(g, (i, 1), (0, 1))).save(root / "A" / f"im{i}.png")
        lab = np.zeros((30, 34), np.uint8)
        lab[6:18, 8:24], lab[20:27, 5:15] = 1, 2
        Image.fromarray(lab).save(root / "L_gt" / f"im{i}.png")
        Image.fromarray(np.roll(lab, (i, 1), (0, 1))).save(root / "L_A" / f"im{i}.png")


def test_masks_and_label_maps_in_a_report(tmp_path: Path, capsys) -> None:
    _data(tmp_path)
    (tmp_path / "masks.yaml").write_text(
        "output: masks\nfigures: false\nfamilies: [surface]\ndatasets:\n  Masks: gt\nmethods:\n  A: A\n"
        "options:\n  surface: {tolerance: 1.5}\n",
        encoding="utf-8",
    )
    assert main(["evaluate", "--config", str(tmp_path / "masks.yaml"), "--no-progress"]) == 0, capsys.readouterr().err
    single = tmp_path / "single.json"
    assert (
        main(
            [
                "evaluate",
                "surface",
                "--pred",
                str(tmp_path / "A"),
                "--gt",
                str(tmp_path / "gt"),
                "--no-progress",
                "--tolerance",
                "1.5",
                "--json",
                str(single),
            ]
        )
        == 0
    )
    expected = json.loads(single.read_text(encoding="utf-8"))["results"]
    got = json.loads((tmp_path / "masks" / "results.json").read_text(encoding="utf-8"))["results"]
    got = got["Masks"]["surface"]["A"]["results"]
    for key in ("hausdorff", "hausdorff_percentile", "asd", "assd", "nsd"):
        assert got[key] == expected[key], key
    assert got["per_image"] == expected["per_image"]
    capsys.readouterr()
    assert main(["evaluate", "--config", str(tmp_path / "masks.yaml"), "--no-progress"]) == 0
    assert "from the cache" in capsys.readouterr().out

    (tmp_path / "labels.yaml").write_text(
        "output: labels\nfigures: false\nfamilies: [surface]\ndatasets:\n  Labels: L_gt\nmethods:\n  A: L_A\n"
        "options:\n  surface: {num_classes: 3, convention: deepmind, tolerance: [1, 2]}\n",
        encoding="utf-8",
    )
    assert main(["evaluate", "--config", str(tmp_path / "labels.yaml"), "--no-progress"]) == 0
    tables = (tmp_path / "labels" / "tables.md").read_text(encoding="utf-8")
    assert "HD c1" in tables and "NSD c2" in tables  # one column per class


def test_bad_surface_options_are_named(tmp_path: Path, capsys) -> None:
    _data(tmp_path)
    (tmp_path / "eval.yaml").write_text(
        "output: report\nfamilies: [surface]\ndatasets:\n  Masks: gt\nmethods:\n  A: A\n"
        "options:\n  surface: {convention: scipy, percentile: 120}\n",
        encoding="utf-8",
    )
    assert main(["evaluate", "--config", str(tmp_path / "eval.yaml"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "options.surface.convention" in err and "options.surface.percentile" in err


def test_report_draws_per_image_distributions(tmp_path: Path, capsys, monkeypatch) -> None:
    import pytest

    pytest.importorskip("matplotlib")
    from segmetrics_torch.reports import figures as plots

    _data(tmp_path)
    (tmp_path / "L_B").mkdir()
    for i in range(3):  # method B misses class 2 in one image: an infinite distance there
        lab = np.array(Image.open(tmp_path / "L_A" / f"im{i}.png"))
        if i == 0:
            lab[lab == 2] = 0
        Image.fromarray(lab).save(tmp_path / "L_B" / f"im{i}.png")
    drawn = []
    real_save = plots._save_figure

    def capture(fig, path):  # the figure's data, read before it is closed
        drawn.append(
            {
                "panels": [ax.get_ylabel() for ax in fig.axes],
                "boxes": sum(len([p for p in ax.patches if p.get_alpha() == 0.55]) for ax in fig.axes),
                "notes": [t.get_text() for ax in fig.axes for t in ax.texts],
                "legend": [t.get_text() for t in fig.legends[0].get_texts()],
            }
        )
        return real_save(fig, path)

    monkeypatch.setattr(plots, "_save_figure", capture)
    (tmp_path / "fig.yaml").write_text(
        "output: fig\nfigures: [png]\nfamilies: [surface]\ndatasets:\n  Labels: L_gt\nmethods:\n  B: L_B\n  A: L_A\n"
        "method_order: [A, B]\noptions:\n  surface: {num_classes: 3, tolerance: 1.0}\n",
        encoding="utf-8",
    )
    assert main(["evaluate", "--config", str(tmp_path / "fig.yaml"), "--no-progress"]) == 0, capsys.readouterr().err
    figure = tmp_path / "fig" / "figures" / "Labels_surface_distributions.png"
    assert figure.is_file() and figure.stat().st_size > 1000
    assert "Labels_surface_distributions.png" in (tmp_path / "fig" / "tables.md").read_text(encoding="utf-8")
    (data,) = drawn
    assert data["panels"] == ["HD95", "ASSD", "NSD"]
    assert data["boxes"] == 3 * 2 * 2  # panels x methods x classes
    assert data["legend"] == ["A", "B"]  # method_order
    # B's missed class 2: ASSD inf, HD95 NaN per image (MONAI's percentile of infinities; the table's mean is inf), NSD
    # a score (0 there)
    assert sorted(data["notes"]) == ["+1 inf", "1 nan"]
    tables = (tmp_path / "fig" / "tables.md").read_text(encoding="utf-8")
    row_b = next(line for line in tables.splitlines() if line.startswith("| B "))
    assert "inf" in row_b and "nan" not in row_b  # the missed structure's means: infinite, not NaN
